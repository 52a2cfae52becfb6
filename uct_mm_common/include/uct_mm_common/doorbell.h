// SPDX-License-Identifier: BSD-3-Clause
// The doorbell of a p2p FIFO's owner: a datagram socket it can sleep on
// (uct_iface_event_fd_get), which a producer rings after publishing into
// an armed FIFO (ring_layout.h, HeadLine::armed). It lets UCP's adaptive
// progress stop polling an iface no endpoint uses.
#pragma once

#include "uct_mm_common/status.h"

#include <cstdint>

namespace uct_mm_common {

/// Which doorbell: the owner's pid and its FIFO segment's descriptor
/// (unique among the owner's live FIFOs). pid 0: none.
struct BellAddress {
    std::int32_t pid = 0;
    std::int32_t id = 0;
};

class Doorbell {
  public:
    Doorbell() = default;
    Doorbell(const Doorbell &) = delete;
    Doorbell &operator=(const Doorbell &) = delete;
    ~Doorbell();

    /// Owner: a nonblocking datagram socket bound to `a`'s name (Linux's
    /// abstract namespace: nothing in the file system, gone with the
    /// process). kIoError (logged at debug) when sockets are not allowed.
    Status open(BellAddress a) noexcept;
    /// The descriptor to sleep on; -1 before open().
    int fd() const noexcept { return fd_; }
    /// Reads the pending rings (before the owner arms again), at most
    /// kDrainMax: the descriptor stays readable while more are queued.
    void drain() noexcept;
    static constexpr int kDrainMax = 64;

    /// Producer: one datagram to `a`. Never blocks; errors (the owner has
    /// gone, its queue is full so it will wake anyway) are ignored: the
    /// ring's arm stays set until a ring went out (Ring::rang).
    static void ring(BellAddress a) noexcept;

  private:
    int fd_ = -1;
};

} // namespace uct_mm_common
