// SPDX-License-Identifier: BSD-3-Clause
// Session, sending side: the window, fragmentation of queued messages,
// cumulative ACKs from the tree, NACK repair with a holdoff per PSN (one
// multicast resend serves every receiver that lost it), and the resend
// timer with exponential backoff.
#include "session.h"

#include <algorithm>
#include <cstring>

namespace uct_ud_mcast {

namespace {

/// Packets fill_window seals before it sends them: a run long enough for
/// one offloaded send of 64 KiB at a 1,500-byte MTU, short enough that
/// the first packet leaves while the copies of the rest would still be
/// under way.
constexpr uint32_t kRunPackets = 32;

} // namespace

uint8_t *Session::tx_buf(uint32_t psn)
{
    return tx_store_.data() +
           static_cast<size_t>(psn & (cfg_.window - 1)) * mtu_;
}

Status Session::begin_packet(uint8_t **payload)
{
    if (state_ != Status::kOk) {
        return state_;
    }
    if (!ready_ || q_count_ != 0 || next_ - base_ >= cfg_.window) {
        return Status::kNoResource;
    }
    *payload = tx_buf(next_) + kDataHeaderBytes;
    return Status::kOk;
}

void Session::commit_packet(const MsgHead &h, uint32_t offset, uint32_t len)
{
    uint8_t *buf = tx_buf(next_);
    CommonHeader c{};
    c.magic = kMagic;
    c.version = kVersion;
    c.type = static_cast<uint8_t>(PacketType::kData);
    c.src = me_;
    c.size = n_;
    c.key = cfg_.key;
    c.epoch = epoch_;
    c.flags = cfg_.p2p ? uint32_t{kFlagP2p} : 0u;
    DataBody d{};
    d.psn = next_;
    d.msg_seq = h.seq;
    d.msg_len = h.len;
    d.offset = offset;
    d.tag = h.tag;
    d.root = h.root;
    d.kind = h.kind;
    d.am_id = h.am_id;
    if (n_ == 2) {
        // Piggyback our ACK of the peer's stream (we are its only child).
        Stream &peer = streams_[me_ ^ 1];
        c.flags |= kFlagAck;
        d.ack = peer.expected;
        peer.ack_sent = peer.expected;
        peer.ack_due_ns = 0;
        peer.ack_force = false;
    }
    std::memcpy(buf, &c, sizeof(c));
    std::memcpy(buf + sizeof(c), &d, sizeof(d));
    const size_t total = kDataHeaderBytes + len + kMacBytes;
    seal_packet(buf, total, cfg_.tx_key);
    tx_slots_[next_ & (cfg_.window - 1)].len = static_cast<uint32_t>(total);
    ++next_;
}

// New packets go out in runs: consecutive slots of the store that are
// full (mtu_ bytes) but the run's last, handed to the wire in one call
// (on a bridge or NIC without offload each datagram's trip through the
// stack costs more than its bytes; decision 0032).
void Session::transmit_new(uint64_t now)
{
    while (unsent_ != next_) {
        const uint32_t first = unsent_ & (cfg_.window - 1);
        uint32_t count = 0;
        size_t last = 0;
        do {
            last = tx_slots_[(first + count) & (cfg_.window - 1)].len;
            ++count;
        } while (unsent_ + count != next_ && first + count < cfg_.window &&
                 last == mtu_);
        const uint32_t sent =
            tx_->to_all_run(tx_buf(unsent_), mtu_, count, last);
        for (uint32_t i = 0; i < sent; ++i) {
            TxSlot &slot = tx_slots_[first + i];
            ++cnt_->tx_packets;
            ++cnt_->tx_data;
            cnt_->tx_bytes += slot.len;
            cnt_->tx_data_bytes += slot.len;
            slot.last_sent_ns = now;
        }
        unsent_ += sent;
        if (sent != count) {
            ++cnt_->tx_failed; // retried from progress
            break;
        }
    }
    if (rto_due_ns_ == 0 && base_ != unsent_) {
        rto_due_ns_ = now + rto_ns_;
    }
}

void Session::fill_window(uint64_t now)
{
    while (q_count_ != 0 && state_ == Status::kOk && ready_ &&
           next_ - base_ < cfg_.window) {
        Queued &q = queue_[q_head_];
        const uint32_t len = std::min(cfg_.max_payload, q.head.len - q.done);
        if (len != 0) {
            std::memcpy(tx_buf(next_) + kDataHeaderBytes, q.data + q.done, len);
        }
        const uint32_t offset = q.done;
        q.done += len;
        const MsgHead head = q.head;
        void *cookie = q.cookie;
        const bool last = q.done == q.head.len;
        if (last) {
            q_head_ = (q_head_ + 1) % cfg_.max_queued;
            --q_count_;
        }
        commit_packet(head, offset, len);
        if (last || next_ - unsent_ >= kRunPackets) {
            transmit_new(now);
        }
        if (last) {
            handler_->sent(cookie); // may post again: state re-read above
        }
    }
    transmit_new(now);
}

Status Session::post_message(const MsgHead &head, const void *data,
                             void *cookie, uint64_t now)
{
    if (state_ != Status::kOk) {
        return state_;
    }
    if (q_count_ == cfg_.max_queued) {
        return Status::kNoResource;
    }
    Queued &q = queue_[(q_head_ + q_count_) % cfg_.max_queued];
    q.head = head;
    q.data = static_cast<const uint8_t *>(data);
    q.done = 0;
    q.cookie = cookie;
    ++q_count_;
    fill_window(now);
    return Status::kOk;
}

bool Session::unacked() const noexcept
{
    return base_ != next_ || q_count_ != 0;
}

uint32_t Session::own_acked() const
{
    const Stream &st = streams_[me_];
    uint32_t v = next_;
    for (uint32_t c : st.child_cum) {
        if (psn_diff(c, v) < 0) {
            v = c;
        }
    }
    return v;
}

void Session::on_acked(uint32_t, uint64_t now)
{
    const uint32_t a = own_acked();
    if (psn_diff(a, base_) <= 0) {
        return;
    }
    base_ = a;
    rto_ns_ = cfg_.rto_min_ns;
    rto_due_ns_ = base_ != unsent_ ? now + rto_ns_ : 0;
    fill_window(now);
}

void Session::resend(uint32_t psn, uint64_t now)
{
    TxSlot &slot = tx_slots_[psn & (cfg_.window - 1)];
    if (!tx_->to_all(tx_buf(psn), slot.len)) {
        ++cnt_->tx_failed;
        return;
    }
    slot.last_sent_ns = now;
    ++cnt_->tx_packets;
    ++cnt_->tx_resent;
    cnt_->tx_bytes += slot.len;
    cnt_->tx_resent_bytes += slot.len;
    cnt_->tx_overhead_bytes += slot.len;
}

void Session::on_nack(const Packet &p, uint64_t now)
{
    if (p.nack.stream != me_) {
        ++cnt_->drop_malformed;
        return;
    }
    for (unsigned r = 0; r < p.nack.nranges; ++r) {
        const NackRange &range = p.nack.ranges[r];
        const uint32_t count = std::min(range.count, cfg_.window);
        for (uint32_t i = 0; i < count; ++i) {
            const uint32_t psn = range.first + i;
            if (psn_diff(psn, base_) < 0 || psn_diff(psn, unsent_) >= 0) {
                continue;
            }
            const TxSlot &slot = tx_slots_[psn & (cfg_.window - 1)];
            if (now - slot.last_sent_ns >= cfg_.nack_holdoff_ns) {
                resend(psn, now);
            } else {
                ++cnt_->nacks_suppressed;
            }
        }
    }
}

void Session::progress_tx(uint64_t now)
{
    if (unsent_ != next_) {
        transmit_new(now);
    }
    fill_window(now);
    if (rto_due_ns_ == 0 || now < rto_due_ns_) {
        return;
    }
    if (base_ == unsent_) {
        rto_due_ns_ = 0;
        return;
    }
    // No ACK progress for a whole timeout: resend the oldest packets that
    // were not sent again since, and back off.
    unsigned burst = 0;
    for (uint32_t psn = base_; psn != unsent_ && burst < 16; ++psn) {
        if (now - tx_slots_[psn & (cfg_.window - 1)].last_sent_ns >= rto_ns_) {
            resend(psn, now);
            ++burst;
        }
    }
    rto_ns_ = std::min(rto_ns_ * 2, cfg_.rto_max_ns);
    rto_due_ns_ = now + rto_ns_;
}

} // namespace uct_ud_mcast
