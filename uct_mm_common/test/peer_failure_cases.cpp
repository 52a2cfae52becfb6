// SPDX-License-Identifier: BSD-3-Clause
// The transport's endpoints report a killed peer through the iface error
// handler (peer_failure_test.h). Built into each transport's UCX test with
// UCG_PEER_TL, the transport's name, defined.
#include "peer_failure_test.h"
#include "ucp_peer_failure_test.h"

#ifndef UCG_PEER_TL
#error "define UCG_PEER_TL to the transport's name"
#endif

namespace {
constexpr const char *kTl = UCG_PEER_TL;
}

TEST_CASE(UCG_PEER_TL ": uct_ep_check reports a killed peer", "[peer]")
{
    SECTION("reaped")
    {
        mm_peer_test::ep_check_reports_dead_peer(kTl, false);
    }
    SECTION("zombie")
    {
        mm_peer_test::ep_check_reports_dead_peer(kTl, true);
    }
}

TEST_CASE(UCG_PEER_TL
          ": a send with UCT_SEND_FLAG_PEER_CHECK reports a killed peer",
          "[peer]")
{
    mm_peer_test::peer_check_send_reports_dead_peer(kTl);
}

TEST_CASE(UCG_PEER_TL ": a pending send stalled on a killed peer is reported "
                      "within TIMEOUT",
          "[peer]")
{
    mm_peer_test::stalled_pending_reports_dead_peer(kTl);
}

TEST_CASE(UCG_PEER_TL
          ": no report for an endpoint destroyed first, and ep_check "
          "arguments",
          "[peer]")
{
    mm_peer_test::destroyed_ep_is_not_reported(kTl);
}

TEST_CASE(UCG_PEER_TL
          ": UCP in peer error mode selects it and reports a killed "
          "peer",
          "[peer][ucp]")
{
    mm_ucp_peer_test::keepalive_reports_killed_peer(kTl);
}
