// SPDX-License-Identifier: BSD-3-Clause
// The ring protocol (see ring_layout.h for the layout and the invariants).
#include "uct_mm_common/ring.h"

#include "uct_mm_common/log.h"

#include <new>
#include <unistd.h>

namespace uct_mm_common {

Status Ring::validate(const RingGeometry &geo) noexcept
{
    if (geo.num_members == 0 || geo.num_members > kMaxGroupMembers) {
        log(LogLevel::kError, "ring of %u members: limit is %u",
            geo.num_members, kMaxGroupMembers);
        return Status::kExceedsLimit;
    }
    if (!is_pow2(geo.num_slots) || geo.num_slots < 2 ||
        geo.slot_bytes < 2 * kCacheLine || geo.slot_bytes % kCacheLine != 0) {
        log(LogLevel::kError,
            "ring geometry %u slots x %u bytes: need a power of two >= 2 "
            "slots of a multiple of %zu >= %zu bytes",
            geo.num_slots, geo.slot_bytes, kCacheLine, 2 * kCacheLine);
        return Status::kInvalidParam;
    }
    return Status::kOk;
}

void Ring::format(void *mem, const RingGeometry &geo) noexcept
{
    auto *base = static_cast<std::uint8_t *>(mem);
    auto *hdr = new (base) RingHeader{};
    hdr->num_members = geo.num_members;
    hdr->num_slots = geo.num_slots;
    hdr->slot_bytes = geo.slot_bytes;
    hdr->attached.store(0, std::memory_order_relaxed);
    new (base + kHeadOffset) HeadLine{};
    for (std::uint32_t i = 0; i < geo.num_members; ++i) {
        new (base + kMembersOffset + i * kCacheLine) MemberLine{};
    }
    for (std::uint32_t s = 0; s < geo.num_slots; ++s) {
        auto *sh =
            new (base + geo.slots_offset() + std::size_t{s} * geo.slot_bytes)
                SlotHeader{};
        sh->seq.store(0, std::memory_order_relaxed);
    }
    hdr->magic.store(kRingMagic, std::memory_order_release);
}

bool Ring::formatted(const void *mem) noexcept
{
    const auto *hdr = static_cast<const RingHeader *>(mem);
    return hdr->magic.load(std::memory_order_acquire) == kRingMagic;
}

Status Ring::open(void *mem, std::size_t bytes, std::uint32_t my_index,
                  bool deliver_own) noexcept
{
    base_ = static_cast<std::uint8_t *>(mem);
    const auto *hdr = reinterpret_cast<const RingHeader *>(base_);
    if (hdr->magic.load(std::memory_order_acquire) != kRingMagic) {
        log(LogLevel::kError, "ring segment is not formatted");
        return Status::kInvalidParam;
    }
    geo_.num_members = hdr->num_members;
    geo_.num_slots = hdr->num_slots;
    geo_.slot_bytes = hdr->slot_bytes;
    if (validate(geo_) != Status::kOk || geo_.segment_bytes() > bytes ||
        (my_index != kNoOrigin && my_index >= geo_.num_members)) {
        log(LogLevel::kError,
            "ring segment of %zu bytes does not match its "
            "header or member %u",
            bytes, my_index);
        return Status::kInvalidParam;
    }
    head_ = reinterpret_cast<HeadLine *>(base_ + kHeadOffset);
    slots_ = base_ + geo_.slots_offset();
    my_index_ = my_index;
    deliver_own_ = deliver_own;
    cursor_ = my_index == kNoOrigin
                  ? 0
                  : member(my_index)->cursor.load(std::memory_order_acquire);
    cached_min_ = 0;
    self_ = self_process_id();
    return Status::kOk;
}

std::uint32_t Ring::join() noexcept
{
    MemberLine *me = member(my_index_);
    const auto id = self_process_id();
    me->start_time.store(id.start_time, std::memory_order_relaxed);
    me->pid.store(id.pid, std::memory_order_relaxed);
    me->state.store(kMemberIn, std::memory_order_release);
    auto *hdr = reinterpret_cast<RingHeader *>(base_);
    return hdr->attached.fetch_add(1, std::memory_order_acq_rel) + 1;
}

void Ring::leave() noexcept
{
    if (my_index_ != kNoOrigin) {
        member(my_index_)->cursor.store(kCursorLeft, std::memory_order_release);
    }
}

MemberLine *Ring::member(std::uint32_t i) const noexcept
{
    return reinterpret_cast<MemberLine *>(base_ + kMembersOffset +
                                          std::size_t{i} * kCacheLine);
}

std::uint64_t Ring::min_cursor() const noexcept
{
    std::uint64_t min = kCursorLeft;
    for (std::uint32_t i = 0; i < geo_.num_members; ++i) {
        const std::uint64_t c =
            member(i)->cursor.load(std::memory_order_acquire);
        min = c < min ? c : min;
    }
    return min;
}

Status Ring::claim(std::uint64_t *pos_p) noexcept
{
    // The slot is claimed (with this process's pid and start time) before
    // the head moves:
    // see uct_mm_common/slot_claim.h.
    const bool ok = claim_slot(
        head_->head, geo_.num_slots, self_,
        [this](std::uint64_t pos) -> std::atomic<std::uint64_t> & {
            return slot(pos)->seq;
        },
        [this](std::uint64_t pos) { return room_for(pos); }, pos_p);
    if (!ok) {
        return Status::kNoResource;
    }
    bell_ = head_->armed.load(std::memory_order_seq_cst);
    return Status::kOk;
}

bool Ring::room_for(std::uint64_t pos) noexcept
{
    if (pos - cached_min_ < geo_.num_slots) {
        return true;
    }
    // Looks full: rescan the cursors (O(members), only here).
    const std::uint64_t min = min_cursor();
    cached_min_ = min > pos ? pos : min;
    return pos - cached_min_ < geo_.num_slots;
}

bool Ring::has_space() noexcept
{
    return room_for(head_->head.load(std::memory_order_relaxed));
}

std::uint8_t *Ring::payload(std::uint64_t pos) const noexcept
{
    return reinterpret_cast<std::uint8_t *>(slot(pos)) + sizeof(SlotHeader);
}

bool Ring::publish(std::uint64_t pos, std::uint32_t length, std::uint8_t am_id,
                   SlotKind kind) noexcept
{
    SlotHeader *sh = slot(pos);
    sh->length = length;
    sh->origin = static_cast<std::uint16_t>(my_index_);
    sh->am_id = am_id;
    sh->kind = kind;
    sh->seq.store(pos + 1, std::memory_order_release);
    // Ring first, disarm after (rang()): a producer that dies or fails to
    // send between the two leaves the owner armed, so the next producer
    // rings again; the bell is never lost with the arm cleared.
    return bell_ != 0 && head_->armed.load(std::memory_order_acquire) == bell_;
}

void Ring::rang() noexcept
{
    std::uint32_t gen = bell_;
    bell_ = 0;
    head_->armed.compare_exchange_strong(gen, 0, std::memory_order_acq_rel,
                                         std::memory_order_relaxed);
}

bool Ring::arm() noexcept
{
    // A new generation per arm: a producer's late rang() clears only the
    // arm it rang for.
    bell_ = bell_ + 1 == 0 ? 1 : bell_ + 1;
    head_->armed.store(bell_, std::memory_order_seq_cst);
    const std::uint64_t seq =
        slot(cursor_)->seq.load(std::memory_order_seq_cst);
    if (seq != cursor_ + 1 && !is_claim_of(seq, cursor_)) {
        return true;
    }
    head_->armed.store(0, std::memory_order_relaxed);
    return false;
}

bool Ring::all_passed(std::uint64_t pos, std::uint32_t except) const noexcept
{
    for (std::uint32_t i = 0; i < geo_.num_members; ++i) {
        if (i != except &&
            member(i)->cursor.load(std::memory_order_acquire) <= pos) {
            return false;
        }
    }
    return true;
}

const SlotHeader *Ring::peek() noexcept
{
    for (;;) {
        const SlotHeader *sh = slot(cursor_);
        const std::uint64_t seq = sh->seq.load(std::memory_order_acquire);
        if (seq != cursor_ + 1) {
            if (!watch_.should_skip(sh->seq, cursor_, "p2p FIFO position")) {
                return nullptr;
            }
            consume();
            continue;
        }
        if (deliver_own_ || sh->origin != my_index_) {
            return sh;
        }
        consume(); // my own message: nothing to deliver
    }
}

const std::uint8_t *Ring::peek_payload() const noexcept
{
    return payload(cursor_);
}

void Ring::consume() noexcept
{
    ++cursor_;
    member(my_index_)->cursor.store(cursor_, std::memory_order_release);
}

bool Ring::behind() const noexcept
{
    return head_->head.load(std::memory_order_acquire) > cursor_;
}

bool Ring::readers_done(std::uint64_t pos, std::uint32_t except) const noexcept
{
    for (std::uint32_t i = 0; i < geo_.num_members; ++i) {
        if (i == except ||
            member(i)->cursor.load(std::memory_order_acquire) > pos) {
            continue; // passed, or left (kCursorLeft is above every pos)
        }
        const MemberLine *m = member(i);
        if (m->state.load(std::memory_order_acquire) != kMemberIn) {
            continue; // never joined: cannot read
        }
        ProcessId id{};
        id.pid = m->pid.load(std::memory_order_relaxed);
        id.start_time = m->start_time.load(std::memory_order_relaxed);
        if (process_alive(id)) {
            return false;
        }
    }
    return true;
}

int Ring::find_dead_member() const noexcept
{
    for (std::uint32_t i = 0; i < geo_.num_members; ++i) {
        const MemberLine *m = member(i);
        if (m->state.load(std::memory_order_acquire) != kMemberIn ||
            m->cursor.load(std::memory_order_acquire) == kCursorLeft) {
            continue;
        }
        ProcessId id{};
        id.pid = m->pid.load(std::memory_order_relaxed);
        id.start_time = m->start_time.load(std::memory_order_relaxed);
        if (!process_alive(id)) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

void Ring::mark_failed(int member_index) noexcept
{
    auto *hdr = reinterpret_cast<RingHeader *>(base_);
    std::uint32_t none = 0;
    hdr->failed.compare_exchange_strong(
        none, static_cast<std::uint32_t>(member_index) + 1,
        std::memory_order_acq_rel);
}

int Ring::failed_member() const noexcept
{
    const auto *hdr = reinterpret_cast<const RingHeader *>(base_);
    return static_cast<int>(hdr->failed.load(std::memory_order_acquire)) - 1;
}

bool Ring::mark_sender_failed(const ProcessId &id) noexcept
{
    auto *hdr = reinterpret_cast<RingHeader *>(base_);
    const std::uint64_t word = sender_word(id);
    for (auto &entry : hdr->failed_senders) {
        std::uint64_t seen = 0;
        if (entry.compare_exchange_strong(seen, word,
                                          std::memory_order_acq_rel) ||
            seen == word) {
            return true;
        }
    }
    return false;
}

bool Ring::sender_failed() const noexcept
{
    const auto *hdr = reinterpret_cast<const RingHeader *>(base_);
    const std::uint64_t word = sender_word(self_);
    for (const auto &entry : hdr->failed_senders) {
        if (entry.load(std::memory_order_acquire) == word) {
            return true;
        }
    }
    return false;
}

std::uint32_t Ring::absent_members() const noexcept
{
    std::uint32_t n = 0;
    for (std::uint32_t i = 0; i < geo_.num_members; ++i) {
        n += member(i)->state.load(std::memory_order_acquire) != kMemberIn;
    }
    return n;
}

} // namespace uct_mm_common
