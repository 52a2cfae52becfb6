// SPDX-License-Identifier: BSD-3-Clause
// The reference reduction: one element at a time, switch on the type class.
#include "reduce_ref.h"
#include "ref_layout.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace reduce_test {
namespace {

long double arith(bool mul, long double x, long double y, std::size_t bytes)
{
    if (bytes == 16) {
        return mul ? x * y : x + y;
    }
    const auto a = static_cast<double>(x), b = static_cast<double>(y);
    return mul ? a * b : a + b;
}

void ref_integer(ucg_op_t op, const Desc &d, void *a, const void *b)
{
    const uint64_t u = load_u(a, d.size), v = load_u(b, d.size);
    const bool is_signed = d.cls == Cls::kInt;
    const bool b_less =
        is_signed ? load_s(b, d.size) < load_s(a, d.size) : v < u;
    const bool b_greater =
        is_signed ? load_s(b, d.size) > load_s(a, d.size) : v > u;
    uint64_t r = u;
    switch (op) {
    case UCG_OP_SUM:
        r = u + v; // mod 2^64, then truncated: mod 2^bits
        break;
    case UCG_OP_PROD:
        r = u * v;
        break;
    case UCG_OP_MIN:
        r = b_less ? v : u;
        break;
    case UCG_OP_MAX:
        r = b_greater ? v : u;
        break;
    case UCG_OP_LAND:
        r = (u != 0) && (v != 0);
        break;
    case UCG_OP_LOR:
        r = (u != 0) || (v != 0);
        break;
    case UCG_OP_LXOR:
        r = (u != 0) != (v != 0);
        break;
    case UCG_OP_BAND:
        r = u & v;
        break;
    case UCG_OP_BOR:
        r = u | v;
        break;
    default:
        r = u ^ v;
        break;
    }
    store_u(a, d.size, r);
}

void ref_floating(ucg_op_t op, const Desc &d, void *a, const void *b)
{
    const long double x = load_f(a, d.scalar), y = load_f(b, d.scalar);
    switch (op) {
    case UCG_OP_SUM:
    case UCG_OP_PROD:
        store_f(a, d.scalar, arith(op == UCG_OP_PROD, x, y, d.scalar));
        break;
    case UCG_OP_MIN:
        if (y < x) {
            std::memcpy(a, b, d.size);
        }
        break;
    case UCG_OP_MAX:
        if (y > x) {
            std::memcpy(a, b, d.size);
        }
        break;
    case UCG_OP_LAND:
        store_f(a, d.scalar, (x != 0) && (y != 0) ? 1 : 0);
        break;
    case UCG_OP_LOR:
        store_f(a, d.scalar, (x != 0) || (y != 0) ? 1 : 0);
        break;
    default:
        store_f(a, d.scalar, (x != 0) != (y != 0) ? 1 : 0);
        break;
    }
}

void ref_complex(ucg_op_t op, const Desc &d, void *a, const void *b)
{
    auto *pa = static_cast<char *>(a);
    const auto *pb = static_cast<const char *>(b);
    const std::size_t n = d.scalar;
    const long double ar = load_f(pa, n), ai = load_f(pa + d.size / 2, n);
    const long double br = load_f(pb, n), bi = load_f(pb + d.size / 2, n);
    long double re, im;
    if (op == UCG_OP_SUM) {
        re = arith(false, ar, br, n);
        im = arith(false, ai, bi, n);
    } else { // (ar + i ai)(br + i bi); exact for the test's small values
        re = ar * br - ai * bi;
        im = ar * bi + ai * br;
    }
    store_f(pa, n, re);
    store_f(pa + d.size / 2, n, im);
}

void ref_pair(ucg_op_t op, const Desc &d, void *a, const void *b)
{
    const auto value = [&](const void *p) -> long double {
        return d.int_value ? static_cast<long double>(load_s(p, d.scalar))
                           : load_f(p, d.scalar);
    };
    const auto index = [&](const void *p) {
        return static_cast<int32_t>(
            load_u(static_cast<const char *>(p) + d.size / 2, 4));
    };
    const long double x = value(a), y = value(b);
    const bool better = (op == UCG_OP_MAXLOC) ? (y > x) : (y < x);
    if (better || ((x == y) && (index(b) < index(a)))) {
        std::memcpy(a, b, d.size);
    }
}

bool is_nan_at(const void *p, std::size_t bytes)
{
    return std::isnan(load_f(p, bytes));
}

} // namespace

std::vector<ucg_op_t> all_ops()
{
    std::vector<ucg_op_t> ops;
    for (int o = 0; o < UCG_OP_LAST; ++o) {
        ops.push_back(static_cast<ucg_op_t>(o));
    }
    return ops;
}

