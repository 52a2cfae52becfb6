// SPDX-License-Identifier: BSD-3-Clause
// One member of an mm_incast group (layout and protocol: seq_layout.h):
// posts in sequence order, each message's chunks at positions every member
// computes, the mode chosen per message (policy.h); the root copies or
// reduces straight into its posted buffer; completion from progress,
// failures from the common link.
#pragma once

#include "direct.h"
#include "policy.h"
#include "reduce_ops.h"
#include "seq_layout.h"

#include "uct_mm_common/group_core.h"
#include "uct_mm_common/group_link.h"

#include <string>
#include <vector>

namespace uct_mm_incast {

using uct_mm_common::Message;
using uct_mm_common::Status;

struct IncastGroupConfig {
    std::string name;         ///< segment name (from member 0's secret)
    std::uint32_t member = 0; ///< this member's index
    std::uint32_t size = 1;   ///< members
    /// Member 0's constants, used by every member: ring elements (0: as
    /// many as fit kAutoRingBytes, 8..256), chunk bytes (0:
    /// auto_seg_bytes), configured mode.
    std::uint32_t elements = 0;
    std::uint32_t seg_bytes = 8192;
    uct_mm_incast_mode_t mode = UCT_MM_INCAST_MODE_AUTO;
    AutoThresholds thresholds; ///< AUTO's crossovers (member 0's)
    /// Direct messages (direct.h): payload bytes per slot (a multiple of
    /// 64, 0: none) in groups of 2 to direct_max_group members (member 0's).
    std::uint32_t direct_bytes = 0;
    std::uint32_t direct_max_group = 0;
    /// As a sender, messages from this size are written into the ring
    /// with non-temporal stores (ucg_copy_to_peer, decision 0047); this
    /// member's own, the root reads alike either way.
    std::size_t stream_min = ~std::size_t{0};
    std::uint32_t max_outstanding = 16;
    std::uint32_t timeout_ms = 2000;
    std::uint32_t attach_timeout_ms = 10000;
    std::size_t max_length = std::size_t{1} << 40;
    std::uint32_t max_group_size = uct_mm_common::kMaxGroupMembers;
    void *memory = nullptr; ///< LinkConfig::memory (thread tests)
    std::size_t memory_bytes = 0;
};

/// A ring of this many bytes when elements is 0: a sender rewriting a slot
/// the root's cache still held was the main cost at 4-64 KiB (8 elements:
/// 0.9-1.5x p2p; spread over 4 MiB: 0.3-0.9x, perftest/mm/RESULTS.md).
inline constexpr std::size_t kAutoRingBytes = std::size_t{4} << 20;

/// Chunk bytes where the configuration leaves them to the transport
/// (seg_bytes 0, GROUP_SEG_SIZE=auto): in a group smaller than
/// `locked_min_group` (whose reductions run in slots, not LOCKED), the
/// largest power of two from kAutoSegMin to kAutoSegMax whose elements
/// fit kAutoRingPositions times in kAutoRingBytes; else kAutoSegMin.
/// Each position costs a handoff of cache lines between sender and root,
/// so fewer, larger chunks move a large message faster (np=2 reduce 4 MiB
/// 236 us in 64 KiB chunks against 399 in 8 KiB); the ring still holds a
/// message per post in flight (the default MAX_OUTSTANDING). LOCKED
/// senders queue for each element's lock, and fewer elements measured no
/// better (decision 0051).
inline constexpr std::uint32_t kAutoSegMin = 8192;
inline constexpr std::uint32_t kAutoSegMax = 65536;
inline constexpr std::uint32_t kAutoRingPositions = 16;
std::uint32_t auto_seg_bytes(std::uint32_t members,
                             std::uint32_t locked_min_group) noexcept;

/// The bytes of each chunk (but the last) of a message of `length` in a
/// ring of `seg_bytes` chunks, alike on every member. A reduction takes
/// whole chunks: its callers pipeline segments of their own, and every
/// position costs a handoff (np=2 reduce 512 KiB-4 MiB 0.58-0.77x Open
/// MPI in 64 KiB chunks against 0.91-1.03 in 8 KiB ones). A gather takes
/// at most a quarter of its message, not below kAutoSegMin: its root
/// copies chunks out while the senders copy the next in, where a gather
/// is one post (np=2 gather 16-64 KiB 2.0-8.6 us in one 64 KiB chunk,
/// 1.5-5.6 in 8 KiB ones).
std::size_t message_chunk(uct_mm_common::Coll coll, std::size_t length,
                          std::uint32_t seg_bytes) noexcept;

/// The geometry of a configuration (elements and chunk bytes resolved).
IncastGeometry geometry_of(const IncastGroupConfig &cfg) noexcept;

class IncastGroup final : public uct_mm_common::GroupCore {
  public:
    /// Starts connecting (member 0 creates the segment now; the others
    /// attach during progress). Errors: kInvalidParam, kIoError, kNoMemory.
    static Status create(const IncastGroupConfig &cfg, IncastGroup **group_p);
    /// Leaves before the members its link's validator writes are gone
    /// (a member destroyed before it attached attaches to leave).
    ~IncastGroup() override { link_.leave(); }

