// SPDX-License-Identifier: BSD-3-Clause
// The UDP loopback runs at every group size and loss level, with thousands
// of messages each (label slow).
#include "udp_group.h"

#include <catch2/catch.hpp>

using namespace uct_ud_mcast;
using namespace uct_ud_mcast::test;

namespace {
// Sanitized builds copy and check every byte several times slower.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr unsigned kMessages = 400;
#else
constexpr unsigned kMessages = 2000;
#endif
} // namespace

TEST_CASE("udp loopback: thousands of messages at every loss level",
          "[ud_mcast][udp][fork][slow]")
{
    for (const double loss : {0.01, 0.05, 0.2}) {
        for (const unsigned size : {2u, 3u, 5u, 8u}) {
            UdpRun run;
            run.size = size;
            run.rx_loss = loss;
            run.messages = kMessages;
            run.seed = size * 1000 + static_cast<unsigned>(loss * 100);
            INFO("members " << size << " loss " << loss);
            const std::string err = run_udp_group(run);
            INFO(err);
            CHECK(err.empty());
        }
    }
}
