// SPDX-License-Identifier: BSD-3-Clause
// Reduction kernels. Signed sums and products wrap (computed unsigned, as
// two's complement) so overflow is defined; min/max keep the first operand
// when the second does not compare smaller/larger (NaN never wins).
#include "reduce.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace uct_mm_incast {
namespace {

template <typename T> T wrap_add(T a, T b)
{
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(
            static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
        return a + b;
    }
}

template <typename T> T wrap_mul(T a, T b)
{
    if constexpr (std::is_integral_v<T>) {
        // Promote to unsigned int at least, so uint16*uint16 cannot
        // overflow a signed int.
        using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned,
                                     std::make_unsigned_t<T>>;
        return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    } else {
        return a * b;
    }
}

template <typename T, uct_mm_incast_op_t Op> T apply(T a, T b)
{
    if constexpr (Op == UCT_MM_INCAST_OP_SUM) {
        return wrap_add(a, b);
    } else if constexpr (Op == UCT_MM_INCAST_OP_PROD) {
        return wrap_mul(a, b);
    } else if constexpr (Op == UCT_MM_INCAST_OP_MIN) {
        return (b < a) ? b : a;
    } else if constexpr (Op == UCT_MM_INCAST_OP_MAX) {
        return (b > a) ? b : a;
    } else if constexpr (Op == UCT_MM_INCAST_OP_LAND) {
        return static_cast<T>((a != T(0)) && (b != T(0)));
    } else if constexpr (Op == UCT_MM_INCAST_OP_LOR) {
        return static_cast<T>((a != T(0)) || (b != T(0)));
    } else if constexpr (std::is_integral_v<T>) {
        if constexpr (Op == UCT_MM_INCAST_OP_BAND) {
            return static_cast<T>(a & b);
        } else if constexpr (Op == UCT_MM_INCAST_OP_BOR) {
            return static_cast<T>(a | b);
        } else {
            return static_cast<T>(a ^ b);
        }
    } else {
        return a; // refused by check_op before a kernel is chosen
    }
}

template <typename T, uct_mm_incast_op_t Op>
void reduce_kernel(void *dst, const void *src, std::size_t count)
{
    auto *d = static_cast<T *>(dst);
    const auto *s = static_cast<const T *>(src);
    for (std::size_t i = 0; i < count; ++i) {
        d[i] = apply<T, Op>(d[i], s[i]);
    }
}

template <typename T, uct_mm_incast_op_t Op>
void atomic_kernel(void *dst, const void *src, std::size_t count)
{
    auto *d = static_cast<T *>(dst);
    const auto *s = static_cast<const T *>(src);
    for (std::size_t i = 0; i < count; ++i) {
        std::atomic_ref<T> ref(d[i]);
        if constexpr (std::is_integral_v<T> && Op == UCT_MM_INCAST_OP_SUM) {
            ref.fetch_add(s[i], std::memory_order_relaxed);
        } else if constexpr (std::is_integral_v<T> &&
                             Op == UCT_MM_INCAST_OP_BAND) {
            ref.fetch_and(s[i], std::memory_order_relaxed);
        } else if constexpr (std::is_integral_v<T> &&
                             Op == UCT_MM_INCAST_OP_BOR) {
            ref.fetch_or(s[i], std::memory_order_relaxed);
        } else if constexpr (std::is_integral_v<T> &&
                             Op == UCT_MM_INCAST_OP_BXOR) {
            ref.fetch_xor(s[i], std::memory_order_relaxed);
        } else {
            T old = ref.load(std::memory_order_relaxed);
            while (!ref.compare_exchange_weak(old, apply<T, Op>(old, s[i]),
                                              std::memory_order_relaxed)) {
            }
        }
    }
}

template <typename T> T identity(uct_mm_incast_op_t op)
{
    switch (op) {
    case UCT_MM_INCAST_OP_PROD:
    case UCT_MM_INCAST_OP_LAND:
        return T(1);
    case UCT_MM_INCAST_OP_MIN:
        return std::numeric_limits<T>::has_infinity
                   ? std::numeric_limits<T>::infinity()
                   : std::numeric_limits<T>::max();
    case UCT_MM_INCAST_OP_MAX:
        return std::numeric_limits<T>::has_infinity
                   ? -std::numeric_limits<T>::infinity()
                   : std::numeric_limits<T>::lowest();
    case UCT_MM_INCAST_OP_BAND:
        if constexpr (std::is_integral_v<T>) {
            return static_cast<T>(~T(0));
        }
        return T(0);
    default:
        return T(0);
    }
}

// Calls f.template operator()<T>() with T the C++ type of dtype.
template <typename F> auto with_type(uct_mm_incast_dtype_t dtype, F &&f)
{
    switch (dtype) {
    case UCT_MM_INCAST_DTYPE_INT8:
        return f.template operator()<int8_t>();
    case UCT_MM_INCAST_DTYPE_INT16:
        return f.template operator()<int16_t>();
    case UCT_MM_INCAST_DTYPE_INT32:
        return f.template operator()<int32_t>();
    case UCT_MM_INCAST_DTYPE_INT64:
        return f.template operator()<int64_t>();
    case UCT_MM_INCAST_DTYPE_UINT8:
        return f.template operator()<uint8_t>();
    case UCT_MM_INCAST_DTYPE_UINT16:
        return f.template operator()<uint16_t>();
    case UCT_MM_INCAST_DTYPE_UINT32:
        return f.template operator()<uint32_t>();
    case UCT_MM_INCAST_DTYPE_UINT64:
        return f.template operator()<uint64_t>();
    case UCT_MM_INCAST_DTYPE_FLOAT:
        return f.template operator()<float>();
    default:
        return f.template operator()<double>();
    }
}

template <typename T, template <typename, uct_mm_incast_op_t> class K>
auto pick(uct_mm_incast_op_t op) -> void (*)(void *, const void *, std::size_t)
{
    switch (op) {
    case UCT_MM_INCAST_OP_SUM:
        return K<T, UCT_MM_INCAST_OP_SUM>::fn;
    case UCT_MM_INCAST_OP_PROD:
        return K<T, UCT_MM_INCAST_OP_PROD>::fn;
    case UCT_MM_INCAST_OP_MIN:
        return K<T, UCT_MM_INCAST_OP_MIN>::fn;
    case UCT_MM_INCAST_OP_MAX:
        return K<T, UCT_MM_INCAST_OP_MAX>::fn;
    case UCT_MM_INCAST_OP_BAND:
        return K<T, UCT_MM_INCAST_OP_BAND>::fn;
    case UCT_MM_INCAST_OP_BOR:
        return K<T, UCT_MM_INCAST_OP_BOR>::fn;
    case UCT_MM_INCAST_OP_BXOR:
        return K<T, UCT_MM_INCAST_OP_BXOR>::fn;
    case UCT_MM_INCAST_OP_LAND:
        return K<T, UCT_MM_INCAST_OP_LAND>::fn;
    case UCT_MM_INCAST_OP_LOR:
        return K<T, UCT_MM_INCAST_OP_LOR>::fn;
    default:
        return nullptr;
    }
}

template <typename T, uct_mm_incast_op_t Op> struct Plain {
    static constexpr ReduceFn fn = reduce_kernel<T, Op>;
};
template <typename T, uct_mm_incast_op_t Op> struct Atomic {
    static constexpr AtomicReduceFn fn = atomic_kernel<T, Op>;
};

bool is_float(uct_mm_incast_dtype_t dtype)
{
    return (dtype == UCT_MM_INCAST_DTYPE_FLOAT) ||
           (dtype == UCT_MM_INCAST_DTYPE_DOUBLE);
}

} // namespace

