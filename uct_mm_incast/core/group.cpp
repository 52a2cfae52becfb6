// SPDX-License-Identifier: BSD-3-Clause
// mm_incast group protocol. Idea: a ring of elements, one per incast in
// flight; each sender's contribution to incast k goes to element k % E,
// either into its own slot (BATCHED, CENTRALIZED: the root combines them in
// member order) or into one shared buffer (LOCKED, ATOMIC: senders combine
// in arrival order). Completion: BATCHED/LOCKED/ATOMIC count senders in
// ElementCtrl::pending; CENTRALIZED polls each slot's sequence word, one
// slot per poll (a cursor), so an idle poll costs O(1) in every mode.
// Chunks (slot modes with max_bytes over kChunkBytes): a contribution over
// kChunkBytes is published a chunk at a time (layout.h); the root sweeps
// the slots from the first unfinished one and consumes what is visible, at
// most a chunk per slot per pass, so chunk c of every slot is combined
// before chunk c + 1 (the result chunk stays in cache) and the root's pass
// over chunk c overlaps the sender's copy of chunk c + 1. Slot s applies a
// byte range only once slot s - 1 has, so every element is still reduced
// in member order. An idle poll with no sender mid-contribution reads one
// slot (a trailer line and a progress line).
// Cost per incast: each sender writes its bytes once; the root reads
// (N-1) x bytes (slot modes) or bytes (buffer modes) once.
#include "group.h"
#include "copy.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace uct_mm_incast {
namespace {

using Clock = std::chrono::steady_clock;

} // namespace

std::byte *Group::element(uint64_t k) const
{
    return base_ + elements_offset_ + (k % buffers_) * element_bytes_;
}

std::byte *Group::slot(std::byte *el, uint32_t s) const
{
    return el + kElementDataOffset + s * slot_stride_;
}

SlotTrailer *Group::trailer(std::byte *slot_base) const
{
    return reinterpret_cast<SlotTrailer *>(slot_base + slot_stride_ -
                                           kTrailerBytes);
}

SlotProgress *Group::progress(std::byte *slot_base) const
{
    return reinterpret_cast<SlotProgress *>(slot_base);
}

std::byte *Group::payload(std::byte *slot_base, std::size_t len) const
{
    if (len > kChunkBytes) {
        return slot_base + sizeof(SlotProgress);
    }
    return reinterpret_cast<std::byte *>(trailer(slot_base)) - len;
}

