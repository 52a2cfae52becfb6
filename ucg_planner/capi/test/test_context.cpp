// SPDX-License-Identifier: BSD-3-Clause
// UCG's own UCP context: the shared-memory FIFO element it asks for
// (capi/shm_fifo.h, decision 0019), the user's setting winning, and a
// group refused where the processes of a host disagree on it.
#include "capi/internal.h"
#include "capi/shm_fifo.h"
#include "rank_env.h"

#include <catch2/catch.hpp>
#include <ucg_test/check.h>

#include <cstdlib>

using ucg::rt::user_sets_fifo_elem;

TEST_CASE("a FIFO element size in the environment is the user's",
          "[ucg][context]")
{
    const char *none[] = {"PATH=/bin", "UCX_TLS=sm,self", nullptr};
    CHECK_FALSE(user_sets_fifo_elem(none));
    CHECK_FALSE(user_sets_fifo_elem(nullptr));
    const char *mm[] = {"HOME=/", "UCX_MM_FIFO_ELEM_SIZE=256", nullptr};
    CHECK(user_sets_fifo_elem(mm));
    const char *sysv[] = {"UCX_SYSV_FIFO_ELEM_SIZE=128", nullptr};
    CHECK(user_sets_fifo_elem(sysv));
    const char *prefixed[] = {"UCG_UCX_POSIX_FIFO_ELEM_SIZE=1k", nullptr};
    CHECK(user_sets_fifo_elem(prefixed));
    // Other programs' variables and other settings are not.
    const char *other[] = {"MY_FIFO_ELEM_SIZE=64", "UCX_MM_FIFO_SIZE=64",
                           "UCX_FIFO_ELEM_SIZE_X=1", nullptr};
    CHECK_FALSE(user_sets_fifo_elem(other));
}

namespace {

// The inline limit (am.max_short) of UCG's shared-memory UCP lane, as its
// context found it (sysv, else posix); 0 if UCP opened neither.
size_t shm_max_short()
{
    ucg_context_h ctx = nullptr;
    REQUIRE(ucg_context_create(nullptr, &ctx) == UCS_OK);
    const size_t max_short =
        ctx->shm_short[0] != 0 ? ctx->shm_short[0] : ctx->shm_short[1];
    ucg_context_destroy(ctx);
    return max_short;
}

} // namespace

TEST_CASE("UCG's own UCP context sends 128-500 B messages inline over "
          "shared memory, unless the user set the FIFO element",
          "[ucg][context]")
{
    if (user_sets_fifo_elem(environ)) {
        WARN("the environment sets a FIFO element size: not checked");
        return;
    }
    const size_t ours = shm_max_short();
    if (ours == 0) {
        WARN("UCP opened neither sysv nor posix here: not checked");
        return;
    }
    CHECK(ours >= 400); // UCX's default element carries about 100 B
    REQUIRE(setenv("UCX_MM_FIFO_ELEM_SIZE", "128", 1) == 0);
    const size_t users = shm_max_short();
    unsetenv("UCX_MM_FIFO_ELEM_SIZE");
    CHECK(users < 128);
}

TEST_CASE("ranks of one host whose UCX FIFO elements differ refuse the "
          "group together",
          "[ucg][context][fork]")
{
    if (user_sets_fifo_elem(environ) || shm_max_short() == 0) {
        WARN("a FIFO element size set, or no sysv or posix: not checked");
        return;
    }
    CHECK(ucg::test::expect_group_create(3, UCS_ERR_UNSUPPORTED, [](int rank) {
        if (rank == 1) { // a process whose UCP keeps UCX's 128 B element
            UCG_CHECK(setenv("UCX_MM_FIFO_ELEM_SIZE", "128", 1) == 0);
        }
    }));
}
