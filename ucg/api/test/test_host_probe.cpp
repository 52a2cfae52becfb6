// SPDX-License-Identifier: BSD-3-Clause
// Host probes (api/host_probe.h): what counts as an answer, when a host
// is unreachable, and the listener that answers while its process is
// elsewhere. On loopback; a silent host is a listener whose accept queue
// is full (the kernel drops further handshakes, as for a host whose link
// is down). The whole path across hosts: cluster_fault_link_down.
#include "api/host_probe.h"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <chrono>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using ucg::rt::HostProbe;
using ucg::rt::ProbeAddr;
using ucg::rt::ProbeListener;
using Verdict = HostProbe::Verdict;

namespace {

// A TCP socket on 127.0.0.1 (port chosen by the kernel), listening with
// `backlog` unless it is negative; its address as a probe's.
struct LoopbackSocket {
    int fd = -1;
    ProbeAddr addr{};
    explicit LoopbackSocket(int backlog)
    {
        fd = ::socket(AF_INET, SOCK_STREAM, 0);
        REQUIRE(fd >= 0);
        sockaddr_in sin{};
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof(sin);
        REQUIRE(::bind(fd, reinterpret_cast<sockaddr *>(&sin), sizeof(sin)) ==
                0);
        REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr *>(&sin), &len) ==
                0);
        if (backlog >= 0) {
            REQUIRE(::listen(fd, backlog) == 0);
        }
        addr.ip[0] = htonl(INADDR_LOOPBACK);
        addr.port = sin.sin_port;
    }
    ~LoopbackSocket() { ::close(fd); }
};

// Checks (0.1 ms apart, the clock fixed at `now`) until a verdict other than
// waiting, at most `tries`.
Verdict check_until_settled(HostProbe &p, const ProbeAddr &a, double now,
                            int tries = 20000)
{
    Verdict v = Verdict::kWaiting;
    for (int i = 0; i < tries && v == Verdict::kWaiting; ++i) {
        v = p.check(a, now, 10.0);
        if (v == Verdict::kWaiting) {
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
    }
    return v;
}

// A listener whose accept queue is full: a connect to it stays pending.
struct SilentHost {
    LoopbackSocket listener{0};
    int filler = -1;
    SilentHost()
    {
        filler = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in sin{};
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = listener.addr.ip[0];
        sin.sin_port = listener.addr.port;
        REQUIRE(::connect(filler, reinterpret_cast<sockaddr *>(&sin),
                          sizeof(sin)) == 0);
    }
    ~SilentHost() { ::close(filler); }
};

} // namespace

TEST_CASE("host probe: a listening host answers", "[host_probe]")
{
    LoopbackSocket host(16);
    HostProbe p;
    CHECK(check_until_settled(p, host.addr, 0.0) == Verdict::kAnswered);
}

TEST_CASE("host probe: a refused connection is an answer", "[host_probe]")
{
    // Bound, not listening: the kernel answers the handshake with a reset.
    LoopbackSocket host(-1);
    HostProbe p;
    CHECK(check_until_settled(p, host.addr, 0.0) == Verdict::kAnswered);
}

TEST_CASE("host probe: a host that never answers is unreachable after the "
          "deadline",
          "[host_probe]")
{
    SilentHost host;
    HostProbe p;
    CHECK(p.check(host.listener.addr, 100.0, 1.0) == Verdict::kWaiting);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(p.check(host.listener.addr, 100.5, 1.0) == Verdict::kWaiting);
    CHECK(p.check(host.listener.addr, 101.0, 1.0) == Verdict::kUnreachable);
    // and stays so while asked
    CHECK(p.check(host.listener.addr, 101.2, 1.0) == Verdict::kUnreachable);

    SECTION("a probe nobody asked for a deadline starts over")
    {
        CHECK(p.check(host.listener.addr, 105.0, 1.0) == Verdict::kWaiting);
        CHECK(p.check(host.listener.addr, 105.6, 1.0) == Verdict::kWaiting);
        CHECK(p.check(host.listener.addr, 106.0, 1.0) == Verdict::kUnreachable);
    }
}

TEST_CASE("host probe: the listener answers probes while its process is "
          "elsewhere",
          "[host_probe]")
{
    ProbeListener l;
    REQUIRE(l.open() == UCS_OK);
    ProbeAddr a = l.addr();
    REQUIRE(a.port != 0);
    a.ip[0] = htonl(INADDR_LOOPBACK);
    a.ip[1] = 0;
    // Far more probes than its accept queue holds (64), and this thread
    // never polls the listener: UCX's async thread empties the queue.
    int answered = 0;
    for (int i = 0; i < 200; ++i) {
        HostProbe p;
        if (check_until_settled(p, a, 0.0) != Verdict::kAnswered) {
            break;
        }
        ++answered;
    }
    CHECK(answered == 200);
}

TEST_CASE("host probe: the devices UCX may use (UCX_NET_DEVICES)",
          "[host_probe]")
{
    using ucg::rt::ucx_may_use;
    CHECK(ucx_may_use("eth0", "all"));
    CHECK(ucx_may_use("eth0", "eth0"));
    CHECK(ucx_may_use("eth1", "eth0,eth1"));
    CHECK_FALSE(ucx_may_use("eth1", "eth0"));
    CHECK_FALSE(ucx_may_use("eth", "eth0"));
    CHECK_FALSE(ucx_may_use("eth0", "mlx5_0:1"));
    CHECK_FALSE(ucx_may_use("eth0", "^eth0"));
    CHECK(ucx_may_use("eth1", "^eth0,ib0"));
}
