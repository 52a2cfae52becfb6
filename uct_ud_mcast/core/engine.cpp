// SPDX-License-Identifier: BSD-3-Clause
// Engine: validation, counting and dispatch of received packets.
#include "engine.h"

#include <cmath>

namespace uct_ud_mcast {

void Engine::set_rx_loss(double fraction, uint64_t seed) noexcept
{
    if (!(fraction > 0)) {
        loss_threshold_ = 0;
        return;
    }
    const double f = fraction >= 1 ? 1 : fraction;
    loss_threshold_ = static_cast<uint64_t>(std::ldexp(f, 64) - 1);
    rng_ = seed;
}

bool Engine::inject_drop() noexcept
{
    if (loss_threshold_ == 0) {
        return false;
    }
    rng_ += 0x9e3779b97f4a7c15ull;
    return mix64(rng_) < loss_threshold_;
}

void Engine::add(Session *s)
{
    sessions_[s->config().key] = s;
}

void Engine::remove(Session *s) noexcept
{
    auto it = sessions_.find(s->config().key);
    if (it != sessions_.end() && it->second == s) {
        sessions_.erase(it);
    }
}

Session *Engine::find(uint64_t key) const noexcept
{
    auto it = sessions_.find(key);
    return it == sessions_.end() ? nullptr : it->second;
}

void Engine::on_packet(const uint8_t *buf, size_t len, uint64_t now)
{
    ++counters_.rx_packets;
    counters_.rx_bytes += len;
    if (inject_drop()) {
        ++counters_.drop_injected;
        return;
    }
    Packet p;
    switch (parse_packet(buf, len, &p)) {
    case ParseError::kNone:
        break;
    case ParseError::kBadCheck:
        ++counters_.drop_bad_check;
        return;
    default:
        ++counters_.drop_malformed;
        return;
    }
    Session *s = find(p.hdr.key);
    if (s == nullptr && p.type == PacketType::kJoin &&
        (p.hdr.flags & kFlagP2p) != 0 && factory_ != nullptr) {
        // Nothing is made for a JOIN that is not sealed with the key this
        // iface expects of that peer.
        MacKey key;
        if (!factory_->p2p_rx_key(p, &key)) {
            ++counters_.drop_foreign;
            return;
        }
        if (!packet_authentic(buf, len, key)) {
            ++counters_.drop_bad_mac;
            return;
        }
        s = factory_->create_p2p(p, now);
    }
    if (s == nullptr) {
        ++counters_.drop_foreign;
        return;
    }
    // Before any field drives state, delivery or a reply.
    if (!packet_authentic(buf, len, s->config().rx_key)) {
        ++counters_.drop_bad_mac;
        return;
    }
    s->on_packet(p, now);
}

void Engine::progress(uint64_t now)
{
    if (now < next_tick_ns_) {
        return;
    }
    next_tick_ns_ = now + tick_ns_;
    for (auto &kv : sessions_) {
        kv.second->progress(now);
    }
}

} // namespace uct_ud_mcast
