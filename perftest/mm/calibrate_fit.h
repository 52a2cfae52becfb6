// SPDX-License-Identifier: BSD-3-Clause
// The fits behind ucg_mm_perftest --calibrate: measured points in, the
// UCX_MM_* settings that make each transport's automatic choice the
// fastest path measured out. A setting moves from its default only where
// that saves 5% per point whose path it changes (noise keeps the
// default), and a point costs at most 1.5x its fastest path (one median
// hit by the scheduler must not decide).
#pragma once

#include "benches.h"
#include "policy.h"

#include <cstddef>
#include <vector>

namespace ucg_mm_bench {

using uct_mm_incast::AutoThresholds;

/// The mode mm_incast's automatic choice takes at point p under t.
uct_mm_incast_mode_t picked(const IncastPoint &p, const AutoThresholds &t);

/// Sum over points of (picked mode's median) / (fastest mode's median).
double incast_cost(const std::vector<IncastPoint> &pts,
                   const AutoThresholds &t);

/// UCX_MM_INCAST_AUTO_*: every combination of the six thresholds, each
/// over the values that change a measured point's mode; the cheapest
/// that saves 5% per point it changes, else the defaults.
AutoThresholds fit_incast(const std::vector<IncastPoint> &pts);

/// UCX_MM_BCAST_CMA_THRESH (and, over two-rank points, MIN_ZCOPY): the
/// size from which CMA beats the ring; SIZE_MAX where it never does.
std::size_t fit_bcast(const std::vector<BcastPoint> &pts);

/// The smallest chunk of mm_incast's GROUP_SEG_SIZE (auto: 8-64 KiB by
/// group size, decision 0051) and of mm_bcast's fragments (decision 0056).
inline constexpr std::size_t kDefaultSegBytes = 8192;

/// mm_bcast's GROUP_SEG_SIZE default (decision 0056).
inline constexpr std::size_t kBcastDefaultSegBytes = 65536;

/// One point's path at the default fragment size and at each candidate.
struct SegPoint {
    std::size_t bytes = 0;
    double default_us = 0;
    std::vector<double> seg_us; ///< in the order of the candidates
};

/// UCX_MM_{BCAST,INCAST}_GROUP_SEG_SIZE: one fragment size for every
/// message size, the candidate whose path is nearest the fastest
/// candidate at each point, if it saves 5% per point where the fragment
/// size matters (over the smaller of it and kDefaultSegBytes); else
/// `kept`, the transport's default (mm_bcast's kBcastDefaultSegBytes,
/// mm_incast's auto: 0).
std::size_t fit_seg(const std::vector<SegPoint> &pts,
                    const std::vector<std::size_t> &cands, std::size_t kept);

} // namespace ucg_mm_bench
