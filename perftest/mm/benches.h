// SPDX-License-Identifier: BSD-3-Clause
// The benchmarks of ucg_mm_perftest; each lives in its own source file.
#pragma once

#include <cstddef>
#include <vector>

namespace ucg_mm_bench {

/// One measured incast point: the median of each mode that ran (indexed by
/// uct_mm_incast_mode_t, the mode the message ran in; 0: not measured).
struct IncastPoint {
    int coll = 0; ///< 0 gather, 1 sum_i32, 2 sum_f64
    int n = 0;
    std::size_t bytes = 0;
    double mode_us[5] = {};
    double p2p_us = 0;
    /// MODE=auto at the default GROUP_SEG_SIZE, and at each of
    /// Options::seg_sizes in order.
    double auto_us = 0;
    std::vector<double> seg_us;
};

/// One measured bcast point: the ring (default), CMA (0: not timed).
struct BcastPoint {
    int n = 0;
    std::size_t bytes = 0;
    double ring_us = 0, cma_us = 0, p2p_us = 0;
    /// The ring at each of Options::seg_sizes (GROUP_SEG_SIZE), in order.
    std::vector<double> seg_us;
};

/// Where the benchmarks also record their points (--calibrate).
struct Collector {
    std::vector<IncastPoint> incast;
    std::vector<BcastPoint> bcast;
};

struct Options {
    std::vector<int> group_sizes{2, 4, 8};
    std::vector<std::size_t> msg_bytes{8,     64,     512,    4096,
                                       32768, 262144, 1 << 20};
    double iter_scale = 1.0;      ///< multiplies the per-size iteration counts
    Collector *collect = nullptr; ///< also record every point here
    bool quiet = false;           ///< print no rows
    /// Also time mm_bcast's ring and mm_incast's MODE=auto at these
    /// GROUP_SEG_SIZE values (the default is 8k), at most kMaxSegVariants
    /// (--calibrate).
    std::vector<std::size_t> seg_sizes;
};

inline constexpr int kMaxSegVariants = 4;

/// Cache-line ping-pong between two processes alone: the floor (bcast and
/// incast time it again inside each point, as their x_floor divisor).
int bench_pingpong(const Options &opts);

/// mm_bcast root-to-all vs N-1 point-to-point sends over UCX posix.
int bench_bcast(const Options &opts);

/// mm_incast gather and sum (int32, double), every mode and auto, vs N-1
/// point-to-point sends over UCX posix to the root plus a local reduction.
int bench_incast(const Options &opts);

} // namespace ucg_mm_bench

namespace ucg_mm_bench {

/// --calibrate: measures incast and bcast at opts' sizes and group sizes,
/// fits the UCX_MM_INCAST_AUTO_* and UCX_MM_BCAST_CMA_THRESH thresholds to
/// the fastest path measured and prints one `export` line each.
int run_calibrate(Options opts, bool incast, bool bcast);

} // namespace ucg_mm_bench
