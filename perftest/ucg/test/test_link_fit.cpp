// SPDX-License-Identifier: BSD-3-Clause
// ucg_perftest --calibrate-links' arithmetic: the fit, each size's best
// of several passes, and the UCG_LINKS entry (link_fit.h).
#include "link_fit.h"

#include <catch2/catch.hpp>

#include <vector>

using ucg::perftest::best_of_passes;
using ucg::perftest::fit_link;
using ucg::perftest::LinkPoint;
using ucg::perftest::merge_links;
using ucg::perftest::pass_spread;
using ucg::perftest::PassedPoint;

namespace {

// A pass over 8 B and 64 KiB-1 MiB of a link of alpha 10 us and beta
// `ns` per byte, each time `slow` times as long.
std::vector<LinkPoint> pass(double ns, double slow = 1)
{
    std::vector<LinkPoint> p;
    for (double b : {8.0, 65536.0, 262144.0, 1048576.0}) {
        p.push_back({b, slow * (10 + b * ns / 1000), slow * 4});
    }
    return p;
}

} // namespace

TEST_CASE("calibration fits alpha, beta from 64 KiB, and the send's overhead")
{
    const auto f = fit_link(pass(0.2));
    CHECK(f.ns_per_byte == Approx(0.2));
    CHECK(f.alpha_us == Approx(10));
    CHECK(f.overhead_us == Approx(4));
}

TEST_CASE("calibration keeps each size's best pass, not a slow spell's")
{
    // The second pass ran 3.5x slow at every size, the third only at
    // 256 KiB: the best passes are the link's.
    std::vector<std::vector<LinkPoint>> passes{pass(0.2), pass(0.2, 3.5),
                                               pass(0.2)};
    passes[2][2].us *= 3.5;
    passes[0][2].us *= 1.2;
    const std::vector<PassedPoint> best = best_of_passes(passes);
    REQUIRE(best.size() == 4);
    std::vector<LinkPoint> points;
    for (const PassedPoint &p : best) {
        points.push_back(p.best);
    }
    // 256 KiB's best is the first pass's (1.2x), the only one not 3.5x.
    CHECK(best[2].best.us == Approx(1.2 * (10 + 262144 * 0.2 / 1000)));
    CHECK(best[2].worst_us == Approx(3.5 * (10 + 262144 * 0.2 / 1000)));
    CHECK(best[3].best.us == Approx(10 + 1048576 * 0.2 / 1000));
    CHECK(best[0].best.sender_us == Approx(4));
    // Fitted on the slow pass alone, beta reads 3.5 times the link's.
    CHECK(fit_link(passes[1]).ns_per_byte == Approx(0.7));
    CHECK(fit_link(points).ns_per_byte == Approx(0.2).epsilon(0.05));
    CHECK(pass_spread(best, 65536) == Approx(3.5));
}

TEST_CASE("calibration's spread counts the sizes from the given one")
{
    std::vector<std::vector<LinkPoint>> passes{pass(0.2), pass(0.2)};
    passes[1][0].us *= 4; // 8 B: below 64 KiB
    const std::vector<PassedPoint> best = best_of_passes(passes);
    CHECK(pass_spread(best, 65536) == Approx(1));
    CHECK(pass_spread(best, 8) == Approx(4));
}

TEST_CASE("calibration's passes keep the sizes every pass measured")
{
    std::vector<std::vector<LinkPoint>> passes{pass(0.2), pass(0.2)};
    passes[1].pop_back();
    CHECK(best_of_passes(passes).size() == 3);
    CHECK(best_of_passes({}).empty());
}

TEST_CASE("calibration's entry joins the other levels of UCG_LINKS")
{
    CHECK(merge_links("host=1,2,3,4;world=5,6,7,8", "world=0,1,1,0.5") ==
          "host=1,2,3,4;world=0,1,1,0.5");
    CHECK(merge_links("", "switch=0,1,1,0.5") == "switch=0,1,1,0.5");
    CHECK(merge_links("no such level", "world=0,1,1,0.5").empty());
}

TEST_CASE("a poll turn is a round over the ranks that take turns in it, "
          "the median over the ranks that share a CPU")
{
    using ucg::perftest::poll_turn_ns;
    using ucg::perftest::TurnPoint;
    // Four ranks a CPU, rounds of 36-40 us: turns of 9-10 us; a rank
    // alone on its CPU (a round of 1.3 us) takes no turns and is left out.
    CHECK(poll_turn_ns({{36, 4}, {38, 4}, {40, 4}, {1.3, 1}}) == Approx(9500));
    // Two ranks a CPU: half the round.
    CHECK(poll_turn_ns({{12, 2}}) == Approx(6000));
    // No CPU shared: none.
    CHECK(poll_turn_ns({{1.3, 1}, {1.4, 1}}) == 0);
    CHECK(poll_turn_ns({}) == 0);
}
