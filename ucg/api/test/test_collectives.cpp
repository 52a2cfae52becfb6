// SPDX-License-Identifier: BSD-3-Clause
// Every collective of ucg.h on forked ranks over UCP (and the host's
// one-to-many groups where they exist), 1 to 8 ranks posing as 1, 2 and 3
// hosts, every root, sizes 0, 1, odd, one transport segment plus one and
// large, in place and not, each started twice (persistent); every output
// byte compared with the reference model, sentinels included. Barriers:
// a witness (ucg_test/barrier_witness.h) sees no rank leave early.
#include "coll_ref.h"
#include "rank_env.h"
#include "ucg_test/barrier_witness.h"
#include "ucg_test/check.h"

#include <catch2/catch.hpp>

#include <string>

namespace ucg::test {

namespace {

bool has_in_place(ucg_coll_type_t c)
{
    return c != UCG_COLL_BARRIER && c != UCG_COLL_BCAST;
}

std::vector<std::size_t> counts_for(ucg_coll_type_t c, int size)
{
    const bool one_block = c == UCG_COLL_BCAST || c == UCG_COLL_REDUCE ||
                           c == UCG_COLL_ALLREDUCE || c == UCG_COLL_SCAN ||
                           c == UCG_COLL_EXSCAN;
    // 8193 bytes: one 8 KiB segment plus one. Large: 4 MiB for one block
    // (of int32 for reductions), 64 KiB per block for the P-block ones;
    // a quarter of that under sanitizers.
#ifdef UCG_TEST_SANITIZED
    constexpr unsigned kShift = 2;
#else
    constexpr unsigned kShift = 0;
#endif
    const std::size_t large =
        (one_block ? (reduces(c) ? 1u << 20 : 4u << 20)
                   : (64u << 10) / static_cast<unsigned>(size)) >>
        kShift;
    return {0, 1, 7, 8193, large};
}

// Barriers, persistent (one init, started `rounds` times) and not: no
// rank leaves before the round's late rank arrived.
void run_barriers(ucg_group_h g, int rank, ucg_test::BarrierWitness &w)
{
    ucg_coll_args_t a{};
    a.coll = UCG_COLL_BARRIER;
    ucg_coll_h h;
    UCG_CHECK(ucg_collective_init(g, &a, &h) == UCS_OK);
    constexpr std::uint64_t kRounds = 8;
    for (std::uint64_t k = 0; k < 2 * kRounds; ++k) {
        if (k == kRounds) { // the second half: an init per call
            ucg_collective_free(h);
        }
        if (k >= kRounds) {
            UCG_CHECK(ucg_collective_init(g, &a, &h) == UCS_OK);
        }
        w.arrive(rank, k);
        UCG_CHECK(ucg_collective_start(h) == UCS_OK);
        UCG_CHECK(ucg_collective_wait(h) == UCS_OK);
        const std::string early = w.left(rank, k);
        if (!early.empty()) {
            ucg_test::fail_check(__FILE__, __LINE__, "barrier",
                                 early + " (" + ucg_collective_plan_name(h) +
                                     ")");
        }
        if (k >= kRounds) {
            ucg_collective_free(h);
        }
    }
}

// Runs every case of one collective; fails the rank on the first error.
void run_collective(ucg_group_h g, int rank, int size, ucg_coll_type_t coll)
{
    const bool rooted_coll = rooted(coll);
    for (int root = 0; root < (rooted_coll ? size : 1); ++root) {
        for (std::size_t count : counts_for(coll, size)) {
            const bool big = count > 8193;
            if (big && rooted_coll && root != 0 && root != size - 1) {
                continue; // large sizes at the first and last root only
            }
            for (bool in_place : {false, true}) {
                if (in_place && !has_in_place(coll)) {
                    continue;
                }
                RefCase c;
                c.coll = coll;
                c.size = size;
                c.rank = rank;
                c.root = root;
                c.count = count;
                c.in_place = in_place;
                c.prepare();
                run_case(g, c, 2);
            }
        }
    }
}

void run_layouts(ucg_coll_type_t coll)
{
    // Every rank count from 1 to 8 on one host; posing as 2 and 3 hosts
    // from 4 ranks up (fewer ranks would be one per host).
    for (int size : {1, 2, 3, 4, 5, 7, 8}) {
        for (int hosts : {1, 2, 3}) {
            if (hosts > 1 && size < 4) {
                continue;
            }
            INFO(ucg_coll_type_name(coll)
                 << ": " << size << " ranks on " << hosts << " hosts");
            ucg_test::BarrierWitness w(size); // mapped before the fork
            run_ranks(size, hosts, [size, coll, &w](ucg_group_h g, int rank) {
                if (coll == UCG_COLL_BARRIER) {
                    run_barriers(g, rank, w);
                } else {
                    run_collective(g, rank, size, coll);
                }
            });
        }
    }
}

} // namespace

#define UCG_COLL_TEST(coll)                                                    \
    TEST_CASE(#coll " is right on 1 to 8 ranks and 1 to 3 hosts",              \
              "[ucg][fork]")                                                   \
    {                                                                          \
        run_layouts(UCG_COLL_##coll);                                          \
    }

UCG_COLL_TEST(BARRIER)
UCG_COLL_TEST(BCAST)
UCG_COLL_TEST(REDUCE)
UCG_COLL_TEST(ALLREDUCE)
UCG_COLL_TEST(GATHER)
UCG_COLL_TEST(GATHERV)
UCG_COLL_TEST(SCATTER)
UCG_COLL_TEST(SCATTERV)
UCG_COLL_TEST(ALLGATHER)
UCG_COLL_TEST(ALLGATHERV)
UCG_COLL_TEST(ALLTOALL)
UCG_COLL_TEST(ALLTOALLV)
UCG_COLL_TEST(REDUCE_SCATTER)
UCG_COLL_TEST(REDUCE_SCATTER_BLOCK)
UCG_COLL_TEST(SCAN)
UCG_COLL_TEST(EXSCAN)

// A reduce_scatter with counts runs the plan its rule names for its mean
// block (as the cost model picks for it), not one fixed algorithm: each of the
// algorithms keeps input block b in scratch block b, sized per block.
// Counts differ per block (0 to 2 elements more than `count`), and the
// hierarchical plan's three segments per block leave some chunks empty.
TEST_CASE("a reduce_scatter with counts runs the plan its rule names for "
          "its mean block on uneven blocks",
          "[ucg][fork]")
{
    struct Way {
        const char *algorithm;
        int hosts;
        const char *options;
    };
    for (const Way w : {Way{"ring", 1, ""}, Way{"recursive_halving", 1, ""},
                        Way{"hierarchical", 2, ":segments=3"}}) {
        // Mean blocks: 3 and 7 bytes (linear), 16 KiB (the algorithm).
        const std::string tune = std::string("reduce_scatter:0-64:linear;"
                                             "reduce_scatter:64-inf:") +
                                 w.algorithm + w.options;
        INFO(tune << " on " << w.hosts << " hosts");
        run_ranks(
            5, w.hosts,
            [&w](ucg_group_h g, int rank) {
                for (std::size_t count :
                     {std::size_t{0}, std::size_t{1}, std::size_t{4099}}) {
                    RefCase c =
                        ref_case(UCG_COLL_REDUCE_SCATTER, 5, rank, count);
                    const std::string name = run_case(g, c, 1);
                    const std::string want = count > 1 ? w.algorithm : "linear";
                    if (name.rfind(want, 0) != 0) {
                        ucg_test::fail_check(__FILE__, __LINE__, "plan",
                                             name + " is not " + want);
                    }
                }
            },
            120, tune.c_str());
    }
}

// Allgather's top leaders on one host bcast their blocks in turn through
// the host's shm ring (decision 0057): 3 and 5 ranks, blocks of 4099 bytes
// and 100 KiB (several ring messages each), in place and not.
TEST_CASE("an allgather whose top level names shm goes through the host's "
          "bcast ring, every block in place",
          "[ucg][fork]")
{
    const char *tune = "allgather:0-64:linear;allgather:64-inf:hierarchical;"
                       "allgather@host:64-inf:shm";
    for (int size : {3, 5}) {
        INFO(size << " ranks, " << tune);
        run_ranks(
            size, 1,
            [size](ucg_group_h g, int rank) {
                for (std::size_t count :
                     {std::size_t{4099}, std::size_t{100} << 10}) {
                    for (bool in_place : {false, true}) {
                        RefCase c =
                            ref_case(UCG_COLL_ALLGATHER, size, rank, count);
                        c.in_place = in_place;
                        c.prepare();
                        const std::string name = run_case(g, c, 2);
                        if (name.find("top=shm") == std::string::npos) {
                            ucg_test::fail_check(__FILE__, __LINE__, "plan",
                                                 name + " has no top=shm");
                        }
                    }
                }
            },
            120, tune);
    }
}

// A host of more ranks than mm_bcast takes in one group (its
// UCX_MM_BCAST_MAX_GROUP_SIZE; 64 by default, a many-core node's ranks
// are more) made group creation fail. The group now runs point to point.
TEST_CASE("a host of more ranks than one mm_bcast group takes still makes "
          "its group, point to point",
          "[ucg][fork]")
{
    const ScopedEnv limit("UCX_MM_BCAST_MAX_GROUP_SIZE", "2");
    run_ranks(3, 1, [](ucg_group_h g, int rank) {
        for (ucg_coll_type_t coll :
             {UCG_COLL_BCAST, UCG_COLL_ALLGATHER, UCG_COLL_ALLREDUCE}) {
            RefCase c = ref_case(coll, 3, rank, std::size_t{100} << 10);
            const std::string name = run_case(g, c, 1);
            if (name.find("shm") != std::string::npos ||
                name.find("mm_") != std::string::npos) {
                ucg_test::fail_check(__FILE__, __LINE__, "plan",
                                     name + " uses a one-to-many group");
            }
        }
    });
}

} // namespace ucg::test
