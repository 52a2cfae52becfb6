// SPDX-License-Identifier: BSD-3-Clause
// Session, receiving side: in-order delivery with duplicate drop, storage
// of out-of-order (or refused) packets within the window, NACKs for gaps
// (after a reorder grace, then with backoff: each receiver asks once per
// interval, not per packet), and the ACK tree node of every stream.
#include "session.h"

#include <algorithm>
#include <cstring>

namespace uct_ud_mcast {

void Session::store(Stream &st, const Packet &p)
{
    if (st.slots.empty()) {
        st.slots.resize(cfg_.window); // once per stream, on first need
        st.store.resize(static_cast<size_t>(cfg_.window) * cfg_.max_payload);
    }
    const uint32_t idx = p.data.psn & (cfg_.window - 1);
    RxSlot &slot = st.slots[idx];
    slot.present = true;
    slot.len = p.payload_len;
    slot.d = p.data;
    if (p.payload_len != 0) {
        std::memcpy(st.store.data() +
                        static_cast<size_t>(idx) * cfg_.max_payload,
                    p.payload, p.payload_len);
    }
}

void Session::on_data(const Packet &p, uint64_t now)
{
    const uint16_t s = p.hdr.src;
    Stream &st = streams_[s];
    if (p.payload_len > cfg_.max_payload) {
        ++cnt_->drop_malformed;
        return;
    }
    if ((p.hdr.flags & kFlagAck) != 0 && n_ == 2) {
        on_ack(s, me_, p.data.ack, s, now);
    }
    const uint32_t psn = p.data.psn;
    const int32_t diff = psn_diff(psn, st.expected);
    if (diff < 0) {
        ++cnt_->rx_duplicate;
        st.ack_force = true; // our ACK may have been lost
        if (st.ack_due_ns == 0) {
            st.ack_due_ns = now;
        }
        arm(st);
        return;
    }
    if (static_cast<uint32_t>(diff) >= cfg_.window) {
        ++cnt_->drop_stale;
        return;
    }
    if (psn_diff(psn + 1, st.highest) > 0) {
        st.highest = psn + 1;
    }
    const bool have =
        !st.slots.empty() && st.slots[psn & (cfg_.window - 1)].present;
    if (have) {
        ++cnt_->rx_duplicate;
        return;
    }
    if (diff == 0 && !st.blocked && !st.delivering) {
        st.delivering = true;
        const bool ok = handler_->deliver(s, p.data, p.payload, p.payload_len);
        st.delivering = false;
        if (ok) {
            ++st.expected;
            note_consumed(s, now);
            drain(s, now);
            return;
        }
        st.blocked = true;
    } else if (diff > 0 &&
               (st.slots.empty() ||
                !st.slots[st.expected & (cfg_.window - 1)].present)) {
        // A real gap (not a head the handler holds back): NACK it later.
        ++cnt_->rx_out_of_order;
        if (st.nack_due_ns == 0) {
            st.nack_due_ns = now + cfg_.nack_delay_ns;
            st.nack_backoff_ns = cfg_.nack_holdoff_ns;
            arm(st);
        }
    }
    store(st, p);
}

void Session::drain(uint16_t s, uint64_t now)
{
    Stream &st = streams_[s];
    while (!st.delivering && !st.slots.empty() && state_ == Status::kOk) {
        const uint32_t idx = st.expected & (cfg_.window - 1);
        RxSlot &slot = st.slots[idx];
        if (!slot.present) {
            break;
        }
        st.delivering = true;
        const bool ok = handler_->deliver(
            s, slot.d,
            st.store.data() + static_cast<size_t>(idx) * cfg_.max_payload,
            slot.len);
        st.delivering = false;
        if (!ok) {
            st.blocked = true;
            break;
        }
        st.blocked = false;
        slot.present = false;
        ++st.expected;
        note_consumed(s, now);
    }
    if (st.expected == st.highest) {
        st.nack_due_ns = 0;
    }
}

void Session::redeliver(uint16_t sender, uint64_t now)
{
    if (sender >= n_ || sender == me_ || state_ != Status::kOk) {
        return;
    }
    streams_[sender].blocked = false;
    drain(sender, now);
}

uint32_t Session::subtree_min(uint16_t s, uint16_t *laggard) const
{
    const Stream &st = streams_[s];
    uint32_t v = s == me_ ? next_ : st.expected;
    *laggard = me_;
    for (uint16_t c = 0; c < st.nchildren; ++c) {
        if (psn_diff(st.child_cum[c], v) < 0) {
            v = st.child_cum[c];
            *laggard = st.child_lag[c];
        }
    }
    return v;
}

void Session::note_consumed(uint16_t s, uint64_t now)
{
    ++cnt_->rx_delivered;
    Stream &st = streams_[s];
    uint16_t lag;
    const uint32_t cum = subtree_min(s, &lag);
    if (psn_diff(cum, st.ack_sent) >= static_cast<int32_t>(cfg_.ack_every)) {
        send_ack(s, now);
    } else if (st.ack_due_ns == 0 && cum != st.ack_sent) {
        st.ack_due_ns = now + cfg_.ack_delay_ns;
        arm(st);
    }
}

void Session::on_ack(uint16_t from, uint16_t stream, uint32_t cum, uint16_t lag,
                     uint64_t now)
{
    if (stream >= n_) {
        ++cnt_->drop_malformed;
        return;
    }
    Stream &st = streams_[stream];
    const uint32_t rank = (from + n_ - stream) % n_;
    const uint32_t c = rank - st.first_child;
    if (rank < st.first_child || c >= st.nchildren ||
        (stream == me_ && psn_diff(cum, next_) > 0)) {
        ++cnt_->drop_malformed; // not our child, or acks the future
        return;
    }
    if (psn_diff(cum, st.child_cum[c]) <= 0) {
        return;
    }
    st.child_cum[c] = cum;
    st.child_lag[c] = lag < n_ ? lag : from;
    if (stream == me_) {
        on_acked(cum, now);
        return;
    }
    uint16_t l;
    const uint32_t agg = subtree_min(stream, &l);
    if (psn_diff(agg, st.ack_sent) >= static_cast<int32_t>(cfg_.ack_every)) {
        send_ack(stream, now);
    } else if (st.ack_due_ns == 0 && agg != st.ack_sent) {
        st.ack_due_ns = now + cfg_.ack_delay_ns;
        arm(st);
    }
}

void Session::send_ack(uint16_t s, uint64_t)
{
    Stream &st = streams_[s];
    AckBody b{};
    b.stream = s;
    b.cum = subtree_min(s, &b.laggard);
    send_ctrl(PacketType::kAck, st.parent, &b, sizeof(b));
    st.ack_sent = b.cum;
    st.ack_due_ns = 0;
    st.ack_force = false;
}

void Session::send_nack(uint16_t s, uint64_t now)
{
    Stream &st = streams_[s];
    NackBody b{};
    b.stream = s;
    const uint32_t span = std::min<uint32_t>(
        static_cast<uint32_t>(std::max(0, psn_diff(st.highest, st.expected))),
        cfg_.window);
    for (uint32_t i = 0; i < span && b.nranges < kMaxNackRanges; ++i) {
        const uint32_t psn = st.expected + i;
        if (!st.slots.empty() && st.slots[psn & (cfg_.window - 1)].present) {
            continue;
        }
        NackRange *last = b.nranges ? &b.ranges[b.nranges - 1] : nullptr;
        if (last != nullptr && last->first + last->count == psn) {
            ++last->count;
        } else {
            b.ranges[b.nranges++] = {psn, 1};
        }
    }
    if (b.nranges == 0) {
        st.nack_due_ns = 0;
        return;
    }
    send_ctrl(PacketType::kNack, s, &b, sizeof(b));
    st.nack_due_ns = now + st.nack_backoff_ns;
    st.nack_backoff_ns = std::min(st.nack_backoff_ns * 2, cfg_.rto_max_ns);
}

void Session::on_status(const Packet &p, uint64_t now)
{
    const uint16_t s = p.stream.stream;
    if (s != p.hdr.src || s >= n_) {
        return; // a child's liveness answer: heard_ns_ was updated
    }
    Stream &st = streams_[s];
    // The sender is ahead of what we saw: its tail was lost.
    if (psn_diff(p.stream.value, st.highest) > 0 &&
        psn_diff(p.stream.value, st.expected) <=
            static_cast<int32_t>(cfg_.window)) {
        st.highest = p.stream.value;
        if (st.nack_due_ns == 0) {
            st.nack_due_ns = now;
            st.nack_backoff_ns = cfg_.nack_holdoff_ns;
            arm(st);
        }
    }
}

void Session::progress_rx(uint64_t now)
{
    size_t keep = 0;
    for (size_t i = 0; i < timers_.size(); ++i) {
        const uint16_t s = timers_[i];
        Stream &st = streams_[s];
        if (st.ack_due_ns != 0 && now >= st.ack_due_ns) {
            send_ack(s, now);
        }
        if (st.nack_due_ns != 0 && now >= st.nack_due_ns) {
            if (psn_diff(st.highest, st.expected) > 0) {
                send_nack(s, now);
            } else {
                st.nack_due_ns = 0;
            }
        }
        if (st.ack_due_ns != 0 || st.nack_due_ns != 0) {
            timers_[keep++] = s;
        } else {
            st.in_timers = false;
        }
    }
    timers_.resize(keep);
}

} // namespace uct_ud_mcast