std::vector<ucg_dtype_t> all_dtypes()
{
    std::vector<ucg_dtype_t> dtypes;
    for (int d = 0; d < UCG_DTYPE_LAST; ++d) {
        dtypes.push_back(static_cast<ucg_dtype_t>(d));
    }
    return dtypes;
}

bool mpi_defines(ucg_op_t op, ucg_dtype_t dtype)
{
    const Cls c = describe(dtype).cls;
    const bool integer = (c == Cls::kInt) || (c == Cls::kUint);
    const bool real = integer || (c == Cls::kFloating);
    switch (op) {
    case UCG_OP_SUM:
    case UCG_OP_PROD:
        return real || (c == Cls::kComplex);
    case UCG_OP_MIN:
    case UCG_OP_MAX:
        return real;
    case UCG_OP_LAND:
    case UCG_OP_LOR:
    case UCG_OP_LXOR:
        return real || (c == Cls::kBool);
    case UCG_OP_BAND:
    case UCG_OP_BOR:
    case UCG_OP_BXOR:
        return integer;
    case UCG_OP_MAXLOC:
    case UCG_OP_MINLOC:
        return c == Cls::kPair;
    default:
        return false;
    }
}

std::size_t element_size(ucg_dtype_t dtype)
{
    static const std::size_t kSizes[] = {1,
                                         2,
                                         4,
                                         8,
                                         1,
                                         2,
                                         4,
                                         8,
                                         sizeof(float),
                                         sizeof(double),
                                         sizeof(long double),
                                         1 /* C _Bool */,
                                         2 * sizeof(float),
                                         2 * sizeof(double),
                                         2 * sizeof(long double),
                                         sizeof(FloatInt),
                                         sizeof(DoubleInt),
                                         sizeof(LongInt),
                                         sizeof(TwoInt),
                                         sizeof(ShortInt),
                                         sizeof(LongDoubleInt)};
    static_assert(std::size(kSizes) == UCG_DTYPE_LAST);
    return kSizes[dtype];
}

void ref_apply(ucg_op_t op, ucg_dtype_t dtype, void *a, const void *b)
{
    const Desc d = describe(dtype);
    switch (d.cls) {
    case Cls::kInt:
    case Cls::kUint:
    case Cls::kBool:
        return ref_integer(op, d, a, b);
    case Cls::kFloating:
        return ref_floating(op, d, a, b);
    case Cls::kComplex:
        return ref_complex(op, d, a, b);
    default:
        return ref_pair(op, d, a, b);
    }
}

bool same_element(ucg_dtype_t dtype, const void *x, const void *y)
{
    const Desc d = describe(dtype);
    const auto *px = static_cast<const char *>(x);
    const auto *py = static_cast<const char *>(y);
    const std::size_t value_bytes = (d.scalar == 16) ? 10 : d.scalar;
    const auto same_number = [&](std::size_t at, bool floating) {
        if (floating && is_nan_at(px + at, d.scalar) &&
            is_nan_at(py + at, d.scalar)) {
            return true;
        }
        return std::memcmp(px + at, py + at, value_bytes) == 0;
    };
    switch (d.cls) {
    case Cls::kFloating:
        return same_number(0, true);
    case Cls::kComplex:
        return same_number(0, true) && same_number(d.size / 2, true);
    case Cls::kPair:
        return same_number(0, !d.int_value) &&
               std::memcmp(px + d.size / 2, py + d.size / 2, 4) == 0;
    default:
        return std::memcmp(x, y, d.size) == 0;
    }
}

std::string element_text(ucg_dtype_t dtype, const void *p)
{
    const Desc d = describe(dtype);
    const auto *c = static_cast<const char *>(p);
    std::ostringstream out;
    out.precision(21);
    switch (d.cls) {
    case Cls::kInt:
        out << load_s(p, d.size);
        break;
    case Cls::kUint:
    case Cls::kBool:
        out << load_u(p, d.size);
        break;
    case Cls::kFloating:
        out << load_f(p, d.scalar);
        break;
    case Cls::kComplex:
        out << "(" << load_f(c, d.scalar) << ", "
            << load_f(c + d.size / 2, d.scalar) << ")";
        break;
    default:
        out << "{"
            << (d.int_value ? static_cast<long double>(load_s(p, d.scalar))
                            : load_f(p, d.scalar))
            << ", " << static_cast<int32_t>(load_u(c + d.size / 2, 4)) << "}";
        break;
    }
    return out.str();
}

std::size_t first_difference(ucg_dtype_t dtype, const void *a, const void *b,
                             std::size_t count)
{
    const std::size_t size = element_size(dtype);
    for (std::size_t i = 0; i < count; ++i) {
        if (!same_element(dtype, static_cast<const char *>(a) + i * size,
                          static_cast<const char *>(b) + i * size)) {
            return i;
        }
    }
    return count;
}

} // namespace reduce_test
