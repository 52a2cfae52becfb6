// SPDX-License-Identifier: BSD-3-Clause
// Liveness: self alive, a killed (even unreaped) child dead.
#include "uct_mm_common/liveness.h"

#include <catch2/catch.hpp>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

using namespace uct_mm_common;

TEST_CASE("liveness sees self alive and a killed child dead", "[mm][fork]")
{
    CHECK(process_alive(self_process_id()));
    const pid_t child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    ProcessId id{};
    id.pid = child;
    id.start_time = process_start_time(child);
    CHECK(id.start_time != 0);
    CHECK(process_alive(id));
    kill(child, SIGKILL);
    // A zombie (not yet reaped) must already count as dead.
    for (int i = 0; i < 1000 && process_alive(id); ++i) {
        usleep(1000);
    }
    CHECK(!process_alive(id));
    waitpid(child, nullptr, 0);
    CHECK(!process_alive(id));
    ProcessId reused = id;
    reused.pid = getpid(); // same pid number, other start time: not the same
    reused.start_time = id.start_time + 1;
    CHECK(!process_alive(reused));
}
