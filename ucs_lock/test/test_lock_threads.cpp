// SPDX-License-Identifier: BSD-3-Clause
// ucs_lock with ranks as threads of one process (run under TSan in CI):
// mutual exclusion, try-lock semantics, ownership per thread.
#include "lock_test_util.h"
#include "spin_lock.h" // the word's queue, for the FCFS test
#include "ucg_test/check.h"
#include "ucg_test/thread_ranks.h"

#include <catch2/catch.hpp>
#include <new>
#include <sched.h>

using namespace ucg_test;
using namespace ucs_lock_test;

namespace {

struct Shared {
    ucs_lock_t lock;
    std::atomic<int> inside{0}; // ranks in the critical section (relaxed:
                                // must not order anything for TSan)
    std::atomic<int> phase{0};
    long counter = 0; // plain on purpose: only the lock protects it
};

// A shared mapping holding a Shared with an initialised lock.
class SharedLock {
  public:
    explicit SharedLock(ucs_lock_kind_t kind)
        : mem_(sizeof(Shared)), shared_(new (mem_.data()) Shared{})
    {
        REQUIRE(ucs_lock_init(&shared_->lock, kind) == UCS_OK);
    }
    ~SharedLock() { CHECK(ucs_lock_destroy(&shared_->lock) == UCS_OK); }
    Shared *get() const { return shared_; }
    Shared *operator->() const { return shared_; }

  private:
    SharedMapping mem_;
    Shared *shared_;
};

// The increment is a read, sometimes a yield, and a write, so an unlocked
// or broken lock loses updates (and TSan reports the race).
void locked_increments(Shared *s, int iters)
{
    for (int i = 0; i < iters; ++i) {
        UCG_CHECK_EQ(ucs_lock_acquire(&s->lock), UCS_OK);
        UCG_CHECK_EQ(s->inside.fetch_add(1, std::memory_order_relaxed), 0);
        const long value = s->counter;
        if (i % 64 == 0) {
            sched_yield(); // preempted holder: waiters must not spin forever
        }
        s->counter = value + 1;
        s->inside.fetch_sub(1, std::memory_order_relaxed);
        UCG_CHECK_EQ(ucs_lock_release(&s->lock), UCS_OK);
    }
}

} // namespace

TEST_CASE("threads hammering a plain counter lose no update", "[lock][threads]")
{
    const auto kind = GENERATE(UCS_LOCK_KIND_MUTEX, UCS_LOCK_KIND_SPIN);
    CAPTURE(kind_name(kind));
    constexpr int kRanks = 8;
    constexpr int kIters = 4000;
    SharedLock s(kind);
    run_thread_ranks(kRanks, [&](int) { locked_increments(s.get(), kIters); });
    CHECK(s->counter == long{kRanks} * kIters);
}

TEST_CASE("try_acquire is busy while another thread holds the lock and "
          "succeeds once it is free",
          "[lock][threads]")
{
    const auto kind = GENERATE(UCS_LOCK_KIND_MUTEX, UCS_LOCK_KIND_SPIN);
    CAPTURE(kind_name(kind));
    SharedLock s(kind);
    Shared *sh = s.get();
    run_thread_ranks(2, [&](int rank) {
        if (rank == 0) {
            UCG_CHECK_EQ(ucs_lock_acquire(&sh->lock), UCS_OK);
            // The holder itself gets "busy" too, not a second hold.
            UCG_CHECK_EQ(ucs_lock_try_acquire(&sh->lock), UCS_ERR_BUSY);
            sh->phase.store(1);
            wait_for(sh->phase, 2);
            UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_OK);
            sh->phase.store(3);
        } else {
            wait_for(sh->phase, 1);
            UCG_CHECK_EQ(ucs_lock_try_acquire(&sh->lock), UCS_ERR_BUSY);
            sh->phase.store(2);
            wait_for(sh->phase, 3);
            UCG_CHECK_EQ(ucs_lock_try_acquire(&sh->lock), UCS_OK);
            UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_OK);
        }
    });
}

TEST_CASE("a thread that does not hold the lock cannot release it",
          "[lock][threads]")
{
    const auto kind = GENERATE(UCS_LOCK_KIND_MUTEX, UCS_LOCK_KIND_SPIN);
    CAPTURE(kind_name(kind));
    SharedLock s(kind);
    Shared *sh = s.get();
    StderrCapture capture;
    run_thread_ranks(2, [&](int rank) {
        if (rank == 0) {
            UCG_CHECK_EQ(ucs_lock_acquire(&sh->lock), UCS_OK);
            sh->phase.store(1);
            wait_for(sh->phase, 2);
            UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_OK);
        } else {
            wait_for(sh->phase, 1);
            UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_ERR_INVALID_PARAM);
            UCG_CHECK_EQ(ucs_lock_mark_consistent(&sh->lock),
                         UCS_ERR_INVALID_PARAM);
            // The refused release changed nothing: still held.
            UCG_CHECK_EQ(ucs_lock_try_acquire(&sh->lock), UCS_ERR_BUSY);
            sh->phase.store(2);
        }
    });
    const std::string log = capture.finish();
    CHECK(count_lines(log) == 2);
    CHECK_THAT(log, Catch::Contains("does not hold"));
}

// Tickets taken and not yet served in a spin lock's word (layout.h).
int queued(const ucs_lock_t *lock)
{
    const auto *l = reinterpret_cast<const ucs_lock::SpinLayout *>(lock);
    const std::uint64_t w = l->word.load();
    return static_cast<std::uint16_t>(ucs_lock::spin::next_ticket(w) -
                                      ucs_lock::spin::serving(w));
}

TEST_CASE("spin waiters that waited long get the lock first come, first "
          "served",
          "[lock][threads]")
{
    constexpr int kWaiters = 4;
    SharedLock s(UCS_LOCK_KIND_SPIN);
    Shared *sh = s.get();
    std::atomic<int> order[kWaiters] = {};
    std::atomic<int> served{0};
    run_thread_ranks(1 + kWaiters, [&](int rank) {
        if (rank == 0) { // holds while the waiters queue, one after another
            UCG_CHECK_EQ(ucs_lock_acquire(&sh->lock), UCS_OK);
            for (int w = 1; w <= kWaiters; ++w) {
                sh->phase.store(w);
                // Waiter w took its ticket (after 5 ms of waiting); 60 s
                // bound the wait for a lock that never queues.
                for (int ms = 0; queued(&sh->lock) < w; ++ms) {
                    if (ms == 60000) { // let the waiters finish, then fail
                        sh->phase.store(kWaiters);
                        UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_OK);
                        UCG_CHECK(queued(&sh->lock) >= w);
                    }
                    sleep_ms(1);
                }
            }
            UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_OK);
            return;
        }
        wait_for(sh->phase, rank);
        UCG_CHECK_EQ(ucs_lock_acquire(&sh->lock), UCS_OK);
        order[served.fetch_add(1)].store(rank);
        UCG_CHECK_EQ(ucs_lock_release(&sh->lock), UCS_OK);
    });
    for (int i = 0; i < kWaiters; ++i) {
        CHECK(order[i].load() == i + 1);
    }
}
