// SPDX-License-Identifier: BSD-3-Clause
// The core over the UDP multicast wire: members as processes on loopback
// and in network namespaces joined by a bridge (separate hosts to IP), with
// loss injected where packets are received; a member killed.
#include "udp_group.h"

#include <catch2/catch.hpp>
#include <ucg_test/skip.h>

#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace uct_ud_mcast;
using namespace uct_ud_mcast::test;

namespace {

// N namespaces "umc<pid>-<i>", each with a veth "umc0" (10.213.0.<i+1>)
// on a bridge in one more namespace "umc<pid>-sw" (the switch), so that
// nothing appears in the test's own namespace; removed by the destructor.
class NetnsBridge {
  public:
    explicit NetnsBridge(unsigned n) : tag_("umc" + std::to_string(getpid()))
    {
        const std::string sw = tag_ + "-sw";
        ok_ =
            sh("ip netns add " + sw) &&
            sh("ip -n " + sw + " link add br0 type bridge mcast_snooping 0") &&
            sh("ip -n " + sw + " link set br0 up");
        if (ok_) {
            names_all_.push_back(sw);
        }
        for (unsigned i = 0; ok_ && i < n; ++i) {
            const std::string ns = tag_ + "-" + std::to_string(i);
            const std::string port = "v" + std::to_string(i);
            ok_ = sh("ip netns add " + ns);
            if (!ok_) {
                break;
            }
            names.push_back(ns);
            names_all_.push_back(ns);
            ok_ = sh("ip -n " + sw + " link add " + port +
                     " type veth peer name umc0 netns " + ns) &&
                  sh("ip -n " + sw + " link set " + port + " master br0 up") &&
                  sh("ip -n " + ns + " addr add 10.213.0." +
                     std::to_string(i + 1) + "/24 dev umc0") &&
                  sh("ip -n " + ns + " link set umc0 up") &&
                  sh("ip -n " + ns + " link set lo up");
        }
    }
    ~NetnsBridge()
    {
        for (const std::string &ns : names_all_) {
            sh("ip netns del " + ns);
        }
    }
    bool ok() const { return ok_; }
    std::vector<std::string> names; ///< the members' namespaces

  private:
    static bool sh(const std::string &cmd)
    {
        return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0;
    }
    std::string tag_;
    std::vector<std::string> names_all_;
    bool ok_ = false;
};

} // namespace

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
