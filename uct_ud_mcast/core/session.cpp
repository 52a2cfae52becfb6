// SPDX-License-Identifier: BSD-3-Clause
// Session: construction, the ACK tree, packet dispatch, the join barrier,
// liveness (PROBE/STATUS) and failure (ABORT).
#include "session.h"

#include "uct_mm_common/log.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace uct_ud_mcast {

using uct_mm_common::log;
using uct_mm_common::LogLevel;

Session::Session(const SessionConfig &cfg, Transmit *tx,
                 SessionHandler *handler, Counters *counters, uint64_t now)
    : cfg_(cfg), tx_(tx), handler_(handler), cnt_(counters), me_(cfg.my_index),
      n_(cfg.size), mtu_(static_cast<uint32_t>(kDataHeaderBytes + kMacBytes) +
                         cfg.max_payload),
      created_ns_(now), rto_ns_(cfg.rto_min_ns)
{
    assert(n_ >= 1 && n_ <= kMaxMembers && me_ < n_);
    assert(cfg.window >= 2 && (cfg.window & (cfg.window - 1)) == 0);
    tick_ns_ = std::max<uint64_t>(
        1000, std::min(cfg.ack_delay_ns, cfg.nack_delay_ns) / 2);
    joined_.assign(n_, false);
    joined_[me_] = true;
    heard_ns_.assign(n_, now);
    probed_ns_.assign(n_, 0);
    tx_store_.resize(static_cast<size_t>(cfg.window) * mtu_);
    tx_slots_.resize(cfg.window);
    queue_.resize(cfg.max_queued);
    streams_.resize(n_);
    scratch_.resize(sizeof(CommonHeader) + sizeof(JoinBody) + kMacBytes);
    init_tree();
    if (me_ == 0) {
        epoch_ = cfg.nonce != 0 ? cfg.nonce : 1;
        ready_ = n_ == 1;
    }
    join_due_ns_ = now;
    join_backoff_ns_ = std::max<uint64_t>(tick_ns_, 100'000);
}

uint16_t Session::member_at(uint16_t stream, uint32_t rank) const
{
    return static_cast<uint16_t>((stream + rank) % n_);
}

void Session::init_tree()
{
    const uint32_t k = std::max<uint32_t>(1, cfg_.ack_fanin);
    for (uint16_t s = 0; s < n_; ++s) {
        Stream &st = streams_[s];
        const uint32_t r = (me_ + n_ - s) % n_;
        st.parent = r == 0 ? kNoMember : member_at(s, (r - 1) / k);
        const uint64_t first = static_cast<uint64_t>(r) * k + 1;
        st.first_child = static_cast<uint16_t>(std::min<uint64_t>(first, n_));
        st.nchildren = static_cast<uint16_t>(
            first >= n_ ? 0 : std::min<uint64_t>(k, n_ - first));
        st.child_cum.assign(st.nchildren, 0);
        st.child_lag.assign(st.nchildren, kNoMember);
        for (uint16_t c = 0; c < st.nchildren; ++c) {
            st.child_lag[c] = member_at(s, st.first_child + c);
        }
    }
}

void Session::send_ctrl(PacketType type, uint16_t to, const void *body,
                        size_t body_len, bool overhead)
{
    CommonHeader h{};
    h.magic = kMagic;
    h.version = kVersion;
    h.type = static_cast<uint8_t>(type);
    h.src = me_;
    h.size = n_;
    h.key = cfg_.key;
    h.epoch = epoch_;
    h.flags = cfg_.p2p ? uint32_t{kFlagP2p} : 0u;
    const size_t len = sizeof(h) + body_len + kMacBytes;
    std::memcpy(scratch_.data(), &h, sizeof(h));
    if (body_len != 0) {
        std::memcpy(scratch_.data() + sizeof(h), body, body_len);
    }
    seal_packet(scratch_.data(), len, cfg_.tx_key);
    const bool ok = to == kNoMember ? tx_->to_all(scratch_.data(), len)
                                    : tx_->to_member(to, scratch_.data(), len);
    if (!ok) {
        ++cnt_->tx_failed;
        return;
    }
    ++cnt_->tx_packets;
    cnt_->tx_bytes += len;
    if (type == PacketType::kAck) {
        ++cnt_->tx_acks;
    } else if (type == PacketType::kNack) {
        ++cnt_->tx_nacks;
    } else {
        ++cnt_->tx_ctrl;
    }
    if (overhead) {
        cnt_->tx_overhead_bytes += len;
    }
}

bool Session::epoch_ok(const Packet &p)
{
    if (!ready_ && me_ != 0) {
        ++cnt_->drop_early;
        return false;
    }
    if (p.hdr.epoch != epoch_) {
        ++cnt_->drop_stale;
        return false;
    }
    return true;
}

void Session::on_packet(const Packet &p, uint64_t now)
{
    const uint16_t from = p.hdr.src;
    if (from == me_) {
        return; // our own multicast, looped back to a socket on this host
    }
    if (p.hdr.size != n_) {
        ++cnt_->drop_malformed;
        return;
    }
    if (state_ != Status::kOk) {
        if (p.type != PacketType::kAbort) {
            // Tell a member still talking to a failed session.
            StreamBody b{0, culprit_, static_cast<uint32_t>(state_)};
            send_ctrl(PacketType::kAbort, from, &b, sizeof(b));
        }
        return;
    }
    switch (p.type) {
    case PacketType::kJoin:
        return on_join(p, now);
    case PacketType::kReady:
        return on_ready(p, now);
    case PacketType::kAbort:
        if (p.hdr.epoch == epoch_ || (!ready_ && from == 0)) {
            const auto st = static_cast<Status>(p.stream.value);
            const bool known = st == Status::kPeerDead ||
                               st == Status::kTimeout || st == Status::kIoError;
            fail(known ? st : Status::kIoError, p.stream.culprit);
        }
        return;
    default:
        break;
    }
    if (!epoch_ok(p)) {
        return;
    }
    heard_ns_[from] = now;
    switch (p.type) {
    case PacketType::kData:
        return on_data(p, now);
    case PacketType::kAck:
        return on_ack(from, p.ack.stream, p.ack.cum, p.ack.laggard, now);
    case PacketType::kNack:
        return on_nack(p, now);
    case PacketType::kProbe: {
        const uint16_t s = p.stream.stream < n_ ? p.stream.stream : me_;
        StreamBody b{s, kNoMember, s == me_ ? next_ : streams_[s].expected};
        return send_ctrl(PacketType::kStatus, from, &b, sizeof(b));
    }
    case PacketType::kStatus:
        return on_status(p, now);
    default:
        return;
    }
}

void Session::on_join(const Packet &p, uint64_t now)
{
    const uint16_t from = p.hdr.src;
    heard_ns_[from] = now;
    if (me_ != 0) {
        // Member 0 of a p2p session invites us: answer at once.
        if (!ready_ && from == 0) {
            join_due_ns_ = now;
            progress_join(now);
        }
        return;
    }
    if (!joined_[from]) {
        joined_[from] = true;
        ++njoined_;
    }
    if (njoined_ < n_) {
        return;
    }
    if (!ready_) {
        ready_ = true;
        for (uint16_t m = 1; m < n_; ++m) {
            send_ctrl(PacketType::kReady, m, nullptr, 0, false);
        }
        fill_window(now);
    } else {
        send_ctrl(PacketType::kReady, from, nullptr, 0, false);
    }
}

void Session::on_ready(const Packet &p, uint64_t now)
{
    if (me_ == 0 || p.hdr.src != 0 || ready_) {
        return;
    }
    heard_ns_[0] = now;
    epoch_ = p.hdr.epoch;
    ready_ = true;
    std::fill(heard_ns_.begin(), heard_ns_.end(), now);
    fill_window(now);
}

void Session::progress_join(uint64_t now)
{
    if (now - created_ns_ >= cfg_.attach_timeout_ns) {
        uint16_t missing = 0;
        while (missing < n_ && joined_[missing]) {
            ++missing;
        }
        log(LogLevel::kError,
            "ud_mcast: session %016llx: member %u did not join within "
            "%.1f s",
            static_cast<unsigned long long>(cfg_.key), me_ == 0 ? missing : 0u,
            cfg_.attach_timeout_ns * 1e-9);
        fail(Status::kTimeout, me_ == 0 ? missing : 0);
        return;
    }
    if (now < join_due_ns_) {
        return;
    }
    join_due_ns_ = now + join_backoff_ns_;
    join_backoff_ns_ = std::min<uint64_t>(join_backoff_ns_ * 2, 100'000'000);
    JoinBody b{};
    b.nonce = cfg_.nonce;
    b.addr_len = cfg_.join_addr_len;
    std::memcpy(b.addr, cfg_.join_addr.data(), sizeof(b.addr));
    if (me_ != 0) {
        send_ctrl(PacketType::kJoin, 0, &b, sizeof(b), false);
    } else if (cfg_.p2p) {
        for (uint16_t m = 1; m < n_; ++m) {
            if (!joined_[m]) {
                send_ctrl(PacketType::kJoin, m, &b, sizeof(b), false);
            }
        }
    }
}

void Session::arm(Stream &st)
{
    if (!st.in_timers) {
        st.in_timers = true;
        timers_.push_back(static_cast<uint16_t>(&st - streams_.data()));
    }
}

void Session::fail(Status status, uint16_t culprit)
{
    if (state_ != Status::kOk) {
        return;
    }
    state_ = status;
    culprit_ = culprit;
    StreamBody b{0, culprit, static_cast<uint32_t>(status)};
    send_ctrl(PacketType::kAbort, kNoMember, &b, sizeof(b));
    handler_->failed(status, culprit);
}

// A member silent for the timeout is dead when we wait on it: a child
// that has not consumed what we have, or the root of a waiting receive.
// Before that, it is probed: its STATUS reply proves it alive.
void Session::check_liveness(uint64_t now)
{
    for (uint16_t s = 0; s < n_ && state_ == Status::kOk; ++s) {
        const Stream &st = streams_[s];
        const uint32_t mine = s == me_ ? next_ : st.expected;
        for (uint16_t c = 0; c < st.nchildren; ++c) {
            const uint16_t m = member_at(s, st.first_child + c);
            if (psn_diff(mine, st.child_cum[c]) <= 0) {
                continue;
            }
            if (now - heard_ns_[m] >= cfg_.timeout_ns) {
                log(LogLevel::kError,
                    "ud_mcast: session %016llx: member %u silent for %.1f s",
                    static_cast<unsigned long long>(cfg_.key), m,
                    cfg_.timeout_ns * 1e-9);
                return fail(Status::kPeerDead, m);
            }
            if (now - heard_ns_[m] >= cfg_.probe_ns &&
                now - probed_ns_[m] >= cfg_.probe_ns / 4) {
                probed_ns_[m] = now;
                StreamBody b{s, kNoMember, 0};
                send_ctrl(PacketType::kProbe, m, &b, sizeof(b));
            }
        }
        if (s != me_ && handler_->waiting_for(s)) {
            if (now - heard_ns_[s] >= cfg_.timeout_ns) {
                log(LogLevel::kError,
                    "ud_mcast: session %016llx: sender %u silent for %.1f s",
                    static_cast<unsigned long long>(cfg_.key), s,
                    cfg_.timeout_ns * 1e-9);
                return fail(Status::kPeerDead, s);
            }
            if (now - heard_ns_[s] >= cfg_.probe_ns &&
                now - probed_ns_[s] >= cfg_.probe_ns / 4) {
                probed_ns_[s] = now;
                StreamBody b{s, kNoMember, 0};
                send_ctrl(PacketType::kProbe, s, &b, sizeof(b));
            }
        }
    }
}

void Session::progress(uint64_t now)
{
    if (state_ != Status::kOk || now < next_tick_ns_) {
        return;
    }
    next_tick_ns_ = now + tick_ns_;
    // We were not running (descheduled, or the application did not call
    // progress): the ACKs that answer our packets may not have been sent
    // yet. Re-arm the resend timer rather than resend at once.
    if (last_tick_ns_ != 0 && now - last_tick_ns_ > cfg_.rto_min_ns / 2 &&
        rto_due_ns_ != 0) {
        rto_due_ns_ = std::max(rto_due_ns_, now + rto_ns_);
    }
    last_tick_ns_ = now;
    if (!ready_) {
        progress_join(now);
        return;
    }
    progress_tx(now);
    progress_rx(now);
    if (now >= next_live_ns_) {
        next_live_ns_ = now + std::max<uint64_t>(cfg_.probe_ns / 8, tick_ns_);
        check_liveness(now);
    }
}

} // namespace uct_ud_mcast
