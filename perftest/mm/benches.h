// SPDX-License-Identifier: BSD-3-Clause
// The benchmarks of ucg_mm_perftest; each lives in its own source file.
#pragma once

#include <cstddef>
#include <vector>

namespace ucg_mm_bench {

struct Options {
    std::vector<int> group_sizes{2, 4, 8};
    std::vector<std::size_t> msg_bytes{8, 64, 512, 4096, 65536, 1 << 20};
    double iter_scale = 1.0; ///< multiplies the per-size iteration counts
};

/// Cache-line ping-pong between two processes: the one-way floor (us).
int bench_pingpong(const Options &opts);

/// mm_bcast root-to-all vs N-1 point-to-point sends over UCX posix.
int bench_bcast(const Options &opts);

} // namespace ucg_mm_bench
