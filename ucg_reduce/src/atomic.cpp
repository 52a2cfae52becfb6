// SPDX-License-Identifier: BSD-3-Clause
// Atomic kernels (std::atomic_ref on each element of a shared buffer) and
// the identity element of every operator.
#include "types.h"

#include <ucg/reduce_atomic.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <climits>
#include <cstring>

namespace ucg::reduce {
namespace {

using namespace detail;

/// Integer sum and bitwise operators have one locked instruction; the
/// others (and every floating operator) need a compare-and-swap loop.
template <ucg_op_t Op, typename T>
constexpr bool kSingleRmw = std::is_integral_v<T> &&
                            ((Op == UCG_OP_SUM) || (Op == UCG_OP_BAND) ||
                             (Op == UCG_OP_BOR) || (Op == UCG_OP_BXOR));

template <ucg_op_t Op, typename T>
void atomic_loop(void *dst, const void *src, std::size_t count) noexcept
{
    auto *d = static_cast<T *>(dst);
    const auto *s = static_cast<const T *>(src);
    constexpr auto kOrder = std::memory_order_relaxed;
    for (std::size_t i = 0; i < count; ++i) {
        std::atomic_ref<T> ref(d[i]);
        if constexpr (kSingleRmw<Op, T> && (Op == UCG_OP_SUM)) {
            ref.fetch_add(s[i], kOrder); // wraps: atomic arithmetic is
                                         // two's complement
        } else if constexpr (kSingleRmw<Op, T> && (Op == UCG_OP_BAND)) {
            ref.fetch_and(s[i], kOrder);
        } else if constexpr (kSingleRmw<Op, T> && (Op == UCG_OP_BOR)) {
            ref.fetch_or(s[i], kOrder);
        } else if constexpr (kSingleRmw<Op, T> && (Op == UCG_OP_BXOR)) {
            ref.fetch_xor(s[i], kOrder);
        } else {
            T old = ref.load(kOrder);
            T next = apply<Op>(old, s[i]);
            // An unchanged element needs no write (min/max mostly keep dst,
            // and a write would take the cache line from other writers).
            while ((std::memcmp(&next, &old, sizeof(T)) != 0) &&
                   !ref.compare_exchange_weak(old, next, kOrder)) {
                next = apply<Op>(old, s[i]);
            }
        }
    }
}

/// Types with an atomic kernel: whole machine words without padding.
template <ucg_dtype_t D> constexpr bool has_atomic()
{
    using T = typename DtypeInfo<D>::Type;
    constexpr TypeClass kClass = DtypeInfo<D>::kClass;
    constexpr bool kWord =
        (kClass == TypeClass::kInteger) || (kClass == TypeClass::kBool) ||
        std::is_same_v<T, float> || std::is_same_v<T, double>;
    if constexpr (kWord) {
        return std::atomic_ref<T>::is_always_lock_free;
    } else {
        return false;
    }
}

/// x op identity == x: the neutral element of the min/max side of a type.
template <typename T> constexpr T largest()
{
    using L = std::numeric_limits<T>;
    return L::has_infinity ? L::infinity() : L::max();
}

template <typename T> constexpr T smallest()
{
    using L = std::numeric_limits<T>;
    return L::has_infinity ? -L::infinity() : L::lowest();
}

template <ucg_op_t Op, typename T> T identity()
{
    if constexpr (kIsPair<T>) {
        using V = decltype(T::value);
        return T{(Op == UCG_OP_MAXLOC) ? smallest<V>() : largest<V>(), INT_MAX};
    } else if constexpr (Op == UCG_OP_SUM) {
        // -0.0: +0.0 would turn a sum of -0.0 into +0.0.
        if constexpr (std::is_integral_v<T>) {
            return T(0);
        } else if constexpr (std::is_floating_point_v<T>) {
            return T(-0.0);
        } else {
            return T(-0.0, -0.0); // complex
        }
    } else if constexpr ((Op == UCG_OP_PROD) || (Op == UCG_OP_LAND)) {
        return T(1);
    } else if constexpr (Op == UCG_OP_MIN) {
        return largest<T>();
    } else if constexpr (Op == UCG_OP_MAX) {
        return smallest<T>();
    } else if constexpr (Op == UCG_OP_BAND) {
        return static_cast<T>(~T(0));
    } else {
        return T(0); // bor, bxor, lor, lxor
    }
}

} // namespace

AtomicKernel atomic_kernel(ucg_op_t op, ucg_dtype_t dtype) noexcept
{
    if (ucg_reduce_check(op, dtype) != UCS_OK) {
        return nullptr;
    }
    return visit_dtype(dtype, [op]<ucg_dtype_t D>() -> AtomicKernel {
        using Info = DtypeInfo<D>;
        if constexpr (has_atomic<D>()) {
            return visit_op(op, []<ucg_op_t Op>() -> AtomicKernel {
                if constexpr (op_applies(Op, Info::kClass)) {
                    return &atomic_loop<Op, typename Info::Type>;
                } else {
                    return nullptr;
                }
            });
        } else {
            return nullptr;
        }
    });
}

bool atomic_is_single_rmw(ucg_op_t op, ucg_dtype_t dtype) noexcept
{
    if (atomic_kernel(op, dtype) == nullptr) {
        return false;
    }
    return visit_dtype(dtype, [op]<ucg_dtype_t D>() {
        return visit_op(op, []<ucg_op_t Op>() {
            return kSingleRmw<Op, typename DtypeInfo<D>::Type>;
        });
    });
}

void fill_identity(void *dst, std::size_t count, ucg_op_t op,
                   ucg_dtype_t dtype) noexcept
{
    const bool valid = ucg_reduce_check(op, dtype) == UCS_OK;
    assert(valid && "pair refused by ucg_reduce_check");
    if (!valid) {
        return;
    }
    visit_dtype(dtype, [=]<ucg_dtype_t D>() {
        using Info = DtypeInfo<D>;
        visit_op(op, [=]<ucg_op_t Op>() {
            using T = typename Info::Type;
            if constexpr (op_applies(Op, Info::kClass)) {
                std::fill_n(static_cast<T *>(dst), count, identity<Op, T>());
            }
        });
    });
}

} // namespace ucg::reduce
