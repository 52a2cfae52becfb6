// SPDX-License-Identifier: BSD-3-Clause
// ucg_perftest --calibrate-links' arithmetic (calibrate.h runs the
// measurements): a link's alpha and beta fitted from timed sizes, each
// size's best of several passes, and the UCG_LINKS entry it makes.
#pragma once

#include <string>
#include <vector>

namespace ucg::perftest {

/// One measured size: the receiving rank's mean time.
struct LinkPoint {
    double bytes = 0;
    double us = 0;
    double sender_us = 0; ///< the root's mean time (its send's overhead)
};

/// The sizes whose slope is beta: from 64 KiB.
inline constexpr double kFitFromBytes = 65536;

/// alpha (us) and beta (ns per byte) of points: beta is the least-squares
/// slope of the points from kFitFromBytes (all points where fewer than two
/// are that large), alpha the smallest point's time less its bytes' share.
/// overhead_us: the smallest point's sender time (what one send costs its
/// CPU), at most alpha / 2.
struct LinkFit {
    double alpha_us = 0;
    double ns_per_byte = 0;
    double overhead_us = 0;
};
LinkFit fit_link(const std::vector<LinkPoint> &points);

/// Passes over the sizes: a machine can run the same message several
/// times slower for seconds on end (decision 0042), so each size keeps
/// its best pass, and how far the worst one strayed from it.
inline constexpr int kCalibrationPasses = 5;
struct PassedPoint {
    LinkPoint best;      ///< the pass of least time, its sender time with it
    double worst_us = 0; ///< the pass of most time
};
/// `passes`: each a sweep over the same sizes in the same order (the
/// sizes of the shortest pass are kept).
std::vector<PassedPoint>
best_of_passes(const std::vector<std::vector<LinkPoint>> &passes);

/// The largest worst / best among the points from `from_bytes` (1 where
/// none is that large): how far the slowest pass strayed.
double pass_spread(const std::vector<PassedPoint> &points, double from_bytes);

/// UCG_LINKS with `level`'s entry set to `entry` ("LEVEL=L,o,g,G"): the
/// other levels of `current` (UCG_LINKS as set, may be empty) stay.
/// Empty when `current` does not parse.
std::string merge_links(const std::string &current, const std::string &entry);

/// One rank's poll turns (--calibrate-turn): the time of one round of
/// progress-and-yield it measured, and how many ranks share each CPU it
/// may run on (1: none share it).
struct TurnPoint {
    double round_us = 0;
    double ranks_per_cpu = 1;
};

/// One poll turn, ns: the median over the ranks that share a CPU of their
/// round's time over the ranks that take turns in it; 0 where no CPU is
/// shared.
double poll_turn_ns(const std::vector<TurnPoint> &points);

} // namespace ucg::perftest
