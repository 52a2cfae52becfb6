// SPDX-License-Identifier: BSD-3-Clause
// Group and FIFO segments: create, attach, join, unlink-after-attach.
#include "group.h"

#include "uct_mm_common/backoff.h"
#include "uct_mm_common/log.h"

namespace uct_mm_bcast {

using uct_mm_common::Backoff;
using uct_mm_common::Deadline;
using uct_mm_common::log;
using uct_mm_common::LogLevel;
using uct_mm_common::Segment;

namespace {

Status attach_formatted(const GroupParams &p, std::size_t bytes, Segment *seg_p)
{
    Deadline deadline{std::chrono::milliseconds(p.attach_timeout_ms)};
    Backoff backoff(1024);
    for (;;) {
        Segment seg;
        const Status st = Segment::attach(p.name, bytes, &seg);
        if (st == Status::kOk && Ring::formatted(seg.data())) {
            *seg_p = std::move(seg);
            return Status::kOk;
        }
        if (st != Status::kOk && st != Status::kNotFound) {
            return st;
        }
        if (deadline.expired()) {
            // The creator is late or dead: do not leave its segment behind.
            uct_mm_common::unlink_segment(p.name);
            log(LogLevel::kError,
                "mm_bcast: group segment %s not ready after %u ms",
                p.name.c_str(), p.attach_timeout_ms);
            return Status::kTimeout;
        }
        backoff.pause();
    }
}

} // namespace

Status GroupSegment::open(const GroupParams &p, GroupSegment *group_p)
{
    RingGeometry geo;
    geo.num_members = p.size;
    geo.num_slots = p.num_slots;
    geo.slot_bytes = p.slot_bytes;
    Status st = Ring::validate(geo);
    if (st != Status::kOk) {
        return st;
    }
    if (p.my_index >= p.size) {
        log(LogLevel::kError, "mm_bcast: member index %u of a group of %u",
            p.my_index, p.size);
        return Status::kInvalidParam;
    }
    GroupSegment g;
    if (p.my_index == 0) {
        st = Segment::create(p.name, geo.segment_bytes(), &g.segment_);
        if (st == Status::kOk) {
            Ring::format(g.segment_.data(), geo);
        }
    } else {
        st = attach_formatted(p, geo.segment_bytes(), &g.segment_);
    }
    if (st != Status::kOk) {
        return st;
    }
    st = g.ring_.open(g.segment_.data(), g.segment_.size(), p.my_index, false);
    if (st != Status::kOk) {
        return st;
    }
    g.joined_ = true;
    if (g.ring_.join() == p.size) {
        uct_mm_common::unlink_segment(p.name); // everyone is in
    }
    if (p.size == 1) {
        g.segment_.unlink();
    }
    *group_p = std::move(g);
    return Status::kOk;
}

GroupSegment::~GroupSegment()
{
    if (joined_ && segment_.data() != nullptr) {
        ring_.leave();
    }
}

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
    st = Segment::create_unlinked("ucg-mmbf", geo.segment_bytes(), &f.segment_);
    if (st != Status::kOk) {
        return st;
    }
    Ring::format(f.segment_.data(), geo);
    st = f.ring_.open(f.segment_.data(), f.segment_.size(), 0, true);
    if (st != Status::kOk) {
        return st;
    }
    f.ring_.join();
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
    *fifo_p = std::move(f);
    return Status::kOk;
}

} // namespace uct_mm_bcast
