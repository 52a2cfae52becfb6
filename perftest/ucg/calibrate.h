// SPDX-License-Identifier: BSD-3-Clause
// ucg_perftest --calibrate-links: the cost of the link between the two
// ranks of a run, measured through UCG's point-to-point path (a bcast of
// two ranks is one message), fitted as alpha + bytes * beta, and printed
// as the UCG_LINKS entry of the link's level (the cost model's link costs,
// which every member then reads; docs/guide/tuning.md).
#pragma once

#include "bench.h"

#include <ucg/ucg.h>

#include <string>
#include <vector>

namespace ucg::perftest {

/// One measured size: the receiving rank's mean time.
struct LinkPoint {
    double bytes = 0;
    double us = 0;
    double sender_us = 0; ///< the root's mean time (its send's overhead)
};

/// alpha (us) and beta (ns per byte) of points: beta is the least-squares
/// slope of the points from 64 KiB (all points where fewer than two are
/// that large), alpha the smallest point's time less its bytes' share.
/// overhead_us: the smallest point's sender time (what one send costs its
/// CPU), at most alpha / 2.
struct LinkFit {
    double alpha_us = 0;
    double ns_per_byte = 0;
    double overhead_us = 0;
};
LinkFit fit_link(const std::vector<LinkPoint> &points);

/// UCG_LINKS with `level`'s entry set to `entry` ("LEVEL=L,o,g,G"): the
/// other levels of `current` (UCG_LINKS as set, may be empty) stay.
/// Empty when `current` does not parse.
std::string merge_links(const std::string &current, const std::string &entry);

/// Runs on both ranks of a 2-rank run (the caller checks: a rank that
/// returned early could leave while the other still connects to it) over
/// `group` (made point-to-point only); rank 0 prints the table, the fit
/// and an `export UCG_LINKS=...` line. Returns the process exit code.
int calibrate_links(const Env &env, const Options &opt, ucg_context_h ctx,
                    ucg_group_h group);

} // namespace ucg::perftest
