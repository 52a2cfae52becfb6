// SPDX-License-Identifier: BSD-3-Clause
// Shared pieces of the mm benchmarks: forked ranks with a shared board
// (addresses, barriers, results), UCT iface opening, timing statistics.
// Each benchmark (bcast_bench.cpp; incast rows in their own file) uses them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <uct/api/uct.h>
#include <vector>

namespace ucg_mm_bench {

inline constexpr int kMaxRanks = 8;
inline constexpr int kMaxSamples = 4096;
inline constexpr std::size_t kAddrBytes = 128;

/// Shared between the parent and all ranks (anonymous MAP_SHARED).
struct Board {
    alignas(64) std::atomic<unsigned> barrier_count;
    alignas(64) std::atomic<unsigned> barrier_phase;
    alignas(64) std::atomic<std::uint64_t> done; ///< receivers: messages got
    alignas(64) unsigned char addr[2][kMaxRanks][kAddrBytes]; ///< per iface
    double samples_us[kMaxSamples]; ///< root: per-iteration latency
    int num_samples;
};

/// Runs body(rank, board) in `n` forked ranks; false if any failed.
bool run_ranks(int n, Board *board,
               const std::function<void(int, Board *)> &body);

/// Sense-reversing barrier of `n` ranks on the board (spins, then yields).
void barrier(Board *b, int n);

/// One opened UCT iface of a transport on device "memory".
struct UctIface {
    ucs_async_context_t *async = nullptr;
    uct_worker_h worker = nullptr;
    uct_md_h md = nullptr;
    uct_iface_h iface = nullptr;
    uct_iface_attr_t attr{};
    bool open(const char *component, const char *tl);
    void close();
};

/// Median, min and max of samples (microseconds).
struct Stats {
    double median_us = 0, min_us = 0, max_us = 0;
};
Stats summarize(const double *samples, int n);

/// Monotonic microseconds.
double now_us();

/// Iterations to time for a message size (fewer for large messages).
int iterations_for(std::size_t bytes);

} // namespace ucg_mm_bench
