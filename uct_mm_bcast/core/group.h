// SPDX-License-Identifier: BSD-3-Clause
// A group's shared segment: member 0 creates and formats it (named, 0600),
// the others attach by name; the member completing the attach count
// unlinks it, so nothing remains in /dev/shm once the group is up.
#pragma once

#include "channel.h"
#include "ring.h"

#include "uct_mm_common/segment.h"

#include <string>

namespace uct_mm_bcast {

struct GroupParams {
    std::string name;           ///< shm name, same on every member ("/x")
    std::uint32_t my_index = 0; ///< this member, < size
    std::uint32_t size = 1;     ///< members
    std::uint32_t num_slots = 64;
    std::uint32_t slot_bytes = 8192;
    std::uint32_t attach_timeout_ms = 10000;
};

class GroupSegment {
  public:
    /// Creates (member 0) or attaches (others) and joins the ring.
    static Status open(const GroupParams &params, GroupSegment *group_p);

    GroupSegment() = default;
    GroupSegment(GroupSegment &&) = default;
    GroupSegment &operator=(GroupSegment &&) = default;
    ~GroupSegment();

    /// The ring view of this member (copy it into a Channel).
    const Ring &ring() const noexcept { return ring_; }

  private:
    uct_mm_common::Segment segment_;
    Ring ring_;
    bool joined_ = false;
};

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

  private:
    uct_mm_common::Segment segment_;
    Ring ring_;
};

} // namespace uct_mm_bcast
