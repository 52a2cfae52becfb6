// SPDX-License-Identifier: BSD-3-Clause
// Atomic kernels equal the plain ones; which are one RMW; identities.
#include "reduce_ref.h"

#include <ucg/reduce_atomic.h>

#include <catch2/catch.hpp>

#include <cstring>

using namespace reduce_test;
namespace reduce = ucg::reduce;

namespace {

bool word_type(ucg_dtype_t dtype)
{
    return (dtype <= UCG_DTYPE_DOUBLE) || (dtype == UCG_DTYPE_BOOL);
}

bool logical(ucg_op_t op)
{
    return (op == UCG_OP_LAND) || (op == UCG_OP_LOR) || (op == UCG_OP_LXOR);
}

/// Values x for which x op identity == x can hold: logical operators
/// give 0/1, so their values are 0/1 (x lor x).
std::vector<unsigned char> identity_values(ucg_op_t op, ucg_dtype_t dtype,
                                           std::size_t count, bool with_nan,
                                           std::mt19937_64 &rng)
{
    auto values = random_elements(dtype, count, rng, with_nan);
    if (logical(op)) {
        const std::size_t size = element_size(dtype);
        for (std::size_t i = 0; i < count; ++i) {
            unsigned char *x = values.data() + i * size;
            ref_apply(UCG_OP_LOR, dtype, x, std::vector(x, x + size).data());
        }
    }
    return values;
}

} // namespace

TEST_CASE("atomic_kernel: word types have one, equal to the plain kernel",
          "[reduce]")
{
    std::mt19937_64 rng(21);
    const std::size_t count = 1000;
    for (ucg_op_t op : all_ops()) {
        for (ucg_dtype_t dtype : all_dtypes()) {
            INFO(ucg_op_name(op) << " " << ucg_dtype_name(dtype));
            const reduce::AtomicKernel kernel =
                reduce::atomic_kernel(op, dtype);
            // x86-64 and aarch64 have lock-free atomics of 1 to 8 bytes.
            CHECK((kernel != nullptr) ==
                  (mpi_defines(op, dtype) && word_type(dtype)));
            if (kernel == nullptr) {
                continue;
            }
            auto plain = random_elements(dtype, count, rng);
            auto atomic = plain;
            const auto src = random_elements(dtype, count, rng);
            ucg_reduce(op, dtype, plain.data(), src.data(), count);
            kernel(atomic.data(), src.data(), count);
            CHECK(std::memcmp(plain.data(), atomic.data(), plain.size()) == 0);
        }
    }
}

TEST_CASE("atomic_is_single_rmw: integer sum and bitwise operators only",
          "[reduce]")
{
    for (ucg_op_t op : all_ops()) {
        for (ucg_dtype_t dtype : all_dtypes()) {
            INFO(ucg_op_name(op) << " " << ucg_dtype_name(dtype));
            const bool integer = dtype <= UCG_DTYPE_UINT64;
            const bool rmw_op = (op == UCG_OP_SUM) || (op == UCG_OP_BAND) ||
                                (op == UCG_OP_BOR) || (op == UCG_OP_BXOR);
            CHECK(reduce::atomic_is_single_rmw(op, dtype) ==
                  (integer && rmw_op));
        }
    }
    CHECK_FALSE(reduce::atomic_is_single_rmw(static_cast<ucg_op_t>(UCG_OP_LAST),
                                             UCG_DTYPE_INT32));
}

TEST_CASE("fill_identity: x op identity == x and identity op x == x",
          "[reduce]")
{
    std::mt19937_64 rng(22);
    const std::size_t count = 500;
    for (ucg_op_t op : all_ops()) {
        for (ucg_dtype_t dtype : all_dtypes()) {
            if (!mpi_defines(op, dtype)) {
                continue;
            }
            INFO(ucg_op_name(op) << " " << ucg_dtype_name(dtype));
            std::vector<unsigned char> id(count * element_size(dtype));
            reduce::fill_identity(id.data(), count, op, dtype);
            // x op id: dst x, so a NaN x stays (kept first operand).
            const auto x = identity_values(op, dtype, count, true, rng);
            auto result = x;
            ucg_reduce(op, dtype, result.data(), id.data(), count);
            CHECK(first_difference(dtype, result.data(), x.data(), count) ==
                  count);
            // id op x: how an accumulator filled with the identity starts;
            // a NaN never replaces a min/max, so no NaN here.
            const auto y = identity_values(op, dtype, count, false, rng);
            result = id;
            ucg_reduce(op, dtype, result.data(), y.data(), count);
            CHECK(first_difference(dtype, result.data(), y.data(), count) ==
                  count);
        }
    }
}

TEST_CASE("fill_identity: -0.0 for floating sums, the extremes for loc",
          "[reduce]")
{
    double sum[2];
    reduce::fill_identity(sum, 2, UCG_OP_SUM, UCG_DTYPE_DOUBLE);
    CHECK(std::signbit(sum[1]));
    CHECK(sum[1] == 0.0);
    LongInt maxloc[1], minloc[1];
    reduce::fill_identity(maxloc, 1, UCG_OP_MAXLOC, UCG_DTYPE_LONG_INT);
    reduce::fill_identity(minloc, 1, UCG_OP_MINLOC, UCG_DTYPE_LONG_INT);
    CHECK(maxloc[0].value == std::numeric_limits<long>::lowest());
    CHECK(maxloc[0].index == std::numeric_limits<int>::max());
    CHECK(minloc[0].value == std::numeric_limits<long>::max());
    uint16_t band[3];
    reduce::fill_identity(band, 3, UCG_OP_BAND, UCG_DTYPE_UINT16);
    CHECK(band[2] == 0xFFFF);
}
