// SPDX-License-Identifier: BSD-3-Clause
// Sleeping mutex shared by processes, on one futex word.
//
// The idea (Drepper's "Futexes are tricky" mutex, with the owner's pid in
// the word instead of a "locked" state):
//  - Free: claim with one CAS, keeping the waiters and inconsistent bits.
//  - Busy: spin briefly, then set the waiters bit and FUTEX_WAIT on the
//    word. A waiter that slept claims with the waiters bit set, since
//    others may still sleep; release clears owner and waiters and wakes one
//    sleeper when the bit was set.
//  - The sleeps time out (1 ms, doubling to 64 ms), and a waiter that sees
//    the same holder for kCheckPeriodNs checks it with kill(pid, 0): a dead
//    holder's pid is cleared and the inconsistent bit set, in one CAS. A
//    sleeper that died after its wake-up costs the others one timeout.
// Why not a robust pthread mutex: its robust list costs 1.5-3x a plain
// pthread mutex under contention here, and it goes ENOTRECOVERABLE when
// released unrepaired; this word gives both kinds one behaviour.
#include "mutex_lock.h"
#include "process.h"

#include <cerrno>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ucs_lock::mutex {
namespace {

constexpr int kSpins = 16;
constexpr std::uint64_t kFirstSleepNs = 1000000;
constexpr std::uint64_t kMaxSleepNs = 64000000;
constexpr std::uint64_t kCheckPeriodNs = 1000000;
constexpr std::uint64_t kDeepCheckAfterNs = 10000000;
constexpr unsigned kTryChecksEvery = 64;

// The word is shared between processes: no FUTEX_PRIVATE_FLAG.
void futex_wait(MutexLayout *lock, std::uint32_t expected,
                std::uint64_t timeout_ns)
{
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(timeout_ns / 1000000000u);
    ts.tv_nsec = static_cast<long>(timeout_ns % 1000000000u);
    syscall(SYS_futex, reinterpret_cast<std::uint32_t *>(&lock->word),
            FUTEX_WAIT, expected, &ts, nullptr, 0);
}

// Frees the lock of a dead holder, marked inconsistent; the waiters bit
// stays, so the next release still wakes the sleepers.
void recover_from_dead_holder(MutexLayout *lock, std::uint32_t w,
                              const char *func)
{
    const auto pid = static_cast<int>(owner(w));
    if (lock->word.compare_exchange_strong(w, (w & ~kOwnerMask) | kInconsistent,
                                           std::memory_order_acq_rel,
                                           std::memory_order_relaxed)) {
        log_line(func, lock,
                 "holder pid %d died holding the lock; recovered, state "
                 "marked inconsistent",
                 pid);
    }
}

} // namespace

ucs_status_t acquire_slow(MutexLayout *lock) noexcept
{
    std::uint32_t w = lock->word.load(std::memory_order_relaxed);
    if (held_by_caller(lock, w)) {
        log_line("ucs_lock_acquire", lock,
                 "the calling thread already holds this lock (deadlock)");
        return UCS_ERR_BUSY;
    }
    for (int i = 0; i < kSpins; ++i) {
        cpu_relax();
        w = lock->word.load(std::memory_order_relaxed);
        if (try_claim(lock, w, 0)) {
            return on_claimed(lock, w);
        }
    }
    std::uint64_t sleep_ns = kFirstSleepNs;
    std::uint32_t seen_owner = 0;
    std::uint64_t since_ns = 0, checked_ns = 0;
    for (;;) {
        w = lock->word.load(std::memory_order_relaxed);
        if (owner(w) == 0) {
            if (try_claim(lock, w, kWaiters)) {
                return on_claimed(lock, w);
            }
            continue;
        }
        if (!(w & kWaiters)) {
            if (!lock->word.compare_exchange_weak(w, w | kWaiters,
                                                  std::memory_order_relaxed)) {
                continue;
            }
            w |= kWaiters;
        }
        futex_wait(lock, w, sleep_ns);
        const std::uint64_t now = now_ns();
        if (owner(w) != seen_owner) { // a new holder: reset the watch
            seen_owner = owner(w);
            since_ns = checked_ns = now;
            sleep_ns = kFirstSleepNs;
            continue;
        }
        sleep_ns = sleep_ns * 2 > kMaxSleepNs ? kMaxSleepNs : sleep_ns * 2;
        if (now - checked_ns >= kCheckPeriodNs) {
            checked_ns = now;
            const std::uint32_t cur =
                lock->word.load(std::memory_order_relaxed);
            if (owner(cur) == seen_owner &&
                process_dead(static_cast<pid_t>(seen_owner),
                             now - since_ns >= kDeepCheckAfterNs)) {
                recover_from_dead_holder(lock, cur, "ucs_lock_acquire");
            }
        }
    }
}

ucs_status_t init(MutexLayout *lock) noexcept
{
    lock->word.store(0, std::memory_order_relaxed);
    lock->owner_token.store(0, std::memory_order_relaxed);
    return UCS_OK;
}

ucs_status_t destroy(MutexLayout *lock) noexcept
{
    const std::uint32_t w = lock->word.load(std::memory_order_acquire);
    if (owner(w) != 0) {
        log_line("ucs_lock_destroy", lock,
                 "lock is held (pid %u); not destroyed (a dead holder's lock: "
                 "acquire it first)",
                 owner(w));
        return UCS_ERR_BUSY;
    }
    return retire(&lock->header, lock);
}

ucs_status_t try_acquire(MutexLayout *lock) noexcept
{
    static thread_local unsigned busy_tries = 0;
    std::uint32_t w = lock->word.load(std::memory_order_relaxed);
    for (;;) {
        if (owner(w) == 0) {
            if (try_claim(lock, w, 0)) {
                return on_claimed(lock, w);
            }
            continue;
        }
        // A poller must notice a dead holder too, but not pay a syscall on
        // every busy try.
        if (++busy_tries % kTryChecksEvery != 0 ||
            !process_dead(static_cast<pid_t>(owner(w)),
                          busy_tries % (16 * kTryChecksEvery) == 0)) {
            return UCS_ERR_BUSY;
        }
        recover_from_dead_holder(lock, w, "ucs_lock_try_acquire");
        w = lock->word.load(std::memory_order_relaxed);
    }
}

ucs_status_t refuse_release(MutexLayout *lock) noexcept
{
    log_line("ucs_lock_release", lock,
             "the calling thread does not hold this lock (holder pid %u); "
             "not released",
             owner(lock->word.load(std::memory_order_relaxed)));
    return UCS_ERR_INVALID_PARAM;
}

void futex_wake_one(MutexLayout *lock) noexcept
{
    syscall(SYS_futex, reinterpret_cast<std::uint32_t *>(&lock->word),
            FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

ucs_status_t mark_consistent(MutexLayout *lock) noexcept
{
    const std::uint32_t w = lock->word.load(std::memory_order_relaxed);
    if (!held_by_caller(lock, w)) {
        log_line("ucs_lock_mark_consistent", lock,
                 "the calling thread does not hold this lock (holder pid "
                 "%u)",
                 owner(w));
        return UCS_ERR_INVALID_PARAM;
    }
    lock->word.fetch_and(~kInconsistent, std::memory_order_relaxed);
    return UCS_OK;
}

} // namespace ucs_lock::mutex
