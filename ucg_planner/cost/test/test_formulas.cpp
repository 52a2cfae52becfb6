// SPDX-License-Identifier: BSD-3-Clause
// Closed forms against seed 002's worked numbers.
#include "cost/formulas.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace ucg::cost;

namespace {
// seed 002: alpha = 10, beta = 1, P = 4, s = 10^6, z = 10^5.
const AlphaBeta kSeed{10, 1};
constexpr double kS = 1e6;
constexpr double kZ = 1e5;
} // namespace

TEST_CASE("binomial tree and pipeline match seed 002", "[cost]")
{
    CHECK(knomial_bcast_ns(4, 2, kS, kSeed) == 2000020);
    CHECK(chain_pipeline_ns(4, kS, kZ, kSeed) == 1200120);
    CHECK(chain_pipeline_segments_ns(4, kS, kZ, kSeed) == 1200120);
    CHECK(flat_bcast_ns(4, kS, kSeed) == 3000030);
}

TEST_CASE("optimal segment size is sqrt(s alpha / ((P-2) beta))", "[cost]")
{
    double z = optimal_segment_bytes(4, kS, kSeed);
    CHECK(z == Approx(std::sqrt(5e6)));
    // It is the minimum: nearby sizes cost more.
    double t = chain_pipeline_ns(4, kS, z, kSeed);
    CHECK(t < chain_pipeline_ns(4, kS, z * 0.9, kSeed));
    CHECK(t < chain_pipeline_ns(4, kS, z * 1.1, kSeed));
    // Two ranks or no bandwidth term: one segment.
    CHECK(optimal_segment_bytes(2, kS, kSeed) == kS);
    CHECK(optimal_segment_bytes(4, kS, AlphaBeta{10, 0}) == kS);
}

TEST_CASE("pipeline at z_opt is seed 002's 1,008,964", "[cost]")
{
    // Real-valued z_opt and s/z: (P-2)a + s b + 2 sqrt((P-2) a b s)
    // = 1,008,964.27, which the seed quotes to the nearest unit.
    double closed = chain_pipeline_optimal_ns(4, kS, kSeed);
    double direct =
        chain_pipeline_ns(4, kS, optimal_segment_bytes(4, kS, kSeed), kSeed);
    CHECK(closed == Approx(direct).epsilon(1e-12));
    CHECK(std::llround(closed) == 1008964);
    // Whole segments of the integral z_opt (2236 B, 448 segments) cost more.
    CHECK(chain_pipeline_segments_ns(4, kS, 2236, kSeed) == 1010700);
}

TEST_CASE("gather, allreduce and pipelined tree closed forms", "[cost]")
{
    AlphaBeta ab{100, 0.5};
    CHECK(binomial_gather_ns(8, 1000, ab) == 3 * 100 + 7 * 1000 * 0.5);
    CHECK(recursive_k_allreduce_ns(8, 2, 1000, ab) == 3 * 600);
    // Non-power-of-two P: 2 steps among 4, the fold's bytes queue ahead of
    // the first step's, and the answer goes back.
    CHECK(recursive_k_allreduce_ns(5, 2, 1000, ab) ==
          2 * 600 + (100 + 2 * 500) + 600);
    CHECK(rabenseifner_allreduce_ns(5, 1000, ab) ==
          4 * 100 + 1.5 * 500 + 2 * 600);
    CHECK(ring_allreduce_ns(4, 1000, ab) == 6 * (100 + 125));
    CHECK(rabenseifner_allreduce_ns(4, 1000, ab) == 4 * 100 + 1.5 * 500);
    CHECK(binary_pipeline_ns(8, 1000, 100, ab) == (10 + 3 - 2) * 2 * 150);
    CHECK(knomial_rounds(65536, 4) == 8);
    CHECK(knomial_rounds(5, 2) == 3);
    CHECK(knomial_rounds(1, 2) == 0);
}

TEST_CASE("LogP optimal broadcast of seed 002 finishes at 24", "[cost]")
{
    LogGP p{6, 2, 4, 0}; // L, o, g, G
    CHECK(logp_message_ns(p) == 10);
    CHECK(logp_optimal_bcast_ns(8, p) == 24);
    auto s = logp_optimal_bcast(8, p);
    // The root sends every max(o,g) = 4: informs at 10, 14, 18, 22.
    CHECK(s.children[0] == std::vector<int>{1, 2, 3, 5});
    CHECK(s.informed_ns[1] == 10);
    CHECK(s.informed_ns[4] == 20); // rank 1's first child
    CHECK(logp_reach(24, p) == 8);
    CHECK(logp_reach(23, p) < 8);
    // Linear broadcast is slower: L + (P-2) max(o,g) + 2o.
    CHECK(logp_linear_bcast_ns(8, p) == 6 + 6 * 4 + 4);
}