ucs_status_t Group::check_length(std::size_t length) const
{
    if (length > max_bytes_) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    if ((op_ != UCT_MM_INCAST_OP_GATHER) && (length % dtype_size_ != 0)) {
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

ucs_status_t Group::send(const void *data, std::size_t length)
{
    if (member_ == root_) {
        return UCS_ERR_INVALID_PARAM;
    }
    ucs_status_t status = check_length(length);
    if (status != UCS_OK) {
        return status;
    }
    const uint64_t k = seq_;
    if (k >= released_seen_ + elements_) {
        // Read the root's line only when the cached value says the ring is
        // full: one miss per `elements` incasts, not one per incast.
        released_seen_ = recv_line_->released.load(std::memory_order_acquire);
        if (k >= released_seen_ + elements_) {
            status = on_wait();
            return (status == UCS_OK) ? UCS_ERR_NO_RESOURCE : status;
        }
    }
    idle_polls_ = 0;
    std::byte *el = element(k);
    status = is_slot_mode(mode_) ? send_slot(el, data, length, k)
                                 : send_reduce(el, data, length);
    if (status == UCS_OK) {
        ++seq_;
    }
    return status;
}

ucs_status_t Group::send_slot(std::byte *el, const void *data, std::size_t len,
                              uint64_t k)
{
    std::byte *s = slot(el, my_slot_);
    SlotTrailer *t = trailer(s);
    if (len > kChunkBytes) {
        send_chunks(s, static_cast<const std::byte *>(data), len, k);
    } else if (len > 0) {
        copy_bytes(payload(s, len), data, len);
    }
    t->length = static_cast<uint32_t>(len);
    t->member = member_;
    // Release in both modes: a chunked root polls seq in BATCHED too.
    t->seq.store(k + 1, std::memory_order_release);
    if (mode_ == UCT_MM_INCAST_MODE_BATCHED) {
        reinterpret_cast<ElementCtrl *>(el)->pending.fetch_add(
            1, std::memory_order_release);
    }
    return UCS_OK;
}

// Every chunk but the last, each published with a release store; the
// caller publishes the last with the trailer.
void Group::send_chunks(std::byte *s, const std::byte *src, std::size_t len,
                        uint64_t k)
{
    SlotProgress *p = progress(s);
    std::byte *dst = payload(s, len);
    const uint64_t tag = uint64_t{static_cast<uint32_t>(k + 1)} << 32;
    p->length = static_cast<uint32_t>(len);
    std::size_t off = 0;
    for (; len - off > kChunkBytes; off += kChunkBytes) {
        copy_bytes(dst + off, src + off, kChunkBytes);
        p->word.store(tag | (off + kChunkBytes), std::memory_order_release);
        if (hooks_.chunk_published != nullptr) {
            hooks_.chunk_published(hooks_.arg, off + kChunkBytes);
        }
    }
    copy_bytes(dst + off, src + off, len - off);
}

ucs_status_t Group::send_reduce(std::byte *el, const void *data,
                                std::size_t len)
{
    auto *ctrl = reinterpret_cast<ElementCtrl *>(el);
    std::byte *buf = el + kElementDataOffset;
    const auto tagged = static_cast<uint32_t>(len + 1);
    const std::size_t count = len / dtype_size_;
    ucs_lock_t *lock =
        &reinterpret_cast<ElementLock *>(el + sizeof(ElementCtrl))->lock;
    if (mode_ == UCT_MM_INCAST_MODE_LOCKED) {
        const ucs_status_t r = ucs_lock_acquire(lock);
        if (r != UCS_OK) {
            // A sender died inside the reduction: the buffer is lost.
            attach_->broken.store(1, std::memory_order_release);
            if (r == UCS_LOCK_ERR_OWNER_DEAD) {
                ucs_lock_release(lock);
            }
            return UCS_ERR_CONNECTION_RESET;
        }
    }
    uint32_t expected = 0;
    if (!ctrl->length.compare_exchange_strong(expected, tagged,
                                              std::memory_order_relaxed) &&
        (expected != tagged)) {
        if (mode_ == UCT_MM_INCAST_MODE_LOCKED) {
            ucs_lock_release(lock);
        }
        return UCS_ERR_INVALID_PARAM; // another sender gave another length
    }
    if (mode_ == UCT_MM_INCAST_MODE_ATOMIC) {
        atomic_reduce_(buf, data, count);
        ctrl->pending.fetch_add(1, std::memory_order_release);
        return UCS_OK;
    }
    if (ctrl->pending.load(std::memory_order_relaxed) == 0) {
        if (len > 0) {
            copy_bytes(buf, data, len);
        }
    } else {
        reduce_(buf, data, count);
    }
    ctrl->pending.fetch_add(1, std::memory_order_release);
    ucs_lock_release(lock);
    return UCS_OK;
}

bool Group::element_complete(std::byte *el, uint64_t k)
{
    const uint32_t senders = num_senders();
    if (mode_ != UCT_MM_INCAST_MODE_CENTRALIZED) {
        return reinterpret_cast<ElementCtrl *>(el)->pending.load(
                   std::memory_order_acquire) == senders;
    }
    while ((cursor_ < senders) &&
           (trailer(slot(el, cursor_))->seq.load(std::memory_order_acquire) ==
            k + 1)) {
        ++cursor_;
    }
    return cursor_ == senders;
}

ucs_status_t Group::recv(void *out, std::size_t capacity, std::size_t *length_p)
{
    if (member_ != root_) {
        return UCS_ERR_INVALID_PARAM;
    }
    const uint64_t k = seq_;
    std::byte *el = element(k);
    if (chunked_) {
        return recv_chunks(el, k, out, capacity, length_p);
    }
    if (!element_complete(el, k)) {
        ucs_status_t status = on_wait();
        return (status == UCS_OK) ? UCS_INPROGRESS : status;
    }
    idle_polls_ = 0;
    std::size_t reduced = 0;
    ucs_status_t status = deliver(el, out, capacity, &reduced);
    if (status != UCS_OK) {
        return status;
    }
    *length_p = reduced;
    release(el, reduced);
    return UCS_OK;
}

ucs_status_t Group::deliver(std::byte *el, void *out, std::size_t capacity,
                            std::size_t *length_p)
{
    const uint32_t senders = num_senders();
    auto *dst = static_cast<std::byte *>(out);
    if (!is_slot_mode(mode_)) {
        const uint32_t tagged =
            reinterpret_cast<ElementCtrl *>(el)->length.load(
                std::memory_order_relaxed);
        const std::size_t len = (tagged == 0) ? 0 : tagged - 1;
        if (len > capacity) {
            return UCS_ERR_MESSAGE_TRUNCATED;
        }
        if (len > 0) {
            copy_bytes(dst, el + kElementDataOffset, len);
        }
        *length_p = len;
        return UCS_OK;
    }
    std::size_t total = 0;
    for (uint32_t s = 0; s < senders; ++s) {
        total += trailer(slot(el, s))->length;
    }
    const bool gather = (op_ == UCT_MM_INCAST_OP_GATHER);
    const std::size_t len = (senders == 0) ? 0 : trailer(slot(el, 0))->length;
    if ((gather ? total : len) > capacity) {
        return UCS_ERR_MESSAGE_TRUNCATED;
    }
    if (!gather && (total != len * senders)) {
        return UCS_ERR_INVALID_PARAM; // senders disagree on the length
    }
    std::byte *target = dst;
    if (!gather && (reinterpret_cast<uintptr_t>(dst) % dtype_size_ != 0)) {
        target = reinterpret_cast<std::byte *>(scratch_.data());
    }
    std::size_t offset = 0;
    for (uint32_t s = 0; s < senders; ++s) {
        std::byte *sb = slot(el, s);
        SlotTrailer *t = trailer(sb);
        const std::byte *src = payload(sb, t->length);
        if (gather) {
            copy_bytes(dst + offset, src, t->length);
            offset += t->length;
        } else if (s == 0) {
            copy_bytes(target, src, len);
        } else {
            reduce_(target, src, len / dtype_size_); // member order
        }
    }
    if (target != dst) {
        copy_bytes(dst, target, len);
    }
    *length_p = gather ? total : len;
    return UCS_OK;
}

std::size_t Group::consumed_bytes() const
{
    std::size_t sum = 0;
    for (const SlotSeen &v : seen_) {
        sum += v.applied;
    }
    return sum;
}

ucs_status_t Group::recv_chunks(std::byte *el, uint64_t k, void *out,
                                std::size_t capacity, std::size_t *length_p)
{
    if ((out != stream_out_) || (capacity != stream_cap_)) {
        // Another buffer: consume again from the start (slots stay).
        seen_.assign(seen_.size(), SlotSeen{});
        cursor_ = 0;
        done_offset_ = 0;
        stream_out_ = out;
        stream_cap_ = capacity;
    }
    const bool gather = (op_ == UCT_MM_INCAST_OP_GATHER);
    auto *dst = static_cast<std::byte *>(out);
    std::byte *target = dst;
    if (!gather && (reinterpret_cast<uintptr_t>(dst) % dtype_size_ != 0)) {
        target = reinterpret_cast<std::byte *>(scratch_.data());
    }
    bool any = false;
    for (bool moved = true; moved && (cursor_ < num_senders());) {
        moved = false;
        const ucs_status_t status = sweep(el, k, target, capacity, &moved);
        if (status != UCS_OK) {
            return status;
        }
        any = any || moved;
    }
    if (cursor_ < num_senders()) {
        if (any) {
            idle_polls_ = 0;
            return UCS_INPROGRESS;
        }
        const ucs_status_t status = on_wait();
        return (status == UCS_OK) ? UCS_INPROGRESS : status;
    }
    idle_polls_ = 0;
    const std::size_t len =
        gather ? done_offset_ : (seen_.empty() ? 0 : seen_[0].length);
    if (target != dst) {
        copy_bytes(dst, target, len);
    }
    *length_p = len;
    seen_.assign(seen_.size(), SlotSeen{});
    done_offset_ = 0;
    stream_out_ = nullptr;
    stream_cap_ = 0;
    release(el, len);
    return UCS_OK;
}

// One pass over the slots from the first unfinished one: each consumes up
// to a chunk of what its sender published (a reduction: and what slot
// s - 1 consumed). Stops at the first slot not started, and in a reduction
// at a slot that did not advance when the next one has caught up with it:
// an idle poll reads the started, unfinished slots and one more.
ucs_status_t Group::sweep(std::byte *el, uint64_t k, std::byte *target,
                          std::size_t capacity, bool *moved)
{
    const bool gather = (op_ == UCT_MM_INCAST_OP_GATHER);
    std::size_t offset = done_offset_; // gather: where slot s goes
    for (uint32_t s = cursor_; s < num_senders(); ++s) {
        SlotSeen &v = seen_[s];
        const bool was_started = v.started;
        if (!visible(el, s, k)) {
            return UCS_OK;
        }
        if (!was_started) {
            if ((gather ? offset + v.length : v.length) > capacity) {
                v.started = false;
                return UCS_ERR_MESSAGE_TRUNCATED;
            }
            if (!gather && (s > 0) && (v.length != seen_[0].length)) {
                v.started = false;
                return UCS_ERR_INVALID_PARAM; // senders disagree
            }
        }
        std::size_t end = v.visible;
        if (!gather && (s > 0)) {
            end = std::min<std::size_t>(end, seen_[s - 1].applied);
        }
        end = std::min(end, v.applied + kChunkBytes);
        const bool advanced = end > v.applied;
        if (advanced) {
            apply(el, s, gather ? target + offset : target, v.applied, end);
            v.applied = static_cast<uint32_t>(end);
            *moved = true;
        }
        if ((s == cursor_) && (v.applied == v.length)) {
            ++cursor_;
            done_offset_ += v.length;
            *moved = true;
        } else if (!advanced && !gather &&
                   ((s + 1 == num_senders()) ||
                    (seen_[s + 1].applied >= v.applied))) {
            return UCS_OK; // slot s + 1 cannot pass what s has applied
        }
        offset += v.length;
    }
    return UCS_OK;
}

// Refreshes what the root knows of slot s; false while it has not started.
bool Group::visible(std::byte *el, uint32_t s, uint64_t k)
{
    SlotSeen &v = seen_[s];
    if (v.started && (v.visible == v.length)) {
        return true;
    }
    std::byte *sb = slot(el, s);
    SlotTrailer *t = trailer(sb);
    if (t->seq.load(std::memory_order_acquire) == k + 1) {
        v.length = t->length;
        v.visible = v.length;
        v.started = true;
        return true;
    }
    const uint64_t word = progress(sb)->word.load(std::memory_order_acquire);
    if ((word >> 32) != static_cast<uint32_t>(k + 1)) {
        return v.started;
    }
    v.length = progress(sb)->length;
    v.visible = static_cast<uint32_t>(word);
    v.started = true;
    return true;
}

// Consumes bytes [begin, end) of slot s: gather copies to `to` + begin, a
// reduction copies (slot 0) or reduces into the result in member order.
void Group::apply(std::byte *el, uint32_t s, std::byte *to, std::size_t begin,
                  std::size_t end)
{
    std::byte *sb = slot(el, s);
    const std::byte *src = payload(sb, seen_[s].length) + begin;
    if ((op_ == UCT_MM_INCAST_OP_GATHER) || (s == 0)) {
        copy_bytes(to + begin, src, end - begin);
    } else {
        reduce_(to + begin, src, (end - begin) / dtype_size_);
    }
}

void Group::release(std::byte *el, std::size_t reduced_len)
{
    auto *ctrl = reinterpret_cast<ElementCtrl *>(el);
    if (mode_ == UCT_MM_INCAST_MODE_ATOMIC) {
        fill_identity(el + kElementDataOffset, reduced_len / dtype_size_, op_,
                      dtype_);
    }
    ctrl->pending.store(0, std::memory_order_relaxed);
    ctrl->length.store(0, std::memory_order_relaxed);
    cursor_ = 0;
    ++seq_;
    recv_line_->released.store(seq_, std::memory_order_release);
}

ucs_status_t Group::on_wait()
{
    // Cheap path first: a counter; the clock only every 256 idle polls, the
    // O(N) probe at most every millisecond.
    if ((++idle_polls_ & 255) != 0) {
        return UCS_OK;
    }
    if (attach_->broken.load(std::memory_order_acquire) != 0) {
        return UCS_ERR_CONNECTION_RESET;
    }
    const Clock::time_point now = Clock::now();
    if (now - last_probe_ < std::chrono::milliseconds(1)) {
        return UCS_OK;
    }
    last_probe_ = now;
    return probe_members();
}

} // namespace uct_mm_incast
