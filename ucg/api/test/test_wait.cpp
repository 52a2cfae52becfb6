// SPDX-License-Identifier: BSD-3-Clause
// When ucg_collective_wait yields (api/wait_backoff.h, decision 0018).
#include "api/wait_backoff.h"

#include <catch2/catch.hpp>

using ucg::rt::WaitBackoff;

TEST_CASE("on a shared core a wait yields after a poll that moved nothing, "
          "never after one that moved its collective",
          "[ucg][wait]")
{
    WaitBackoff w(true);
    CHECK(w.yield_after(false, false));
    CHECK_FALSE(w.yield_after(true, true));
    CHECK(w.yield_after(false, false));
    CHECK_FALSE(w.yield_after(true, true));
}

TEST_CASE("on a shared core a wait yields after only every 16th poll in a "
          "row that moved something else",
          "[ucg][wait]")
{
    WaitBackoff w(true);
    for (unsigned round = 0; round < 3; ++round) {
        for (unsigned i = 1; i < WaitBackoff::kOtherPolls; ++i) {
            CHECK_FALSE(w.yield_after(false, true));
        }
        CHECK(w.yield_after(false, true)); // backs off all the same
    }
    // A poll of its own or an empty one starts the count again.
    for (unsigned i = 1; i < WaitBackoff::kOtherPolls; ++i) {
        CHECK_FALSE(w.yield_after(false, true));
    }
    CHECK_FALSE(w.yield_after(true, true));
    for (unsigned i = 1; i < WaitBackoff::kOtherPolls; ++i) {
        CHECK_FALSE(w.yield_after(false, true));
    }
    CHECK(w.yield_after(false, false));
    CHECK_FALSE(w.yield_after(false, true));
}

TEST_CASE("with a core each a wait spins 1,024 polls, then yields every 64th",
          "[ucg][wait]")
{
    WaitBackoff w(false);
    unsigned yields = 0, first = 0;
    for (unsigned n = 0; n < 2048; ++n) {
        if (w.yield_after(false, false)) {
            first = yields++ == 0 ? n : first;
        }
    }
    CHECK(first == WaitBackoff::kSpinPolls);
    CHECK(yields == (2048 - WaitBackoff::kSpinPolls) / WaitBackoff::kSpinEvery);
}
