// SPDX-License-Identifier: BSD-3-Clause
// Shared-memory layout of one mm_incast group segment.
//
//  offset 0     +------------------------------------------------------+
//               | SegmentHeader  (root writes once; `magic` last; 128) |
//  128          | AttachLine     (every member, once at attach/leave)  |
//  192          | ReceiverLine   (root writes `released`; senders read)|
//  256          | MemberLine[group_size], 576 B each (member i holds   |
//               |   its liveness ucs_lock while attached; others       |
//               |   try-acquire it to probe for its death)             |
//  elements_off +------------------------------------------------------+
//               | Element[0] .. Element[buffers-1], each:              |
//               |   ElementCtrl (senders: pending++, length; root:     |
//               |                reset) -- the deliberate shared line  |
//               |   ElementLock (LOCKED: a ucs_lock, 512 B)            |
//               |   data:                                              |
//               |   BATCHED/CENTRALIZED: Slot[num_senders], each       |
//               |     slot_stride bytes, owner: that sender:           |
//               |     [ SlotProgress | .......... | SlotTrailer ]      |
//               |     up to kChunkBytes: [ ... | payload | Trailer ]   |
//               |       (right-aligned: a small payload shares the     |
//               |       line with its length and sequence word, the    |
//               |       polled "flag"; SlotProgress unused);           |
//               |     over kChunkBytes: [ Progress | payload | ... ]   |
//               |       (left-aligned at 64 B, published a chunk at a  |
//               |       time through SlotProgress, then the Trailer).  |
//               |   LOCKED/ATOMIC: one reduce buffer of max_bytes,     |
//               |     written by senders (the deliberate shared data). |
//               +------------------------------------------------------+
//
// Incast k (counted from 0 by every member) uses element k % buffers. A
// sender may write incast k once released > k - elements (flow control;
// buffers >= elements, so element k % buffers is free by then); the root
// marks incast k consumed by storing released = k + 1. Slot modes from
// kDeepRingMinBytes have more buffers than elements, enough to span
// kRingMinBytes: a slot is then rewritten only after the root's cache has
// let go of it (measured, see kRingMinBytes).
//
// Chunks (slot modes, contributions over kChunkBytes): the sender copies
// kChunkBytes at a time and release-stores SlotProgress::word = (k + 1) << 32
// | bytes copied after each chunk but the last; the last is published by
// the Trailer's seq as for a small contribution. The root consumes each
// chunk as soon as it sees it, so its copy or reduction of chunk c overlaps
// the sender's copy of chunk c + 1 (as a p2p root does with fragments).
#pragma once

#include "backoff.h"

#include <ucs_lock/ucs_lock.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace uct_mm_incast {

inline constexpr uint64_t kSegmentMagic = 0x7473616369'6d6d01ULL;
inline constexpr uint32_t kLayoutVersion = 3;
inline constexpr std::size_t kTrailerBytes = 16;
/// Granule of a slot contribution's publication (bytes, a multiple of every
/// datatype size): the posix p2p fragment. 4, 8 and 16 KiB measured alike
/// within this 2-core VM's noise (ucg_mm_perftest, N = 2, 4..64 KiB,
/// perftest/mm/RESULTS.md); smaller chunks cost more progress-line misses.
inline constexpr std::size_t kChunkBytes = 8192;
/// Slot modes with max_bytes from kDeepRingMinBytes get element buffers for
/// at least kRingMinBytes (at most kMaxBuffers), whatever `elements` (the
/// incasts in flight) is. ucg_mm_perftest, N = 2, 4 KiB..64 KiB: a sender
/// rewriting a slot the root read 8 incasts ago ran at 0.9-1.5x p2p, with
/// 64 buffers (2 MiB) or 256 at 0.3-0.9x (perftest/mm/RESULTS.md). Costs
/// up to 4 MiB of segment per such group, faulted in at create.
inline constexpr std::size_t kDeepRingMinBytes = 4096;
inline constexpr std::size_t kRingMinBytes = std::size_t{4} << 20;
inline constexpr uint32_t kMaxBuffers = 256;

static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert(std::atomic<uint64_t>::is_always_lock_free);

struct alignas(kCacheLine) SegmentHeader {
    std::atomic<uint64_t> magic; ///< root, last: kSegmentMagic = ready
    uint32_t version;            ///< root: kLayoutVersion
    uint32_t group_size;         ///< root: members, root included
    uint32_t root;               ///< root: member index of the receiver
    uint32_t elements;           ///< root: ring depth
    uint32_t mode;               ///< root: resolved uct_mm_incast_mode_t
    uint32_t op;                 ///< root: uct_mm_incast_op_t
    uint32_t dtype;              ///< root: uct_mm_incast_dtype_t
    uint32_t buffers;            ///< root: element buffers, >= elements
    uint64_t max_bytes;          ///< root: largest contribution, bytes
    uint64_t slot_stride;        ///< root: bytes per slot (gather modes)
    uint64_t element_bytes;      ///< root: bytes per element, 64-aligned
    uint64_t elements_offset;    ///< root: offset of Element[0], bytes
};
static_assert(sizeof(SegmentHeader) == 2 * kCacheLine);
static_assert(offsetof(SegmentHeader, max_bytes) == 40);

