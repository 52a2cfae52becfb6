// SPDX-License-Identifier: BSD-3-Clause
// The benchmarks of ucg_mm_perftest; each lives in its own source file.
#pragma once

#include <cstddef>
#include <vector>

namespace ucg_mm_bench {

struct Options {
    std::vector<int> group_sizes{2, 4, 8};
    std::vector<std::size_t> msg_bytes{8,     64,     512,    4096,
                                       32768, 262144, 1 << 20};
    double iter_scale = 1.0; ///< multiplies the per-size iteration counts
};

/// Cache-line ping-pong between two processes alone: the floor (bcast and
/// incast time it again inside each point, as their x_floor divisor).
int bench_pingpong(const Options &opts);

/// mm_bcast root-to-all vs N-1 point-to-point sends over UCX posix.
int bench_bcast(const Options &opts);

/// mm_incast gather and sum (int32, double), every mode and auto, vs N-1
/// point-to-point sends over UCX posix to the root plus a local reduction.
int bench_incast(const Options &opts);

} // namespace ucg_mm_bench
