// SPDX-License-Identifier: BSD-3-Clause
// ucg_reduce on a pair ucg_reduce_check refuses is a bug: it asserts in
// builds with assertions and leaves dst alone without them.
#include "ucg_test/fork_ranks.h"

#include <ucg/reduce.h>

#include <catch2/catch.hpp>

TEST_CASE("ucg_reduce: a refused pair asserts, or does nothing in release",
          "[reduce][fork]")
{
    const ucg_test::ForkResult result = ucg_test::run_fork_ranks(1, [](int) {
        float dst[4] = {1, 2, 3, 4};
        const float src[4] = {1, 1, 1, 1};
        ucg_reduce(UCG_OP_BXOR, UCG_DTYPE_FLOAT, dst, src, 4);
        const void *srcs[1] = {src};
        ucg_reduce_multi(UCG_OP_USER, UCG_DTYPE_FLOAT, dst, srcs, 1, 4, 1);
        if ((dst[0] != 1) || (dst[3] != 4)) {
            throw std::runtime_error("dst changed");
        }
    });
#ifdef NDEBUG
    CHECK(result.ok);
#else
    REQUIRE(result.ranks.size() == 1);
    CHECK(result.ranks[0].reason.find("SIGABRT") != std::string::npos);
#endif
    INFO(result.summary());
}
