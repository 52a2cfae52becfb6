// SPDX-License-Identifier: BSD-3-Clause
// ucs_lock with ranks as forked processes: mutual exclusion on 8 processes,
// recovery from a holder killed in its critical section, a dead queued
// waiter, a dead holder seen by try_acquire, and ownership per process.
#include "lock_test_util.h"
#include "ucg_test/check.h"
#include "ucg_test/fork_ranks.h"
#include "ucg_test/thread_ranks.h"

#include <catch2/catch.hpp>
#include <csignal>
#include <new>
#include <sched.h>
#include <unistd.h>

using namespace ucg_test;
using namespace ucs_lock_test;

namespace {

struct Shared {
    ucs_lock_t lock;
    std::atomic<int> inside{0};
    std::atomic<int> phase{0};
    long counter = 0; // plain: only the lock protects it
    int half_a = 0;   // a two-field update the killed holder leaves half done
    int half_b = 0;
};

class SharedLock {
  public:
    explicit SharedLock(ucs_lock_kind_t kind)
        : mem_(sizeof(Shared)), shared_(new (mem_.data()) Shared{})
    {
        REQUIRE(ucs_lock_init(&shared_->lock, kind) == UCS_OK);
    }
    Shared *get() const { return shared_; }

  private:
    SharedMapping mem_;
    Shared *shared_;
};

std::string run(const ForkOptions &opts, const std::function<void(int)> &body)
{
    ForkResult result = run_fork_ranks(opts, body);
    return result.ok ? std::string() : result.summary();
}

} // namespace

TEST_CASE("8 processes hammering a plain counter lose no update",
          "[lock][fork]")
{
    const auto kind = GENERATE(UCS_LOCK_KIND_MUTEX, UCS_LOCK_KIND_SPIN);
    CAPTURE(kind_name(kind));
    constexpr int kRanks = 8;
    constexpr int kIters = 5000;
    SharedLock s(kind);
    Shared *sh = s.get();
    // The parent takes the lock first, so its pid is cached when it forks:
    // each child must still own the lock as itself.
    REQUIRE(ucs_lock_acquire(&sh->lock) == UCS_OK);
    REQUIRE(ucs_lock_release(&sh->lock) == UCS_OK);
    ForkOptions opts;
    opts.num_ranks = kRanks;
    // 8 processes taking turns on 2 cores, each yielding inside the lock
    // now and then: the spin kind took 20 s for 30,000 of the 40,000
    // turns beside two builds and ctest -j2. The bound catches a hang,
    // not slowness (ctest gives the case 60 s, both kinds).
    opts.timeout = std::chrono::seconds(50);
    CHECK(run(opts, [&](int) {
              for (int i = 0; i < kIters; ++i) {
                  UCG_CHECK_EQ(ucs_lock_acquire(&sh->lock), UCS_OK);
                  UCG_CHECK_EQ(sh->inside.fetch_add(1), 0);
                  const long value = sh->counter;
                  if (i % 64 == 0) {
                      sched_yield();
                  }
                  sh->counter = value + 1;
                  sh->inside.fetch_sub(1);
                  UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_OK);
              }
          }) == "");
    CHECK(sh->counter == long{kRanks} * kIters);
    CHECK(ucs_lock_destroy(&sh->lock) == UCS_OK);
}

