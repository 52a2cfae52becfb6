// SPDX-License-Identifier: BSD-3-Clause
// The p2p receive FIFO segment: create (owner), attach (senders).
#include "uct_mm_common/fifo_segment.h"

#include <unistd.h>

namespace uct_mm_common {

Status FifoSegment::create(std::uint32_t num_slots, std::uint32_t slot_bytes,
                           FifoSegment *fifo_p)
{
    RingGeometry geo;
    geo.num_members = 1;
    geo.num_slots = num_slots;
    geo.slot_bytes = slot_bytes;
    Status st = Ring::validate(geo);
    if (st != Status::kOk) {
        return st;
    }
    FifoSegment f;
    st = Segment::create_unlinked("ucg-p2p", geo.segment_bytes(), &f.segment_);
    if (st != Status::kOk) {
        return st;
    }
    Ring::format(f.segment_.data(), geo);
    st = f.ring_.open(f.segment_.data(), f.segment_.size(), 0, true);
    if (st != Status::kOk) {
        return st;
    }
    f.ring_.join();
    f.bell_ = {static_cast<std::int32_t>(getpid()), f.segment_.fd()};
    *fifo_p = std::move(f);
    return Status::kOk;
}

Status FifoSegment::attach(pid_t pid, int fd, std::size_t bytes,
                           FifoSegment *fifo_p)
{
    FifoSegment f;
    Status st = Segment::attach_proc(pid, fd, bytes, &f.segment_);
    if (st != Status::kOk) {
        return st;
    }
    st = f.ring_.open(f.segment_.data(), f.segment_.size(), kNoOrigin, true);
    if (st != Status::kOk) {
        return st;
    }
    f.bell_ = {static_cast<std::int32_t>(pid), fd};
    *fifo_p = std::move(f);
    return Status::kOk;
}

} // namespace uct_mm_common
