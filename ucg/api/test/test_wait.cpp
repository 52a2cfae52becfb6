// SPDX-License-Identifier: BSD-3-Clause
// When ucg_collective_wait yields (api/wait_backoff.h, decision 0018) and
// when it sleeps on UCP's events (decision 0029).
#include "api/internal.h"
#include "api/wait_backoff.h"
#include "rank_env.h"

#include <catch2/catch.hpp>
#include <ucg_test/check.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <sched.h>
#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

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

TEST_CASE("on a shared core a wait may sleep after so many polls in a row "
          "that moved nothing (never with a core each or when told 0)",
          "[ucg][wait]")
{
    WaitBackoff w(true, 4);
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 3; ++i) {
            CHECK(w.yield_after(false, false));
            CHECK_FALSE(w.may_sleep());
        }
        CHECK(w.yield_after(false, false));
        CHECK(w.may_sleep());
        CHECK(w.yield_after(false, false));
        CHECK(w.may_sleep());
        // Anything moving starts the count again.
        w.yield_after(round == 0, true);
        CHECK_FALSE(w.may_sleep());
    }
    for (auto [over, after] : {std::pair{false, 4u}, std::pair{true, 0u}}) {
        WaitBackoff never(over, after);
        for (int i = 0; i < 5000; ++i) {
            never.yield_after(false, false);
            CHECK_FALSE(never.may_sleep());
        }
    }
}

TEST_CASE("a late yield marks the core shared for the next 64 waits and "
          "each late yield renews that",
          "[ucg][wait]")
{
    ucg::rt::CoreShare c;
    c.yielded(ucg::rt::CoreShare::kLateYieldNs - 1); // the core was free
    CHECK_FALSE(c.shared());
    c.yielded(ucg::rt::CoreShare::kLateYieldNs);
    for (unsigned w = 0; w < ucg::rt::CoreShare::kSharedWaits; ++w) {
        CHECK(c.shared());
        if (w == 10) {
            c.yielded(5 * ucg::rt::CoreShare::kLateYieldNs);
        }
        c.wait_ended();
    }
    CHECK(c.shared()); // renewed at wait 10
    for (unsigned w = 0; w < 11; ++w) {
        c.wait_ended();
    }
    CHECK_FALSE(c.shared());
    c.wait_ended(); // stays unshared
    CHECK_FALSE(c.shared());
}

namespace {

// A 64-byte bcast from rank 1, which starts it late_us late: rank 0 waits.
void late_bcast(ucg_group_h g, int rank, unsigned char fill,
                useconds_t late_us = 50000)
{
    std::vector<unsigned char> buf(64, rank == 1 ? fill : 0);
    ucg_coll_args_t a{};
    a.coll = UCG_COLL_BCAST;
    a.field_mask = UCG_COLL_ARGS_FIELD_ROOT;
    a.root = 1;
    a.dst.buffer = buf.data();
    a.dst.count = buf.size();
    a.dst.dtype = {UCG_DTYPE_UINT8, 1};
    ucg_coll_h h = nullptr;
    UCG_CHECK(ucg_collective_init(g, &a, &h) == UCS_OK);
    if (rank == 1) {
        usleep(late_us);
    }
    UCG_CHECK(ucg_collective_start(h) == UCS_OK);
    UCG_CHECK(ucg_collective_wait(h) == UCS_OK);
    UCG_CHECK(buf.front() == fill && buf.back() == fill);
    ucg_collective_free(h);
}

// Runs `body(cpus)` with this process (and the ranks it forks) on the
// first `n` CPUs it may use, then restores its CPUs; false (body not run)
// where it may use fewer.
bool on_first_cpus(std::size_t n,
                   const std::function<void(const std::vector<int> &)> &body)
{
    cpu_set_t old;
    REQUIRE(sched_getaffinity(0, sizeof(old), &old) == 0);
    std::vector<int> cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < CPU_SETSIZE && cpus.size() < n; ++i) {
        if (CPU_ISSET(i, &old)) {
            cpus.push_back(i);
            CPU_SET(i, &set);
        }
    }
    if (cpus.size() < n) {
        return false;
    }
    REQUIRE(sched_setaffinity(0, sizeof(set), &set) == 0);
    body(cpus);
    REQUIRE(sched_setaffinity(0, sizeof(old), &old) == 0);
    return true;
}

} // namespace

TEST_CASE("an oversubscribed wait for a message from another host sleeps "
          "on UCP's events unless UCG_WAIT_SLEEP is off",
          "[ucg][wait][fork]")
{
    struct Case {
        int hosts;        // ranks pose as this many hosts
        const char *tune; // the bcast's plan
        const char *setting;
        bool sleeps;
    };
    // Over the host's mm_bcast ring the wait must poll: the ring raises
    // no event.
    for (const Case &k : {Case{2, "bcast:0-inf:linear", "8", true},
                          Case{2, "bcast:0-inf:linear", "off", false},
                          Case{1, "bcast:0-inf:shm", "8", false}}) {
        INFO(k.hosts << " hosts, " << k.tune
                     << ", UCG_WAIT_SLEEP=" << k.setting);
        const ucg::test::ScopedEnv env("UCG_WAIT_SLEEP", k.setting);
        REQUIRE(on_first_cpus(1, [&k](const std::vector<int> &) {
            // Two ranks on one CPU.
            ucg::test::run_ranks(
                2, k.hosts,
                [&k](ucg_group_h g, int rank) {
                    UCG_CHECK(g->oversubscribed &&
                              g->far[1 - rank] == (k.hosts == 2));
                    late_bcast(g, rank, 0x3c);
                    if (rank == 0) {
                        UCG_CHECK((g->ctx->wait_sleeps != 0) == k.sleeps);
                    }
                },
                60, k.tune);
        }));
    }
}

