// SPDX-License-Identifier: BSD-3-Clause
// The spin kind: one 64-bit word (owner pid, inconsistent bit, ticket
// queue), bounded spinning then sched_yield(), dead holder recovery. The
// uncontended acquire and release are inline here (they run inside the C
// entry points); everything else is in spin_lock.cpp.
#pragma once

#include "layout.h"
#include "process.h"

#include <cstdint>

namespace ucs_lock::spin {

constexpr std::uint64_t kOwnerMask = 0x7fffffffull;
constexpr std::uint64_t kInconsistent = 1ull << 31;
constexpr int kServingShift = 32;
constexpr int kNextShift = 48;
constexpr std::uint64_t kServingMask = 0xffffull << kServingShift;
constexpr std::uint64_t kOneTicket = 1ull << kNextShift;

inline std::uint32_t owner(std::uint64_t w)
{
    return w & kOwnerMask;
}
inline std::uint16_t serving(std::uint64_t w)
{
    return static_cast<std::uint16_t>(w >> kServingShift);
}
inline std::uint16_t next_ticket(std::uint64_t w)
{
    return static_cast<std::uint16_t>(w >> kNextShift);
}
inline bool queue_empty(std::uint64_t w)
{
    return serving(w) == next_ticket(w);
}
inline bool claimable(std::uint64_t w)
{
    return owner(w) == 0 && queue_empty(w);
}
inline std::uint64_t with_serving(std::uint64_t w, std::uint16_t s)
{
    return (w & ~kServingMask) |
           (static_cast<std::uint64_t>(s) << kServingShift);
}
inline ucs_status_t claimed_status(std::uint64_t w)
{
    return (w & kInconsistent) ? UCS_LOCK_ERR_OWNER_DEAD : UCS_OK;
}

inline std::uint64_t self_owner()
{
    return static_cast<std::uint64_t>(self_pid());
}

inline bool held_by_caller(SpinLayout *lock, std::uint64_t w)
{
    return owner(w) == self_owner() &&
           lock->owner_token.load(std::memory_order_relaxed) == thread_token();
}

inline ucs_status_t on_claimed(SpinLayout *lock, std::uint64_t w)
{
    lock->owner_token.store(thread_token(), std::memory_order_relaxed);
    return claimed_status(w);
}

void init(SpinLayout *lock) noexcept;
ucs_status_t destroy(SpinLayout *lock) noexcept;
ucs_status_t acquire_slow(SpinLayout *lock) noexcept;
ucs_status_t try_acquire(SpinLayout *lock) noexcept;
ucs_status_t refuse_release(SpinLayout *lock) noexcept;
ucs_status_t mark_consistent(SpinLayout *lock) noexcept;

inline ucs_status_t acquire(SpinLayout *lock) noexcept
{
    std::uint64_t w = lock->word.load(std::memory_order_relaxed);
    if (claimable(w) && lock->word.compare_exchange_strong(
                            w, w | self_owner(), std::memory_order_acquire,
                            std::memory_order_relaxed)) {
        return on_claimed(lock, w);
    }
    return acquire_slow(lock);
}

inline ucs_status_t release(SpinLayout *lock) noexcept
{
    const std::uint64_t w = lock->word.load(std::memory_order_relaxed);
    if (!held_by_caller(lock, w)) {
        return refuse_release(lock);
    }
    lock->owner_token.store(0, std::memory_order_relaxed);
    lock->word.fetch_and(~kOwnerMask, std::memory_order_release);
    return UCS_OK;
}

} // namespace ucs_lock::spin
