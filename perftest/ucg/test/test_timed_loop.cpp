// SPDX-License-Identifier: BSD-3-Clause
// ucg_perftest's timed loop (timed_loop.h): OSU 7's order of the
// iteration's parts, a barrier before the first call and between timed
// calls but none between timed barriers, the timer around the call alone,
// the first failure ending the loop.
#include "timed_loop.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

using ucg::perftest::LoopSteps;
using ucg::perftest::LoopTimes;
using ucg::perftest::sync_between;
using ucg::perftest::timed_loop;

namespace {

// Steps that write what they do: p (prepare), c (call), k (check), s
// (sync), each followed by its iteration; a call of iteration `fail_at`
// (or its sync, where `fail_sync`) fails.
struct Trace {
    std::string log;
    int calls = 0;
    int fail_at = -1;
    bool fail_sync = false;

    LoopSteps steps()
    {
        LoopSteps s;
        s.prepare = [this](int i) { log += "p" + std::to_string(i); };
        s.check = [this](int i) { log += "k" + std::to_string(i); };
        s.call = [this] {
            log += "c";
            return calls++ == fail_at && !fail_sync ? UCS_ERR_IO_ERROR : UCS_OK;
        };
        s.sync = [this] {
            log += "s";
            return calls - 1 == fail_at && fail_sync ? UCS_ERR_TIMED_OUT
                                                     : UCS_OK;
        };
        return s;
    }
};

} // namespace

TEST_CASE("timed loop: every collective but the barrier has a barrier "
          "between iterations",
          "[perftest]")
{
    for (ucg_coll_type_t coll : {UCG_COLL_BCAST, UCG_COLL_ALLREDUCE,
                                 UCG_COLL_ALLTOALL, UCG_COLL_GATHER}) {
        CHECK(sync_between(coll));
        Trace t;
        LoopTimes times;
        REQUIRE(timed_loop(coll, 1, 2, t.steps(), &times) == UCS_OK);
        CHECK(t.log == "sp0ck0sp1ck1sp2ck2s");
    }
}

TEST_CASE("timed loop: barriers back to back after the first, as "
          "osu_barrier times them",
          "[perftest]")
{
    CHECK_FALSE(sync_between(UCG_COLL_BARRIER));
    Trace t;
    LoopTimes times;
    REQUIRE(timed_loop(UCG_COLL_BARRIER, 2, 3, t.steps(), &times) == UCS_OK);
    CHECK(t.log == "sp0ck0p1ck1p2ck2p3ck3p4ck4");
    CHECK(t.calls == 5);
}

TEST_CASE("timed loop: the timer holds the timed iterations' calls, the "
          "first call apart",
          "[perftest]")
{
    using std::chrono::milliseconds;
    // Iteration 0 (untimed) sleeps 40 ms, the three timed ones 1 ms each;
    // prepare, check and sync sleep 40 ms, outside the timer. Sleeps last
    // at least as long as asked: the bounds below hold on a loaded machine
    // unless three 1 ms calls stall for 37 ms.
    int i = 0;
    LoopSteps s;
    const auto nap = [](int ms) {
        std::this_thread::sleep_for(milliseconds(ms));
    };
    s.prepare = [&](int) { nap(i == 1 ? 40 : 0); };
    s.call = [&] {
        nap(i++ == 0 ? 40 : 1);
        return UCS_OK;
    };
    s.check = [&](int) { nap(i == 2 ? 40 : 0); };
    s.sync = [&] {
        nap(i == 3 ? 40 : 0);
        return UCS_OK;
    };
    LoopTimes times;
    REQUIRE(timed_loop(UCG_COLL_BCAST, 1, 3, s, &times) == UCS_OK);
    CHECK(times.first_us >= 40000);
    CHECK(times.total_us >= 3000);
    CHECK(times.total_us < 40000);
}

TEST_CASE("timed loop: a failed call or barrier ends the loop with its "
          "status",
          "[perftest]")
{
    Trace call;
    call.fail_at = 1;
    LoopTimes times;
    CHECK(timed_loop(UCG_COLL_BCAST, 1, 3, call.steps(), &times) ==
          UCS_ERR_IO_ERROR);
    CHECK(call.log == "sp0ck0sp1c");

    Trace sync;
    sync.fail_at = 2;
    sync.fail_sync = true;
    CHECK(timed_loop(UCG_COLL_ALLREDUCE, 1, 3, sync.steps(), &times) ==
          UCS_ERR_TIMED_OUT);
    CHECK(sync.log == "sp0ck0sp1ck1sp2ck2s");
}

TEST_CASE("timed loop: the ranks start the row together, so the first "
          "call holds none of what ran before it",
          "[perftest]")
{
    // A peer still busy before the row (the floor's ping-pong) is what
    // the first sync waits out: here a sync that takes 40 ms before any
    // call, outside the timer; the calls themselves take no time.
    bool called = false;
    LoopSteps s;
    s.call = [&] {
        called = true;
        return UCS_OK;
    };
    s.sync = [&] {
        if (!called) {
            std::this_thread::sleep_for(std::chrono::milliseconds(40));
        }
        return UCS_OK;
    };
    LoopTimes times;
    REQUIRE(timed_loop(UCG_COLL_BARRIER, 0, 1, s, &times) == UCS_OK);
    CHECK(times.first_us < 40000);

    Trace failed;
    failed.fail_at = -1; // the sync before the first call (calls - 1)
    failed.fail_sync = true;
    CHECK(timed_loop(UCG_COLL_BCAST, 0, 1, failed.steps(), &times) ==
          UCS_ERR_TIMED_OUT);
    CHECK(failed.log == "s");
}