    Status check(bool send, const Message &msg,
                 const char **why) const noexcept override;
    Status post(bool send, const Message &msg, void *cookie) noexcept override;
    unsigned progress(uct_mm_common::CompleteFn fn,
                      void *arg) noexcept override;
    bool busy() const noexcept override;
    Status state() noexcept override { return link_.state(); }

    static uct_mm_common::GroupLimits
    limits_of(const IncastGroupConfig &cfg) noexcept;
    /// The mode `msg` runs in; UCT_MM_INCAST_MODE_LAST before this member
    /// knows member 0's configuration (not yet attached).
    uct_mm_incast_mode_t mode_of(const Message &msg) const noexcept;
    /// The group's direct area once this member has joined, or nullptr
    /// (not joined yet; member 0 configured none for this group).
    DirectArea *direct() noexcept;
    /// Whether this member has joined (knows member 0's configuration).
    bool joined() const noexcept { return link_.joined(); }
    /// Chunks this member, as a sender, has written with non-temporal
    /// stores (stream_min).
    std::uint64_t streamed_chunks() const noexcept { return streamed_; }

  private:
    struct Op {
        Message msg;
        void *cookie = nullptr;
        bool send = false;
        bool started = false;
        uct_mm_incast_mode_t mode = UCT_MM_INCAST_MODE_AUTO;
        std::uint64_t first = 0; ///< position of chunk 0
        std::uint64_t nelem = 0; ///< positions (chunks)
        std::size_t chunk = 0;   ///< bytes of every chunk but the last
        std::uint64_t done = 0;  ///< chunks written / consumed
        std::uint32_t check = 0; ///< what slots and lines must carry
        std::uint32_t seen = 0;  ///< root, CENTRALIZED: senders seen at done
        AtomicReduceFn atomic = nullptr; ///< sender, ATOMIC
    };
    /// What this member knows of one element's counters (ElementCtrl):
    /// their values before the element's next use.
    struct ElementSeen {
        std::uint32_t pending = 0; ///< chunks counted in over all uses
        std::uint32_t atomic = 0;  ///< ATOMIC uses
    };

    explicit IncastGroup(const IncastGroupConfig &cfg);
    static Status validate(void *arg, const uct_mm_common::LinkParams &p,
                           std::size_t region_bytes);
    Status format() noexcept;
    void start(Op &op) noexcept;
    bool run_front() noexcept;
    bool room_for(std::uint64_t pos) noexcept;
    void advance_cursor(std::uint64_t pos) noexcept;
    std::size_t chunk_length(const Op &op, std::uint64_t c) const noexcept;

    // incast_chunks.cpp: one position of a send or of a receive.
    std::uint8_t *element(std::uint64_t pos) const noexcept;
    ElementCtrl *ctrl(std::uint64_t pos) const noexcept;
    SlotTrailer *trailer(std::uint64_t pos, std::uint32_t m) const noexcept;
    bool put(Op &op) noexcept;
    void count_use(const Op &op, std::uint64_t pos) noexcept;
    /// A sender's chunk into the ring: streamed from stream_min.
    void copy_in(const Op &op, std::uint8_t *dst, const std::uint8_t *src,
                 std::size_t len) noexcept;
    bool put_slot(const Op &op, std::uint64_t pos, const std::uint8_t *src,
                  std::size_t len) noexcept;
    bool put_locked(const Op &op, std::uint64_t pos, const std::uint8_t *src,
                    std::size_t len) noexcept;
    bool put_atomic(const Op &op, std::uint64_t pos, const std::uint8_t *src,
                    std::size_t len) noexcept;
    bool take(Op &op) noexcept;
    bool chunk_complete(Op &op, std::uint64_t pos) noexcept;
    bool consume_slots(const Op &op, std::uint64_t pos,
                       std::size_t len) noexcept;
    bool consume_buffer(const Op &op, std::uint64_t pos,
                        std::size_t len) noexcept;
    int first_missing(std::uint64_t pos, std::uint32_t root) const noexcept;

    unsigned advance(uct_mm_common::CompleteFn fn, void *arg) noexcept;
    void fail_all(uct_mm_common::CompleteFn fn, void *arg) noexcept;
    int waiting_on() noexcept;

    IncastGroupConfig cfg_;
    uct_mm_common::GroupLimits limits_; ///< limits_of(cfg_), once
    uct_mm_common::GroupLink link_;
    IncastGeometry geo_; ///< member 0's (checked at attach)
    uct_mm_incast_mode_t mode_ = UCT_MM_INCAST_MODE_AUTO; ///< member 0's
    AutoThresholds thresholds_;                           ///< member 0's
    DirectGeometry direct_geo_;                           ///< member 0's
    DirectArea direct_;
    bool known_ = false; ///< geo_, mode_, thresholds_ are member 0's
    std::size_t element_bytes_ = 0;
    uct_mm_common::PostRing<Op> ops_;
    std::vector<const void *> srcs_; ///< root: one chunk pointer per sender
    std::vector<ElementSeen> seen_;  ///< per element (known_ once sized)
    std::uint64_t next_pos_ = 0;
    std::uint32_t next_msg_ = 0;
    std::uint64_t cursor_ = 0;
    std::uint64_t cached_min_ = 0;
    std::uint32_t moved_ = 0;
    std::uint64_t streamed_ = 0; ///< streamed_chunks()
};

} // namespace uct_mm_incast
