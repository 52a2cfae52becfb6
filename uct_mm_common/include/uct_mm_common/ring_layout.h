// SPDX-License-Identifier: BSD-3-Clause
// Shared-memory layout of the point-to-point receive FIFO of an mm_bcast or
// mm_incast iface: a ring with one reading member (the iface) and any number
// of producers (every endpoint connected to it). The ring takes more than
// one member (each reads every message); only the tests use that.
//
//  offset 0          +-----------------------------------------------+
//                    | RingHeader: geometry (creator), magic, attach |
//  kHeadOffset  64   +-----------------------------------------------+
//                    | HeadLine: head, claimed by producers (CAS)    |
//  kMembersOffset128 +-----------------------------------------------+
//                    | MemberLine[num_members] (group_link.h): one   |
//                    |   line per member, written by that member     |
//  slots_offset()    +-----------------------------------------------+
//                    | Slot[num_slots], slot_bytes each:             |
//                    |   SlotHeader (16 B) + payload; the header and |
//                    |   the first 48 payload bytes share a line     |
//                    +-----------------------------------------------+
//
// Protocol: a producer claims position p only when every member's cursor is
// past p - num_slots (the slot's previous message has been read by all): it
// writes its claim (pid, p) into the slot's seq with a CAS, then moves the
// head p -> p+1 (any producer finding the slot claimed moves it on too:
// uct_mm_common/slot_claim.h); it writes the payload and stores
// seq = p + 1 (release). A reader stalled on the claim of a dead producer
// skips the position.
// Member m reads position cursor_m once seq == cursor_m + 1 (acquire), then
// stores cursor_m + 1 (release). Readers write only their own line,
// producers only the head line and their claimed slot.
#pragma once

#include "uct_mm_common/cacheline.h"
#include "uct_mm_common/group_link.h" // MemberLine, kCursorLeft
#include "uct_mm_common/liveness.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace uct_mm_common {

/// Version 4 ("ucg4p2p"): the one FIFO of both transports, kSkip slots,
/// claims that carry their producer's start time (slot_claim.h), failed
/// senders in the header.
inline constexpr std::uint64_t kRingMagic = 0x75636734703270ULL;

/// Producers (not members) a receiver could not read a message of: room in
/// the header for this many at once.
inline constexpr unsigned kFailedSenders = 4;

struct alignas(kCacheLine) RingHeader {
    std::atomic<std::uint64_t> magic;    ///< creator, stored last (release)
    std::uint32_t num_members;           ///< creator, constant
    std::uint32_t num_slots;             ///< creator, constant, power of two
    std::uint32_t slot_bytes;            ///< creator, constant, multiple of 64
    std::uint32_t reserved;              ///< zero
    std::atomic<std::uint32_t> attached; ///< each member once, at attach
    /// Any member, failure path only: 1 + index of a dead member (0: none).
    std::atomic<std::uint32_t> failed;
    /// Members, failure path only: sender_word() of producers that are not
    /// members and sent a message no member could read (0: free), so
    /// that each fails its own sends while the FIFO goes on for others.
    std::atomic<std::uint64_t> failed_senders[kFailedSenders];
};
static_assert(sizeof(RingHeader) == kCacheLine);
static_assert(offsetof(RingHeader, attached) == 24);
static_assert(offsetof(RingHeader, failed) == 28);

/// A process in RingHeader::failed_senders: its pid and the low 32 bits of
/// its start time (a reused pid is another process); never 0.
inline constexpr std::uint64_t sender_word(const ProcessId &id) noexcept
{
    return std::uint64_t{static_cast<std::uint32_t>(id.pid)} << 32 |
           (id.start_time & 0xffffffffu);
}

struct alignas(kCacheLine) HeadLine {
    /// Producers: next position to claim (moved after the slot's claim).
    std::atomic<std::uint64_t> head;
    /// The owner (member 0 of a p2p FIFO) sleeps on its doorbell
    /// (uct_iface_event_arm): it stores a new arm generation (non-zero),
    /// then checks the slot at its cursor; a producer claims its slot, then
    /// reads this: one of the two sees the other (both seq_cst). A producer
    /// that saw generation g rings the bell after publishing (doorbell.h)
    /// if g is still armed, and only then clears it (CAS g to 0): a
    /// producer that dies or fails before its ring leaves g armed for the
    /// next one, and a clear never takes a later arm.
    std::atomic<std::uint32_t> armed;
};
static_assert(sizeof(HeadLine) == kCacheLine);

/// What a slot's payload holds.
enum class SlotKind : std::uint8_t {
    kInline = 0, ///< the message bytes
    kCma = 1,    ///< a CmaDescriptor: receivers copy from the producer
    kSkip = 2,   ///< nothing to deliver (a send that failed after its claim)
};

/// First 16 bytes of every slot; written by the slot's producer only.
struct SlotHeader {
    /// Producer: its claim (slot_claim.h), then position + 1 once published.
    std::atomic<std::uint64_t> seq;
    std::uint32_t length; ///< producer: payload bytes used
    std::uint16_t origin; ///< producer: member index (or 0xffff)
    std::uint8_t am_id;   ///< producer: UCT active message id
    SlotKind kind;        ///< producer
};
static_assert(sizeof(SlotHeader) == 16);
static_assert(offsetof(SlotHeader, length) == 8);
static_assert(shared_atomic_ok<std::uint64_t>());

inline constexpr std::uint16_t kNoOrigin = 0xffff;

/// One remote buffer of a CMA (zero-copy) message.
struct RemoteIov {
    std::uint64_t address; ///< in the producer's address space
    std::uint64_t length;  ///< bytes
};

/// Payload of a kCma slot: who to read from and the header inline.
struct CmaDescriptor {
    std::int32_t pid;        ///< producer's pid (process_vm_readv target)
    std::uint32_t iovcnt;    ///< entries in iov[]
    std::uint32_t hdr_bytes; ///< inline header bytes after iov[iovcnt]
    std::uint32_t reserved;  ///< zero
    std::uint64_t total;     ///< sum of iov lengths
    // RemoteIov iov[iovcnt]; then hdr_bytes of header
};
static_assert(sizeof(CmaDescriptor) == 24);

inline constexpr std::size_t kHeadOffset = kCacheLine;
inline constexpr std::size_t kMembersOffset = 2 * kCacheLine;

/// Geometry of a ring (what the creator formats, what attachers check).
struct RingGeometry {
    std::uint32_t num_members = 1;
    std::uint32_t num_slots = 64;    ///< power of two
    std::uint32_t slot_bytes = 8192; ///< multiple of 64, >= 128

    std::size_t slots_offset() const noexcept
    {
        return kMembersOffset + std::size_t{num_members} * kCacheLine;
    }
    std::size_t segment_bytes() const noexcept
    {
        return slots_offset() + std::size_t{num_slots} * slot_bytes;
    }
    std::size_t payload_capacity() const noexcept
    {
        return slot_bytes - sizeof(SlotHeader);
    }
};

} // namespace uct_mm_common
