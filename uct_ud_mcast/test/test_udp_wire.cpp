// SPDX-License-Identifier: BSD-3-Clause
// The core over the UDP multicast wire: members as processes on loopback
// and in network namespaces joined by a bridge (separate hosts to IP), with
// loss injected where packets are received; a member killed.
#include "netns_bridge.h"
#include "udp_group.h"

#include <catch2/catch.hpp>
#include <ucg_test/skip.h>

#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace uct_ud_mcast;
using namespace uct_ud_mcast::test;

TEST_CASE("udp loopback: every message reaches every member once",
          "[ud_mcast][udp][fork]")
{
    const auto [size, loss] = GENERATE(
        table<unsigned, double>({{2, 0.01}, {3, 0.05}, {5, 0.20}, {8, 0.10}}));
    UdpRun run;
    run.size = size;
    run.rx_loss = loss;
    run.messages = size >= 5 ? 600 : 1500;
    run.seed = size * 100 + 1;
    INFO("members " << size << " loss " << loss);
    const std::string err = run_udp_group(run);
    INFO(err);
    CHECK(err.empty());
}

TEST_CASE("udp loopback: a killed member fails the others' group",
          "[ud_mcast][udp][fork]")
{
    UdpRun run;
    run.size = 4;
    run.rx_loss = 0.01;
    run.messages = 100'000; // never reached: the victim dies at 50
    run.victim = 2;
    run.timeout_ns = 500'000'000;
    const std::string err = run_udp_group(run);
    INFO(err);
    CHECK(err.empty());
}

TEST_CASE("udp network namespaces: members on separate hosts",
          "[ud_mcast][udp][fork][netns]")
{
    const unsigned size = GENERATE(3u, 5u);
    NetnsBridge net(size);
    if (!net.ok()) {
        UCG_SKIP("cannot create network namespaces and a bridge here "
                 "(needs root or CAP_NET_ADMIN and iproute2)");
    }
    UdpRun run;
    run.size = size;
    run.rx_loss = 0.05;
    run.messages = 400;
    run.seed = 77 + size;
    run.ifname = "umc0";
    run.netns = net.names;
    const std::string err = run_udp_group(run);
    INFO(err);
    CHECK(err.empty());
}
