// SPDX-License-Identifier: BSD-3-Clause
// The receive path every wire shares: validate a packet (parser, check
// and MAC), count what is dropped and why, find its session by key, and
// create point-to-point sessions on a peer's first JOIN. Also the loss
// test hook (drops received packets at random, from a seed).
#pragma once

#include "session.h"

#include <cstdint>
#include <unordered_map>

namespace uct_ud_mcast {

class Engine {
  public:
    /// Makes the session of a p2p JOIN from an unknown peer (nullptr: no).
    class P2pFactory {
      public:
        virtual Session *create_p2p(const Packet &join, uint64_t now) = 0;
        /// The key a p2p JOIN from an unknown peer must be sealed with;
        /// false when none (not addressed to this iface).
        virtual bool p2p_rx_key(const Packet &join, MacKey *key) = 0;

      protected:
        ~P2pFactory() = default;
    };

    explicit Engine(uint64_t tick_ns = 20'000) : tick_ns_(tick_ns) {}

    Counters &counters() noexcept { return counters_; }
    void set_p2p_factory(P2pFactory *f) noexcept { factory_ = f; }
    /// Drop this fraction (0..1) of received packets, decided by a PRNG
    /// seeded with `seed` (tests and benchmarks only).
    void set_rx_loss(double fraction, uint64_t seed) noexcept;

    void add(Session *s);
    void remove(Session *s) noexcept;
    Session *find(uint64_t key) const noexcept;
    size_t num_sessions() const noexcept { return sessions_.size(); }

    /// One received datagram. Never reads outside [buf, buf + len).
    void on_packet(const uint8_t *buf, size_t len, uint64_t now);
    /// Timers of every session, once per tick: O(1) between ticks.
    void progress(uint64_t now);

  private:
    bool inject_drop() noexcept;

    Counters counters_;
    std::unordered_map<uint64_t, Session *> sessions_;
    P2pFactory *factory_ = nullptr;
    uint64_t tick_ns_;
    uint64_t next_tick_ns_ = 0;
    uint64_t loss_threshold_ = 0; ///< of a 64-bit draw; 0: no loss
    uint64_t rng_ = 0;
};

} // namespace uct_ud_mcast
