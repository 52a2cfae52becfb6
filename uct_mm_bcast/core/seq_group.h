// SPDX-License-Identifier: BSD-3-Clause
// One member of an mm_bcast group (layout and protocol: seq_layout.h):
// posts in sequence order, fragments published by the root and copied by
// each receiver straight into its posted buffer, CMA for large messages,
// completion from progress, failures from the common link.
#pragma once

#include "seq_layout.h"

#include "uct_mm_common/group_core.h"
#include "uct_mm_common/group_link.h"

#include <string>

namespace uct_mm_bcast {

using uct_mm_common::Message;
using uct_mm_common::Status;

struct SeqGroupConfig {
    std::string name;         ///< segment name (from member 0's secret)
    std::uint32_t member = 0; ///< this member's index
    std::uint32_t size = 1;   ///< members
    SeqGeometry geo;          ///< member 0's is used by every member
    std::size_t cma_min = ~std::size_t{0}; ///< member 0's is used by all
    std::size_t cma_max = ~std::size_t{0}; ///< CMA below it (member 0's)
    /// As the root, messages from this size are written into the ring with
    /// non-temporal stores (ucg_copy_to_peer, decision 0047); this
    /// member's own, the receivers read alike either way.
    std::size_t stream_min = ~std::size_t{0};
    std::uint32_t max_outstanding = 16;
    std::uint32_t timeout_ms = 2000;
    std::uint32_t attach_timeout_ms = 10000;
    std::size_t max_length = std::size_t{1} << 40;
    std::uint32_t max_group_size = uct_mm_common::kMaxGroupMembers;
    void *memory = nullptr; ///< LinkConfig::memory (thread tests)
    std::size_t memory_bytes = 0;
};

class SeqGroup final : public uct_mm_common::GroupCore {
  public:
    /// Starts connecting (member 0 creates the segment now; the others
    /// attach during progress). Errors: kInvalidParam, kIoError, kNoMemory.
    static Status create(const SeqGroupConfig &cfg, SeqGroup **group_p);
    /// Leaves before the members its link's validator writes are gone
    /// (a member destroyed before it attached attaches to leave).
    ~SeqGroup() override { link_.leave(); }

    Status check(bool send, const Message &msg,
                 const char **why) const noexcept override;
    Status post(bool send, const Message &msg, void *cookie) noexcept override;
    unsigned progress(uct_mm_common::CompleteFn fn,
                      void *arg) noexcept override;
    bool busy() const noexcept override;
    Status state() noexcept override { return link_.state(); }

    /// The limits a group of this configuration has (uct_group_attr_t).
    static uct_mm_common::GroupLimits
    limits_of(const SeqGroupConfig &cfg) noexcept;
    uct_mm_common::GroupLimits limits() const noexcept
    {
        return limits_of(cfg_);
    }
    /// Fragments this member, as root, has written with non-temporal
    /// stores (stream_min).
    std::uint64_t streamed_frags() const noexcept { return streamed_; }

  private:
    struct Op {
        Message msg;
        void *cookie = nullptr;
        bool send = false;
        bool started = false;    ///< positions assigned
        bool cma = false;        ///< one position holding a descriptor
        std::uint64_t first = 0; ///< position of fragment 0
        std::uint64_t frag = 0;  ///< payload bytes of a fragment
        std::uint64_t nfrag = 0;
        std::uint64_t done = 0; ///< fragments published / copied
        std::uint32_t msg_no = 0;
    };
    struct CmaWait {
        std::uint64_t pos = 0; ///< the descriptor's position
        void *cookie = nullptr;
    };

    explicit SeqGroup(const SeqGroupConfig &cfg);
    static Status validate(void *arg, const uct_mm_common::LinkParams &p,
                           std::size_t region_bytes);
    void adopt_params();
    void start(Op &op) noexcept;
    std::size_t frag_length(const Op &op, std::uint64_t f) const noexcept;
    FragHeader *slot(std::uint64_t pos) const noexcept;
    bool room_for(std::uint64_t pos) noexcept;
    bool push(Op &op) noexcept;
    bool pull(Op &op) noexcept;
    bool frag_matches(const FragHeader *h, const Op &op,
                      std::uint64_t f) noexcept;
    bool read_cma(const FragHeader *h, const Op &op) noexcept;
    void advance_cursor(std::uint64_t pos) noexcept;
    /// Runs the front post once; true when its data work is done.
    bool run_front() noexcept;
    unsigned advance(uct_mm_common::CompleteFn fn, void *arg) noexcept;
    unsigned finish_cma(uct_mm_common::CompleteFn fn, void *arg) noexcept;
    void fail_all(uct_mm_common::CompleteFn fn, void *arg) noexcept;
    int waiting_on() noexcept;

    SeqGroupConfig cfg_;
    uct_mm_common::GroupLink link_;
    SeqGeometry geo_;         ///< member 0's (checked at attach)
    std::size_t cma_min_ = 0; ///< member 0's
    std::size_t cma_max_ = 0; ///< member 0's
    std::size_t slot_bytes_ = 0;
    uct_mm_common::PostRing<Op> ops_;
    uct_mm_common::PostRing<CmaWait> cma_;
    std::uint64_t next_pos_ = 0;   ///< first position of the next message
    std::uint32_t next_msg_ = 0;   ///< number of the next message
    std::uint64_t cursor_ = 0;     ///< positions this member is done with
    std::uint64_t cached_min_ = 0; ///< root: a lower bound of the cursors
    std::uint32_t moved_ = 0;      ///< fragments moved since last counted
    std::int32_t pid_ = 0;
    std::uint64_t streamed_ = 0; ///< streamed_frags()
};

} // namespace uct_mm_bcast
