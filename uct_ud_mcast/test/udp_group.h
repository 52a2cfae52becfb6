// SPDX-License-Identifier: BSD-3-Clause
// Group members over the real UDP wire as forked processes: each opens a
// UdpWire (in its own network namespace when given), publishes its address
// on a shared board, runs a script of messages through a GroupChannel and
// checks every byte it receives. Waits back off, then block in epoll.
#pragma once

#include "group_channel.h"
#include "udp_wire.h"

#include <string>
#include <vector>

namespace uct_ud_mcast::test {

struct UdpRun {
    unsigned size = 2;
    unsigned messages = 1000;
    double rx_loss = 0.01;
    uint64_t seed = 1;
    std::string ifname = "lo";
    /// Per member: the network namespace to enter (empty: stay).
    std::vector<std::string> netns;
    /// Member killed (SIGKILL) after `kill_after` messages; -1: none.
    int victim = -1;
    unsigned kill_after = 50;
    uint64_t timeout_ns = 5'000'000'000;
    /// One more process that reads the group's multicast traffic without
    /// its key (in one more namespace: netns then has size + 1 entries)
    /// and sends, for each packet it sees, its forgeries (forge.h) to the
    /// group and to the packet's sender, and again a packet it captured
    /// earlier, unchanged (a replay). Members then require that the
    /// forgeries moved their MAC drop counter and nothing else.
    bool attacker = false;
};

/// Runs the members (and the attacker); returns "" on success, else the
/// failures.
std::string run_udp_group(const UdpRun &run);

/// The size of message i of a script (0 .. 1 MiB, mostly small).
uint32_t udp_script_len(uint64_t seed, unsigned i);

} // namespace uct_ud_mcast::test