std::size_t dtype_size(uct_mm_incast_dtype_t dtype)
{
    if ((dtype < 0) || (dtype >= UCT_MM_INCAST_DTYPE_LAST)) {
        return 0;
    }
    return with_type(dtype, []<typename T>() { return sizeof(T); });
}

ucs_status_t check_op(uct_mm_incast_op_t op, uct_mm_incast_dtype_t dtype)
{
    if ((op < 0) || (op >= UCT_MM_INCAST_OP_LAST) || (dtype < 0) ||
        (dtype >= UCT_MM_INCAST_DTYPE_LAST)) {
        return UCS_ERR_INVALID_PARAM;
    }
    const bool bitwise = (op == UCT_MM_INCAST_OP_BAND) ||
                         (op == UCT_MM_INCAST_OP_BOR) ||
                         (op == UCT_MM_INCAST_OP_BXOR);
    if (bitwise && is_float(dtype)) {
        return UCS_ERR_UNSUPPORTED;
    }
    return UCS_OK;
}

ReduceFn reduce_fn(uct_mm_incast_op_t op, uct_mm_incast_dtype_t dtype)
{
    if (check_op(op, dtype) != UCS_OK) {
        return nullptr;
    }
    return with_type(dtype, [op]<typename T>() { return pick<T, Plain>(op); });
}

AtomicReduceFn atomic_reduce_fn(uct_mm_incast_op_t op,
                                uct_mm_incast_dtype_t dtype)
{
    if (check_op(op, dtype) != UCS_OK) {
        return nullptr;
    }
    return with_type(dtype, [op]<typename T>() -> AtomicReduceFn {
        if constexpr (!std::atomic_ref<T>::is_always_lock_free) {
            return nullptr;
        } else {
            return pick<T, Atomic>(op);
        }
    });
}

bool atomic_is_single_rmw(uct_mm_incast_op_t op, uct_mm_incast_dtype_t dtype)
{
    const bool rmw_op =
        (op == UCT_MM_INCAST_OP_SUM) || (op == UCT_MM_INCAST_OP_BAND) ||
        (op == UCT_MM_INCAST_OP_BOR) || (op == UCT_MM_INCAST_OP_BXOR);
    return rmw_op && !is_float(dtype) &&
           (atomic_reduce_fn(op, dtype) != nullptr);
}

void fill_identity(void *dst, std::size_t count, uct_mm_incast_op_t op,
                   uct_mm_incast_dtype_t dtype)
{
    with_type(dtype, [=]<typename T>() {
        const T value = identity<T>(op);
        auto *d = static_cast<T *>(dst);
        for (std::size_t i = 0; i < count; ++i) {
            d[i] = value;
        }
        return 0;
    });
}

} // namespace uct_mm_incast
