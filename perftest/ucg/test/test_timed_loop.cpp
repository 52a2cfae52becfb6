// SPDX-License-Identifier: BSD-3-Clause
// ucg_perftest's timed loop (timed_loop.h): OSU 7's order of the
// iteration's parts, a barrier before the first call and between timed
// calls but none between timed barriers, the timer around the call alone,
// the first failure ending the loop.
#include "timed_loop.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

using ucg::perftest::LoopSteps;
using ucg::perftest::LoopTimes;
using ucg::perftest::now_us;
using ucg::perftest::span_of;
using ucg::perftest::SpanSteps;
using ucg::perftest::SpanTimes;
using ucg::perftest::sync_between;
using ucg::perftest::timed_loop;
using ucg::perftest::timed_span;

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

TEST_CASE("span: each iteration's latest end over the ranks, the mean over "
          "the iterations no rank came late to",
          "[perftest]")
{
    const double late = std::numeric_limits<double>::quiet_NaN();
    // 3 ranks x 3 iterations, rank-major; iteration 1 has a late rank.
    const std::vector<double> ends = {10, 5,    30, //
                                      40, 7,    20, //
                                      20, late, 10};
    const SpanTimes s = span_of(ends, 3, 3);
    CHECK(s.kept == 2);
    CHECK(s.late == 1);
    CHECK(s.mean_us == Approx((40 + 30) / 2.0));
    const SpanTimes none = span_of({late, late}, 1, 2);
    CHECK(none.kept == 0);
    CHECK(none.mean_us < 0);
}

namespace {

// One rank's span steps: the allgather stands for every rank, reporting
// after `delay_ms` the other rank's clock `ahead_us` ahead of this one and
// its margin (`other_margin_us`, else this rank's). The first `iters`
// allgathers are the clocks' (a reading and a margin each), the last the
// calls' ends.
struct OneRank {
    int iters = 0;
    double ahead_us = 0;
    double other_margin_us = 0;
    int delay_ms = 0;
    int call_ms = 0;
    int gathers = 0;
    std::vector<double> call_starts, agreed, margins;

    SpanSteps steps()
    {
        SpanSteps s;
        s.ranks = 2;
        s.sync = [] { return UCS_OK; };
        s.call = [this] {
            call_starts.push_back(now_us());
            std::this_thread::sleep_for(std::chrono::milliseconds(call_ms));
            return UCS_OK;
        };
        s.allgather = [this](const double *mine, double *all, std::size_t n) {
            std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
            for (std::size_t i = 0; i < n; ++i) {
                all[i] = mine[i];
                all[n + i] = mine[i];
            }
            if (gathers++ < iters) {
                all[n] += ahead_us;
                if (other_margin_us > 0) {
                    all[n + 1] = other_margin_us;
                }
                margins.push_back(mine[1]);
                agreed.push_back(all[n] + std::max(mine[1], all[n + 1]));
            }
            return UCS_OK;
        };
        return s;
    }
};

} // namespace

TEST_CASE("span: every call starts at the start the ranks agreed, the "
          "latest clock's reading and a margin, and is timed from it",
          "[perftest]")
{
    OneRank r;
    r.iters = 3;
    r.ahead_us = 20000; // the other rank read its clock 20 ms later
    r.call_ms = 2;
    SpanTimes s;
    REQUIRE(timed_span(3, r.steps(), &s) == UCS_OK);
    REQUIRE(r.call_starts.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(r.call_starts[i] >= r.agreed[i]);
    }
    CHECK(s.kept == 3);
    CHECK(s.mean_us >= 2000);
    // Far below the 21 ms the call waited for its start: unless the 2 ms
    // sleeps stall for 13 ms more on a loaded machine.
    CHECK(s.mean_us < 15000);
}

