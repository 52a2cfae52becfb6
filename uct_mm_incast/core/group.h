// SPDX-License-Identifier: BSD-3-Clause
// One member's view of an mm_incast group: attach/leave, a sender's
// nonblocking contribution, the root's nonblocking completion. UCX-free
// (only the public status enum), so threads, forks and TSan can test it.
#pragma once

#include "layout.h"
#include "reduce.h"
#include "shm.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace uct_mm_incast {

/// BATCHED and CENTRALIZED give each sender a slot; the others share one
/// reduce buffer.
inline bool is_slot_mode(uct_mm_incast_mode_t mode)
{
    return (mode == UCT_MM_INCAST_MODE_BATCHED) ||
           (mode == UCT_MM_INCAST_MODE_CENTRALIZED);
}

/// Test-only observation points (tests/; unset: no cost but a null check
/// per chunk).
struct GroupHooks {
    /// Sender: after each chunk but the last is published, with the payload
    /// bytes published so far. May block (the root sees what is published).
    void (*chunk_published)(void *arg, std::size_t bytes) = nullptr;
    void *arg = nullptr;
};

struct GroupConfig {
    std::string name;        ///< segment name, "/..." unique on the host
    uint32_t group_size = 0; ///< members, root included
    uint32_t member = 0;     ///< this member's index
    uint32_t root = 0;       ///< the receiver's index
    uct_mm_incast_mode_t mode = UCT_MM_INCAST_MODE_AUTO;
    uct_mm_incast_op_t op = UCT_MM_INCAST_OP_GATHER;
    uct_mm_incast_dtype_t dtype = UCT_MM_INCAST_DTYPE_UINT8;
    std::size_t max_bytes = 8192; ///< largest contribution, bytes
    uint32_t elements = 8;        ///< ring depth
    double timeout_sec = 10.0;    ///< attach and absent-member timeout
    GroupHooks hooks;             ///< tests only
};

/// Validates a configuration (no side effects). Sets *why to a short
/// reason for the caller's single log line.
ucs_status_t check_config(const GroupConfig &cfg, const char **why);

/// Crossovers of AUTO, measured with ucg_mm_perftest (incast latency,
/// every mode interleaved with N-1 posix p2p sends; perftest/mm/RESULTS.md,
/// 2-core VM, N = 2, 4, 8, int32 and double sums, 8 B..1 MiB). An explicit
/// mode (group params or UCX_MM_INCAST_MODE) always wins over these.
struct AutoThresholds {
    /// Reductions up to this size with a one-RMW pair run ATOMIC: at par
    /// with batched at 8 B, 1.2-1.7x slower from 64 B, 2-50x from 4 KiB.
    static constexpr std::size_t kAtomicMaxBytes = 8;
    /// Reductions from this size and group run LOCKED (senders reduce in
    /// parallel): 0.70-0.82x p2p at 32 KiB and N >= 4 where the slot modes
    /// are 0.86-1.3x (the root reduces N-1 slots alone).
    static constexpr std::size_t kLockedMinBytes = 32768;
    static constexpr uint32_t kLockedMinGroup = 4;
    /// A pair (one sender) up to this size runs CENTRALIZED: polling the one
    /// slot's sequence word saves the pending counter's cache line (0.60-0.70x
    /// p2p vs 0.59-0.87x batched); batched beyond (0.72x vs 1.27x at 256 KiB).
    static constexpr std::size_t kPairCentralizedMaxBytes = 4096;
    /// Gather in bigger groups runs CENTRALIZED (one slot at a time), smaller
    /// ones BATCHED.
    static constexpr uint32_t kGatherBatchedMaxGroup = 4;
};

/// The mode a group runs in: an explicit mode as given, AUTO by operator,
/// datatype, size and group (AutoThresholds); ATOMIC on a pair without
/// lock-free atomics becomes LOCKED.
uct_mm_incast_mode_t resolve_mode(const GroupConfig &cfg);

class Group {
  public:
    /// Root: creates and publishes the segment. Others: attach, waiting up
    /// to cfg.timeout_sec for the root. The last to attach unlinks it.
    static ucs_status_t create(const GroupConfig &cfg,
                               std::unique_ptr<Group> *out);
    ~Group();
    Group(const Group &) = delete;
    Group &operator=(const Group &) = delete;

    /// Sender: UCS_OK, UCS_ERR_NO_RESOURCE (ring full), or an error.
    ucs_status_t send(const void *data, std::size_t length);
    /// Root: UCS_OK with *length_p, UCS_INPROGRESS, or an error. Slot modes
    /// over kChunkBytes write `out` as chunks arrive, before UCS_OK; a later
    /// call with another buffer or capacity starts the copy again (the
    /// slots stay until UCS_OK).
    ucs_status_t recv(void *out, std::size_t capacity, std::size_t *length_p);
    /// Root: payload bytes of its next incast consumed so far (copied or
    /// reduced into the result), summed over senders; 0 between incasts.
    std::size_t consumed_bytes() const;

