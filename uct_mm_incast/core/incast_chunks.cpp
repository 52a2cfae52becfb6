// SPDX-License-Identifier: BSD-3-Clause
// One position of an mm_incast message (seq_layout.h): a sender's chunk
// into its slot (BATCHED, CENTRALIZED) or into the shared reduce buffer
// (LOCKED under the element's lock, ATOMIC with atomics after the first
// sender's copy), and the root's consumption straight into its buffer:
// gather copies, reductions in member order (slot modes: one pass over the
// chunks, ucg_reduce_multi) or the buffer's arrival-order result.
#include "incast_group.h"

#include <ucg/copy.h>

namespace uct_mm_incast {

using uct_mm_common::Coll;

namespace {

/// The member of the i-th sender (every member but the root, in order).
std::uint32_t sender_member(std::uint32_t i, std::uint32_t root) noexcept
{
    return i < root ? i : i + 1;
}

} // namespace

std::uint8_t *IncastGroup::element(std::uint64_t pos) const noexcept
{
    return link_.region() + (pos % geo_.elements) * element_bytes_;
}

ElementCtrl *IncastGroup::ctrl(std::uint64_t pos) const noexcept
{
    return reinterpret_cast<ElementCtrl *>(element(pos));
}

SlotTrailer *IncastGroup::trailer(std::uint64_t pos,
                                  std::uint32_t m) const noexcept
{
    return reinterpret_cast<SlotTrailer *>(element(pos) + geo_.slots_offset() +
                                           (m + 1) * geo_.slot_stride() -
                                           sizeof(SlotTrailer));
}

// After position pos of op: the element's counters moved on for everyone
// (senders counted in BATCHED, LOCKED, ATOMIC; one more ATOMIC use).
void IncastGroup::count_use(const Op &op, std::uint64_t pos) noexcept
{
    ElementSeen &e = seen_[pos % geo_.elements];
    if (op.mode != UCT_MM_INCAST_MODE_CENTRALIZED) {
        e.pending += cfg_.size - 1;
    }
    if (op.mode == UCT_MM_INCAST_MODE_ATOMIC) {
        ++e.atomic;
    }
}

bool IncastGroup::put(Op &op) noexcept
{
    const auto *src = static_cast<const std::uint8_t *>(op.msg.buffer);
    for (; op.done < op.nelem; ++op.done) {
        const std::uint64_t pos = op.first + op.done;
        if (!room_for(pos)) {
            return false;
        }
        const std::size_t len = chunk_length(op, op.done);
        const std::uint8_t *chunk = src + op.done * op.chunk;
        bool ok;
        if (is_slot_mode(op.mode)) {
            ok = put_slot(op, pos, chunk, len);
        } else if (op.mode == UCT_MM_INCAST_MODE_LOCKED) {
            ok = put_locked(op, pos, chunk, len);
        } else {
            ok = put_atomic(op, pos, chunk, len);
        }
        if (!ok) {
            return false; // busy (retried from progress) or failed
        }
        count_use(op, pos);
        advance_cursor(pos);
    }
    return true;
}

void IncastGroup::copy_in(const Op &op, std::uint8_t *dst,
                          const std::uint8_t *src, std::size_t len) noexcept
{
    if (op.msg.length >= cfg_.stream_min) {
        ucg_copy_to_peer(dst, src, len); // decision 0047
        ++streamed_;
    } else {
        ucg_copy(dst, src, len);
    }
}

bool IncastGroup::put_slot(const Op &op, std::uint64_t pos,
                           const std::uint8_t *src, std::size_t len) noexcept
{
    SlotTrailer *t = trailer(pos, cfg_.member);
    if (len != 0) {
        copy_in(op, reinterpret_cast<std::uint8_t *>(t) - len, src, len);
    }
    t->length = static_cast<std::uint32_t>(len);
    t->check = op.check;
    t->seq.store(pos + 1, std::memory_order_release);
    if (op.mode == UCT_MM_INCAST_MODE_BATCHED) {
        ctrl(pos)->pending.fetch_add(1, std::memory_order_release);
    }
    return true;
}

bool IncastGroup::put_locked(const Op &op, std::uint64_t pos,
                             const std::uint8_t *src, std::size_t len) noexcept
{
    ucs_lock_t *lock =
        &reinterpret_cast<ElementLock *>(element(pos) + geo_.lock_offset())
             ->lock;
    const ucs_status_t r = ucs_lock_try_acquire(lock);
    if (r == UCS_ERR_BUSY) {
        return false; // another sender is reducing: again from progress
    }
    if (r != UCS_OK) {
        if (r == UCS_LOCK_ERR_OWNER_DEAD) {
            ucs_lock_release(lock);
        }
        link_.fail(Status::kPeerDead, -1,
                   "a sender died while it held an element's lock");
        return false;
    }
    ElementCtrl *c = ctrl(pos);
    std::uint8_t *buf = element(pos) + geo_.rbuf_offset();
    const std::uint32_t in = c->pending.load(std::memory_order_relaxed) -
                             seen_[pos % geo_.elements].pending;
    if (in >= cfg_.size - 1) {
        ucs_lock_release(lock);
        link_.fail(Status::kIoError, -1, "more senders counted than exist");
        return false;
    }
    if (in == 0) {
        c->length = static_cast<std::uint32_t>(len);
        c->check = op.check;
        if (len != 0) {
            copy_in(op, buf, src, len);
        }
    } else if (c->length != len || c->check != op.check) {
        ucs_lock_release(lock);
        link_.fail(Status::kIoError, -1,
                   "senders' posts of one message disagree");
        return false;
    } else {
        const void *one = src;
        reduce_multi(op.msg.op, op.msg.dtype, buf, &one, 1,
                     len / dtype_bytes(op.msg.dtype), true);
    }
    c->pending.fetch_add(1, std::memory_order_release);
    ucs_lock_release(lock);
    return true;
}

bool IncastGroup::put_atomic(const Op &op, std::uint64_t pos,
                             const std::uint8_t *src, std::size_t len) noexcept
{
    ElementCtrl *c = ctrl(pos);
    std::uint8_t *buf = element(pos) + geo_.rbuf_offset();
    const std::uint32_t gen = 2 * seen_[pos % geo_.elements].atomic;
    std::uint32_t f = c->first.load(std::memory_order_acquire);
    if (f == gen && c->first.compare_exchange_strong(
                        f, gen + 1, std::memory_order_acq_rel)) {
        // The first sender copies: no identity element to start from.
        c->length = static_cast<std::uint32_t>(len);
        c->check = op.check;
        if (len != 0) {
            copy_in(op, buf, src, len);
        }
        c->first.store(gen + 2, std::memory_order_release);
        c->pending.fetch_add(1, std::memory_order_release);
        return true;
    }
    if (f != gen + 2) {
        if (f != gen + 1) {
            link_.fail(Status::kIoError, -1, "bad element control line");
        }
        return false; // the first sender is copying: again from progress
    }
    if (c->length != len || c->check != op.check) {
        link_.fail(Status::kIoError, -1,
                   "senders' posts of one message disagree");
        return false;
    }
    op.atomic(buf, src, len / dtype_bytes(op.msg.dtype));
    c->pending.fetch_add(1, std::memory_order_release);
    return true;
}

bool IncastGroup::take(Op &op) noexcept
{
    for (; op.done < op.nelem; ++op.done) {
        const std::uint64_t pos = op.first + op.done;
        // The element's previous use (another root's, maybe) must be
        // consumed first: its count and lines are this use's only then.
        if (!room_for(pos) || !chunk_complete(op, pos)) {
            return false;
        }
        const std::size_t len = chunk_length(op, op.done);
        const bool ok = is_slot_mode(op.mode) ? consume_slots(op, pos, len)
                                              : consume_buffer(op, pos, len);
        if (!ok) {
            return false;
        }
        op.seen = 0;
        count_use(op, pos);
        advance_cursor(pos);
    }
    return true;
}

bool IncastGroup::chunk_complete(Op &op, std::uint64_t pos) noexcept
{
    const std::uint32_t senders = cfg_.size - 1;
    if (op.mode == UCT_MM_INCAST_MODE_CENTRALIZED) {
        // One slot's sequence word per poll while it is missing: O(1) idle.
        while (op.seen < senders) {
            const std::uint32_t m = sender_member(op.seen, op.msg.root);
            const std::uint64_t seq =
                trailer(pos, m)->seq.load(std::memory_order_acquire);
            if (seq != pos + 1) {
                // Past this position: the sender cannot have reused the
                // slot before the root consumed it, so the word is corrupt.
                if (seq > pos + 1) {
                    link_.fail(Status::kIoError, static_cast<int>(m),
                               "a slot is past the root's position");
                }
                return false;
            }
            ++op.seen;
        }
        return true;
    }
    const std::uint32_t in =
        ctrl(pos)->pending.load(std::memory_order_acquire) -
        seen_[pos % geo_.elements].pending;
    if (in > senders) {
        link_.fail(Status::kIoError, -1, "more senders counted than exist");
        return false;
    }
    return in == senders;
}

bool IncastGroup::consume_slots(const Op &op, std::uint64_t pos,
                                std::size_t len) noexcept
{
    const std::uint32_t senders = cfg_.size - 1;
    const std::size_t off = (pos - op.first) * op.chunk;
    const bool gather = op.msg.coll == Coll::kGather;
    auto *out = static_cast<std::uint8_t *>(op.msg.buffer);
    // The root's operand, when it names one, first: dst = operand op ...
    const auto *operand = static_cast<const std::uint8_t *>(op.msg.operand);
    const std::uint32_t first = operand != nullptr ? 1 : 0;
    if (operand != nullptr) {
        srcs_[0] = operand + off;
    }
    for (std::uint32_t i = 0; i < senders; ++i) {
        const std::uint32_t m = sender_member(i, op.msg.root);
        const SlotTrailer *t = trailer(pos, m);
        if (t->seq.load(std::memory_order_acquire) != pos + 1 ||
            t->length != len || t->check != op.check) {
            link_.fail(Status::kIoError, static_cast<int>(m),
                       "a chunk does not match the root's post (order, "
                       "length, kind or tag differ)");
            return false;
        }
        const auto *chunk = reinterpret_cast<const std::uint8_t *>(t) - len;
        if (!gather) {
            srcs_[first + i] = chunk;
        } else if (len != 0) {
            auto *dst =
                op.msg.member_buffers != nullptr
                    ? static_cast<std::uint8_t *>(op.msg.member_buffers[m])
                    : out + std::size_t{i} * op.msg.length;
            ucg_copy(dst + off, chunk, len);
        }
    }
    if (!gather && len != 0) {
        reduce_multi(op.msg.op, op.msg.dtype, out + off, srcs_.data(),
                     first + senders, len / dtype_bytes(op.msg.dtype),
                     op.msg.accumulate);
    }
    return true;
}

bool IncastGroup::consume_buffer(const Op &op, std::uint64_t pos,
                                 std::size_t len) noexcept
{
    auto *dst = static_cast<std::uint8_t *>(op.msg.buffer) +
                (pos - op.first) * op.chunk;
    const auto *operand = static_cast<const std::uint8_t *>(op.msg.operand);
    if (operand != nullptr) {
        operand += (pos - op.first) * op.chunk;
    }
    if (cfg_.size == 1 || len == 0) {
        if (operand != nullptr && len != 0) {
            ucg_copy(dst, operand, len); // nobody sent: the root's own
        }
        return true; // nobody sent, or nothing to combine
    }
    const ElementCtrl *c = ctrl(pos);
    if (c->length != len || c->check != op.check) {
        link_.fail(Status::kIoError, -1,
                   "a chunk does not match the root's post (order, length, "
                   "kind or tag differ)");
        return false;
    }
    const std::uint8_t *buf = element(pos) + geo_.rbuf_offset();
    if (operand != nullptr) { // the root's own, then the senders' result
        const void *two[] = {operand, buf};
        reduce_multi(op.msg.op, op.msg.dtype, dst, two, 2,
                     len / dtype_bytes(op.msg.dtype), false);
    } else if (op.msg.accumulate) {
        const void *one = buf; // buffer first, then the senders' result
        reduce_multi(op.msg.op, op.msg.dtype, dst, &one, 1,
                     len / dtype_bytes(op.msg.dtype), true);
    } else {
        ucg_copy(dst, buf, len);
    }
    return true;
}

int IncastGroup::first_missing(std::uint64_t pos,
                               std::uint32_t root) const noexcept
{
    for (std::uint32_t i = 0; i + 1 < cfg_.size; ++i) {
        const std::uint32_t m = sender_member(i, root);
        if (trailer(pos, m)->seq.load(std::memory_order_acquire) != pos + 1) {
            return static_cast<int>(m);
        }
    }
    return -1;
}

} // namespace uct_mm_incast
