// SPDX-License-Identifier: BSD-3-Clause
// One reliable multicast session: every member a sender with its own PSN
// stream and send window, every member a receiver of the others' streams.
// Pure C++: no sockets, no verbs, no clock (callers pass `now` in ns).
//
// Vocabulary. Stream s: the packets member s sends, numbered by PSN.
// Consumed: delivered in order to the handler, which accepted it. ACK
// tree: for stream s, members are ranked r = (i - s) mod size and form a
// k-ary tree on r (root s, children of r are r*k+1..r*k+k); a member ACKs
// to its parent the minimum PSN its subtree has consumed, so the sender
// hears from at most k members whatever the size. Window: a sender never
// has PSN >= acked + window in flight, so a receiver never stores more
// than `window` packets of a stream (flow control: a receiver that does
// not consume stalls its senders, it never overflows).
#pragma once

#include "types.h"

#include <vector>

namespace uct_ud_mcast {

class Session {
  public:
    Session(const SessionConfig &cfg, Transmit *tx, SessionHandler *handler,
            Counters *counters, uint64_t now);
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;

    const SessionConfig &config() const noexcept { return cfg_; }
    /// Every member attached (join barrier passed) and not failed.
    bool ready() const noexcept { return ready_ && state_ == Status::kOk; }
    /// kOk, or the failure (kPeerDead, kTimeout, kIoError).
    Status state() const noexcept { return state_; }
    uint16_t culprit() const noexcept { return culprit_; }

    /// Sends a message of at most max_payload bytes now, written by
    /// pack(dest) (returns the bytes written). kNoResource when not ready,
    /// the window is full or post_message() messages are queued.
    template <typename Pack>
    Status send_packet(const MsgHead &head, Pack &&pack, uint64_t now)
    {
        uint8_t *payload;
        const Status st = begin_packet(&payload);
        if (st != Status::kOk) {
            return st;
        }
        MsgHead h = head;
        h.len = static_cast<uint32_t>(pack(payload));
        commit_packet(h, 0, h.len);
        transmit_new(now);
        return Status::kOk;
    }
    /// Queues a message of any length, read from `data` until
    /// handler->sent(cookie); kNoResource when max_queued are queued.
    Status post_message(const MsgHead &head, const void *data, void *cookie,
                        uint64_t now);
    /// Packets sent but not yet consumed by every member, or queued.
    bool unacked() const noexcept;
    uint32_t next_psn() const noexcept { return next_; }
    uint32_t acked_psn() const noexcept { return base_; }

    /// A packet parsed and addressed to this session (key checked).
    void on_packet(const Packet &p, uint64_t now);
    /// The handler can take `sender`'s stalled stream again.
    void redeliver(uint16_t sender, uint64_t now);
    /// Timers; O(1) between ticks.
    void progress(uint64_t now);
    /// Fails the session (sends ABORT); a no-op when failed already.
    void fail(Status status, uint16_t culprit);

  private:
    struct RxSlot {
        bool present = false;
        uint32_t len = 0;
        DataBody d{};
    };
    struct Stream {
        // receiving side (s != me)
        uint32_t expected = 0; ///< next PSN to consume
        uint32_t highest = 0;  ///< one past the highest PSN seen
        bool blocked = false;  ///< the head was refused by the handler
        bool delivering = false;
        std::vector<RxSlot> slots;  ///< window entries, sized on first use
        std::vector<uint8_t> store; ///< their payloads
        uint64_t nack_due_ns = 0;   ///< 0: no NACK scheduled
        uint64_t nack_backoff_ns = 0;
        // ACK tree node for this stream
        uint16_t parent = kNoMember;
        uint16_t first_child = 0; ///< rank of the first child
        uint16_t nchildren = 0;
        std::vector<uint32_t> child_cum;
        std::vector<uint16_t> child_lag;
        uint32_t ack_sent = 0;   ///< last cumulative value sent up
        uint64_t ack_due_ns = 0; ///< 0: no ACK scheduled
        bool ack_force = false;  ///< resend the ACK even if unchanged
        bool in_timers = false;
    };
    struct TxSlot {
        uint32_t len = 0;
        uint64_t last_sent_ns = 0;
    };
    struct Queued {
        MsgHead head;
        const uint8_t *data;
        uint32_t done; ///< bytes already in the window
        void *cookie;
    };

