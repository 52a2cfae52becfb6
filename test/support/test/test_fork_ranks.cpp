// SPDX-License-Identifier: BSD-3-Clause
#include "ucg_test/check.h"
#include "ucg_test/fork_ranks.h"
#include "ucg_test/shm_names.h"
#include "ucg_test/thread_ranks.h"

#include <catch2/catch.hpp>
#include <csignal>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace ucg_test;

TEST_CASE("fork ranks all succeed", "[support][fork]")
{
    SharedMapping seen(sizeof(int) * 4);
    auto result =
        run_fork_ranks({4}, [&](int rank) { seen.as<int>()[rank] = rank + 1; });
    REQUIRE(result.ok);
    for (int r = 0; r < 4; ++r) {
        CHECK(seen.as<int>()[r] == r + 1);
    }
}

TEST_CASE("fork ranks report a failed check with rank and reason",
          "[support][fork]")
{
    auto result = run_fork_ranks({3}, [](int rank) { UCG_CHECK(rank != 1); });
    REQUIRE_FALSE(result.ok);
    CHECK(result.ranks[0].ok);
    CHECK_FALSE(result.ranks[1].ok);
    CHECK(result.ranks[2].ok);
    CHECK_THAT(result.summary(),
               Catch::Contains("rank 1: exit status 1") &&
                   Catch::Contains("check failed: rank != 1"));
}

TEST_CASE("fork ranks report death by signal", "[support][fork]")
{
    auto result = run_fork_ranks({2}, [](int rank) {
        if (rank == 0) {
            raise(SIGTERM); // not SIGSEGV: ASan would turn it into an exit
        }
    });
    REQUIRE_FALSE(result.ok);
    CHECK_THAT(result.ranks[0].reason, Catch::Contains("signal 15 (SIGTERM)"));
}

TEST_CASE("fork watchdog kills a hanging rank", "[support][fork]")
{
    ForkOptions opts;
    opts.num_ranks = 2;
    opts.timeout = std::chrono::milliseconds(300);
    auto result = run_fork_ranks(opts, [](int rank) {
        if (rank == 1) {
            pause();
        }
    });
    CHECK(result.timed_out);
    CHECK(result.ranks[0].ok);
    CHECK_THAT(result.ranks[1].reason, Catch::Contains("deadline"));
}

TEST_CASE("fork ranks stop the others a grace period after one fails, "
          "not at the deadline",
          "[support][fork]")
{
    ForkOptions opts;
    opts.num_ranks = 3;
    opts.timeout = std::chrono::milliseconds(20000);
    opts.grace = std::chrono::milliseconds(200);
    const auto t0 = std::chrono::steady_clock::now();
    auto result = run_fork_ranks(opts, [](int rank) {
        UCG_CHECK(rank != 1);
        pause(); // a peer waiting for the failed rank
    });
    const auto took = std::chrono::steady_clock::now() - t0;
    CHECK(took < std::chrono::seconds(10));
    CHECK_FALSE(result.ok);
    CHECK_FALSE(result.timed_out);
    CHECK_THAT(result.ranks[1].reason, Catch::Contains("check failed"));
    for (int r : {0, 2}) {
        CHECK_THAT(result.ranks[static_cast<std::size_t>(r)].reason,
                   Catch::Contains("200 ms after rank 1 failed"));
    }
}

TEST_CASE("fork ranks may kill a peer on purpose", "[support][fork]")
{
    ForkOptions opts;
    opts.num_ranks = 2;
    opts.may_be_killed = {1};
    auto result = run_fork_ranks(opts, [](int rank) {
        if (rank == 0) {
            UCG_CHECK(kill(fork_rank_pid(1), SIGKILL) == 0);
        } else {
            pause();
        }
    });
    CHECK(result.ok);
}

TEST_CASE("shm sweeper removes segments left by a dead child",
          "[support][fork]")
{
    const std::string name = unique_shm_name("sweep");
    {
        ShmSweeper sweeper(name.substr(1));
        auto result = run_fork_ranks({1}, [&](int) {
            int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
            UCG_CHECK(fd >= 0);
            _exit(3); // die without cleaning up
        });
        CHECK_FALSE(result.ok);
        CHECK(sweeper.leftovers().size() == 1);
    }
    CHECK(list_shm(name.substr(1)).empty());
}
