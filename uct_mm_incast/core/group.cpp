// SPDX-License-Identifier: BSD-3-Clause
// mm_incast group protocol. Idea: a ring of elements, one per incast in
// flight; each sender's contribution to incast k goes to element k % E,
// either into its own slot (BATCHED, CENTRALIZED: the root combines them in
// member order) or into one shared buffer (LOCKED, ATOMIC: senders combine
// in arrival order). Completion: BATCHED/LOCKED/ATOMIC count senders in
// ElementCtrl::pending; CENTRALIZED polls each slot's sequence word, one
// slot per poll (a cursor), so an idle poll costs O(1) in every mode.
// Cost per incast: each sender writes its bytes once; the root reads
// (N-1) x bytes (slot modes) or bytes (buffer modes) once.
#include "group.h"

#include <cstring>
#include <new>

namespace uct_mm_incast {
namespace {

using Clock = std::chrono::steady_clock;

} // namespace

std::byte *Group::element(uint64_t k) const
{
    return base_ + elements_offset_ + (k % elements_) * element_bytes_;
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
    if (k >= recv_line_->released.load(std::memory_order_acquire) + elements_) {
        status = on_wait();
        return (status == UCS_OK) ? UCS_ERR_NO_RESOURCE : status;
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
    if (len > 0) {
        std::memcpy(reinterpret_cast<std::byte *>(t) - len, data, len);
    }
    t->length = static_cast<uint32_t>(len);
    t->member = member_;
    if (mode_ == UCT_MM_INCAST_MODE_CENTRALIZED) {
        t->seq.store(k + 1, std::memory_order_release);
    } else {
        t->seq.store(k + 1, std::memory_order_relaxed);
        reinterpret_cast<ElementCtrl *>(el)->pending.fetch_add(
            1, std::memory_order_release);
    }
    return UCS_OK;
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
            std::memcpy(buf, data, len);
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
            std::memcpy(dst, el + kElementDataOffset, len);
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
        const std::byte *src = reinterpret_cast<std::byte *>(t) - t->length;
        if (gather) {
            std::memcpy(dst + offset, src, t->length);
            offset += t->length;
        } else if (s == 0) {
            std::memcpy(target, src, len);
        } else {
            reduce_(target, src, len / dtype_size_); // member order
        }
    }
    if (target != dst) {
        std::memcpy(dst, target, len);
    }
    *length_p = gather ? total : len;
    return UCS_OK;
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
