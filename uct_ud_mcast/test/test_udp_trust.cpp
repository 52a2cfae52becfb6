// SPDX-License-Identifier: BSD-3-Clause
// Authentication over the real UDP wire (issue 29): an attacker process
// that reads a group's multicast traffic but has not its key sends forged
// DATA, ACK, READY, JOIN and ABORT packets and replays of captured ones,
// to the group and to each sender; every member still delivers every
// genuine byte, the group stays healthy, and the forgeries show only in
// the members' MAC drop counter. On loopback (a local user who binds the
// group's port) and from another host on the bridge (namespaces).
#include "netns_bridge.h"
#include "udp_group.h"

#include <catch2/catch.hpp>
#include <ucg_test/skip.h>

using namespace uct_ud_mcast::test;

TEST_CASE("udp trust: a local attacker's forgeries and replays change "
          "nothing a member delivers",
          "[ud_mcast][udp][fork][trust]")
{
    UdpRun run;
    run.size = 3;
    run.rx_loss = 0.02;
    run.messages = 400;
    run.seed = 2901;
    run.attacker = true;
    const std::string err = run_udp_group(run);
    INFO(err);
    CHECK(err.empty());
}

TEST_CASE("udp trust: an attacker on another host of the segment changes "
          "nothing a member delivers",
          "[ud_mcast][udp][fork][netns][trust]")
{
    const unsigned size = 3;
    NetnsBridge net(size + 1);
    if (!net.ok()) {
        UCG_SKIP("cannot create network namespaces and a bridge here "
                 "(needs root or CAP_NET_ADMIN and iproute2)");
    }
    UdpRun run;
    run.size = size;
    run.rx_loss = 0.02;
    run.messages = 300;
    run.seed = 2902;
    run.ifname = "umc0";
    run.netns = net.names; // the last one is the attacker's
    run.attacker = true;
    const std::string err = run_udp_group(run);
    INFO(err);
    CHECK(err.empty());
}
