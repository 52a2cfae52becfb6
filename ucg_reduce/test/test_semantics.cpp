// SPDX-License-Identifier: BSD-3-Clause
// The semantics the header promises, case by case: wrap, logical 1/0,
// NaN in min/max, MAXLOC/MINLOC ties, refused pairs.
#include "c_caller.h"
#include "reduce_ref.h"

#include <catch2/catch.hpp>

#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace reduce_test;

namespace {

// 67 elements: through the vector loop and its scalar tail alike.
constexpr std::size_t kCount = 67;

/// dst = a (every element), src = b; returns dst after ucg_reduce.
template <typename T>
std::vector<T> reduce_all(ucg_op_t op, ucg_dtype_t dtype, T a, T b)
{
    std::vector<T> dst(kCount, a);
    const std::vector<T> src(kCount, b);
    ucg_reduce(op, dtype, dst.data(), src.data(), kCount);
    return dst;
}

/// Every element of ucg_reduce(a op b) has the bits of `expect` (of a
/// long double, the 10 bytes x87 uses; the rest is padding).
template <typename T>
bool gives(ucg_op_t op, ucg_dtype_t dtype, T a, T b, T expect)
{
    constexpr std::size_t kBytes =
        std::is_same_v<T, long double> ? 10 : sizeof(T);
    for (const T &x : reduce_all(op, dtype, a, b)) {
        if (std::memcmp(&x, &expect, kBytes) != 0) {
            return false;
        }
    }
    return true;
}

template <typename P> void check_loc_ties(ucg_dtype_t dtype)
{
    INFO(ucg_dtype_name(dtype));
    using V = decltype(P::value);
    const auto loc = [&](ucg_op_t op, P a, P b) {
        return reduce_all<P>(op, dtype, a, b)[kCount - 1];
    };
    const P small{V(1), 5}, small_low{V(1), 3}, big{V(2), 9};
    for (ucg_op_t op : {UCG_OP_MAXLOC, UCG_OP_MINLOC}) {
        CHECK(loc(op, small, small_low).index == 3); // tie: smaller index
        CHECK(loc(op, small_low, small).index == 3);
    }
    CHECK(loc(UCG_OP_MAXLOC, small, big).index == 9);
    CHECK(loc(UCG_OP_MAXLOC, big, small).index == 9);
    CHECK(loc(UCG_OP_MINLOC, big, small).index == 5);
    CHECK(loc(UCG_OP_MINLOC, small, big).index == 5);
    CHECK(loc(UCG_OP_MAXLOC, small, big).value == V(2));
    CHECK(loc(UCG_OP_MINLOC, big, small_low).value == V(1));
}

} // namespace

TEST_CASE("ucg_reduce: integer sums and products wrap, never saturate",
          "[reduce]")
{
    CHECK(gives<int8_t>(UCG_OP_SUM, UCG_DTYPE_INT8, 127, 1, -128));
    CHECK(gives<int8_t>(UCG_OP_SUM, UCG_DTYPE_INT8, -128, -1, 127));
    CHECK(gives<uint8_t>(UCG_OP_SUM, UCG_DTYPE_UINT8, 255, 1, 0));
    CHECK(gives<int16_t>(UCG_OP_SUM, UCG_DTYPE_INT16, 32767, 1, -32768));
    CHECK(gives<uint16_t>(UCG_OP_SUM, UCG_DTYPE_UINT16, 65535, 2, 1));
    CHECK(gives<int32_t>(UCG_OP_PROD, UCG_DTYPE_INT32, INT_MIN, -1, INT_MIN));
    CHECK(gives<int32_t>(UCG_OP_SUM, UCG_DTYPE_INT32, INT_MAX, 1, INT_MIN));
    CHECK(gives<int64_t>(UCG_OP_SUM, UCG_DTYPE_INT64, INT64_MAX, 1, INT64_MIN));
    CHECK(
        gives<int64_t>(UCG_OP_PROD, UCG_DTYPE_INT64, INT64_MIN, -1, INT64_MIN));
    // 65535 * 65535 overflows a signed int if uint16 promotes to int.
    CHECK(gives<uint16_t>(UCG_OP_PROD, UCG_DTYPE_UINT16, 65535, 65535, 1));
    CHECK(gives<int8_t>(UCG_OP_PROD, UCG_DTYPE_INT8, 16, 16, 0));
    CHECK(
        gives<uint32_t>(UCG_OP_PROD, UCG_DTYPE_UINT32, 0x10000u, 0x10000u, 0u));
}

