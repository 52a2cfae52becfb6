// SPDX-License-Identifier: BSD-3-Clause
// Every collective of ucg.h on forked ranks over UCP (and the host's
// one-to-many groups where they exist), 1 to 8 ranks posing as 1, 2 and 3
// hosts, every root, sizes 0, 1, odd, one transport segment plus one and
// large, in place and not, each started twice (persistent); every output
// byte compared with the reference model, sentinels included.
#include "coll_ref.h"
#include "rank_env.h"

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
                c.count = coll == UCG_COLL_BARRIER ? 0 : count;
                c.in_place = in_place;
                c.prepare();
                run_case(g, c, 2);
                if (coll == UCG_COLL_BARRIER) {
                    return;
                }
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
            run_ranks(size, hosts, [size, coll](ucg_group_h g, int rank) {
                run_collective(g, rank, size, coll);
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

} // namespace ucg::test
