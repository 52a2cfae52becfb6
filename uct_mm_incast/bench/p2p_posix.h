// SPDX-License-Identifier: BSD-3-Clause
// The benchmark's baseline: N-1 point-to-point sends to the root over UCX's
// own `posix` UCT transport (AM bcopy fragments + a window of credits),
// with the root reducing or gathering locally as fragments arrive.
#pragma once

#include <uct/api/uct.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bench {

/// Addresses every rank publishes before connecting (in shared memory).
struct PosixAddress {
    uint8_t dev[64];
    uint8_t iface[64];
    uint32_t dev_len;
    uint32_t iface_len;
};

class PosixRank {
  public:
    /// Opens the posix iface and publishes its address in `table[rank]`.
    void open(int rank, PosixAddress *table);
    /// Connects to every other rank (after all published).
    void connect(int num_ranks);
    void close();

    /// One incast as the root: waits until all contributions of incast k
    /// are in `out` (reduce: int32 sum; gather: concatenation), then
    /// returns credits to the senders.
    void root_incast(uint64_t k, std::size_t bytes, bool reduce, int root,
                     int num_ranks, void *out);
    /// One incast as a sender.
    void send_incast(uint64_t k, std::size_t bytes, int root, const void *data);
    void reset(); ///< between runs: forget credits and partial state
    /// Sender, after a run: waits for the credits of all `iters` incasts,
    /// so none arrives during the next run.
    void drain(uint64_t iters);

  private:
    static ucs_status_t on_data(void *arg, void *data, size_t length,
                                unsigned flags);
    static ucs_status_t on_credit(void *arg, void *data, size_t length,
                                  unsigned flags);
    void progress() { uct_worker_progress(worker_); }

    int rank_ = 0;
    PosixAddress *table_ = nullptr;
    ucs_async_context_t *async_ = nullptr;
    uct_worker_h worker_ = nullptr;
    uct_md_h md_ = nullptr;
    uct_iface_h iface_ = nullptr;
    std::vector<uct_ep_h> eps_;
    std::size_t max_bcopy_ = 0;
    // Root state for a window of incasts.
    static constexpr uint64_t kWindow = 8;
    std::vector<std::vector<std::byte>> acc_;
    std::vector<std::size_t> got_;
    std::size_t cur_bytes_ = 0;
    bool cur_reduce_ = false;
    int cur_root_ = 0;
    // Sender state.
    uint64_t credits_ = 0;
};

} // namespace bench
