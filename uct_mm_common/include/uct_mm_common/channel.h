// SPDX-License-Identifier: BSD-3-Clause
// A channel: one p2p FIFO ring plus what a sender and a receiver need around
// it: inline and packed sends, CMA (zero-copy) sends with completion, delivery
// with the CMA pull, and failure detection (a timeout, then liveness).
#pragma once

#include "uct_mm_common/ring.h"

#include "uct_mm_common/backoff.h"
#include "uct_mm_common/doorbell.h"

#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

namespace uct_mm_common {

struct ChannelConfig {
    const char *name = "mm";         ///< transport, for log lines
    std::uint32_t timeout_ms = 2000; ///< stall before a liveness scan
    std::size_t max_zcopy = 1 << 20; ///< largest CMA message (bytes)
    std::uint32_t max_iov = 8;       ///< remote buffers per CMA message
};

/// Tests only: called by a receiver between its check of an inline slot's
/// header and the delivery (where a racing writer may change it).
inline void (*g_deliver_probe)(SlotHeader *slot) = nullptr;

/// Called for each delivered message. Returns nothing: the data is valid
/// only during the call.
using DeliverFn = void (*)(void *arg, std::uint8_t am_id, void *data,
                           std::size_t length);
/// Called when a CMA send is read by every member, or failed once no live
/// member can still read its buffer.
using CompleteFn = void (*)(void *arg, void *cookie, Status status);

class Channel {
  public:
    Channel() = default;
    Channel(const Channel &) = delete;
    Channel &operator=(const Channel &) = delete;

    /// Takes an opened ring view.
    void init(const Ring &ring, const ChannelConfig &cfg);
    /// Sender: the owner's doorbell, rung when the owner sleeps on it.
    void set_bell(BellAddress owner) noexcept { bell_ = owner; }

    /// kOk, or the sticky failure (kPeerDead, kTimeout).
    Status state() const noexcept { return state_; }
    Ring &ring() noexcept { return ring_; }
    std::size_t max_inline() const noexcept
    {
        return ring_.geometry().payload_capacity();
    }
    std::size_t max_cma_header() const noexcept;

    // Sender side. All return kNoResource when the ring is full.
    /// An 8-byte header followed by `length` bytes (uct am_short).
    Status send_short(std::uint8_t am_id, std::uint64_t header,
                      const void *data, std::size_t length) noexcept;
    /// `pack(dest)` writes at most max_inline() bytes and returns the count;
    /// a larger count (the packer broke that contract) is not delivered:
    /// kExceedsLimit.
    template <typename Pack>
    Status send_packed(std::uint8_t am_id, Pack &&pack,
                       std::size_t *length_p) noexcept;
    /// Zero-copy: members read the buffers from this process with
    /// process_vm_readv; `on_complete(arg, cookie, st)` fires from
    /// progress_completions() once all have read them.
    Status send_cma(std::uint8_t am_id, const void *header,
                    std::uint32_t hdr_bytes, const RemoteIov *iov,
                    std::uint32_t iovcnt, void *cookie) noexcept;
    /// Reports finished CMA sends; returns how many.
    unsigned progress_completions(CompleteFn fn, void *arg) noexcept;
    std::size_t outstanding() const noexcept { return cma_.size(); }

    // Receiver side (members only).
    /// Delivers up to `max` messages in order; returns how many. Cheap when
    /// nothing is pending: one shared line read, inline (an iface with
    /// nothing to receive is polled by every UCP progress call).
    unsigned poll(unsigned max, DeliverFn fn, void *arg) noexcept
    {
        if (ring_.quiet()) {
            idle();
            return 0;
        }
        return deliver(max, fn, arg);
    }

    /// Bounded-time failure check, rate limited; poll() calls it when idle.
    void check_health() noexcept;
    /// Owner: asks the next producer to ring the doorbell; false (not
    /// armed) when a message is at hand already. A failed channel delivers
    /// nothing more: armed.
    bool arm() noexcept { return state_ != Status::kOk || ring_.arm(); }

  private:
    /// Publishes a claimed slot; rings the owner's doorbell if it asked.
    void publish(std::uint64_t pos, std::uint32_t length, std::uint8_t am_id,
                 SlotKind kind) noexcept
    {
        if (ring_.publish(pos, length, am_id, kind)) {
            Doorbell::ring(bell_);
            ring_.rang();
        }
    }
    /// poll() with something at the cursor (a message, or a claim).
    unsigned deliver(unsigned max, DeliverFn fn, void *arg) noexcept;
    /// A poll that delivered nothing: the health check now and then.
    void idle() noexcept
    {
        if ((++idle_polls_ & 1023) == 0) {
            check_health();
        }
    }
    Status on_full() noexcept;
    /// Publishes claimed position `pos` as kSkip; logs; kExceedsLimit.
    Status skip_oversized(std::uint64_t pos, std::uint8_t am_id,
                          std::size_t length) noexcept;
    /// Most remote buffers a received CMA descriptor may name.
    static constexpr std::uint32_t kMaxPullIov = 64;
    /// *pid_p: the producer the descriptor names, whatever the result.
    Status pull_cma(const std::uint8_t *payload, std::size_t *length_p,
                    std::int32_t *pid_p) noexcept;
    /// A CMA message of a producer that is not a member could not be read
    /// (`st`): drops it; records a live producer in the ring (it fails its
    /// own sends). False when it cannot be recorded (the table is full).
    bool drop_sender_message(std::int32_t pid, Status st) noexcept;
    void fail(Status st, int member) noexcept;

    struct PendingCma {
        std::uint64_t pos;
        void *cookie;
    };

    Ring ring_;
    ChannelConfig cfg_;
    Status state_ = Status::kOk;
    bool refused_ = false; ///< sender: a receiver could not read one of ours
    std::deque<PendingCma> cma_;
    std::vector<std::uint8_t> bounce_; ///< CMA receive buffer, lazily sized
    std::uint64_t last_activity_ns_ = 0;
    std::uint64_t next_check_ns_ = 0;
    std::uint64_t next_readers_check_ns_ = 0; ///< failed: readers_done()
    unsigned idle_polls_ = 0;
    BellAddress bell_; ///< sender: the owner's doorbell
};

template <typename Pack>
Status Channel::send_packed(std::uint8_t am_id, Pack &&pack,
                            std::size_t *length_p) noexcept
{
    if (state_ != Status::kOk) {
        return state_;
    }
    std::uint64_t pos;
    const Status st = ring_.claim(&pos);
    if (st != Status::kOk) {
        return on_full();
    }
    const std::size_t length = pack(ring_.payload(pos));
    if (length > max_inline()) {
        return skip_oversized(pos, am_id, length);
    }
    publish(pos, static_cast<std::uint32_t>(length), am_id, SlotKind::kInline);
    last_activity_ns_ = 0;
    *length_p = length;
    return Status::kOk;
}

} // namespace uct_mm_common