TEST_CASE("span: a rank that reaches the agreed start after it leaves that "
          "iteration out and asks for twice the margin, and a failed call "
          "ends the span with its status",
          "[perftest]")
{
    OneRank r;
    r.iters = 6;
    r.delay_ms = 3; // longer than the first two margins
    SpanTimes s;
    REQUIRE(timed_span(6, r.steps(), &s) == UCS_OK);
    REQUIRE(r.margins.size() == 6);
    CHECK(r.margins[0] == ucg::perftest::kSpanMarginUs);
    CHECK(r.margins[1] == 2 * ucg::perftest::kSpanMarginUs);
    CHECK(r.margins[2] == 4 * ucg::perftest::kSpanMarginUs);
    CHECK(s.late >= 2);
    // Margins of 4 ms and more outlast the 3 ms (a loaded machine's
    // sleeps may still run late once or twice).
    CHECK(s.kept >= 1);
    CHECK(s.kept + s.late == 6);

    OneRank capped;
    capped.iters = 9;
    capped.delay_ms = 70; // longer than any margin
    REQUIRE(timed_span(9, capped.steps(), &s) == UCS_OK);
    CHECK(s.late == 9);
    CHECK(capped.margins.back() == ucg::perftest::kSpanMaxMarginUs);

    OneRank ok;
    ok.iters = 3;
    SpanSteps failing = ok.steps();
    int calls = 0;
    failing.call = [&calls] {
        return ++calls == 2 ? UCS_ERR_IO_ERROR : UCS_OK;
    };
    CHECK(timed_span(3, failing, &s) == UCS_ERR_IO_ERROR);
    CHECK(calls == 2);
}

TEST_CASE("span: a call starts the largest margin any rank asks for after "
          "the latest reading",
          "[perftest]")
{
    OneRank r;
    r.iters = 2;
    r.other_margin_us = 5000; // the other rank came late before
    SpanTimes s;
    REQUIRE(timed_span(2, r.steps(), &s) == UCS_OK);
    REQUIRE(r.call_starts.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
        CHECK(r.call_starts[i] >= r.agreed[i]);
    }
    CHECK(r.margins[1] == 5000); // and this rank asks for it from then on
    CHECK(s.kept == 2);
}

TEST_CASE("span: the readings, the start and the calls' times are on the "
          "span's clock: rank 0's where the machines' clocks differ",
          "[perftest]")
{
    // This rank's own clock is 200 ms behind rank 0's, the span's clock;
    // the other rank reads rank 0's.
    const auto shared = [] { return now_us() + 200000; };
    OneRank r;
    SpanSteps steps = r.steps();
    steps.clock = shared;
    std::vector<double> starts, agreed;
    steps.call = [&] {
        starts.push_back(shared());
        return UCS_OK;
    };
    int gathers = 0;
    steps.allgather = [&](const double *mine, double *all, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            all[i] = mine[i];
            all[n + i] = mine[i];
        }
        if (gathers++ < 2) { // a reading and a margin each
            all[n] = shared();
            agreed.push_back(std::max(all[0], all[n]) + mine[1]);
        }
        return UCS_OK;
    };
    SpanTimes s;
    REQUIRE(timed_span(2, steps, &s) == UCS_OK);
    REQUIRE(starts.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
        CHECK(starts[i] >= agreed[i]);
        // On this rank's own clock it would start 200 ms late.
        CHECK(starts[i] < agreed[i] + 100000);
    }
    CHECK(s.kept == 2);
    CHECK(s.mean_us < 100000);
}

TEST_CASE("clock offset: the other rank's reading less the midpoint of rank "
          "0's, from the ping-pong of least round trip",
          "[perftest]")
{
    using ucg::perftest::clock_offset;
    using ucg::perftest::ClockSample;
    // Rank 1's clock 1000 us ahead; the first and last pongs were held up
    // on their way back (their midpoints are late), the middle one not.
    const std::vector<ClockSample> samples = {
        {0, 1005, 40}, {100, 1105, 110}, {200, 1205, 260}};
    CHECK(clock_offset(samples) == Approx(1105 - 105));
    CHECK(clock_offset({}) == 0);
}
