// SPDX-License-Identifier: BSD-3-Clause
// Direct messages of an mm_incast group (uct_mm_incast.h,
// uct_mm_incast_direct_*): barrier, bcast, reduce, allreduce, allgather
// and alltoall of at most slot_bytes per member, run by the caller on flags in
// the group's segment, with no progress engine and no per-message handshake.
//
//  direct region (after the ring) +---------------------------------------+
//  member m at m * member_bytes() | DirectLine: done (owner m)            |
//                                 | slot[depth], stride() each, owner m:  |
//                                 |   DirectSlotHeader (16 B: seq, check, |
//                                 |   length) + payload (slot_bytes), a   |
//                                 |   small payload in the header's line  |
//                                 +---------------------------------------+
//
// Every member posts the group's direct messages in one order (their own
// sequence, apart from the ring's). Message s uses slot s % depth of each
// member that contributes to it (all members, or a bcast's or a scatter's
// root alone). A contributor writes its payload, then seq = s + 1
// (release), once every other member's done is past s - depth (they have
// read that slot's last message). A member completes message s once every
// contribution it needs carries seq s + 1, reading the payloads straight into
// its buffer (reductions in member order, so every member gets the same bits),
// and stores done = how many of its messages are complete in order. Each member
// writes only its own line and slots; nobody waits for an acknowledgement.
// Cost of an 8-byte allreduce of P members: one line written, P - 1 lines
// read per member.
//
// Trust: a member sizes and places every copy from its own post; a slot's
// check value (kind, root, op, dtype, length, message number) and length
// must be what the post implies, and a sequence word past the message fails
// the group (kIoError): the depth keeps a writer from ever being ahead.
#pragma once

#include "uct_mm_common/cacheline.h"
#include "uct_mm_common/group_link.h"

#include <ucg/reduce.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace uct_mm_incast {

using uct_mm_common::align_up;
using uct_mm_common::kCacheLine;
using uct_mm_common::Status;

struct alignas(kCacheLine) DirectLine {
    std::atomic<std::uint64_t> done; ///< owner: messages complete in order
};
static_assert(sizeof(DirectLine) == kCacheLine);

struct DirectSlotHeader {
    std::atomic<std::uint64_t> seq; ///< owner, last (release): message + 1
    std::uint32_t check;            ///< owner: the message's check value
    std::uint32_t length;           ///< owner: payload bytes
};
static_assert(sizeof(DirectSlotHeader) == 16);
static_assert(offsetof(DirectSlotHeader, check) == 8);

/// Slots per member: messages a member may publish ahead of the slowest.
inline constexpr std::uint32_t kDirectDepth = 8;
/// Largest payload of a slot (member 0's setting is checked against it).
inline constexpr std::uint32_t kMaxDirectBytes = 1U << 16;

/// Geometry every member derives from member 0's slot_bytes (0: none).
struct DirectGeometry {
    std::uint32_t members = 1;
    std::uint32_t slot_bytes = 0; ///< payload capacity, a multiple of 64

    std::size_t stride() const noexcept
    {
        return align_up(sizeof(DirectSlotHeader) + slot_bytes, kCacheLine);
    }
    std::size_t member_bytes() const noexcept
    {
        return sizeof(DirectLine) + kDirectDepth * stride();
    }
    std::size_t region_bytes() const noexcept
    {
        return slot_bytes == 0 ? 0 : std::size_t{members} * member_bytes();
    }
    static bool valid(std::uint64_t slot_bytes) noexcept
    {
        return slot_bytes % kCacheLine == 0 && slot_bytes <= kMaxDirectBytes;
    }
};

enum class DirectColl : std::uint8_t {
    kBarrier = 0, ///< nothing moves; complete once every member posted
    kBcast,       ///< root's src (length) into every other member's dst
    kReduce,      ///< every member's src reduced into the root's dst
    kAllreduce,   ///< every member's src reduced into every dst
    kAllgather,   ///< member m's src at dst + m * length, on every member
    kAlltoall,    ///< block j (length bytes) of member m's src at dst +
                  ///< m * length of member j; a slot holds P blocks
    kGather,      ///< member m's src at the root's dst + m * length
    kScatter,     ///< block m (length bytes) of the root's src into member
                  ///< m's dst; the root's slot holds P blocks
    kLast
};

