// SPDX-License-Identifier: BSD-3-Clause
// A transport's receive events through the public UCT API, as UCP's
// adaptive progress uses them: arm, sleep on the iface's descriptor, be
// woken by a peer's message, be refused (busy) while one is at hand.
#pragma once

#include "ucg_test/uct_iface.h"

namespace ucg_test {

/// Runs the check between two forked processes on `spec`'s transport
/// (which must advertise UCT_IFACE_FLAG_EVENT_RECV | _EVENT_FD); a failed
/// step throws RankFailure, reported by the caller's run as usual.
/// Returns what run_fork_ranks summarised ("" when both ranks passed).
std::string check_receive_events(const UctIfaceSpec &spec);

} // namespace ucg_test
