// SPDX-License-Identifier: BSD-3-Clause
// Runs a script of group messages (random roots and sizes) over SimNet:
// every member posts its part of every message in order, as uct_group.h
// asks, and the harness checks each receive's bytes and completion count.
#pragma once

#include "sim_net.h"

#include <string>

namespace uct_ud_mcast::test {

struct ScriptMsg {
    uint16_t root;
    uint32_t len;
};

/// Byte `off` of message `seq`.
inline uint8_t pattern(uint32_t seq, uint32_t off)
{
    return static_cast<uint8_t>(seq * 131u + off * 7u + (off >> 8));
}

/// A session configuration with short virtual-time timers and a small
/// payload, so a few hundred bytes fragment.
SessionConfig sim_config(unsigned size, uint64_t key);

/// Random script: `count` messages, roots in [0, size), sizes from 0 to
/// a few packets of `payload` bytes.
std::vector<ScriptMsg> random_script(unsigned size, unsigned count,
                                     uint32_t payload, uint64_t seed);

/// One seed: size (2, 3, 5 or 8), faults (0..20% each) and a script of
/// 24 messages drawn from it, run and verified; "" or what failed. Adds
/// the members' counters to *total.
std::string run_random_seed(uint64_t seed, Counters *total);

class GroupSim {
  public:
    GroupSim(SimNet &net, const SessionConfig &cfg, unsigned max_outstanding,
             std::vector<ScriptMsg> script);
    /// Steps until every member is done (or failed), at most `limit_ns` of
    /// virtual time; true when all finished.
    bool run(uint64_t limit_ns);
    /// Empty when every message reached every live member exactly once
    /// with the right bytes; else what went wrong.
    std::string verify() const;
    GroupChannel &channel(unsigned m) { return *ranks_[m].ch; }
    /// Members whose posts are held back (a slow receiver).
    std::vector<bool> paused;

  private:
    struct Rank {
        std::unique_ptr<GroupChannel> ch;
        size_t cursor = 0;
        std::vector<std::vector<uint8_t>> bufs;
        std::vector<int> completions;
        std::vector<Status> statuses;
    };
    static void on_complete(void *arg, void *cookie, Status st);
    void post_more(unsigned m);
    bool done(unsigned m) const;

    SimNet &net_;
    std::vector<ScriptMsg> script_;
    std::vector<Rank> ranks_;
};

} // namespace uct_ud_mcast::test