TEST_CASE("a holder killed in its critical section: the next process gets "
          "the lock, inconsistent until marked",
          "[lock][fork]")
{
    const auto kind = GENERATE(UCS_LOCK_KIND_MUTEX, UCS_LOCK_KIND_SPIN);
    CAPTURE(kind_name(kind));
    SharedLock s(kind);
    Shared *sh = s.get();
    ForkOptions opts;
    opts.num_ranks = 2;
    opts.may_be_killed = {0};
    StderrCapture capture; // the recovery logs a line; keep the output clean
    const std::string failures = run(opts, [&](int rank) {
        if (rank == 0) {
            UCG_CHECK_EQ(ucs_lock_acquire(&sh->lock), UCS_OK);
            sh->half_a = 1; // half of the update...
            sh->phase.store(1);
            for (;;) {
                pause(); // ...and killed here
            }
        }
        wait_for(sh->phase, 1);
        UCG_CHECK(kill(fork_rank_pid(0), SIGKILL) == 0);
        UCG_CHECK_EQ(ucs_lock_acquire(&sh->lock), UCS_LOCK_ERR_OWNER_DEAD);
        UCG_CHECK(sh->half_a == 1 && sh->half_b == 0);
        sh->half_b = 1; // repaired, but not marked: stays inconsistent
        UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_OK);
        UCG_CHECK_EQ(ucs_lock_acquire(&sh->lock), UCS_LOCK_ERR_OWNER_DEAD);
        UCG_CHECK_EQ(ucs_lock_mark_consistent(&sh->lock), UCS_OK);
        UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_OK);
        UCG_CHECK_EQ(ucs_lock_acquire(&sh->lock), UCS_OK);
        UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_OK);
    });
    const std::string log = capture.finish();
    CHECK(failures == "");
    CHECK_THAT(log, Catch::Contains("died holding the lock"));
    // Another process (this one) uses it normally afterwards.
    CHECK(ucs_lock_acquire(&sh->lock) == UCS_OK);
    CHECK(ucs_lock_try_acquire(&sh->lock) == UCS_ERR_BUSY);
    CHECK(ucs_lock_release(&sh->lock) == UCS_OK);
    CHECK(ucs_lock_destroy(&sh->lock) == UCS_OK);
}

TEST_CASE("waiters already asleep or queued recover from a holder killed "
          "later",
          "[lock][fork]")
{
    const auto kind = GENERATE(UCS_LOCK_KIND_MUTEX, UCS_LOCK_KIND_SPIN);
    CAPTURE(kind_name(kind));
    constexpr int kWaiters = 3;
    SharedLock s(kind);
    Shared *sh = s.get();
    ForkOptions opts;
    opts.num_ranks = 2 + kWaiters;
    opts.may_be_killed = {0};
    opts.timeout = std::chrono::milliseconds(5000);
    std::atomic<int> *dead_seen = &sh->inside; // waiters told "inconsistent"
    StderrCapture capture;
    const std::string failures = run(opts, [&](int rank) {
        if (rank == 0) {
            UCG_CHECK_EQ(ucs_lock_acquire(&sh->lock), UCS_OK);
            sh->phase.store(1);
            for (;;) {
                pause();
            }
        }
        wait_for(sh->phase, 1);
        if (rank == 1) { // kills the holder once the others wait (asleep)
            sleep_ms(40);
            UCG_CHECK(kill(fork_rank_pid(0), SIGKILL) == 0);
            return;
        }
        // Exactly one waiter is told; it repairs and marks the lock.
        const ucs_status_t status = ucs_lock_acquire(&sh->lock);
        UCG_CHECK(status == UCS_OK || status == UCS_LOCK_ERR_OWNER_DEAD);
        if (status == UCS_LOCK_ERR_OWNER_DEAD) {
            dead_seen->fetch_add(1);
            UCG_CHECK_EQ(ucs_lock_mark_consistent(&sh->lock), UCS_OK);
        }
        UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_OK);
    });
    capture.finish();
    CHECK(failures == "");
    CHECK(dead_seen->load() == 1);
    CHECK(ucs_lock_destroy(&sh->lock) == UCS_OK);
}

