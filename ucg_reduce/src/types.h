// SPDX-License-Identifier: BSD-3-Clause
// What each ucg_dtype_t is in C++, which operators apply to it, and the
// element-wise operator itself: shared by the plain and atomic kernels.
#pragma once

#include <ucg/reduce.h>

#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace ucg::reduce::detail {

/// MPI's C pair types: {value; int index} with the C compiler's padding.
template <typename V> struct Pair {
    V value;
    int index;
};

/// The classes of MPI's operator table (MPI 4.0, 6.9.2).
enum class TypeClass { kInteger, kFloating, kBool, kComplex, kPair };

template <ucg_dtype_t D> struct DtypeInfo;
#define UCG_REDUCE_DTYPE(_dtype, _type, _class)                                \
    template <> struct DtypeInfo<_dtype> {                                     \
        using Type = _type;                                                    \
        static constexpr TypeClass kClass = TypeClass::_class;                 \
    }
UCG_REDUCE_DTYPE(UCG_DTYPE_INT8, int8_t, kInteger);
UCG_REDUCE_DTYPE(UCG_DTYPE_INT16, int16_t, kInteger);
UCG_REDUCE_DTYPE(UCG_DTYPE_INT32, int32_t, kInteger);
UCG_REDUCE_DTYPE(UCG_DTYPE_INT64, int64_t, kInteger);
UCG_REDUCE_DTYPE(UCG_DTYPE_UINT8, uint8_t, kInteger);
UCG_REDUCE_DTYPE(UCG_DTYPE_UINT16, uint16_t, kInteger);
UCG_REDUCE_DTYPE(UCG_DTYPE_UINT32, uint32_t, kInteger);
UCG_REDUCE_DTYPE(UCG_DTYPE_UINT64, uint64_t, kInteger);
UCG_REDUCE_DTYPE(UCG_DTYPE_FLOAT, float, kFloating);
UCG_REDUCE_DTYPE(UCG_DTYPE_DOUBLE, double, kFloating);
UCG_REDUCE_DTYPE(UCG_DTYPE_LONG_DOUBLE, long double, kFloating);
// A C _Bool is one byte holding 0 or 1. It is reduced as uint8_t: the
// logical operators give the same bytes, and a byte other than 0/1 in a
// received buffer is not undefined behaviour as a C++ bool would be.
UCG_REDUCE_DTYPE(UCG_DTYPE_BOOL, uint8_t, kBool);
UCG_REDUCE_DTYPE(UCG_DTYPE_FLOAT_COMPLEX, std::complex<float>, kComplex);
UCG_REDUCE_DTYPE(UCG_DTYPE_DOUBLE_COMPLEX, std::complex<double>, kComplex);
UCG_REDUCE_DTYPE(UCG_DTYPE_LONG_DOUBLE_COMPLEX, std::complex<long double>,
                 kComplex);
UCG_REDUCE_DTYPE(UCG_DTYPE_FLOAT_INT, Pair<float>, kPair);
UCG_REDUCE_DTYPE(UCG_DTYPE_DOUBLE_INT, Pair<double>, kPair);
UCG_REDUCE_DTYPE(UCG_DTYPE_LONG_INT, Pair<long>, kPair);
UCG_REDUCE_DTYPE(UCG_DTYPE_2INT, Pair<int>, kPair);
UCG_REDUCE_DTYPE(UCG_DTYPE_SHORT_INT, Pair<short>, kPair);
UCG_REDUCE_DTYPE(UCG_DTYPE_LONG_DOUBLE_INT, Pair<long double>, kPair);
#undef UCG_REDUCE_DTYPE

static_assert(sizeof(bool) == 1, "C _Bool and uint8_t must match");
static_assert(sizeof(std::complex<double>) == 2 * sizeof(double));
static_assert(sizeof(Pair<short>) == 8 && sizeof(Pair<double>) == 16);

/// Whether MPI defines op on the class (UCG_OP_USER: never a kernel).
constexpr bool op_applies(ucg_op_t op, TypeClass c)
{
    const bool integer = c == TypeClass::kInteger;
    const bool real = integer || c == TypeClass::kFloating;
    switch (op) {
    case UCG_OP_SUM:
    case UCG_OP_PROD:
        return real || c == TypeClass::kComplex;
    case UCG_OP_MIN:
    case UCG_OP_MAX:
        return real;
    case UCG_OP_LAND:
    case UCG_OP_LOR:
    case UCG_OP_LXOR:
        return real || c == TypeClass::kBool;
    case UCG_OP_BAND:
    case UCG_OP_BOR:
    case UCG_OP_BXOR:
        return integer;
    case UCG_OP_MAXLOC:
    case UCG_OP_MINLOC:
        return c == TypeClass::kPair;
    default:
        return false;
    }
}

