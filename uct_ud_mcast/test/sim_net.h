// SPDX-License-Identifier: BSD-3-Clause
// A simulated wire for the reliability core: members as engines in one
// process, packets as events in virtual time, faults drawn from a seed
// (loss, duplication, reordering, delay), members that can be killed.
#pragma once

#include "engine.h"
#include "group_channel.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <random>
#include <vector>

namespace uct_ud_mcast::test {

struct Faults {
    double loss = 0;    ///< per packet per receiver
    double dup = 0;     ///< delivered twice
    double reorder = 0; ///< extra delay 0..200 us
    double delay = 0;   ///< extra delay 0..2 ms
};

class SimNet {
  public:
    SimNet(unsigned size, const Faults &f, uint64_t seed);

    uint64_t now() const { return now_; }
    Engine &engine(unsigned m) { return *members_[m]->engine; }
    void kill(unsigned m) { members_[m]->alive = false; }
    bool alive(unsigned m) const { return members_[m]->alive; }
    /// Transmit of member m (for sessions made by the test).
    Transmit *tx(unsigned m) { return members_[m].get(); }
    /// Drops a packet when it returns true (called before the faults).
    std::function<bool(unsigned from, unsigned to, const uint8_t *pkt,
                       size_t len)>
        filter;
    /// Counts of packets delivered, by type, to each member.
    std::vector<std::vector<uint64_t>> rx_by_type;
    /// Virtual time of the first DATA packet sent (0: none yet).
    uint64_t first_data_ns = 0;
    /// Packets of each run a member handed to to_all_run, in order.
    std::vector<uint32_t> runs;

    /// Puts a packet on the wire from `from` to `to`, arriving after
    /// `delay_ns`, past the filter and the faults (an attacker's).
    void inject(unsigned from, unsigned to, std::vector<uint8_t> pkt,
                uint64_t delay_ns)
    {
        events_.push(
            Event{now_ + delay_ns, order_++, from, to, std::move(pkt)});
    }
    /// Delivers due packets and ticks every live engine, then advances
    /// virtual time to the next event (at most `max_step_ns`).
    void step(uint64_t max_step_ns = 50'000);
    /// Everything stops for `ns` (a host descheduled): time and every
    /// packet in flight move on together.
    void stall(uint64_t ns);

  private:
    struct Member final : Transmit {
        SimNet *net;
        unsigned index;
        bool alive = true;
        std::unique_ptr<Engine> engine;
        bool to_member(uint16_t m, const uint8_t *p,
                       size_t n) noexcept override;
        bool to_all(const uint8_t *p, size_t n) noexcept override;
        uint32_t to_all_run(const uint8_t *p, size_t seg, uint32_t count,
                            size_t last) noexcept override
        {
            net->runs.push_back(count);
            return Transmit::to_all_run(p, seg, count, last);
        }
    };
    struct Event {
        uint64_t at;
        uint64_t order;
        unsigned from, to;
        std::vector<uint8_t> pkt;
        bool operator>(const Event &o) const
        {
            return at != o.at ? at > o.at : order > o.order;
        }
    };
    void send(unsigned from, unsigned to, const uint8_t *p, size_t n);
    double uniform() { return std::uniform_real_distribution<>(0, 1)(rng_); }

    Faults faults_;
    std::mt19937_64 rng_;
    uint64_t now_ = 1'000'000;
    uint64_t order_ = 0;
    std::vector<std::unique_ptr<Member>> members_;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
};

} // namespace uct_ud_mcast::test
