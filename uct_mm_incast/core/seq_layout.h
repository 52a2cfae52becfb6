// SPDX-License-Identifier: BSD-3-Clause
// Shared-memory layout of an mm_incast group: a ring of elements indexed by
// sequence number, after the common prefix (uct_mm_common/group_link.h).
//
//  link region +-----------------------------------------------------------+
//              | Element[num_elements], element_bytes each:                 |
//              |   ElementCtrl  (one line: senders count themselves in;     |
//              |                 the root only reads it: the deliberate     |
//              |                 shared line of BATCHED, LOCKED and ATOMIC) |
//              |   ElementLock  (LOCKED: a ucs_lock around the reduction)   |
//              |   reduce buffer (seg_bytes; LOCKED/ATOMIC: senders combine |
//              |                 into it, the root reads it)                |
//              |   Slot[num_members], slot_stride each (BATCHED and         |
//              |     CENTRALIZED; the root's is unused), owner: that member:|
//              |     [ ........ | payload (right-aligned) | SlotTrailer ]   |
//              |     a small payload shares its line with the trailer,      |
//              |     whose seq word is the polled flag                      |
//              +-----------------------------------------------------------+
//
// Every member posts the group's messages in one order, so it knows where
// each sits: message k of length L takes nelem(L) = max(1, ceil(L /
// chunk(L))) consecutive positions (chunk: message_chunk, at most
// seg_bytes), position p uses element p % elements, and chunk c of every
// sender's bytes goes to the c-th position. A sender
// may write position p once every other member's cursor is past p -
// elements (flow control, as mm_bcast: the root of p - elements has
// consumed it); the root consumes position p (copies or reduces every
// sender's chunk into its posted buffer) once the chunk is complete and
// stores its cursor p + 1. The control line's counters are never reset:
// every member has seen every earlier position, so it knows what they held
// before this use (IncastGroup::ElementSeen).
// The mode of a message (how the chunks meet) is chosen from (coll, op,
// dtype, length, group size) and member 0's configured policy, alike on
// every member (policy.h).
//
// Trust: the root sizes and places every copy from its own post (chunk
// offset and length); a slot's length, sequence word and check value, a
// control line's count, length and check are compared with what the post
// implies, and a mismatch fails the group (kIoError).
#pragma once

#include "uct_mm_common/cacheline.h"

#include <ucs_lock/ucs_lock.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace uct_mm_incast {

using uct_mm_common::align_up;
using uct_mm_common::kCacheLine;

/// LinkConfig::layout of an mm_incast group segment ('I', version 4: the
/// AUTO thresholds in its params, the group sizes in one word, the direct
/// area (direct.h) after the ring).
inline constexpr std::uint32_t kIncastLayout = 0x49000004;

/// Written by senders only (the root never resets it: it would bounce the
/// line once more per position). Counters run over every use of the
/// element; each member knows the values a use starts from, because it
/// has seen every earlier position of the group.
struct alignas(kCacheLine) ElementCtrl {
    std::atomic<std::uint32_t> pending; ///< senders: +1 once their chunk is
                                        ///< in (BATCHED, LOCKED, ATOMIC)
    std::atomic<std::uint32_t> first;   ///< ATOMIC use g: 2g free, 2g + 1
                                        ///< claimed by the first sender,
                                        ///< 2g + 2 its copy is in
    std::uint32_t length;               ///< LOCKED/ATOMIC: first sender:
                                        ///< chunk bytes (checked by all)
    std::uint32_t check;                ///< LOCKED/ATOMIC: first sender:
                                        ///< message check value
};
static_assert(sizeof(ElementCtrl) == kCacheLine);
static_assert(offsetof(ElementCtrl, length) == 8);

struct alignas(kCacheLine) ElementLock {
    ucs_lock_t lock; ///< LOCKED: senders, around the reduction
};

/// The last 16 bytes of a slot; the payload ends where it starts.
struct SlotTrailer {
    std::uint32_t length;           ///< sender: chunk bytes
    std::uint32_t check;            ///< sender: message check value
    std::atomic<std::uint64_t> seq; ///< sender, last (release): position + 1
};
static_assert(sizeof(SlotTrailer) == 16);
static_assert(offsetof(SlotTrailer, seq) == 8);

/// Indexes of LinkParams::value (member 0's constants).
enum IncastParam : unsigned {
    kParamElements = 0,      ///< elements in the ring
    kParamSegBytes = 1,      ///< chunk bytes per member and element
    kParamMode = 2,          ///< configured uct_mm_incast_mode_t
    kParamAtomicMax = 3,     ///< AutoThresholds::atomic_max_bytes
    kParamLockedMin = 4,     ///< AutoThresholds::locked_min_bytes
    kParamGroupSizes = 5,    ///< the three group sizes (pack_group_sizes)
    kParamPairLockedMin = 6, ///< AutoThresholds::pair_locked_min_bytes
    kParamDirectBytes = 7    ///< direct slot payload (direct.h); 0: none
};

/// AutoThresholds' group sizes (each at most 256) in one params word:
/// locked_min_group, pair_group, gather_batched_max_group, 16 bits each
/// from the lowest.
inline constexpr unsigned kGroupSizeBits = 16;

inline constexpr std::uint32_t kMaxElements = 1U << 16;
inline constexpr std::uint32_t kMinSegBytes = kCacheLine;
inline constexpr std::uint32_t kMaxSegBytes = 1U << 24;

/// Geometry every member derives from member 0's constants.
struct IncastGeometry {
    std::uint32_t members = 1;
    std::uint32_t elements = 16;
    std::uint32_t seg_bytes = 8192;

    std::size_t slot_stride() const noexcept
    {
        return align_up(std::size_t{seg_bytes} + sizeof(SlotTrailer),
                        kCacheLine);
    }
    std::size_t lock_offset() const noexcept { return sizeof(ElementCtrl); }
    std::size_t rbuf_offset() const noexcept
    {
        return lock_offset() + sizeof(ElementLock);
    }
    std::size_t slots_offset() const noexcept
    {
        return rbuf_offset() + align_up(seg_bytes, kCacheLine);
    }
    std::size_t element_bytes() const noexcept
    {
        return slots_offset() + std::size_t{members} * slot_stride();
    }
    std::size_t region_bytes() const noexcept
    {
        return std::size_t{elements} * element_bytes();
    }
};

} // namespace uct_mm_incast
