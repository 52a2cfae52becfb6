// SPDX-License-Identifier: BSD-3-Clause
// Shared pieces of the mm benchmarks: forked ranks with a shared board
// (addresses, barriers, results), UCT iface opening, timing statistics.
// Every benchmark (pingpong, bcast, incast) prints the same row format.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <new>
#include <sched.h>
#include <string>
#include <uct/api/uct.h>
#include <uct_mm_incast.h>
#include <utility>
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
    alignas(64) std::atomic<std::uint64_t> go;   ///< root: iterations started
    alignas(64) std::atomic<std::uint64_t> pong; ///< rank 1: floor replies
    alignas(64) unsigned char addr[9][kMaxRanks][kAddrBytes]; ///< per iface
    double samples_us[kMaxSamples]; ///< root: per-iteration latency
    int num_samples;
};

/// Anonymous MAP_SHARED memory for `bytes` (seen by the forked ranks);
/// exits with a message if it cannot be mapped.
void *map_shared(std::size_t bytes);
void unmap_shared(void *mem, std::size_t bytes);

/// A Board and a benchmark's result record R in one shared mapping: the
/// root rank writes R, the parent prints it. reset() before every point.
template <class R> class SharedBoard {
  public:
    SharedBoard() : mem_(map_shared(kBytes)) { reset(); }
    ~SharedBoard() { unmap_shared(mem_, kBytes); }
    SharedBoard(const SharedBoard &) = delete;
    SharedBoard &operator=(const SharedBoard &) = delete;

    void reset()
    {
        new (mem_) Board{};
        new (static_cast<char *>(mem_) + sizeof(Board)) R{};
    }
    Board *board() const { return static_cast<Board *>(mem_); }
    R *result() const
    {
        return reinterpret_cast<R *>(static_cast<char *>(mem_) + sizeof(Board));
    }

  private:
    static constexpr std::size_t kBytes = sizeof(Board) + sizeof(R);
    void *mem_;
};

/// Runs body(rank, board) in `n` forked ranks, rank r pinned to the r-th
/// allowed CPU (round robin); false if any failed.
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
    /// Opens it; `config` overrides transport settings (name without the
    /// UCX_<TL>_ prefix, value), as UCX_<TL>_<name>=<value> would.
    bool
    open(const char *component, const char *tl,
         const std::vector<std::pair<std::string, std::string>> &config = {});
    void close();
};

/// Group parameters of the `n` ranks whose iface addresses are in
/// b->addr[which], for `rank`; `addrs` holds them while they are used.
uct_group_params_t group_params(Board *b, int which, int rank, int n,
                                std::uint64_t key,
                                std::vector<const uct_iface_addr_t *> *addrs);

/// Board::addr slot of the direct messages' mm_incast ifaces.
inline constexpr int kDirectAddr = 8;

/// An mm_incast group of the `n` ranks with its direct messages
/// (uct_mm_incast.h), connected; every failure exits the rank.
struct DirectGroup {
    UctIface mm;
    uct_group_h group = nullptr;
    uct_mm_incast_direct_h direct = nullptr;
    std::size_t max_length = 0; ///< 0: the transport configured none
    void open(Board *b, int rank, int n);
    /// Posts this rank's part of one direct message, tests until done.
    void run(const uct_mm_incast_direct_msg_t &m);
    void close();
};

/// Median, min and max of samples (microseconds).
struct Stats {
    double median_us = 0, min_us = 0, max_us = 0;
};
Stats summarize(const double *samples, int n);

/// Monotonic microseconds.
double now_us();

/// Busy-polls for kSpinUs, then sched_yield: the same time budget for every
/// transport whatever its progress costs (more ranks than cores need the
/// yields).
class Spinner {
  public:
    static constexpr double kSpinUs = 5;
    void idle()
    {
        const double now = now_us();
        if (start_ == 0) {
            start_ = now;
        } else if (now - start_ > kSpinUs) {
            sched_yield();
            start_ = 0;
        }
    }
    void busy() { start_ = 0; }

  private:
    double start_ = 0;
};

/// The floor inside a benchmark point: `iters` cache-line round trips
/// between rank 0 (`go`) and rank 1 (`pong`) on the board, in the same
/// forked ranks, pinning and rounds as the transports (the others only
/// join the barriers). Rank 0 appends one sample (us) per round trip.
void run_floor(int rank, Board *b, int n, int iters,
               std::vector<double> *samples);

/// One result row, the same columns in every section.
struct Row {
    const char *section; ///< "pingpong", "bcast", "gather", "sum_i32", ...
    int group_size;
    std::size_t msg_bytes;
    std::string variant; ///< "p2p-posix", "zcopy", "auto=locked", ...
    Stats stats;
    double p2p_median_us; ///< same run's baseline; 0: no ratio
    double floor_rtt_us;  ///< ping-pong round trip; 0: not measured
};
void print_header();
void print_row(const Row &row);

/// Iterations to time for a message size (fewer for large messages).
int iterations_for(std::size_t bytes);

} // namespace ucg_mm_bench
