// SPDX-License-Identifier: BSD-3-Clause
// An iface's point-to-point receive FIFO: a one-member ring (ring.h) in a
// proc-link segment, so senders reach it by the owner's pid and fd and a
// crash leaves nothing in /dev/shm.
#pragma once

#include "uct_mm_common/doorbell.h"
#include "uct_mm_common/ring.h"

#include "uct_mm_common/segment.h"

#include <sys/types.h>

namespace uct_mm_common {

/// A point-to-point receive FIFO: a one-member ring in a proc-link segment.
class FifoSegment {
  public:
    /// Owner: creates the segment and joins as member 0.
    static Status create(std::uint32_t num_slots, std::uint32_t slot_bytes,
                         FifoSegment *fifo_p);
    /// Sender: maps the owner's FIFO through /proc/<pid>/fd/<fd>.
    static Status attach(pid_t pid, int fd, std::size_t bytes,
                         FifoSegment *fifo_p);

    const Ring &ring() const noexcept { return ring_; }
    int fd() const noexcept { return segment_.fd(); }
    std::size_t bytes() const noexcept { return segment_.size(); }
    /// The owner's doorbell (doorbell.h): its pid and the FIFO's fd there.
    BellAddress bell() const noexcept { return bell_; }

  private:
    Segment segment_;
    Ring ring_;
    BellAddress bell_;
};

} // namespace uct_mm_common