    // session.cpp
    void init_tree();
    void on_join(const Packet &p, uint64_t now);
    void on_ready(const Packet &p, uint64_t now);
    void progress_join(uint64_t now);
    bool epoch_ok(const Packet &p);
    void send_ctrl(PacketType type, uint16_t to, const void *body,
                   size_t body_len, bool overhead = true);
    void arm(Stream &st);
    void check_liveness(uint64_t now);
    uint16_t member_at(uint16_t stream, uint32_t rank) const;
    // session_tx.cpp
    Status begin_packet(uint8_t **payload);
    /// Seals the next packet into the store; transmit_new() sends it.
    void commit_packet(const MsgHead &h, uint32_t offset, uint32_t len);
    uint8_t *tx_buf(uint32_t psn);
    void transmit_new(uint64_t now);
    void fill_window(uint64_t now);
    void on_acked(uint32_t cum, uint64_t now);
    void on_nack(const Packet &p, uint64_t now);
    void resend(uint32_t psn, uint64_t now);
    void progress_tx(uint64_t now);
    uint32_t own_acked() const;
    // session_rx.cpp
    void on_data(const Packet &p, uint64_t now);
    void store(Stream &st, const Packet &p);
    void drain(uint16_t s, uint64_t now);
    void note_consumed(uint16_t s, uint64_t now);
    void on_ack(uint16_t from, uint16_t stream, uint32_t cum, uint16_t lag,
                uint64_t now);
    uint32_t subtree_min(uint16_t s, uint16_t *laggard) const;
    void send_ack(uint16_t s, uint64_t now);
    void send_nack(uint16_t s, uint64_t now);
    void on_status(const Packet &p, uint64_t now);
    void progress_rx(uint64_t now);

    SessionConfig cfg_;
    Transmit *tx_;
    SessionHandler *handler_;
    Counters *cnt_;
    uint16_t me_;
    uint16_t n_;
    uint32_t mtu_; ///< kDataHeaderBytes + max_payload + kMacBytes
    uint32_t epoch_ = 0;
    bool ready_ = false;
    Status state_ = Status::kOk;
    uint16_t culprit_ = kNoMember;
    uint64_t created_ns_;
    uint64_t next_tick_ns_ = 0;
    uint64_t last_tick_ns_ = 0; ///< to tell our own stalls from the net's
    uint64_t tick_ns_;
    uint64_t next_live_ns_ = 0;
    // join
    std::vector<bool> joined_;
    unsigned njoined_ = 1;
    uint64_t join_due_ns_ = 0;
    uint64_t join_backoff_ns_ = 0;
    // liveness
    std::vector<uint64_t> heard_ns_;  ///< last valid packet from a member
    std::vector<uint64_t> probed_ns_; ///< last PROBE sent to it
    // send side
    uint32_t base_ = 0;   ///< oldest PSN not acked by all
    uint32_t next_ = 0;   ///< next PSN to assign
    uint32_t unsent_ = 0; ///< first PSN the wire has not taken yet
    std::vector<uint8_t> tx_store_;
    std::vector<TxSlot> tx_slots_;
    std::vector<Queued> queue_; ///< ring of max_queued
    uint32_t q_head_ = 0, q_count_ = 0;
    uint64_t rto_ns_;
    uint64_t rto_due_ns_ = 0;
    // receive side, one per member (own entry: the root of own tree)
    std::vector<Stream> streams_;
    std::vector<uint16_t> timers_; ///< streams with an ACK or NACK due
    std::vector<uint8_t> scratch_; ///< control packets
};

} // namespace uct_ud_mcast
