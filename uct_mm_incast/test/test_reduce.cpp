// SPDX-License-Identifier: BSD-3-Clause
// Reduction kernels: pairs refused, identities, atomic == plain.
#include "incast_test_util.h"

#include <catch2/catch.hpp>

using namespace incast_test;

TEST_CASE("bitwise operators on floating types are refused",
          "[mm_incast][reduce]")
{
    for (auto op :
         {UCT_MM_INCAST_OP_BAND, UCT_MM_INCAST_OP_BOR, UCT_MM_INCAST_OP_BXOR}) {
        CHECK(check_op(op, UCT_MM_INCAST_DTYPE_FLOAT) == UCS_ERR_UNSUPPORTED);
        CHECK(check_op(op, UCT_MM_INCAST_DTYPE_DOUBLE) == UCS_ERR_UNSUPPORTED);
        CHECK(reduce_fn(op, UCT_MM_INCAST_DTYPE_FLOAT) == nullptr);
        CHECK(check_op(op, UCT_MM_INCAST_DTYPE_INT32) == UCS_OK);
    }
    CHECK(check_op(UCT_MM_INCAST_OP_LAST, UCT_MM_INCAST_DTYPE_INT8) ==
          UCS_ERR_INVALID_PARAM);
    CHECK(check_op(UCT_MM_INCAST_OP_SUM, UCT_MM_INCAST_DTYPE_LAST) ==
          UCS_ERR_INVALID_PARAM);
}

TEST_CASE("identity, plain and atomic kernels agree for every pair",
          "[mm_incast][reduce]")
{
    for (int o = UCT_MM_INCAST_OP_SUM; o < UCT_MM_INCAST_OP_LAST; ++o) {
        for (int d = 0; d < UCT_MM_INCAST_DTYPE_LAST; ++d) {
            const auto op = static_cast<uct_mm_incast_op_t>(o);
            const auto dtype = static_cast<uct_mm_incast_dtype_t>(d);
            if (check_op(op, dtype) != UCS_OK) {
                continue;
            }
            with_dtype(dtype, [&](auto t) {
                using T = decltype(t);
                constexpr std::size_t n = 37;
                std::vector<T> plain(n), atomic(n), ref(n);
                fill_identity(plain.data(), n, op, dtype);
                fill_identity(atomic.data(), n, op, dtype);
                for (uint32_t m = 0; m < 5; ++m) {
                    std::vector<T> src(n);
                    for (std::size_t i = 0; i < n; ++i) {
                        src[i] = value<T>(m, 1, i);
                        ref[i] =
                            (m == 0) ? src[i] : ref_apply(op, ref[i], src[i]);
                    }
                    reduce_fn(op, dtype)(plain.data(), src.data(), n);
                    atomic_reduce_fn(op, dtype)(atomic.data(), src.data(), n);
                }
                INFO("op " << o << " dtype " << d);
                CHECK(std::memcmp(plain.data(), ref.data(), n * sizeof(T)) ==
                      0);
                CHECK(std::memcmp(atomic.data(), ref.data(), n * sizeof(T)) ==
                      0);
                return 0;
            });
        }
    }
}

TEST_CASE("integer sum and bitwise pairs use one hardware RMW",
          "[mm_incast][reduce]")
{
    CHECK(atomic_is_single_rmw(UCT_MM_INCAST_OP_SUM, UCT_MM_INCAST_DTYPE_INT8));
    CHECK(atomic_is_single_rmw(UCT_MM_INCAST_OP_BXOR,
                               UCT_MM_INCAST_DTYPE_UINT64));
    CHECK_FALSE(
        atomic_is_single_rmw(UCT_MM_INCAST_OP_SUM, UCT_MM_INCAST_DTYPE_DOUBLE));
    CHECK_FALSE(
        atomic_is_single_rmw(UCT_MM_INCAST_OP_MAX, UCT_MM_INCAST_DTYPE_INT32));
    // x86-64 and aarch64 have lock-free atomics for 1..8 bytes: no pair
    // falls back to LOCKED there.
    CHECK(atomic_reduce_fn(UCT_MM_INCAST_OP_PROD, UCT_MM_INCAST_DTYPE_DOUBLE) !=
          nullptr);
}
