// SPDX-License-Identifier: BSD-3-Clause
// The full property sweep over the registry: every algorithm x group sizes
// 1, 2, 3, 4, 5, 7, 8, 13, 16, 64, 100 x every root x chunk counts
// 1, 2, 3, 7 (x radices and level sets, see properties.cpp), each plan
// validated, checked symbolically (in rank order too where the algorithm
// preserves order), run with synchronous sends, simulated, printed and
// parsed back, and
// the one-rank builds of the root and of rank P-1 compared with their
// projections. One ctest test per collective and size band, labelled
// `sweep`; CMake registers it only in optimized builds without sanitizers
// (the werror preset), the Debug and ASan suites run the sample in
// test_registry_properties.cpp.
//
// Timings (2 cores shared with other builds, `ctest -j2`), which set the
// split: this sweep, RelWithDebInfo: 68 s wall (bcast at 100 ranks, 34 s
// per half, is the longest, hence even and odd roots apart; as one test it
// took 88 s). The sample in test_algorithms: RelWithDebInfo 2.7 s CPU,
// Debug 16 s CPU, ASan/UBSan 97 s CPU with 100 ranks, 73 s without (the
// sanitized sample stops at 64 ranks; the planner's ASan suite then takes
// 43 s wall). Debug runs the checks about 6 times slower than
// RelWithDebInfo and ASan 6 times slower than Debug, so this sweep would
// take about 10 minutes of CPU in Debug and an hour under ASan: far past
// the unit suite's minute.
// Nothing is left out here: every combination of the sweep is checked.
#include "algorithms/test/properties.h"

#include <catch2/catch.hpp>

namespace {

using ucg::algorithms::test::sweep;
using ucg::algorithms::test::SweepSpec;
using ucg::plan::Collective;

int full(Collective c, std::vector<int> sizes, int part = 0, int parts = 1)
{
    return sweep(c, SweepSpec{std::move(sizes), true, parts, part});
}

const std::vector<int> kSmall = {1, 2, 3, 4, 5, 7, 8, 13, 16};

} // namespace

#define UCG_SWEEP_TEST(coll, title, sizes, part, parts)                        \
    TEST_CASE("sweep " title, "[plan][algorithms][sweep]")                     \
    {                                                                          \
        CHECK(full(coll, sizes, part, parts) > 0);                             \
    }

// One test up to 16 ranks, one at 64 and one at 100.
#define UCG_SWEEP(coll, name)                                                  \
    UCG_SWEEP_TEST(coll, name " up to 16 ranks", kSmall, 0, 1)                 \
    UCG_SWEEP_TEST(coll, name " at 64 ranks", {64}, 0, 1)                      \
    UCG_SWEEP_TEST(coll, name " at 100 ranks", {100}, 0, 1)

// Rooted collectives: even and odd roots apart at 64 and 100 ranks.
#define UCG_SWEEP_ROOTED(coll, name)                                           \
    UCG_SWEEP_TEST(coll, name " up to 16 ranks", kSmall, 0, 1)                 \
    UCG_SWEEP_TEST(coll, name " at 64 ranks, even roots", {64}, 0, 2)          \
    UCG_SWEEP_TEST(coll, name " at 64 ranks, odd roots", {64}, 1, 2)           \
    UCG_SWEEP_TEST(coll, name " at 100 ranks, even roots", {100}, 0, 2)        \
    UCG_SWEEP_TEST(coll, name " at 100 ranks, odd roots", {100}, 1, 2)

UCG_SWEEP_ROOTED(Collective::kBcast, "bcast")
UCG_SWEEP_ROOTED(Collective::kReduce, "reduce")
UCG_SWEEP(Collective::kAllreduce, "allreduce")
UCG_SWEEP_ROOTED(Collective::kGather, "gather")
UCG_SWEEP_ROOTED(Collective::kScatter, "scatter")
UCG_SWEEP(Collective::kAllgather, "allgather")
UCG_SWEEP(Collective::kAlltoall, "alltoall")
UCG_SWEEP(Collective::kReduceScatter, "reduce_scatter")
UCG_SWEEP(Collective::kBarrier, "barrier")
UCG_SWEEP(Collective::kScan, "scan")
UCG_SWEEP(Collective::kExscan, "exscan")