TEST_CASE("a wait whose core another process takes finds the core shared",
          "[ucg][wait][fork]")
{
    // Two ranks on two CPUs (a core each: not oversubscribed); a process
    // outside the group spins on rank 0's CPU while rank 0 waits for rank
    // 1's bcast, 300 ms late: forking the hog on a loaded machine (ASan,
    // tests side by side) took up the 50 ms the other tests wait.
    const bool ran = on_first_cpus(2, [](const std::vector<int> &cpus) {
        ucg::test::run_ranks(
            2, 1,
            [&cpus](ucg_group_h g, int rank) {
                UCG_CHECK(!g->oversubscribed);
                cpu_set_t mine;
                CPU_ZERO(&mine);
                CPU_SET(cpus[static_cast<std::size_t>(rank)], &mine);
                UCG_CHECK(sched_setaffinity(0, sizeof(mine), &mine) == 0);
                pid_t hog = -1;
                if (rank == 0) {
                    // The hog says it runs before rank 0 waits.
                    int ready[2];
                    UCG_CHECK(pipe(ready) == 0);
                    hog = fork();
                    if (hog == 0) {
                        const char one = 1;
                        if (write(ready[1], &one, 1) != 1) {
                            _exit(1);
                        }
                        for (;;) {
                            asm volatile("" ::: "memory");
                        }
                    }
                    UCG_CHECK(hog > 0);
                    char got = 0;
                    UCG_CHECK(read(ready[0], &got, 1) == 1);
                    close(ready[0]);
                    close(ready[1]);
                }
                late_bcast(g, rank, 0x5a, 300000);
                if (rank == 0) {
                    kill(hog, SIGKILL);
                    waitpid(hog, nullptr, 0);
                    UCG_CHECK(g->ctx->core_share.shared());
                }
            },
            60, "bcast:0-inf:linear");
    });
    if (!ran) {
        WARN("needs two CPUs");
    }
}

TEST_CASE("UCG_WAIT_SLEEP is a count of polls or off and anything else "
          "keeps the default",
          "[ucg][wait]")
{
    struct Case {
        const char *text;
        unsigned polls;
    };
    for (const Case &k : {Case{nullptr, ucg::rt::kWaitSleepAfter},
                          Case{"16", 16}, Case{"off", 0}, Case{"OFF", 0},
                          Case{"0", 0}, Case{"-3", ucg::rt::kWaitSleepAfter},
                          Case{"12x", ucg::rt::kWaitSleepAfter},
                          Case{"2000000", ucg::rt::kWaitSleepAfter}}) {
        INFO("UCG_WAIT_SLEEP=" << (k.text != nullptr ? k.text : "(unset)"));
        const ucg::test::ScopedEnv env("UCG_WAIT_SLEEP", k.text);
        ucg_context_h ctx = nullptr;
        REQUIRE(ucg_context_create(nullptr, &ctx) == UCS_OK);
        CHECK(ctx->sleep_after == k.polls);
        CHECK(ctx->efd >= 0); // our own context asks for UCP's wakeup
        ucg_context_destroy(ctx);
    }
}

TEST_CASE("members whose own machines differ in oversubscription select "
          "alike: from whether any machine is",
          "[ucg][wait][fork]")
{
    // As on a cluster where only rank 0's machine has fewer cores than
    // ranks: each member's own flag differs, the group's does not. The
    // barrier of 4 ranks on 2 hosts is recursive doubling for ranks with
    // cores of their own and released from rank 0 for ranks that take
    // turns: members that read their own flag would run two plans whose
    // messages never match (a 5-rank scan once did, on the emulated
    // cluster's uneven hosts).
    char dir[] = "/tmp/ucg_test_alike_XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    ucg::test::run_ranks(4, 2, [&dir](ucg_group_h g, int rank) {
        g->oversubscribed = rank == 0;
        ucg_coll_args_t a{};
        a.coll = UCG_COLL_BARRIER;
        ucg_coll_h h = nullptr;
        UCG_CHECK(ucg_collective_init(g, &a, &h) == UCS_OK);
        if (h != nullptr) {
            std::ofstream(std::string(dir) + "/" + std::to_string(rank))
                << h->plan_name;
            ucg_collective_free(h);
        }
    });
    std::vector<std::string> names;
    for (int r = 0; r < 4; ++r) {
        const std::string path = std::string(dir) + "/" + std::to_string(r);
        std::ifstream in(path);
        names.emplace_back(std::istreambuf_iterator<char>(in),
                           std::istreambuf_iterator<char>());
        std::remove(path.c_str());
    }
    rmdir(dir);
    INFO(names[0] << " | " << names[1]);
    CHECK(!names[0].empty());
    CHECK(std::count(names.begin(), names.end(), names[0]) == 4);
}
