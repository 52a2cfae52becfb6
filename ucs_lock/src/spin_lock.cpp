// SPDX-License-Identifier: BSD-3-Clause
// Spin lock for short critical sections, shared by processes.
//
// The idea: the whole state is one 64-bit word (see layout.h), so taking,
// releasing and recovering the lock are each one atomic step on it.
//  - Free and nobody queued: claim it with one CAS (the fast path).
//  - Busy: spin a little, then sched_yield() (more ranks than cores must
//    not burn the holder's CPU), retrying the CAS ("barging").
//  - A waiter that has seen the lock taken by others kBypassLimit times
//    while it waited (or has waited kQueueAfterNs) takes a ticket: while
//    tickets are outstanding nobody may barge, and the lock goes to the
//    queued waiters in ticket order, so no waiter is bypassed forever.
//    Only barging claims count as bypasses, so the queue drains and the
//    lock goes back to barging: a pure FIFO would hand the lock to a
//    preempted waiter at every release when ranks outnumber cores.
//  - A waiter that sees the same holder (or the same unclaimed head ticket)
//    for kCheckPeriodNs checks that process with kill(pid, 0): a dead holder
//    is released with the inconsistent bit set; a dead queued waiter's
//    ticket is skipped. A live waiter whose ticket was skipped (it was too
//    slow to publish its pid) notices and takes a new ticket.
#include "spin_lock.h"
#include "process.h"

#include <cstdint>
#include <sched.h>

