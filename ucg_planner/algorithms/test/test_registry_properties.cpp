// SPDX-License-Identifier: BSD-3-Clause
// The property suite over the registry, sampled for the unit suite (Debug
// and ASan/UBSan builds): every algorithm and group size with the roots,
// chunk counts and level sets of SweepSpec{.full = false} (properties.h);
// sanitized builds stop at 64 ranks (sizes() below).
// test_registry_sweep.cpp runs every root, chunk count and level set in
// optimized builds; its header has the timings that set this split.
#include "algorithms/test/properties.h"

#include <catch2/catch.hpp>

namespace {

using ucg::algorithms::test::sweep;
using ucg::algorithms::test::sweep_sizes;
using ucg::algorithms::test::SweepSpec;
using ucg::plan::Collective;

// Under ASan/UBSan the checks run about 6 times slower than in Debug; 100
// ranks (a third of the sample's time there) is left to the Debug and
// optimized builds to keep the sanitized suite under a minute.
std::vector<int> sizes()
{
#ifdef UCG_TEST_SANITIZED
    std::vector<int> v = sweep_sizes();
    v.pop_back();
    return v;
#else
    return sweep_sizes();
#endif
}

int sample(Collective c)
{
    return sweep(c, SweepSpec{sizes(), false});
}

} // namespace

TEST_CASE("registry bcast plans are correct", "[plan][algorithms][bcast]")
{
    CHECK(sample(Collective::kBcast) > 0);
}
TEST_CASE("registry reduce plans are correct", "[plan][algorithms][reduce]")
{
    CHECK(sample(Collective::kReduce) > 0);
}
TEST_CASE("registry allreduce plans are correct",
          "[plan][algorithms][allreduce]")
{
    CHECK(sample(Collective::kAllreduce) > 0);
}
TEST_CASE("registry gather plans are correct", "[plan][algorithms][gather]")
{
    CHECK(sample(Collective::kGather) > 0);
}
TEST_CASE("registry scatter plans are correct", "[plan][algorithms][scatter]")
{
    CHECK(sample(Collective::kScatter) > 0);
}
TEST_CASE("registry allgather plans are correct",
          "[plan][algorithms][allgather]")
{
    CHECK(sample(Collective::kAllgather) > 0);
}
TEST_CASE("registry alltoall plans are correct", "[plan][algorithms][alltoall]")
{
    CHECK(sample(Collective::kAlltoall) > 0);
}
TEST_CASE("registry reduce_scatter plans are correct",
          "[plan][algorithms][reduce_scatter]")
{
    CHECK(sample(Collective::kReduceScatter) > 0);
}
TEST_CASE("registry barrier plans are correct", "[plan][algorithms][barrier]")
{
    CHECK(sample(Collective::kBarrier) > 0);
}
TEST_CASE("registry scan plans are correct", "[plan][algorithms][scan]")
{
    CHECK(sample(Collective::kScan) > 0);
}
TEST_CASE("registry exscan plans are correct", "[plan][algorithms][exscan]")
{
    CHECK(sample(Collective::kExscan) > 0);
}