/// Calls f.template operator()<D>() with the dtype as a constant; dtype
/// must be in range.
template <typename F> decltype(auto) visit_dtype(ucg_dtype_t dtype, F &&f)
{
#define UCG_REDUCE_CASE(_d)                                                    \
    case _d:                                                                   \
        return f.template operator()<_d>()
    switch (dtype) {
        UCG_REDUCE_CASE(UCG_DTYPE_INT8);
        UCG_REDUCE_CASE(UCG_DTYPE_INT16);
        UCG_REDUCE_CASE(UCG_DTYPE_INT32);
        UCG_REDUCE_CASE(UCG_DTYPE_INT64);
        UCG_REDUCE_CASE(UCG_DTYPE_UINT8);
        UCG_REDUCE_CASE(UCG_DTYPE_UINT16);
        UCG_REDUCE_CASE(UCG_DTYPE_UINT32);
        UCG_REDUCE_CASE(UCG_DTYPE_UINT64);
        UCG_REDUCE_CASE(UCG_DTYPE_FLOAT);
        UCG_REDUCE_CASE(UCG_DTYPE_DOUBLE);
        UCG_REDUCE_CASE(UCG_DTYPE_LONG_DOUBLE);
        UCG_REDUCE_CASE(UCG_DTYPE_BOOL);
        UCG_REDUCE_CASE(UCG_DTYPE_FLOAT_COMPLEX);
        UCG_REDUCE_CASE(UCG_DTYPE_DOUBLE_COMPLEX);
        UCG_REDUCE_CASE(UCG_DTYPE_LONG_DOUBLE_COMPLEX);
        UCG_REDUCE_CASE(UCG_DTYPE_FLOAT_INT);
        UCG_REDUCE_CASE(UCG_DTYPE_DOUBLE_INT);
        UCG_REDUCE_CASE(UCG_DTYPE_LONG_INT);
        UCG_REDUCE_CASE(UCG_DTYPE_2INT);
        UCG_REDUCE_CASE(UCG_DTYPE_SHORT_INT);
    default:
        return f.template operator()<UCG_DTYPE_LONG_DOUBLE_INT>();
    }
#undef UCG_REDUCE_CASE
}

/// Calls f.template operator()<Op>() with the operator as a constant; op
/// must be in range.
template <typename F> decltype(auto) visit_op(ucg_op_t op, F &&f)
{
#define UCG_REDUCE_CASE(_op)                                                   \
    case _op:                                                                  \
        return f.template operator()<_op>()
    switch (op) {
        UCG_REDUCE_CASE(UCG_OP_SUM);
        UCG_REDUCE_CASE(UCG_OP_PROD);
        UCG_REDUCE_CASE(UCG_OP_MIN);
        UCG_REDUCE_CASE(UCG_OP_MAX);
        UCG_REDUCE_CASE(UCG_OP_LAND);
        UCG_REDUCE_CASE(UCG_OP_LOR);
        UCG_REDUCE_CASE(UCG_OP_LXOR);
        UCG_REDUCE_CASE(UCG_OP_BAND);
        UCG_REDUCE_CASE(UCG_OP_BOR);
        UCG_REDUCE_CASE(UCG_OP_BXOR);
        UCG_REDUCE_CASE(UCG_OP_MAXLOC);
        UCG_REDUCE_CASE(UCG_OP_MINLOC);
    default:
        return f.template operator()<UCG_OP_USER>();
    }
#undef UCG_REDUCE_CASE
}

/// Integer arithmetic in an unsigned type of at least int's width: wraps
/// instead of overflowing (uint16 * uint16 would promote to signed int).
template <typename T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned,
                                std::make_unsigned_t<T>>;

template <auto> constexpr bool kNever = false;

template <typename T> constexpr bool kIsPair = false;
template <typename V> constexpr bool kIsPair<Pair<V>> = true;

/// a op b for one element. Written without branches on data where the
/// type vectorizes, so the loops around it do.
template <ucg_op_t Op, typename T> inline T apply(T a, T b)
{
    constexpr bool kInt = std::is_integral_v<T>;
    if constexpr (Op == UCG_OP_SUM && kInt) {
        return static_cast<T>(static_cast<Wide<T>>(a) +
                              static_cast<Wide<T>>(b));
    } else if constexpr (Op == UCG_OP_PROD && kInt) {
        return static_cast<T>(static_cast<Wide<T>>(a) *
                              static_cast<Wide<T>>(b));
    } else if constexpr (Op == UCG_OP_SUM) {
        return a + b;
    } else if constexpr (Op == UCG_OP_PROD) {
        return a * b;
    } else if constexpr (Op == UCG_OP_MIN) {
        return (b < a) ? b : a;
    } else if constexpr (Op == UCG_OP_MAX) {
        return (b > a) ? b : a;
    } else if constexpr (Op == UCG_OP_LAND) {
        return static_cast<T>((a != T(0)) & (b != T(0)));
    } else if constexpr (Op == UCG_OP_LOR) {
        return static_cast<T>((a != T(0)) | (b != T(0)));
    } else if constexpr (Op == UCG_OP_LXOR) {
        return static_cast<T>((a != T(0)) ^ (b != T(0)));
    } else if constexpr (Op == UCG_OP_BAND && kInt) {
        return static_cast<T>(a & b);
    } else if constexpr (Op == UCG_OP_BOR && kInt) {
        return static_cast<T>(a | b);
    } else if constexpr (Op == UCG_OP_BXOR && kInt) {
        return static_cast<T>(a ^ b);
    } else if constexpr (Op == UCG_OP_MAXLOC && kIsPair<T>) {
        const bool take = (b.value > a.value) ||
                          ((b.value == a.value) && (b.index < a.index));
        return take ? b : a;
    } else if constexpr (Op == UCG_OP_MINLOC && kIsPair<T>) {
        const bool take = (b.value < a.value) ||
                          ((b.value == a.value) && (b.index < a.index));
        return take ? b : a;
    } else {
        static_assert(kNever<Op>, "no such operator on this type");
    }
}

} // namespace ucg::reduce::detail