TEST_CASE("ucg_reduce: logical operators give 1 or 0", "[reduce]")
{
    CHECK(gives<int32_t>(UCG_OP_LAND, UCG_DTYPE_INT32, 5, -3, 1));
    CHECK(gives<int32_t>(UCG_OP_LAND, UCG_DTYPE_INT32, 5, 0, 0));
    CHECK(gives<uint8_t>(UCG_OP_LOR, UCG_DTYPE_UINT8, 0, 200, 1));
    CHECK(gives<int64_t>(UCG_OP_LXOR, UCG_DTYPE_INT64, 4, 9, 0));
    CHECK(gives<int16_t>(UCG_OP_LXOR, UCG_DTYPE_INT16, 0, -9, 1));
    CHECK(gives<double>(UCG_OP_LAND, UCG_DTYPE_DOUBLE, 2.5, -0.5, 1.0));
    CHECK(gives<double>(UCG_OP_LAND, UCG_DTYPE_DOUBLE, 2.5, -0.0, 0.0));
    CHECK(gives<float>(UCG_OP_LOR, UCG_DTYPE_FLOAT, 0.0f, -0.0f, 0.0f));
    CHECK(gives<float>(UCG_OP_LOR, UCG_DTYPE_FLOAT, 0.0f, NAN, 1.0f));
    CHECK(gives<long double>(UCG_OP_LXOR, UCG_DTYPE_LONG_DOUBLE, 3.0L, 0.0L,
                             1.0L));
    // C _Bool: one byte, 0 or 1 (std::vector<bool> has no data()).
    CHECK(gives<uint8_t>(UCG_OP_LXOR, UCG_DTYPE_BOOL, 1, 1, 0));
    CHECK(gives<uint8_t>(UCG_OP_LOR, UCG_DTYPE_BOOL, 0, 1, 1));
    CHECK(gives<uint8_t>(UCG_OP_LAND, UCG_DTYPE_BOOL, 1, 0, 0));
}

TEST_CASE("ucg_reduce: min and max keep the first operand, a NaN never "
          "replaces a number",
          "[reduce]")
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (ucg_op_t op : {UCG_OP_MIN, UCG_OP_MAX}) {
        INFO(ucg_op_name(op));
        CHECK(gives<double>(op, UCG_DTYPE_DOUBLE, 1.0, nan, 1.0));
        CHECK(
            std::isnan(reduce_all<double>(op, UCG_DTYPE_DOUBLE, nan, 1.0)[0]));
        CHECK(gives<float>(op, UCG_DTYPE_FLOAT, -2.0f, NAN, -2.0f));
        CHECK(gives<long double>(op, UCG_DTYPE_LONG_DOUBLE, 7.0L, NAN, 7.0L));
        // Equal values: the first operand's bits stay.
        CHECK(gives<double>(op, UCG_DTYPE_DOUBLE, -0.0, 0.0, -0.0));
        CHECK(gives<float>(op, UCG_DTYPE_FLOAT, 0.0f, -0.0f, 0.0f));
    }
    CHECK(
        gives<double>(UCG_OP_MIN, UCG_DTYPE_DOUBLE, 1.0, -INFINITY, -INFINITY));
    CHECK(gives<float>(UCG_OP_MAX, UCG_DTYPE_FLOAT, 1.0f, 2.0f, 2.0f));
    CHECK(gives<int64_t>(UCG_OP_MAX, UCG_DTYPE_INT64, -5, INT64_MIN, -5));
    CHECK(gives<uint32_t>(UCG_OP_MIN, UCG_DTYPE_UINT32, 7u, 0xFFFFFFFFu, 7u));
    CHECK(gives<int8_t>(UCG_OP_MIN, UCG_DTYPE_INT8, 7, -128, -128));
}