namespace ucs_lock::spin {
namespace {

constexpr int kSpinsBeforeYield = 64;
constexpr int kBypassLimit = 8;                       // barging -> queue
constexpr std::uint64_t kQueueAfterNs = 5000000;      // barging -> queue
constexpr std::uint64_t kCheckPeriodNs = 1000000;     // liveness checks
constexpr std::uint64_t kDeepCheckAfterNs = 10000000; // zombies too
constexpr std::uint64_t kUnknownWaiterNs = 500000000; // unpublished ticket
constexpr unsigned kTryChecksEvery = 64;              // try_acquire

// Releases the lock of a dead holder, marking it inconsistent. Fails
// harmlessly when someone else changed the word first.
void recover_from_dead_holder(SpinLayout *lock, std::uint64_t w,
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

// The waiting side of acquire: backoff, and noticing dead peers when the
// state has not moved for a while.
class Waiter {
  public:
    explicit Waiter(SpinLayout *lock) : lock_(lock) {}

    /// One step of backoff while the word reads `w`.
    void pause(std::uint64_t w)
    {
        count_bypass(w);
        if (spins_ < kSpinsBeforeYield) {
            ++spins_;
            cpu_relax();
            return;
        }
        sched_yield();
        now_ = now_ns();
        if (start_ns_ == 0) {
            start_ns_ = now_;
        }
        watch(w);
    }

    /// Bypassed often or long enough to queue.
    bool starving() const
    {
        return bypasses_ >= kBypassLimit ||
               (start_ns_ != 0 && now_ - start_ns_ >= kQueueAfterNs);
    }

  private:
    // A barging claim by someone else: a new owner, same head ticket.
    void count_bypass(std::uint64_t w)
    {
        if (owner(w) != 0 && owner(w) != last_owner_ &&
            serving(w) == last_serving_) {
            ++bypasses_;
        }
        last_owner_ = owner(w);
        last_serving_ = serving(w);
    }

    void watch(std::uint64_t w)
    {
        // Progress is a new holder or a new head ticket; arrivals are not.
        const std::uint64_t key = w & (kOwnerMask | kServingMask);
        if (key != key_) {
            key_ = key;
            since_ns_ = checked_ns_ = now_;
            return;
        }
        if (now_ - checked_ns_ < kCheckPeriodNs) {
            return;
        }
        checked_ns_ = now_;
        const bool deep = now_ - since_ns_ >= kDeepCheckAfterNs;
        if (owner(w) != 0) {
            if (process_dead(static_cast<pid_t>(owner(w)), deep)) {
                recover_from_dead_holder(lock_, w, "ucs_lock_acquire");
            }
        } else if (!queue_empty(w)) {
            skip_head_if_dead(w, deep);
        }
    }

    // The head ticket has not claimed a free lock: its waiter may be dead.
    void skip_head_if_dead(std::uint64_t w, bool deep)
    {
        const std::uint16_t head = serving(w);
        const std::uint64_t slot =
            lock_->slots[head % kSpinSlots].load(std::memory_order_relaxed);
        bool dead;
        if (static_cast<std::uint16_t>(slot >> 32) == head) {
            dead = process_dead(static_cast<pid_t>(slot & kOwnerMask), deep);
        } else {
            dead = now_ - since_ns_ >= kUnknownWaiterNs;
        }
        if (dead) {
            lock_->word.compare_exchange_strong(
                w, with_serving(w, static_cast<std::uint16_t>(head + 1)),
                std::memory_order_acq_rel, std::memory_order_relaxed);
        }
    }

    SpinLayout *lock_;
    int spins_ = 0;
    int bypasses_ = 0;
    std::uint32_t last_owner_ = 0;
    std::uint16_t last_serving_ = 0;
    std::uint64_t now_ = 0;
    std::uint64_t start_ns_ = 0;
    std::uint64_t key_ = ~0ull;
    std::uint64_t since_ns_ = 0;
    std::uint64_t checked_ns_ = 0;
};

std::uint16_t take_ticket(SpinLayout *lock)
{
    const std::uint64_t old =
        lock->word.fetch_add(kOneTicket, std::memory_order_relaxed);
    const std::uint16_t ticket = next_ticket(old);
    lock->slots[ticket % kSpinSlots].store(
        (static_cast<std::uint64_t>(ticket) << 32) | self_owner(),
        std::memory_order_relaxed);
    return ticket;
}

ucs_status_t acquire_queued(SpinLayout *lock, Waiter &waiter)
{
    std::uint16_t ticket = take_ticket(lock);
    for (;;) {
        std::uint64_t w = lock->word.load(std::memory_order_relaxed);
        const auto ahead = static_cast<std::int16_t>(
            static_cast<std::uint16_t>(ticket - serving(w)));
        if (ahead == 0 && owner(w) == 0) {
            const std::uint64_t mine =
                with_serving(w, static_cast<std::uint16_t>(ticket + 1)) |
                self_owner();
            if (lock->word.compare_exchange_weak(w, mine,
                                                 std::memory_order_acquire,
                                                 std::memory_order_relaxed)) {
                return on_claimed(lock, w);
            }
            continue;
        }
        if (ahead < 0) {
            ticket = take_ticket(lock); // skipped as dead while too slow
            continue;
        }
        waiter.pause(w);
    }
}

} // namespace

ucs_status_t acquire_slow(SpinLayout *lock) noexcept
{
    std::uint64_t w = lock->word.load(std::memory_order_relaxed);
    if (held_by_caller(lock, w)) {
        log_line("ucs_lock_acquire", lock,
                 "the calling thread already holds this lock (deadlock)");
        return UCS_ERR_BUSY;
    }
    Waiter waiter(lock);
    for (;;) {
        if (claimable(w)) {
            if (lock->word.compare_exchange_weak(w, w | self_owner(),
                                                 std::memory_order_acquire,
                                                 std::memory_order_relaxed)) {
                return on_claimed(lock, w);
            }
            continue;
        }
        if (waiter.starving()) {
            return acquire_queued(lock, waiter);
        }
        waiter.pause(w);
        w = lock->word.load(std::memory_order_relaxed);
    }
}

void init(SpinLayout *lock) noexcept
{
    lock->word.store(0, std::memory_order_relaxed);
    lock->owner_token.store(0, std::memory_order_relaxed);
    for (auto &slot : lock->slots) {
        slot.store(~0ull, std::memory_order_relaxed);
    }
}

ucs_status_t destroy(SpinLayout *lock) noexcept
{
    const std::uint64_t w = lock->word.load(std::memory_order_acquire);
    if (!claimable(w)) {
        log_line("ucs_lock_destroy", lock,
                 "lock is held (pid %u) or has waiters; not destroyed",
                 owner(w));
        return UCS_ERR_BUSY;
    }
    return retire(&lock->header, lock);
}

ucs_status_t try_acquire(SpinLayout *lock) noexcept
{
    static thread_local unsigned busy_tries = 0;
    std::uint64_t w = lock->word.load(std::memory_order_relaxed);
    for (;;) {
        if (claimable(w)) {
            if (lock->word.compare_exchange_weak(w, w | self_owner(),
                                                 std::memory_order_acquire,
                                                 std::memory_order_relaxed)) {
                return on_claimed(lock, w);
            }
            continue;
        }
        // A poller must notice a dead holder too, but not pay a syscall on
        // every busy try.
        if (owner(w) == 0 || ++busy_tries % kTryChecksEvery != 0 ||
            !process_dead(static_cast<pid_t>(owner(w)),
                          busy_tries % (16 * kTryChecksEvery) == 0)) {
            return UCS_ERR_BUSY;
        }
        recover_from_dead_holder(lock, w, "ucs_lock_try_acquire");
        w = lock->word.load(std::memory_order_relaxed);
        if (!claimable(w)) {
            return UCS_ERR_BUSY;
        }
    }
}

ucs_status_t refuse_release(SpinLayout *lock) noexcept
{
    log_line("ucs_lock_release", lock,
             "the calling thread does not hold this lock (holder pid %u); "
             "not released",
             owner(lock->word.load(std::memory_order_relaxed)));
    return UCS_ERR_INVALID_PARAM;
}

ucs_status_t mark_consistent(SpinLayout *lock) noexcept
{
    const std::uint64_t w = lock->word.load(std::memory_order_relaxed);
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

} // namespace ucs_lock::spin
