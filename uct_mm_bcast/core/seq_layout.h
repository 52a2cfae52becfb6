// SPDX-License-Identifier: BSD-3-Clause
// Shared-memory layout of an mm_bcast group: a ring indexed by sequence
// number, after the common prefix (uct_mm_common/group_link.h).
//
//  link region +---------------------------------------------------------+
//              | Slot[num_slots], slot_bytes each (a multiple of 64):     |
//              |   FragHeader (32 B: seq word, then what the fragment is, |
//              |   all written by the message's root) + payload, sharing  |
//              |   the first line with the first 32 payload bytes         |
//              +---------------------------------------------------------+
//
// Every member posts the group's messages in one order, so it knows where
// each message sits: message k of length L takes nfrag(L) consecutive
// positions (fragments of frag_bytes(L, seg_bytes): an eighth of L, from
// 8 KiB up to seg_bytes; one position holding a CmaRef from cma_min bytes
// up to cma_max), and position p lives in slot p % num_slots. The root writes
// fragment p once every other member's cursor (its MemberLine,
// uct_mm_common/group_link.h) is past p - num_slots, then stores seq = p + 1
// (release); a receiver copies fragment p straight into the buffer it posted
// once seq == p + 1 (acquire) and stores its cursor p + 1. No claim, no head,
// no unexpected queue: readers write only their own line, the root only the
// slots it fills and its own line.
//
// Trust: a receiver places and sizes every copy from its own post (offset
// and length of fragment f of its message), never from the slot; the
// slot's root, message number, total length, fragment length, kind and tag
// are compared with the post, and a mismatch fails the group (kIoError).
#pragma once

#include "uct_mm_common/cacheline.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace uct_mm_bcast {

using uct_mm_common::kCacheLine;

/// LinkConfig::layout of an mm_bcast group segment ('B', version 2: a
/// message's fragments follow its length, frag_bytes()).
inline constexpr std::uint32_t kSeqLayout = 0x42000002;

/// What a fragment's payload holds.
enum class FragKind : std::uint8_t {
    kInline = 0, ///< the message bytes [offset, offset + length)
    kCma = 1,    ///< a CmaRef: receivers read the root's buffer
};

/// First 32 bytes of a slot; the root of the message writes all of it.
struct FragHeader {
    std::atomic<std::uint64_t> seq; ///< root, last (release): position + 1
    std::uint32_t length;           ///< root: payload bytes of this fragment
    std::uint16_t root;             ///< root: its member index
    FragKind kind;                  ///< root
    std::uint8_t reserved;          ///< zero
    std::uint32_t tag;              ///< root: uct_group_msg_t::tag
    std::uint32_t msg;              ///< root: message number (low 32 bits)
    std::uint64_t total;            ///< root: message length, bytes
};
static_assert(sizeof(FragHeader) == 32);
static_assert(offsetof(FragHeader, length) == 8);
static_assert(offsetof(FragHeader, total) == 24);

/// Payload of a kCma fragment.
struct CmaRef {
    std::int32_t pid;       ///< root's process (process_vm_readv target)
    std::uint32_t reserved; ///< zero
    std::uint64_t address;  ///< root's buffer, in its address space
    std::uint64_t length;   ///< bytes (checked against the post)
};
static_assert(sizeof(CmaRef) == 24);

/// Indexes of LinkParams::value (member 0's constants).
enum SeqParam : unsigned {
    kParamSlots = 0,    ///< num_slots, a power of two
    kParamSegBytes = 1, ///< payload bytes of a slot, a multiple of 64
    kParamCmaMin = 2,   ///< messages from this size go by CMA
    kParamCmaMax = 3,   ///< ... and below this size
};

inline constexpr std::uint32_t kMinSlots = 2;
inline constexpr std::uint32_t kMaxSlots = 1U << 16;
inline constexpr std::uint32_t kMinSegBytes = kCacheLine;
inline constexpr std::uint32_t kMaxSegBytes = 1U << 24;

/// The smallest fragment a message is cut into where its slots hold more.
inline constexpr std::uint32_t kMinFragBytes = 8192;

/// Payload bytes of each fragment (the last one: what is left) of a
/// message of `length` bytes in slots of `seg_bytes` (decision 0056): an
/// eighth of the message, so the receivers copy out while the root copies
/// in, but never below kMinFragBytes (each fragment is a handoff of cache
/// lines between root and receivers) nor above a slot. Every member
/// derives it from the length of its own post.
inline std::uint64_t frag_bytes(std::uint64_t length,
                                std::uint32_t seg_bytes) noexcept
{
    const std::uint64_t eighth =
        uct_mm_common::align_up((length + 7) / 8, kCacheLine);
    const std::uint64_t f = eighth > kMinFragBytes ? eighth : kMinFragBytes;
    return f < seg_bytes ? f : seg_bytes;
}

/// Geometry every member derives from member 0's constants.
struct SeqGeometry {
    std::uint32_t num_slots = 64;
    std::uint32_t seg_bytes = 65536;

    std::size_t slot_bytes() const noexcept
    {
        return uct_mm_common::align_up(sizeof(FragHeader) + seg_bytes,
                                       kCacheLine);
    }
    std::size_t region_bytes() const noexcept
    {
        return std::size_t{num_slots} * slot_bytes();
    }
};

} // namespace uct_mm_bcast