    uct_mm_incast_mode_t mode() const { return mode_; }
    std::size_t max_bytes() const { return max_bytes_; }
    uint32_t elements() const { return elements_; }
    uint32_t num_senders() const { return group_size_ - 1; }
    bool is_root() const { return member_ == root_; }

  private:
    Group() = default;
    ucs_status_t init_as_root(const GroupConfig &cfg);
    ucs_status_t attach(const GroupConfig &cfg);
    ucs_status_t adopt_header(const GroupConfig &cfg);
    void join();
    ucs_status_t check_length(std::size_t length) const;
    std::byte *element(uint64_t k) const;
    std::byte *slot(std::byte *el, uint32_t s) const;
    SlotTrailer *trailer(std::byte *slot_base) const;
    SlotProgress *progress(std::byte *slot_base) const;
    std::byte *payload(std::byte *slot_base, std::size_t len) const;
    ucs_status_t send_slot(std::byte *el, const void *data, std::size_t len,
                           uint64_t k);
    void send_chunks(std::byte *s, const std::byte *src, std::size_t len,
                     uint64_t k);
    ucs_status_t send_reduce(std::byte *el, const void *data, std::size_t len);
    bool element_complete(std::byte *el, uint64_t k);
    ucs_status_t deliver(std::byte *el, void *out, std::size_t capacity,
                         std::size_t *length_p);
    ucs_status_t recv_chunks(std::byte *el, uint64_t k, void *out,
                             std::size_t capacity, std::size_t *length_p);
    ucs_status_t sweep(std::byte *el, uint64_t k, std::byte *target,
                       std::size_t capacity, bool *moved);
    bool visible(std::byte *el, uint32_t s, uint64_t k);
    void apply(std::byte *el, uint32_t s, std::byte *to, std::size_t begin,
               std::size_t end);
    void release(std::byte *el, std::size_t reduced_len);
    ucs_status_t on_wait(); ///< amortized liveness probe while waiting
    ucs_status_t probe_members();

    Mapping map_;
    std::string name_;
    std::byte *base_ = nullptr;
    SegmentHeader *hdr_ = nullptr;
    AttachLine *attach_ = nullptr;
    ReceiverLine *recv_line_ = nullptr;
    MemberLine *members_ = nullptr;
    uint32_t group_size_ = 0;
    uint32_t member_ = 0;
    uint32_t root_ = 0;
    uint32_t elements_ = 0;
    uint32_t buffers_ = 0; ///< element buffers: incast k uses k % buffers_
    uint32_t my_slot_ = 0;
    uct_mm_incast_mode_t mode_ = UCT_MM_INCAST_MODE_AUTO;
    uct_mm_incast_op_t op_ = UCT_MM_INCAST_OP_GATHER;
    uct_mm_incast_dtype_t dtype_ = UCT_MM_INCAST_DTYPE_UINT8;
    std::size_t dtype_size_ = 1;
    std::size_t max_bytes_ = 0;
    std::size_t slot_stride_ = 0;
    std::size_t element_bytes_ = 0;
    std::size_t elements_offset_ = 0;
    ReduceFn reduce_ = nullptr;
    AtomicReduceFn atomic_reduce_ = nullptr;
    uint64_t seq_ = 0;           ///< next incast of this member
    uint64_t released_seen_ = 0; ///< sender: last `released` it read
    uint32_t cursor_ = 0;        ///< root, CENTRALIZED or chunks: slots done
    /// Root, chunked slot modes: what it knows of each slot of incast seq_.
    struct SlotSeen {
        uint32_t length = 0;  ///< payload bytes (valid once `started`)
        uint32_t visible = 0; ///< bytes published by the sender
        uint32_t applied = 0; ///< bytes consumed into the result
        bool started = false;
    };
    std::vector<SlotSeen> seen_;
    bool chunked_ = false;        ///< slot mode and max_bytes > kChunkBytes
    void *stream_out_ = nullptr;  ///< root: the buffer being filled
    std::size_t stream_cap_ = 0;  ///< its capacity, bytes
    std::size_t done_offset_ = 0; ///< gather: output bytes of done slots
    GroupHooks hooks_;
    bool joined_ = false;
    bool unlinked_ = false;
    uint32_t idle_polls_ = 0;
    double timeout_sec_ = 10.0;
    std::chrono::steady_clock::time_point created_at_;
    std::chrono::steady_clock::time_point last_probe_;
    std::vector<uint64_t> scratch_; ///< root: aligned reduce target
};

} // namespace uct_mm_incast
