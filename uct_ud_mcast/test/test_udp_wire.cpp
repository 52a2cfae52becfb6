// SPDX-License-Identifier: BSD-3-Clause
// The core over the UDP multicast wire: members as processes on loopback
// and in network namespaces joined by a bridge (separate hosts to IP), with
// loss injected where packets are received; a member killed.
#include "netns_bridge.h"
#include "udp_group.h"
#include "udp_wire.h"

#include <catch2/catch.hpp>
#include <ucg_test/skip.h>

#include <arpa/inet.h>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

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

namespace {

// Whether this kernel segments UDP sends (UDP_SEGMENT, Linux 4.18).
bool kernel_segments_udp()
{
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    const int size = 1000;
    const bool ok = fd >= 0 && setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &size,
                                          sizeof(size)) == 0;
    if (fd >= 0) {
        close(fd);
    }
    return ok;
}

} // namespace

TEST_CASE("udp wire: a run of packets leaves in one send per 64 KiB and "
          "arrives as its packets",
          "[ud_mcast][udp]")
{
    if (!kernel_segments_udp()) {
        UCG_SKIP("this kernel does not segment UDP sends (UDP_SEGMENT)");
    }
    const auto [count, seg, sends] = GENERATE(
        table<uint32_t, size_t, uint64_t>({{7, 1000, 1}, {60, 1472, 2}}));
    INFO(count << " packets of " << seg << " bytes");
    UdpConfig cfg;
    cfg.port_base = 47000;
    std::unique_ptr<UdpWire> wire;
    REQUIRE(UdpWire::open(cfg, &wire) == Status::kOk);
    const uint64_t key = 0x7e57'a11e'0000'0000ull + count;
    int group;
    REQUIRE(wire->join(key, &group) == Status::kOk);
    // A plain socket in the group hears what goes on the wire.
    uint32_t ip;
    uint16_t port;
    UdpWire::group_addr(key, cfg.port_base, &ip, &port);
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(ip);
    a.sin_port = htons(port);
    ip_mreq mreq{};
    mreq.imr_multiaddr = a.sin_addr;
    mreq.imr_interface.s_addr = htonl(INADDR_LOOPBACK);
    const int one = 1;
    const int rcvbuf = 1 << 20;
    REQUIRE(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0);
    REQUIRE(setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq,
                       sizeof(mreq)) == 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    const size_t last = 300;
    std::vector<uint8_t> run((count - 1) * seg + last);
    for (size_t i = 0; i < run.size(); ++i) {
        run[i] = static_cast<uint8_t>(i * 7 + i / seg);
    }
    CHECK(wire->send_group_run(group, run.data(), seg, count, last) == count);
    CHECK(wire->run_sends() == sends);
    std::vector<uint8_t> buf(65536);
    for (uint32_t i = 0; i < count; ++i) {
        INFO("packet " << i);
        pollfd p{fd, POLLIN, 0};
        REQUIRE(poll(&p, 1, 2000) == 1);
        const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
        const size_t want = i + 1 == count ? last : seg;
        REQUIRE(n == static_cast<ssize_t>(want));
        CHECK(std::memcmp(buf.data(), run.data() + i * seg, want) == 0);
    }
    close(fd);
}

TEST_CASE("udp wire: its own multicast, looped back, never reaches the "
          "engine but another socket's does",
          "[ud_mcast][udp]")
{
    UdpConfig cfg;
    cfg.port_base = 47100;
    std::unique_ptr<UdpWire> a, b;
    REQUIRE(UdpWire::open(cfg, &a) == Status::kOk);
    REQUIRE(UdpWire::open(cfg, &b) == Status::kOk);
    const uint64_t key = 0x10e1'0000'0000'0001ull;
    int ga, gb;
    REQUIRE(a->join(key, &ga) == Status::kOk);
    REQUIRE(b->join(key, &gb) == Status::kOk);
    const std::vector<uint8_t> pkt(200, 0x5a); // not a valid packet
    REQUIRE(a->send_group(ga, pkt.data(), pkt.size()));
    Engine ea, eb;
    for (int i = 0; i < 200 && eb.counters().rx_packets == 0; ++i) {
        a->poll(&ea, 0);
        b->poll(&eb, 0);
        usleep(1000);
    }
    a->poll(&ea, 0);
    // b (another member on this host) hears it and counts it malformed;
    // a, its sender, drops it before anything.
    CHECK(eb.counters().rx_packets == 1);
    CHECK(eb.counters().drop_malformed == 1);
    CHECK(ea.counters().rx_packets == 0);
}