TEST_CASE("ucg_reduce: maxloc and minloc take the larger or smaller value, "
          "on a tie the smaller index",
          "[reduce]")
{
    check_loc_ties<FloatInt>(UCG_DTYPE_FLOAT_INT);
    check_loc_ties<DoubleInt>(UCG_DTYPE_DOUBLE_INT);
    check_loc_ties<LongInt>(UCG_DTYPE_LONG_INT);
    check_loc_ties<TwoInt>(UCG_DTYPE_2INT);
    check_loc_ties<ShortInt>(UCG_DTYPE_SHORT_INT);
    check_loc_ties<LongDoubleInt>(UCG_DTYPE_LONG_DOUBLE_INT);
    // A NaN value in the second operand never wins.
    const FloatInt num{1.0f, 4}, nan{NAN, 0};
    CHECK(reduce_all(UCG_OP_MAXLOC, UCG_DTYPE_FLOAT_INT, num, nan)[0].index ==
          4);
    CHECK(reduce_all(UCG_OP_MINLOC, UCG_DTYPE_FLOAT_INT, num, nan)[0].index ==
          4);
}

TEST_CASE("ucg_reduce: complex sums and products", "[reduce]")
{
    struct Complex {
        double re, im;
    };
    const auto prod = reduce_all<Complex>(UCG_OP_PROD, UCG_DTYPE_DOUBLE_COMPLEX,
                                          {1.0, 2.0}, {3.0, -1.0});
    CHECK(prod[0].re == 5.0); // (1 + 2i)(3 - i) = 5 + 5i
    CHECK(prod[0].im == 5.0);
    const auto sum = reduce_all<Complex>(UCG_OP_SUM, UCG_DTYPE_DOUBLE_COMPLEX,
                                         {1.0, 2.0}, {3.0, -1.0});
    CHECK(sum[0].re == 4.0);
    CHECK(sum[0].im == 1.0);
}

TEST_CASE("ucg_reduce_check: refused pairs and values out of range", "[reduce]")
{
    for (auto [op, dtype] : {std::pair{UCG_OP_BAND, UCG_DTYPE_FLOAT},
                             {UCG_OP_BXOR, UCG_DTYPE_BOOL},
                             {UCG_OP_SUM, UCG_DTYPE_BOOL},
                             {UCG_OP_MIN, UCG_DTYPE_DOUBLE_COMPLEX},
                             {UCG_OP_LAND, UCG_DTYPE_FLOAT_COMPLEX},
                             {UCG_OP_MAXLOC, UCG_DTYPE_INT32},
                             {UCG_OP_SUM, UCG_DTYPE_2INT},
                             {UCG_OP_USER, UCG_DTYPE_INT32},
                             {UCG_OP_USER, UCG_DTYPE_DOUBLE}}) {
        INFO(ucg_op_name(op) << " " << ucg_dtype_name(dtype));
        CHECK(ucg_reduce_check(op, dtype) == UCS_ERR_UNSUPPORTED);
        CHECK(ucg_reduce_kernel(op, dtype) == nullptr);
    }
    // C++ may only name values within the enums' bit ranges (UBSan checks);
    // C callers pass any int, below.
    const auto bad_op = static_cast<ucg_op_t>(UCG_OP_LAST);
    const auto bad_dtype = static_cast<ucg_dtype_t>(UCG_DTYPE_LAST);
    CHECK(ucg_reduce_check(bad_op, UCG_DTYPE_INT32) == UCS_ERR_INVALID_PARAM);
    CHECK(ucg_reduce_check(UCG_OP_SUM, bad_dtype) == UCS_ERR_INVALID_PARAM);
    CHECK(ucg_reduce_kernel(bad_op, UCG_DTYPE_INT32) == nullptr);
    CHECK(ucg_reduce_kernel(UCG_OP_SUM, bad_dtype) == nullptr);
    CHECK(ucg_dtype_size(bad_dtype) == 0);
    CHECK(std::string(ucg_dtype_name(bad_dtype)) == "?");
    CHECK(std::string(ucg_op_name(bad_op)) == "?");
}

TEST_CASE("ucg_reduce_check: any int from a C caller", "[reduce]")
{
    for (int op : {-1, int{UCG_OP_LAST}, 1000, INT_MIN}) {
        CHECK(c_caller_check(op, UCG_DTYPE_INT32) == UCS_ERR_INVALID_PARAM);
    }
    for (int dtype : {-7, int{UCG_DTYPE_LAST}, INT_MAX}) {
        CHECK(c_caller_check(UCG_OP_SUM, dtype) == UCS_ERR_INVALID_PARAM);
    }
    CHECK(c_caller_check(UCG_OP_SUM, UCG_DTYPE_INT32) == UCS_OK);
    CHECK(c_caller_sum_int32() == 66);
}
