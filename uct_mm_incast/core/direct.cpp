// SPDX-License-Identifier: BSD-3-Clause
// Direct messages of an mm_incast group (layout and protocol: direct.h):
// posts publish into this member's slot as soon as the slowest reader
// allows, tests read the contributions a message needs, and messages
// complete in any order but count as done in order (what frees slots).
#include "direct.h"

#include "reduce_ops.h"

#include <ucg/copy.h>

namespace uct_mm_incast {

namespace {

bool is_reduction(DirectColl c) noexcept
{
    return c == DirectColl::kReduce || c == DirectColl::kAllreduce;
}

bool is_rooted(DirectColl c) noexcept
{
    return c == DirectColl::kBcast || c == DirectColl::kReduce ||
           c == DirectColl::kGather || c == DirectColl::kScatter;
}

// Only the root writes its slot (the others read it).
bool from_root(DirectColl c) noexcept
{
    return c == DirectColl::kBcast || c == DirectColl::kScatter;
}

// A slot holds a block for every member.
bool per_member_blocks(DirectColl c) noexcept
{
    return c == DirectColl::kAlltoall || c == DirectColl::kScatter;
}

// What every member's slot must carry for message s (the agreement check).
std::uint32_t direct_check(const DirectMsg &m, std::uint64_t s) noexcept
{
    const bool reduce = is_reduction(m.coll);
    std::uint64_t h = 0xcbf29ce484222325ULL;
    const std::uint64_t fields[] = {
        s,
        static_cast<std::uint64_t>(m.coll),
        is_rooted(m.coll) ? m.root : 0,
        reduce ? static_cast<std::uint64_t>(m.op) : 0,
        reduce ? static_cast<std::uint64_t>(m.dtype) : 0,
        m.length};
    for (std::uint64_t f : fields) {
        h = (h ^ f) * 0x100000001b3ULL;
    }
    return static_cast<std::uint32_t>(h ^ (h >> 32));
}

} // namespace

Status DirectArea::attach(std::uint8_t *region, const DirectGeometry &geo,
                          std::uint32_t member, uct_mm_common::GroupLink *link)
{
    try {
        ops_.assign(kQueue, Op{});
        stage_.assign(std::size_t{kQueue} * geo.slot_bytes, 0);
        srcs_.assign(geo.members, nullptr);
    } catch (...) {
        return Status::kNoMemory;
    }
    region_ = region;
    geo_ = geo;
    stride_ = geo.stride();
    member_bytes_ = geo.member_bytes();
    member_ = member;
    link_ = link;
    return Status::kOk;
}

DirectLine *DirectArea::line(std::uint32_t m) const noexcept
{
    return reinterpret_cast<DirectLine *>(region_ + m * member_bytes_);
}

DirectSlotHeader *DirectArea::slot(std::uint32_t m,
                                   std::uint64_t s) const noexcept
{
    return reinterpret_cast<DirectSlotHeader *>(region_ + m * member_bytes_ +
                                                sizeof(DirectLine) +
                                                (s % kDirectDepth) * stride_);
}

Status DirectArea::check(const DirectMsg &m, const char **why) const noexcept
{
    if (m.coll >= DirectColl::kLast) {
        *why = "unknown direct message kind";
    } else if (m.length > geo_.slot_bytes /
                              (per_member_blocks(m.coll) ? geo_.members : 1) ||
               (m.coll == DirectColl::kBarrier && m.length != 0)) {
        *why = "length above the group's direct slot (an alltoall's or a "
               "scatter's, its share of the slot; a barrier's, not 0)";
    } else if (is_rooted(m.coll) && m.root >= geo_.members) {
        *why = "root is not a member";
    } else if (is_reduction(m.coll) &&
               (ucg_reduce_check(m.op, m.dtype) != UCS_OK ||
                m.length % ucg_dtype_size(m.dtype) != 0)) {
        *why = "operator and datatype do not reduce, or length is not a "
               "multiple of the datatype";
    } else if (m.length != 0 && m.src == nullptr && contributes(m)) {
        *why = "no source buffer";
    } else if (m.length != 0 && m.dst == nullptr && !reads_nothing(m)) {
        *why = "no destination buffer";
    } else {
        return Status::kOk;
    }
    return Status::kInvalidParam;
}

bool DirectArea::contributes(const DirectMsg &m) const noexcept
{
    return !from_root(m.coll) || m.root == member_;
}

std::size_t DirectArea::payload(const DirectMsg &m) const noexcept
{
    return per_member_blocks(m.coll) ? m.length * geo_.members : m.length;
}

// Slot s % depth is free once every member, this one too (a reduction
// reads its own slot), has finished message s - depth; the others' done
// counters are read again only when the cached bound says no.
bool DirectArea::room_for(std::uint64_t s) noexcept
{
    if (s >= first_ + kDirectDepth) {
        return false;
    }
    if (s < others_done_ + kDirectDepth) {
        return true;
    }
    std::uint64_t min = ~std::uint64_t{0};
    for (std::uint32_t m = 0; m < geo_.members; ++m) {
        if (m != member_) {
            const std::uint64_t d =
                line(m)->done.load(std::memory_order_acquire);
            // Nobody finishes a message more than depth past this member's
            // first unfinished one: its publisher needed this one's room.
            if (d > first_ + kDirectDepth) {
                link_->fail(Status::kIoError, static_cast<int>(m),
                            "a direct done counter past what flow control "
                            "allows");
                return false;
            }
            if (d < min) {
                min = d;
                waiting_on_ = static_cast<int>(m);
            }
        }
    }
    others_done_ = min == ~std::uint64_t{0} ? s : min;
    return s < others_done_ + kDirectDepth;
}

void DirectArea::publish(Op &op, std::uint64_t s) noexcept
{
    DirectSlotHeader *h = slot(member_, s);
    const std::size_t bytes = payload(op.msg);
    if (bytes != 0) {
        ucg_copy(h + 1, op.msg.src, bytes);
    }
    h->check = op.check;
    h->length = static_cast<std::uint32_t>(bytes);
    h->seq.store(s + 1, std::memory_order_release);
}

// Whether member m's contribution to message s is in (and fits the post).
bool DirectArea::arrived(const Op &op, std::uint32_t m,
                         std::uint64_t s) noexcept
{
    const DirectSlotHeader *h = slot(m, s);
    const std::uint64_t seq = h->seq.load(std::memory_order_acquire);
    if (seq != s + 1) {
        if (seq > s + 1) {
            link_->fail(Status::kIoError, static_cast<int>(m),
                        "a direct slot is past this member's message");
        }
        waiting_on_ = static_cast<int>(m);
        return false;
    }
    if (h->check != op.check || h->length != payload(op.msg)) {
        link_->fail(Status::kIoError, static_cast<int>(m),
                    "members disagree on a direct message (kind, root, "
                    "operator, datatype or length)");
        return false;
    }
    return true;
}

bool DirectArea::reads_nothing(const DirectMsg &m) const noexcept
{
    return (m.coll == DirectColl::kBcast && m.root == member_) ||
           ((m.coll == DirectColl::kReduce || m.coll == DirectColl::kGather) &&
            m.root != member_);
}

bool DirectArea::ready(const Op &op, std::uint64_t s) noexcept
{
    const DirectMsg &m = op.msg;
    if (reads_nothing(m)) {
        return true; // its contribution is published: nothing to read
    }
    if (from_root(m.coll)) {
        return arrived(op, m.root, s); // a scatter's root: its own slot
    }
    for (std::uint32_t i = 0; i < geo_.members; ++i) {
        if (i != member_ && !arrived(op, i, s)) {
            return false;
        }
    }
    return true;
}

void DirectArea::consume(const Op &op, std::uint64_t s) noexcept
{
    const DirectMsg &m = op.msg;
    const std::size_t len = m.length;
    if (op.abandoned || len == 0 || m.coll == DirectColl::kBarrier ||
        reads_nothing(m)) {
        return;
    }
    if (from_root(m.coll)) {
        // A scatter's block of this member, a bcast's whole slot.
        const std::size_t at =
            m.coll == DirectColl::kScatter ? std::size_t{member_} * len : 0;
        ucg_copy(m.dst,
                 reinterpret_cast<const std::uint8_t *>(slot(m.root, s) + 1) +
                     at,
                 len);
        return;
    }
    if (m.coll == DirectColl::kAllgather || m.coll == DirectColl::kAlltoall ||
        m.coll == DirectColl::kGather) {
        // Alltoall: this member's block of each slot.
        const std::size_t at =
            m.coll == DirectColl::kAlltoall ? std::size_t{member_} * len : 0;
        auto *dst = static_cast<std::uint8_t *>(m.dst);
        for (std::uint32_t i = 0; i < geo_.members; ++i) {
            ucg_copy(dst + i * len,
                     reinterpret_cast<const std::uint8_t *>(slot(i, s) + 1) +
                         at,
                     len);
        }
        return;
    }
    for (std::uint32_t i = 0; i < geo_.members; ++i) {
        srcs_[i] = slot(i, s) + 1;
    }
    reduce_multi(m.op, m.dtype, m.dst, srcs_.data(), geo_.members,
                 len / ucg_dtype_size(m.dtype), false);
}

bool DirectArea::publish_pending() noexcept
{
    bool moved = false;
    for (; unpublished_ < next_; ++unpublished_) {
        Op &op = at(unpublished_);
        if (contributes(op.msg)) {
            if (!room_for(unpublished_)) {
                break;
            }
            publish(op, unpublished_);
        }
        moved = true;
    }
    return moved;
}

bool DirectArea::complete_ready() noexcept
{
    bool moved = false;
    for (std::uint64_t s = first_; s < unpublished_ && !link_->failed(); ++s) {
        Op &op = at(s);
        if (!op.complete && ready(op, s)) {
            consume(op, s);
            op.complete = true;
            moved = true;
        }
    }
    std::uint64_t f = first_;
    while (f < unpublished_ && at(f).complete) {
        ++f;
    }
    if (f != first_) {
        first_ = f;
        line(member_)->done.store(f, std::memory_order_release);
    }
    return moved;
}

bool DirectArea::progress() noexcept
{
    if (link_->failed()) {
        return false;
    }
    bool moved = publish_pending();
    if (complete_ready()) {
        moved = true;
        publish_pending(); // what waited for this member's own slots
    }
    if (moved) {
        link_->on_activity();
    } else if (first_ < next_) {
        link_->on_stall(waiting_on_);
    }
    return moved;
}

Status DirectArea::outcome(std::uint64_t id) noexcept
{
    if (id < first_ || at(id).complete) {
        return Status::kOk;
    }
    return link_->failed() ? link_->state() : Status::kInProgress;
}

Status DirectArea::post(const DirectMsg &m, std::uint64_t *id) noexcept
{
    if (link_->failed()) {
        return link_->state();
    }
    if (next_ - first_ >= kQueue) {
        progress();
        if (next_ - first_ >= kQueue) {
            return link_->failed() ? link_->state() : Status::kNoResource;
        }
    }
    const std::uint64_t s = next_++;
    Op &op = at(s);
    op = Op{};
    op.msg = m;
    op.check = direct_check(m, s);
    progress();
    if (s >= unpublished_ && contributes(m) && m.length != 0) {
        // Published later, from progress: the caller's src is ours only
        // during this call.
        std::uint8_t *stage = stage_.data() + (s % kQueue) * geo_.slot_bytes;
        ucg_copy(stage, m.src, payload(m));
        op.msg.src = stage;
    }
    *id = s;
    return outcome(s);
}

Status DirectArea::test(std::uint64_t id) noexcept
{
    if (id >= next_) {
        return Status::kInvalidParam;
    }
    if (id >= first_ && !at(id).complete) {
        progress();
    }
    return outcome(id);
}

void DirectArea::abandon(std::uint64_t id) noexcept
{
    if (id >= first_ && id < next_) {
        at(id).abandoned = true;
    }
}

} // namespace uct_mm_incast