struct alignas(kCacheLine) AttachLine {
    std::atomic<uint32_t> attached; ///< members: +1 each at attach
    std::atomic<uint32_t> broken;   ///< any member: 1 once a death is seen
};
static_assert(sizeof(AttachLine) == kCacheLine);

struct alignas(kCacheLine) ReceiverLine {
    std::atomic<uint64_t> released; ///< root: incasts consumed so far
};
static_assert(sizeof(ReceiverLine) == kCacheLine);

enum MemberState : uint32_t {
    kMemberAbsent = 0,
    kMemberIn = 1,
    kMemberLeft = 2
};

struct alignas(kCacheLine) MemberLine {
    ucs_lock_t liveness;         ///< member: held from attach to leave
                                 ///< (ucs_lock mutex: the kernel tells a
                                 ///< prober when the holder died)
    std::atomic<uint32_t> state; ///< member: MemberState
    uint32_t pid;                ///< member: its process id (diagnostics)
};
static_assert(sizeof(MemberLine) == UCS_LOCK_SIZE + kCacheLine);
static_assert(offsetof(MemberLine, state) == UCS_LOCK_SIZE);

struct alignas(kCacheLine) ElementCtrl {
    std::atomic<uint32_t> pending; ///< senders: +1 when their part is in
    std::atomic<uint32_t> length;  ///< reduce modes: 1 + bytes (0 = unset)
};
static_assert(sizeof(ElementCtrl) == kCacheLine);

struct alignas(kCacheLine) ElementLock {
    ucs_lock_t lock; ///< LOCKED: senders, around the reduction (ucs_lock:
                     ///< spin for small buffers, mutex for large)
};
static_assert(sizeof(ElementLock) == UCS_LOCK_SIZE);

/// The first line of a slot: a chunked contribution's progress.
struct alignas(kCacheLine) SlotProgress {
    std::atomic<uint64_t> word; ///< sender, release: (incast number + 1)
                                ///< << 32 | payload bytes published
    uint32_t length;            ///< sender, before the first word: payload
                                ///< bytes of the whole contribution
};
static_assert(sizeof(SlotProgress) == kCacheLine);
static_assert(offsetof(SlotProgress, length) == 8);
static_assert(kChunkBytes % sizeof(uint64_t) == 0);

/// The last 16 bytes of a slot; a small payload ends where it starts.
struct SlotTrailer {
    uint32_t length;           ///< sender: payload bytes
    uint32_t member;           ///< sender: its member index
    std::atomic<uint64_t> seq; ///< sender, last: incast number + 1
};
static_assert(sizeof(SlotTrailer) == kTrailerBytes);
static_assert(offsetof(SlotTrailer, seq) == 8);

inline constexpr std::size_t kAttachOffset = sizeof(SegmentHeader);
inline constexpr std::size_t kReceiverOffset = kAttachOffset + kCacheLine;
inline constexpr std::size_t kMembersOffset = kReceiverOffset + kCacheLine;

inline constexpr std::size_t kElementDataOffset =
    sizeof(ElementCtrl) + sizeof(ElementLock);

/// Sizes of a segment for given parameters (all bytes, 64-aligned).
struct LayoutSizes {
    uint32_t buffers = 0; ///< element buffers (>= elements)
    std::size_t slot_stride = 0;
    std::size_t element_bytes = 0;
    std::size_t elements_offset = 0;
    std::size_t total_bytes = 0;
};

inline LayoutSizes compute_layout(uint32_t group_size, uint32_t elements,
                                  std::size_t max_bytes, bool slots)
{
    LayoutSizes s;
    const std::size_t senders = (group_size > 0) ? group_size - 1 : 0;
    s.slot_stride =
        sizeof(SlotProgress) + align_up(max_bytes + kTrailerBytes, kCacheLine);
    s.element_bytes =
        kElementDataOffset +
        (slots ? senders * s.slot_stride : align_up(max_bytes, kCacheLine));
    s.elements_offset = kMembersOffset + group_size * sizeof(MemberLine);
    s.buffers = elements;
    if (slots && (max_bytes >= kDeepRingMinBytes) && (elements < kMaxBuffers)) {
        const std::size_t want =
            (kRingMinBytes + s.element_bytes - 1) / s.element_bytes;
        s.buffers = static_cast<uint32_t>(std::max<std::size_t>(
            elements, std::min<std::size_t>(want, kMaxBuffers)));
    }
    s.total_bytes = s.elements_offset + s.buffers * s.element_bytes;
    return s;
}

} // namespace uct_mm_incast