/// One member's part of one direct message.
struct DirectMsg {
    DirectColl coll = DirectColl::kBarrier;
    std::uint32_t root = 0; ///< bcast, reduce
    ucg_op_t op = UCG_OP_SUM;
    ucg_dtype_t dtype = UCG_DTYPE_UINT8;
    std::size_t length = 0;    ///< bytes per member (a multiple of dtype's)
    const void *src = nullptr; ///< read during post only
    void *dst = nullptr;       ///< written before completion; may be src
};

class DirectArea {
  public:
    /// Messages posted and not complete, per member.
    static constexpr std::uint32_t kQueue = 64;

    /// Places the area of `member` at `region` (zero-filled by member 0's
    /// create); `link` reports failures and checks liveness when stalled.
    /// kOk or kNoMemory.
    Status attach(std::uint8_t *region, const DirectGeometry &geo,
                  std::uint32_t member, uct_mm_common::GroupLink *link);
    bool attached() const noexcept { return link_ != nullptr; }
    std::size_t max_length() const noexcept { return geo_.slot_bytes; }

    /// kOk, or kInvalidParam with *why for a message this area cannot run.
    Status check(const DirectMsg &m, const char **why) const noexcept;
    /// Posts this member's part (after check()): kOk when complete already,
    /// kInProgress (then test(*id)), kNoResource with kQueue posts not
    /// complete (nothing posted), or the group's failure.
    Status post(const DirectMsg &m, std::uint64_t *id) noexcept;
    /// kOk once message id is complete, kInProgress, or the failure.
    Status test(std::uint64_t id) noexcept;
    /// Moves every posted message as far as it goes; true if one moved.
    bool progress() noexcept;
    /// The poster is gone (its buffers too): the message completes in
    /// order without writing dst.
    void abandon(std::uint64_t id) noexcept;

  private:
    struct Op {
        DirectMsg msg;
        std::uint32_t check = 0;
        bool complete = false;
        bool abandoned = false;
    };

    Op &at(std::uint64_t s) noexcept { return ops_[s % kQueue]; }
    DirectLine *line(std::uint32_t m) const noexcept;
    DirectSlotHeader *slot(std::uint32_t m, std::uint64_t s) const noexcept;
    bool contributes(const DirectMsg &m) const noexcept;
    /// A bcast's root and a reduce's or a gather's non-roots: done once
    /// published.
    bool reads_nothing(const DirectMsg &m) const noexcept;
    /// Bytes a contributor writes into its slot.
    std::size_t payload(const DirectMsg &m) const noexcept;
    bool room_for(std::uint64_t s) noexcept;
    void publish(Op &op, std::uint64_t s) noexcept;
    bool arrived(const Op &op, std::uint32_t m, std::uint64_t s) noexcept;
    bool ready(const Op &op, std::uint64_t s) noexcept;
    void consume(const Op &op, std::uint64_t s) noexcept;
    bool publish_pending() noexcept;
    bool complete_ready() noexcept;
    Status outcome(std::uint64_t id) noexcept;

    uct_mm_common::GroupLink *link_ = nullptr;
    std::uint8_t *region_ = nullptr;
    DirectGeometry geo_;
    std::size_t stride_ = 0, member_bytes_ = 0;
    std::uint32_t member_ = 0;
    std::vector<Op> ops_;
    std::vector<std::uint8_t> stage_; ///< kQueue payloads not published
    std::vector<const void *> srcs_;  ///< reductions: a payload per member
    std::uint64_t next_ = 0;          ///< number of the next post
    std::uint64_t unpublished_ = 0;   ///< first post not published
    std::uint64_t first_ = 0;         ///< first post not complete
    std::uint64_t others_done_ = 0;   ///< a lower bound of others' done
    int waiting_on_ = -1;             ///< the member last found missing
};

} // namespace uct_mm_incast
