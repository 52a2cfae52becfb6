// SPDX-License-Identifier: BSD-3-Clause
// ucg_mcast_perftest: shared pieces. Ranks are forked processes; they meet
// on a board in shared memory (addresses, barriers, results). Every wait
// progresses its worker and backs off (spin, then sched_yield).
#pragma once

#include <uct/api/uct.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ucg_mcast_bench {

constexpr unsigned kMaxRanks = 16;
constexpr unsigned kMaxReps = 64;

struct Options {
    unsigned reps = 7;          ///< repetitions: min / median / max
    unsigned lat_rounds = 2000; ///< rounds per latency repetition
    unsigned bw_msgs = 200;     ///< 64 KiB messages per repetition
    std::vector<unsigned> receivers{2, 4, 8};
    std::vector<double> losses{0, 0.01, 0.05};
    unsigned bw_receivers = 4;
    std::string dev = "lo";
    bool block = false; ///< idle waits block on the iface's event fd
};

/// The board every rank of one measurement shares.
struct Board {
    std::atomic<unsigned> phase[4 * kMaxReps + 8];
    uint8_t addr[kMaxRanks][128];           ///< iface (and device) addresses
    double result[kMaxReps];                ///< written by rank 0
    uint64_t overhead[kMaxReps][kMaxRanks]; ///< reliability bytes
};

/// One UCT iface with its worker (ud_mcast or tcp), progress enabled.
struct Uct {
    Uct(const char *tl, const std::string &dev,
        const std::vector<std::pair<std::string, std::string>> &cfg);
    ~Uct();
    Uct(const Uct &) = delete;
    Uct &operator=(const Uct &) = delete;
    /// Progress; then, after a while without any, give the CPU away:
    /// sched_yield, or (block) sleep on the event fd for at most 1 ms.
    void progress_or_idle();
    void progress() { uct_worker_progress(worker); }

    ucs_async_context_t *async = nullptr;
    uct_worker_h worker = nullptr;
    uct_md_h md = nullptr;
    uct_iface_h iface = nullptr;
    uct_iface_attr_t attr{};
    int event_fd = -1; ///< >= 0 when blocking waits are on
    unsigned idle = 0;
    unsigned long timeouts = 0; ///< idle waits that slept the full 1 ms
};

/// Set by main from --block, read by every Uct (per process, after fork).
extern bool g_block;

/// Forks `n` ranks running body(rank, board); true when all exit 0.
bool run_ranks(unsigned n, Board *board,
               const std::function<void(unsigned, Board *)> &body);
/// Everyone arrives at phase `p` (progressing `u` while waiting).
void barrier(Board *b, unsigned p, unsigned n, Uct *u);
double now_us();
[[noreturn]] void die(const char *what);

/// min, median, max of the first `n` values.
struct Stats {
    double min, median, max;
};
Stats stats(const double *v, unsigned n);

// mcast_bench.cpp / tcp_bench.cpp: per-round microseconds per rep (rank 0
// writes board->result); bandwidth: seconds per rep.
void mcast_latency(unsigned rank, Board *b, unsigned n, const Options &o);
void mcast_bandwidth(unsigned rank, Board *b, unsigned n, double loss,
                     const Options &o);
void tcp_latency(unsigned rank, Board *b, unsigned n, const Options &o);
void tcp_bandwidth(unsigned rank, Board *b, unsigned n, const Options &o);

constexpr size_t kBwBytes = 64 * 1024;

} // namespace ucg_mcast_bench
