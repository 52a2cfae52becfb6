// SPDX-License-Identifier: BSD-3-Clause
// Ranks as forked processes, with a watchdog: every rank runs `body(rank)`
// in its own child; a rank that throws, exits non-zero, dies by a signal or
// outlives the deadline fails the run, and the parent reports each failure
// with the rank and the reason. Children that remain at the deadline, or a
// grace period after a rank failed, are killed.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace ucg_test {

struct ForkOptions {
    // NOLINTNEXTLINE(google-explicit-constructor): ForkOptions{4} reads well
    ForkOptions(int ranks = 2) : num_ranks(ranks) {}
    ForkOptions(int ranks, std::chrono::milliseconds limit)
        : num_ranks(ranks), timeout(limit)
    {
    }

    int num_ranks;
    std::chrono::milliseconds timeout{20000}; ///< whole run, all ranks
    /// After a rank fails, how long the others may go on (to report their
    /// own failures) before they are killed: a peer of a failed rank
    /// usually waits for it forever, and the run has failed already.
    std::chrono::milliseconds grace{1000};
    /// Ranks expected to die (e.g. killed on purpose by the test): their
    /// death by SIGKILL is not a failure.
    std::vector<int> may_be_killed;
};

struct RankOutcome {
    int rank = -1;
    bool ok = false;
    std::string reason; ///< empty when ok
};

struct ForkResult {
    bool ok = false;        ///< every rank succeeded
    bool timed_out = false; ///< the watchdog fired
    std::vector<RankOutcome> ranks;
    /// One line per failed rank: "rank 2: exit status 1: <message>".
    std::string summary() const;
};

/// Runs `body` in `opts.num_ranks` forked children and waits for them all.
/// The body returns normally for success; it may throw (UCG_CHECK) or call
/// _exit with a non-zero status for failure.
ForkResult run_fork_ranks(const ForkOptions &opts,
                          const std::function<void(int rank)> &body);

/// Pid of another rank of the run in progress (for tests that kill one);
/// callable only inside a body. Waits until that rank has started.
int fork_rank_pid(int rank);

/// Forks one child that runs `body(ready)` then exits 0 (1 if it throws);
/// returns its pid once the child has called `ready()` (or has exited), so a
/// test can have the child reach a point before it goes on. The caller
/// reaps the child (waitpid).
int fork_until_ready(
    const std::function<void(const std::function<void()> &ready)> &body);

} // namespace ucg_test
