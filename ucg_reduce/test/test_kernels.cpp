// SPDX-License-Identifier: BSD-3-Clause
// Every op x dtype kernel against the reference, at every count that
// crosses a vector or block edge; the table; sizes and names.
#include "reduce_ref.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <set>
#include <string>

using namespace reduce_test;

namespace {

constexpr std::size_t kGuard = 3; // elements after count that must not change

/// Empty when ucg_reduce(dst, src, count) equals the reference; else what
/// differs. dst == src when `in_place`.
std::string check_against_reference(ucg_op_t op, ucg_dtype_t dtype,
                                    std::size_t count, bool in_place,
                                    std::mt19937_64 &rng)
{
    const std::size_t size = element_size(dtype);
    auto dst = random_elements(dtype, count + kGuard, rng);
    const auto src = in_place ? dst : random_elements(dtype, count, rng);
    auto expect = dst;
    for (std::size_t i = 0; i < count; ++i) {
        ref_apply(op, dtype, expect.data() + i * size, src.data() + i * size);
    }
    ucg_reduce(op, dtype, dst.data(), in_place ? dst.data() : src.data(),
               count);
    const std::size_t at =
        first_difference(dtype, dst.data(), expect.data(), count + kGuard);
    if (at == count + kGuard) {
        return "";
    }
    return std::string(ucg_op_name(op)) + " " + ucg_dtype_name(dtype) +
           " count " + std::to_string(count) + (in_place ? " in place" : "") +
           ": element " + std::to_string(at) + " is " +
           element_text(dtype, dst.data() + at * size) + ", expected " +
           element_text(dtype, expect.data() + at * size) + " (src " +
           (at < count ? element_text(dtype, src.data() + at * size) : "-") +
           ")";
}

/// Every defined pair whose dtype is in [first, last].
void check_dtypes(ucg_dtype_t first, ucg_dtype_t last)
{
    std::mt19937_64 rng(first * 1000 + last);
    for (ucg_dtype_t dtype : all_dtypes()) {
        if ((dtype < first) || (dtype > last)) {
            continue;
        }
        const std::size_t block = 4096 / element_size(dtype);
        for (ucg_op_t op : all_ops()) {
            if (!mpi_defines(op, dtype)) {
                continue;
            }
            for (std::size_t count :
                 {std::size_t{0}, std::size_t{1}, std::size_t{7}, block - 1,
                  block, block + 1, std::size_t{100000}}) {
                CHECK(check_against_reference(op, dtype, count, false, rng) ==
                      "");
            }
            for (std::size_t count : {std::size_t{7}, block + 1}) {
                CHECK(check_against_reference(op, dtype, count, true, rng) ==
                      "");
            }
        }
    }
}

} // namespace

TEST_CASE("ucg_reduce: a kernel for exactly the pairs MPI defines", "[reduce]")
{
    int kernels = 0;
    for (ucg_op_t op : all_ops()) {
        for (ucg_dtype_t dtype : all_dtypes()) {
            INFO(ucg_op_name(op) << " " << ucg_dtype_name(dtype));
            const bool defined = mpi_defines(op, dtype);
            CHECK(ucg_reduce_check(op, dtype) ==
                  (defined ? UCS_OK : UCS_ERR_UNSUPPORTED));
            CHECK((ucg_reduce_kernel(op, dtype) != nullptr) == defined);
            kernels += defined ? 1 : 0;
        }
    }
    // 8 integers x 10, 3 floating x 7, bool x 3, 3 complex x 2, 6 pairs x 2.
    CHECK(kernels == 122);
}

TEST_CASE("ucg_reduce: sizes are the C layouts', names are distinct",
          "[reduce]")
{
    std::set<std::string> names;
    for (ucg_dtype_t dtype : all_dtypes()) {
        CHECK(ucg_dtype_size(dtype) == element_size(dtype));
        names.insert(ucg_dtype_name(dtype));
    }
    for (ucg_op_t op : all_ops()) {
        names.insert(ucg_op_name(op));
    }
    CHECK(names.size() ==
          std::size_t{UCG_DTYPE_LAST} + std::size_t{UCG_OP_LAST});
    CHECK(names.count("?") == 0);
    CHECK(std::string(ucg_dtype_name(UCG_DTYPE_LONG_DOUBLE_INT)) ==
          "long_double_int");
    CHECK(std::string(ucg_op_name(UCG_OP_MINLOC)) == "minloc");
    CHECK(ucg_dtype_size(UCG_DTYPE_LONG_DOUBLE_INT) == sizeof(LongDoubleInt));
}

TEST_CASE("ucg_reduce: integer kernels match the reference", "[reduce]")
{
    check_dtypes(UCG_DTYPE_INT8, UCG_DTYPE_UINT64);
}

TEST_CASE("ucg_reduce: floating and bool kernels match the reference",
          "[reduce]")
{
    check_dtypes(UCG_DTYPE_FLOAT, UCG_DTYPE_BOOL);
}

TEST_CASE("ucg_reduce: complex and pair kernels match the reference",
          "[reduce]")
{
    check_dtypes(UCG_DTYPE_FLOAT_COMPLEX, UCG_DTYPE_LONG_DOUBLE_INT);
}

TEST_CASE("ucg_reduce: the kernel pointer is the kernel ucg_reduce runs",
          "[reduce]")
{
    int32_t a[5] = {1, 2, 3, 4, 5};
    const int32_t b[5] = {10, 20, 30, 40, 50};
    ucg_reduce_kernel(UCG_OP_SUM, UCG_DTYPE_INT32)(a, b, 5);
    CHECK(a[0] == 11);
    CHECK(a[4] == 55);
}
