// SPDX-License-Identifier: BSD-3-Clause
// The body of a Catch test for a shared-memory UCT transport: a process in
// another IPC namespace is another host (as for UCX's own shared-memory
// transports), one in ours is reachable. Containers and the emulated
// cluster's hosts must talk through the network, or UCP would route them
// through shared memory.
#pragma once

#include "ucg_test/skip.h"
#include "ucg_test/uct_iface.h"

#include <catch2/catch.hpp>

namespace ucg_test {

inline void check_ipc_namespace_is_another_host(const UctIfaceSpec &spec)
{
    // The other namespace first: this process has not read its own yet.
    const int other = reachable_from_child(spec, PeerPlace::kOtherIpcNamespace);
    CHECK(reachable_from_child(spec, PeerPlace::kSameHost) == 1);
    if (other == -1) {
        UCG_SKIP("needs root to enter a new IPC namespace");
    }
    if (other == -2) {
        UCG_SKIP("UCX read the IPC namespace before the fork: run this test "
                 "in a fresh process (ctest does)");
    }
    CHECK(other == 0);
}

} // namespace ucg_test
