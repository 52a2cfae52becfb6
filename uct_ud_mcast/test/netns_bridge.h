// SPDX-License-Identifier: BSD-3-Clause
// Separate hosts to IP for the UDP wire's tests: network namespaces on a
// bridge.
#pragma once

#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

namespace uct_ud_mcast::test {

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

} // namespace uct_ud_mcast::test
