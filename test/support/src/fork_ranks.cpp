// SPDX-License-Identifier: BSD-3-Clause
// Forked ranks with a watchdog; failures are reported through a shared page.
#include "ucg_test/fork_ranks.h"
#include "ucg_test/check.h"
#include "ucg_test/thread_ranks.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <sched.h>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ucg_test {
namespace {

constexpr std::size_t kMessageBytes = 480;

struct RankRecord {
    std::atomic<int> pid;        // written by the parent and the child
    char message[kMessageBytes]; // written by the child before it exits
};

RankRecord *g_records = nullptr; // the run in progress (children only)
int g_num_ranks = 0;

[[noreturn]] void run_child(int rank, const std::function<void(int)> &body)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL); // never outlive the test process
    // The test framework's handlers would report a termination request as
    // a failed test in the child's own output; the parent reports it.
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    g_records[rank].pid.store(getpid());
    const char *reason = nullptr;
    std::string what;
    try {
        body(rank);
    } catch (const std::exception &e) {
        what = e.what();
        reason = what.c_str();
    } catch (...) {
        reason = "unknown exception";
    }
    if (reason != nullptr) {
        std::strncpy(g_records[rank].message, reason, kMessageBytes - 1);
        _exit(1);
    }
    _exit(0);
}

std::string describe(int status, const char *message)
{
    std::string reason;
    if (WIFEXITED(status)) {
        reason = "exit status " + std::to_string(WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
        // sigabbrev_np is thread-safe, unlike strsignal.
        const char *abbrev = sigabbrev_np(WTERMSIG(status));
        reason = std::string("killed by signal ") +
                 std::to_string(WTERMSIG(status)) + " (SIG" +
                 (abbrev != nullptr ? abbrev : "?") + ")";
    }
    if (message[0] != '\0') {
        reason += ": ";
        reason += message;
    }
    return reason;
}

} // namespace

int fork_rank_pid(int rank)
{
    if (g_records == nullptr || rank < 0 || rank >= g_num_ranks) {
        return -1;
    }
    int pid;
    while ((pid = g_records[rank].pid.load()) == 0) {
        sched_yield();
    }
    return pid;
}

std::string ForkResult::summary() const
{
    std::string out;
    for (const auto &r : ranks) {
        if (!r.ok) {
            out += "rank " + std::to_string(r.rank) + ": " + r.reason + "\n";
        }
    }
    if (timed_out) {
        out += "watchdog: the run exceeded its timeout\n";
    }
    return out;
}

ForkResult run_fork_ranks(const ForkOptions &opts,
                          const std::function<void(int rank)> &body)
{
    const int n = opts.num_ranks;
    SharedMapping shared(sizeof(RankRecord) * static_cast<std::size_t>(n));
    auto *records = shared.as<RankRecord>();
    for (int r = 0; r < n; ++r) {
        new (&records[r]) RankRecord{};
    }
    g_records = records;
    g_num_ranks = n;

    std::vector<pid_t> pids(static_cast<std::size_t>(n), -1);
    ForkResult result;
    result.ranks.resize(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
        result.ranks[r].rank = r;
        pid_t pid = fork();
        if (pid == 0) {
            run_child(r, body);
        }
        if (pid < 0) {
            result.ranks[r].reason = "fork failed";
            continue;
        }
        pids[r] = pid;
        records[r].pid.store(pid);
    }

    const auto deadline = std::chrono::steady_clock::now() + opts.timeout;
    int running = static_cast<int>(
        std::count_if(pids.begin(), pids.end(), [](pid_t p) { return p > 0; }));
    int first_failed = -1; // the first rank that failed, if any
    auto stop_at = deadline;
    while (running > 0) {
        int status = 0;
        pid_t done = waitpid(-1, &status, WNOHANG);
        if (done > 0) {
            auto it = std::find(pids.begin(), pids.end(), done);
            if (it == pids.end()) {
                continue;
            }
            const int r = static_cast<int>(it - pids.begin());
            *it = -1;
            --running;
            const bool expected_kill =
                WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
                std::find(opts.may_be_killed.begin(), opts.may_be_killed.end(),
                          r) != opts.may_be_killed.end();
            result.ranks[r].ok =
                (WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
                expected_kill;
            if (!result.ranks[r].ok) {
                result.ranks[r].reason = describe(status, records[r].message);
                if (first_failed < 0) {
                    first_failed = r;
                    stop_at =
                        std::min(deadline,
                                 std::chrono::steady_clock::now() + opts.grace);
                }
            }
            continue;
        }
        if (std::chrono::steady_clock::now() > stop_at) {
            result.timed_out = stop_at == deadline;
            const std::string why =
                result.timed_out
                    ? std::string("still running at the deadline")
                    : "killed " + std::to_string(opts.grace.count()) +
                          " ms after rank " + std::to_string(first_failed) +
                          " failed";
            for (int r = 0; r < n; ++r) {
                if (pids[r] > 0) {
                    kill(pids[r], SIGKILL);
                    waitpid(pids[r], &status, 0);
                    result.ranks[r].reason = why;
                }
            }
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    g_records = nullptr;
    g_num_ranks = 0;
    result.ok = !result.timed_out &&
                std::all_of(result.ranks.begin(), result.ranks.end(),
                            [](const RankOutcome &o) { return o.ok; });
    return result;
}

int fork_until_ready(
    const std::function<void(const std::function<void()> &ready)> &body)
{
    int fds[2];
    if (pipe(fds) != 0) {
        throw std::runtime_error("fork_until_ready: pipe failed");
    }
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        throw std::runtime_error("fork_until_ready: fork failed");
    }
    if (pid == 0) {
        close(fds[0]);
        int status = 0;
        try {
            body([fd = fds[1]] {
                const char c = 1;
                if (write(fd, &c, 1) != 1) {
                    _exit(1);
                }
            });
        } catch (...) {
            status = 1;
        }
        _exit(status);
    }
    close(fds[1]);
    char c;
    while (read(fds[0], &c, 1) < 0 && errno == EINTR) {
    }
    close(fds[0]);
    return pid;
}

} // namespace ucg_test