TEST_CASE("a waiter killed while queued does not block the lock",
          "[lock][fork]")
{
    const auto kind = GENERATE(UCS_LOCK_KIND_MUTEX, UCS_LOCK_KIND_SPIN);
    CAPTURE(kind_name(kind));
    SharedLock s(kind);
    Shared *sh = s.get();
    ForkOptions opts;
    opts.num_ranks = 3;
    opts.may_be_killed = {1};
    opts.timeout = std::chrono::milliseconds(5000);
    CHECK(run(opts, [&](int rank) {
              if (rank == 0) { // holds until the waiter is dead
                  UCG_CHECK_EQ(ucs_lock_acquire(&sh->lock), UCS_OK);
                  sh->phase.store(1);
                  wait_for(sh->phase, 3);
                  UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_OK);
              } else if (rank == 1) { // waits long enough to queue; killed
                  wait_for(sh->phase, 1);
                  sh->phase.store(2);
                  ucs_lock_acquire(&sh->lock);
                  UCG_CHECK(false); // killed before the lock is free
              } else {              // queues behind the waiter, kills it
                  wait_for(sh->phase, 2);
                  sleep_ms(30);
                  UCG_CHECK(kill(fork_rank_pid(1), SIGKILL) == 0);
                  sh->phase.store(3);
                  // The dead waiter never held the lock: consistent.
                  UCG_CHECK_EQ(ucs_lock_acquire(&sh->lock), UCS_OK);
                  UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_OK);
              }
          }) == "");
    CHECK(ucs_lock_destroy(&sh->lock) == UCS_OK);
}

TEST_CASE("try_acquire notices a holder that exited without releasing",
          "[lock][fork]")
{
    const auto kind = GENERATE(UCS_LOCK_KIND_MUTEX, UCS_LOCK_KIND_SPIN);
    CAPTURE(kind_name(kind));
    SharedLock s(kind);
    Shared *sh = s.get();
    CHECK(run(ForkOptions(1), [&](int) {
              UCG_CHECK_EQ(ucs_lock_acquire(&sh->lock), UCS_OK);
          }) == "");
    StderrCapture capture;
    ucs_status_t status = UCS_ERR_BUSY;
    for (int i = 0; i < 10000 && status == UCS_ERR_BUSY; ++i) {
        status = ucs_lock_try_acquire(&sh->lock);
    }
    CHECK_THAT(capture.finish(), Catch::Contains("died holding the lock"));
    REQUIRE(status == UCS_LOCK_ERR_OWNER_DEAD);
    CHECK(ucs_lock_mark_consistent(&sh->lock) == UCS_OK);
    CHECK(ucs_lock_release(&sh->lock) == UCS_OK);
    CHECK(ucs_lock_try_acquire(&sh->lock) == UCS_OK);
    CHECK(ucs_lock_release(&sh->lock) == UCS_OK);
    CHECK(ucs_lock_destroy(&sh->lock) == UCS_OK);
}

TEST_CASE("another process cannot release the lock, try_acquire is busy "
          "while it is held and succeeds once it is free",
          "[lock][fork]")
{
    const auto kind = GENERATE(UCS_LOCK_KIND_MUTEX, UCS_LOCK_KIND_SPIN);
    CAPTURE(kind_name(kind));
    SharedLock s(kind);
    Shared *sh = s.get();
    StderrCapture capture;
    const std::string failures = run(ForkOptions(2), [&](int rank) {
        if (rank == 0) {
            UCG_CHECK_EQ(ucs_lock_acquire(&sh->lock), UCS_OK);
            sh->phase.store(1);
            wait_for(sh->phase, 2);
            UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_OK);
            sh->phase.store(3);
        } else {
            wait_for(sh->phase, 1);
            UCG_CHECK_EQ(ucs_lock_try_acquire(&sh->lock), UCS_ERR_BUSY);
            UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_ERR_INVALID_PARAM);
            UCG_CHECK_EQ(ucs_lock_mark_consistent(&sh->lock),
                         UCS_ERR_INVALID_PARAM);
            UCG_CHECK_EQ(ucs_lock_try_acquire(&sh->lock), UCS_ERR_BUSY);
            sh->phase.store(2);
            wait_for(sh->phase, 3);
            UCG_CHECK_EQ(ucs_lock_try_acquire(&sh->lock), UCS_OK);
            UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_OK);
        }
    });
    const std::string log = capture.finish();
    CHECK(failures == "");
    CHECK(count_lines(log) == 2);
    CHECK_THAT(log, Catch::Contains("does not hold"));
    CHECK(ucs_lock_destroy(&sh->lock) == UCS_OK);
}
