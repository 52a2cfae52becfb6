// SPDX-License-Identifier: BSD-3-Clause
// The seeded fault sweep of test_core_sim.cpp, ten times longer (label
// slow: about 5 s optimized).
#include "group_sim.h"

#include <catch2/catch.hpp>

using namespace uct_ud_mcast;
using namespace uct_ud_mcast::test;

namespace {
// Sanitized builds are about 10x slower per seed: a tenth of the seeds.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr uint64_t kSeeds = 2000;
#else
constexpr uint64_t kSeeds = 20000;
#endif
} // namespace

TEST_CASE(
    "every message reaches every member in order once over ten times the seeds",
    "[ud_mcast][core][slow]")
{
    Counters total;
    for (uint64_t seed = 2000; seed < 2000 + kSeeds; ++seed) {
        const std::string err = run_random_seed(seed, &total);
        INFO(err);
        REQUIRE(err.empty());
    }
    CHECK(total.tx_resent > kSeeds);
}
