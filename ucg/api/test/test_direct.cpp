// SPDX-License-Identifier: BSD-3-Clause
// Which calls run as the host group's direct messages (decision 0022):
// barrier (with a core per rank), bcast, reduce, allreduce, allgather,
// alltoall, gather and scatter of up to the transport's slot on a group of
// one host, with a built-in operator and no UCG_TUNE rule or plan file for
// them; everything else takes a plan. Every result is checked against the
// reference model.
#include "coll_ref.h"
#include "rank_env.h"

#include <catch2/catch.hpp>
#include <ucg_test/check.h>

#include <cstdlib>
#include <sched.h>
#include <string>

namespace ucg::test {

namespace {

constexpr const char *kDirect = "direct [host: mm_incast]";

// Whether `n` ranks of this machine have a core each: a barrier runs
// direct only then (decision 0022).
bool core_each(int n)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof(set), &set) == 0 && n <= CPU_COUNT(&set);
}

RefCase make(ucg_coll_type_t coll, int rank, int size, std::size_t count)
{
    RefCase c;
    c.coll = coll;
    c.size = size;
    c.rank = rank;
    c.root = size - 1;
    c.count = count;
    return c;
}

// Whether each call of `calls` ran direct on every rank, as `expect` says.
void expect_direct(int size, int hosts, const char *tune,
                   const std::vector<std::pair<RefCase, bool>> &calls)
{
    run_ranks(
        size, hosts,
        [&calls](ucg_group_h g, int rank) {
            for (auto [c, direct] : calls) {
                c.rank = rank;
                c.prepare();
                const std::string name = run_case(g, c, 1);
                if ((name == kDirect) != direct) {
                    ucg_test::fail_check(
                        __FILE__, __LINE__, ucg_coll_type_name(c.coll),
                        name + " for " + std::to_string(c.count) + " elements");
                }
            }
        },
        120, tune);
}

} // namespace

TEST_CASE("small collectives of a one-host group run as direct messages",
          "[ucg][fork]")
{
    constexpr int n = 3;
    RefCase user = make(UCG_COLL_ALLREDUCE, 0, n, 2);
    user.user_op = &kUserSum;
    RefCase in_place = make(UCG_COLL_ALLREDUCE, 0, n, 3);
    in_place.in_place = true;
    RefCase maxloc = make(UCG_COLL_REDUCE, 0, n, 5);
    maxloc.op = UCG_OP_MAXLOC;
    maxloc.dtype = UCG_DTYPE_DOUBLE_INT;
    RefCase gather_in_place = make(UCG_COLL_GATHER, 0, n, 7);
    gather_in_place.in_place = true;
    RefCase scatter_in_place = make(UCG_COLL_SCATTER, 0, n, 9);
    scatter_in_place.in_place = true;
    expect_direct(n, 1, nullptr,
                  {{make(UCG_COLL_BARRIER, 0, n, 0), core_each(n)},
                   {make(UCG_COLL_BCAST, 0, n, 4096), true},
                   {make(UCG_COLL_BCAST, 0, n, 4097), false},
                   {make(UCG_COLL_ALLREDUCE, 0, n, 1024), true}, // 4 KiB
                   {make(UCG_COLL_ALLREDUCE, 0, n, 1025), false},
                   {in_place, true},
                   {maxloc, true},
                   {make(UCG_COLL_ALLGATHER, 0, n, 100), true},
                   // An alltoall's blocks fill half a slot at most.
                   {make(UCG_COLL_ALLTOALL, 0, n, 682), true},
                   {make(UCG_COLL_ALLTOALL, 0, n, 683), false},
                   {make(UCG_COLL_GATHER, 0, n, 4096), true},
                   {make(UCG_COLL_GATHER, 0, n, 4097), false},
                   {gather_in_place, true},
                   // A scatter's root slot holds every rank's block.
                   {make(UCG_COLL_SCATTER, 0, n, 1365), true},
                   {make(UCG_COLL_SCATTER, 0, n, 1366), false},
                   {scatter_in_place, true},
                   {make(UCG_COLL_SCAN, 0, n, 1), false},
                   {user, false}});
    // Two ranks have a core each here (the CI machine has two).
    expect_direct(2, 1, nullptr,
                  {{make(UCG_COLL_BARRIER, 0, 2, 0), core_each(2)}});
}

TEST_CASE("a group of several hosts, a UCG_TUNE rule or DIRECT_SIZE=0 "
          "takes plans",
          "[ucg][fork]")
{
    const RefCase small = make(UCG_COLL_ALLREDUCE, 0, 4, 2);
    SECTION("posing as two hosts")
    {
        expect_direct(4, 2, nullptr, {{small, false}});
    }
    SECTION("a rule for the collective")
    {
        expect_direct(4, 1, "allreduce:0-4k:recursive_doubling",
                      {{small, false}, {make(UCG_COLL_BCAST, 0, 4, 8), true}});
    }
    SECTION("member 0's mm_incast configured no direct slots")
    {
        ::setenv("UCX_MM_INCAST_DIRECT_SIZE", "0", 1); // inherited
        expect_direct(4, 1, nullptr, {{small, false}});
        ::unsetenv("UCX_MM_INCAST_DIRECT_SIZE");
    }
}

TEST_CASE("more direct collectives in flight than the transport queues",
          "[ucg][fork]")
{
    constexpr int n = 2;
    run_ranks(n, 1, [](ucg_group_h g, int rank) {
        std::vector<RefCase> cases(100, make(UCG_COLL_ALLREDUCE, rank, n, 4));
        std::vector<ucg_coll_h> hs(cases.size());
        for (std::size_t i = 0; i < cases.size(); ++i) {
            cases[i].iter = static_cast<int>(i);
            cases[i].prepare();
            ucg_coll_args_t a = cases[i].args();
            UCG_CHECK(ucg_collective_init(g, &a, &hs[i]) == UCS_OK);
        }
        for (ucg_coll_h h : hs) { // 64 in flight, then starts wait
            UCG_CHECK(ucg_collective_start(h) == UCS_OK);
        }
        for (std::size_t i = hs.size(); i-- > 0;) {
            UCG_CHECK(ucg_collective_wait(hs[i]) == UCS_OK);
            const std::string err = cases[i].check();
            if (!err.empty()) {
                ucg_test::fail_check(__FILE__, __LINE__, "output", err);
            }
            ucg_collective_free(hs[i]);
        }
    });
}

} // namespace ucg::test
