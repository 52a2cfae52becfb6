// SPDX-License-Identifier: BSD-3-Clause
// A process-local view of a p2p FIFO ring (layout in ring_layout.h): claim,
// publish, peek, consume, completion and liveness scans.
#pragma once

#include "uct_mm_common/ring_layout.h"
#include "uct_mm_common/slot_claim.h"
#include "uct_mm_common/status.h"

#include <cstdint>

namespace uct_mm_common {

class Ring {
  public:
    /// Checks a geometry against the hard limits.
    static Status validate(const RingGeometry &geo) noexcept;
    /// Creator: writes the header, cursors and slot sequence numbers into a
    /// zero-filled mapping of geo.segment_bytes(); publishes magic last.
    static void format(void *mem, const RingGeometry &geo) noexcept;
    /// True once format() has published the magic.
    static bool formatted(const void *mem) noexcept;

    /// Opens the view. `my_index` is this process's member index, or
    /// kNoOrigin for a producer that is not a member (p2p sender).
    /// `deliver_own`: whether peek() returns this member's own messages.
    Status open(void *mem, std::size_t bytes, std::uint32_t my_index,
                bool deliver_own) noexcept;
    /// Member: publishes its identity and counts itself attached. Returns
    /// the attach count including this member.
    std::uint32_t join() noexcept;
    /// Member: stops holding producers back (cursor = kCursorLeft).
    void leave() noexcept;

    // Producer side.
    /// Claims the next position; kNoResource when the ring is full.
    Status claim(std::uint64_t *pos_p) noexcept;
    /// Whether claim() would succeed now (refreshes the cursor cache).
    bool has_space() noexcept;
    std::uint8_t *payload(std::uint64_t pos) const noexcept;
    /// Returns true when this producer must ring the owner's doorbell: the
    /// owner was armed when it claimed `pos` (HeadLine::armed). The
    /// producer rings, then calls rang().
    bool publish(std::uint64_t pos, std::uint32_t length, std::uint8_t am_id,
                 SlotKind kind) noexcept;
    /// After the ring: disarms the arm this producer rang for (not a later
    /// one), so later producers need not ring.
    void rang() noexcept;
    /// Whether every member except `except` has read position `pos`.
    bool all_passed(std::uint64_t pos, std::uint32_t except) const noexcept;
    /// Whether no member but `except` can still read position `pos`: each
    /// has passed it, left (a failed member leaves), or its process is
    /// gone (reads /proc for the others: call it rarely).
    bool readers_done(std::uint64_t pos, std::uint32_t except) const noexcept;

    // Consumer side (members only).
    /// The next message to deliver, or nullptr: O(1), one shared line read.
    /// Skips (with a warning) a position whose producer died after claiming
    /// it, once a stall on it has lasted StallWatch::kCheckNs.
    const SlotHeader *peek() noexcept;
    /// Nothing at the cursor, not even a claim: the idle poll's whole test
    /// (inline, one shared line read); peek() when false.
    bool quiet() const noexcept
    {
        const std::uint64_t seq =
            slot(cursor_)->seq.load(std::memory_order_acquire);
        return seq != cursor_ + 1 && !is_claim_of(seq, cursor_);
    }
    const std::uint8_t *peek_payload() const noexcept;
    void consume() noexcept;
    /// Something was claimed but this member has not read it yet.
    bool behind() const noexcept;
    /// Owner: asks producers to ring its doorbell on their next message.
    /// False (and not armed) when something is at the cursor already.
    bool arm() noexcept;

    /// Index of a member whose process is gone, or -1.
    int find_dead_member() const noexcept;
    /// Failure flag shared by all members: mark (any member) and read.
    void mark_failed(int member_index) noexcept;
    int failed_member() const noexcept;
    /// Member: records the producer `id` (not a member) whose message it
    /// could not read; false when the table is full.
    bool mark_sender_failed(const ProcessId &id) noexcept;
    /// Producer: whether a member recorded this process.
    bool sender_failed() const noexcept;
    /// Members that have not attached yet.
    std::uint32_t absent_members() const noexcept;

    const RingGeometry &geometry() const noexcept { return geo_; }
    std::uint32_t my_index() const noexcept { return my_index_; }
    std::uint64_t cursor() const noexcept { return cursor_; }

  private:
    SlotHeader *slot(std::uint64_t pos) const noexcept
    {
        return reinterpret_cast<SlotHeader *>(
            slots_ + (pos & (geo_.num_slots - 1)) * geo_.slot_bytes);
    }
    MemberLine *member(std::uint32_t i) const noexcept;
    std::uint64_t min_cursor() const noexcept;
    /// Whether every member has read the slot's previous position (pos -
    /// num_slots); rescans the cursors only when the cache says no.
    bool room_for(std::uint64_t pos) noexcept;

    std::uint8_t *base_ = nullptr;
    std::uint8_t *slots_ = nullptr; ///< base_ + geo_.slots_offset()
    RingGeometry geo_{};
    HeadLine *head_ = nullptr;
    std::uint32_t my_index_ = kNoOrigin;
    bool deliver_own_ = true;
    std::uint64_t cursor_ = 0;     ///< my cursor (members)
    std::uint64_t cached_min_ = 0; ///< producers: last min of all cursors
    ProcessId self_{};             ///< producers: written into claims
    /// Producer: the owner's arm generation seen at the last claim (0:
    /// not armed). Owner: the generation of its last arm.
    std::uint32_t bell_ = 0;
    StallWatch watch_; ///< consumer: dead claimers
};

} // namespace uct_mm_common
