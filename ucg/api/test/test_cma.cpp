// SPDX-License-Identifier: BSD-3-Clause
// One copy between ranks of a machine (api/ucp_fabric.h, decision 0027):
// from UCG_CMA_THRESH a message is read from the sender's memory; a read
// that fails falls back to UCP, and the sender's later messages to that
// rank say "the data follows"; members with other thresholds refuse the
// group together.
#include "api/internal.h"
#include "rank_env.h"

#include <catch2/catch.hpp>
#include <ucg_test/check.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <sys/uio.h>

namespace {

using ucg::test::RefCase;

/// Sets an environment variable for the forked ranks of one test.
class ScopedEnv {
  public:
    ScopedEnv(const char *name, const char *value) : name_(name)
    {
        REQUIRE(setenv(name, value, 1) == 0);
    }
    ~ScopedEnv() { unsetenv(name_); }
    ScopedEnv(const ScopedEnv &) = delete;
    ScopedEnv &operator=(const ScopedEnv &) = delete;

  private:
    const char *name_;
};

constexpr std::size_t kCount = 160000; // bytes per block

RefCase exchange(ucg_coll_type_t coll, int size, int rank, std::size_t count)
{
    RefCase c;
    c.coll = coll;
    c.size = size;
    c.rank = rank;
    c.count = count;
    c.prepare();
    return c;
}

ssize_t refuse_reads(pid_t, const iovec *, unsigned long, const iovec *,
                     unsigned long, unsigned long)
{
    errno = EPERM;
    return -1;
}

} // namespace

TEST_CASE("messages between ranks of one machine from UCG_CMA_THRESH are "
          "read from the sender's memory, smaller ones are not",
          "[ucg][cma][fork]")
{
    ScopedEnv env("UCG_CMA_THRESH", "64k");
    // Three ranks posing as two hosts: one machine, so every pair reads.
    ucg::test::run_ranks(
        3, 2,
        [](ucg_group_h g, int rank) {
            for (const ucg_coll_type_t coll :
                 {UCG_COLL_ALLGATHER, UCG_COLL_ALLTOALL}) {
                RefCase small = exchange(coll, 3, rank, 1000);
                ucg::test::run_case(g, small, 2);
            }
            UCG_CHECK(g->fabric->cma_stats().reads == 0);
            for (const ucg_coll_type_t coll :
                 {UCG_COLL_ALLGATHER, UCG_COLL_ALLTOALL}) {
                RefCase big = exchange(coll, 3, rank, kCount);
                ucg::test::run_case(g, big, 2);
            }
            const ucg::rt::CmaStats &s = g->fabric->cma_stats();
            UCG_CHECK(s.reads >= 2);
            UCG_CHECK(s.read_bytes >= s.reads * kCount);
            UCG_CHECK(s.failed == 0 && s.forwarded == 0);
        },
        120, "allgather:0-inf:linear;alltoall:0-inf:linear");
}

TEST_CASE("UCG_CMA_THRESH=off reads nothing, and a rank whose reads fail gets "
          "the bytes through UCP, and later ones unasked",
          "[ucg][cma][fork]")
{
    SECTION("off")
    {
        ScopedEnv env("UCG_CMA_THRESH", "off");
        ucg::test::run_ranks(2, 1, [](ucg_group_h g, int rank) {
            RefCase c = exchange(UCG_COLL_ALLGATHER, 2, rank, kCount);
            ucg::test::run_case(g, c, 2);
            UCG_CHECK(g->fabric->cma_stats().reads == 0);
        });
    }
    SECTION("reads refused")
    {
        ScopedEnv env("UCG_CMA_THRESH", "4k");
        ucg::test::run_ranks(
            2, 1,
            [](ucg_group_h g, int rank) {
                if (rank == 1) {
                    g->fabric->set_cma_reader(refuse_reads);
                }
                // Four calls: rank 0's first message to rank 1 finds the
                // read refused, its later ones say the data follows.
                RefCase c = exchange(UCG_COLL_ALLGATHER, 2, rank, kCount);
                ucg::test::run_case(g, c, 4);
                const ucg::rt::CmaStats &s = g->fabric->cma_stats();
                if (rank == 1) {
                    UCG_CHECK(s.failed == 1 && s.reads == 0);
                } else {
                    UCG_CHECK(s.reads >= 4 && s.forwarded >= 3);
                }
            },
            120, "allgather:0-inf:linear");
    }
}

TEST_CASE("members with another one-copy threshold (UCG_CMA_THRESH), or one "
          "that does not parse, refuse the group together",
          "[ucg][cma][fork]")
{
    auto setup = [](const char *mine, const char *rank1) {
        return [mine, rank1](int rank) {
            UCG_CHECK(setenv("UCG_CMA_THRESH", rank == 1 ? rank1 : mine, 1) ==
                      0);
        };
    };
    CHECK(ucg::test::expect_group_create(3, UCS_ERR_INVALID_PARAM,
                                         setup("16k", "32k")));
    CHECK(ucg::test::expect_group_create(3, UCS_ERR_INVALID_PARAM,
                                         setup("16k", "off")));
    CHECK(ucg::test::expect_group_create(3, UCS_ERR_INVALID_PARAM,
                                         setup("12q", "12q")));
    CHECK(ucg::test::expect_group_create(3, UCS_OK, setup("off", "inf")));
    CHECK(ucg::test::expect_group_create(3, UCS_OK, setup("8k", "8192")));
}
