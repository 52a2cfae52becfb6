// SPDX-License-Identifier: BSD-3-Clause
// The kernel table (op x dtype, built at compile time) and the C entry
// points of ucg/reduce.h.
#include "types.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>
#include <iterator>
#include <utility>

namespace ucg::reduce::detail {
namespace {

/// The loop of every kernel. Restrict parameters (GCC ignores restrict on
/// local pointers) let it vectorize without a runtime alias check.
template <ucg_op_t Op, typename T>
inline void reduce_loop(T *__restrict d, const T *__restrict s, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        d[i] = apply<Op>(d[i], s[i]);
    }
}

/// dst == src (allowed): a one-pointer loop, so restrict is never a lie.
template <ucg_op_t Op, typename T> inline void self_loop(T *d, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        d[i] = apply<Op>(d[i], d[i]);
    }
}

// x86-64: each kernel also gets an AVX2 clone, chosen once at load time
// (ifunc): twice the width of the baseline SSE2 for in-cache sizes. The
// operations are element-wise, so both give the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) &&         \
    !defined(UCG_REDUCE_NO_CLONES)
#define UCG_REDUCE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define UCG_REDUCE_CLONES
#endif

/// dst[i] = dst[i] op src[i] for i < count.
template <ucg_op_t Op, typename T>
UCG_REDUCE_CLONES void kernel(void *dst, const void *src, size_t count) noexcept
{
    if (dst == src) {
        self_loop<Op>(static_cast<T *>(dst), count);
    } else {
        reduce_loop<Op>(static_cast<T *>(dst), static_cast<const T *>(src),
                        count);
    }
}

constexpr size_t kNumDtypes = UCG_DTYPE_LAST;
constexpr size_t kNumEntries = size_t{UCG_OP_LAST} * kNumDtypes;

/// Entry I of the table: op I / kNumDtypes, dtype I % kNumDtypes.
template <size_t I> constexpr ucg_reduce_kernel_t table_entry()
{
    constexpr auto op = static_cast<ucg_op_t>(I / kNumDtypes);
    constexpr auto dtype = static_cast<ucg_dtype_t>(I % kNumDtypes);
    using Info = DtypeInfo<dtype>;
    if constexpr (op_applies(op, Info::kClass)) {
        return &kernel<op, typename Info::Type>;
    } else {
        return nullptr;
    }
}

template <size_t... I> constexpr auto make_table(std::index_sequence<I...>)
{
    return std::array<ucg_reduce_kernel_t, sizeof...(I)>{table_entry<I>()...};
}

constexpr auto kKernels = make_table(std::make_index_sequence<kNumEntries>{});

constexpr const char *kDtypeNames[] = {
    "int8",          "int16",          "int32",
    "int64",         "uint8",          "uint16",
    "uint32",        "uint64",         "float",
    "double",        "long_double",    "bool",
    "float_complex", "double_complex", "long_double_complex",
    "float_int",     "double_int",     "long_int",
    "2int",          "short_int",      "long_double_int"};
static_assert(std::size(kDtypeNames) == UCG_DTYPE_LAST);

constexpr const char *kOpNames[] = {"sum",    "prod",   "min",  "max", "land",
                                    "lor",    "lxor",   "band", "bor", "bxor",
                                    "maxloc", "minloc", "user"};
static_assert(std::size(kOpNames) == UCG_OP_LAST);

// Compared as int: a C caller may pass any value in the enum's storage.
bool op_valid(ucg_op_t op)
{
    const int value = op;
    return (value >= 0) && (value < UCG_OP_LAST);
}

bool dtype_valid(ucg_dtype_t dtype)
{
    const int value = dtype;
    return (value >= 0) && (value < UCG_DTYPE_LAST);
}

/// dst bytes reduced over all sources before moving on: with a few
/// sources the block and its source blocks stay in L1.
constexpr size_t kMultiBlockBytes = 4096;

} // namespace
} // namespace ucg::reduce::detail

using namespace ucg::reduce::detail;

size_t ucg_dtype_size(ucg_dtype_t dtype) noexcept
{
    if (!dtype_valid(dtype)) {
        return 0;
    }
    return visit_dtype(dtype, []<ucg_dtype_t D>() {
        return sizeof(typename DtypeInfo<D>::Type);
    });
}

const char *ucg_dtype_name(ucg_dtype_t dtype) noexcept
{
    return dtype_valid(dtype) ? kDtypeNames[dtype] : "?";
}

const char *ucg_op_name(ucg_op_t op) noexcept
{
    return op_valid(op) ? kOpNames[op] : "?";
}

ucs_status_t ucg_reduce_check(ucg_op_t op, ucg_dtype_t dtype) noexcept
{
    if (!op_valid(op) || !dtype_valid(dtype)) {
        return UCS_ERR_INVALID_PARAM;
    }
    return (ucg_reduce_kernel(op, dtype) != nullptr) ? UCS_OK
                                                     : UCS_ERR_UNSUPPORTED;
}

ucg_reduce_kernel_t ucg_reduce_kernel(ucg_op_t op, ucg_dtype_t dtype) noexcept
{
    if (!op_valid(op) || !dtype_valid(dtype)) {
        return nullptr;
    }
    return kKernels[static_cast<size_t>(op) * kNumDtypes +
                    static_cast<size_t>(dtype)];
}

void ucg_reduce(ucg_op_t op, ucg_dtype_t dtype, void *dst, const void *src,
                size_t count) noexcept
{
    const ucg_reduce_kernel_t kernel = ucg_reduce_kernel(op, dtype);
    assert((kernel != nullptr) && "pair refused by ucg_reduce_check");
    if (kernel != nullptr) {
        kernel(dst, src, count);
    }
}

void ucg_reduce_multi(ucg_op_t op, ucg_dtype_t dtype, void *dst,
                      const void *const *srcs, unsigned nsrcs, size_t count,
                      int accumulate) noexcept
{
    const ucg_reduce_kernel_t kernel = ucg_reduce_kernel(op, dtype);
    assert((kernel != nullptr) && "pair refused by ucg_reduce_check");
    if ((kernel == nullptr) || (nsrcs == 0)) {
        return;
    }
    const size_t size = ucg_dtype_size(dtype);
    const size_t block = std::max<size_t>(1, kMultiBlockBytes / size);
    auto *d = static_cast<char *>(dst);
    for (size_t first = 0; first < count; first += block) {
        const size_t n = std::min(block, count - first);
        const size_t offset = first * size;
        unsigned next = 0;
        if (!accumulate) {
            if (srcs[0] != dst) {
                std::memcpy(d + offset,
                            static_cast<const char *>(srcs[0]) + offset,
                            n * size);
            }
            next = 1;
        }
        for (; next < nsrcs; ++next) {
            kernel(d + offset, static_cast<const char *>(srcs[next]) + offset,
                   n);
        }
    }
}
