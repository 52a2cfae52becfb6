// SPDX-License-Identifier: BSD-3-Clause
// The mutex kind: a futex word (owner pid, waiters, inconsistent bits);
// waiters sleep in the kernel, a dead holder is found from its pid. The
// uncontended acquire and release are inline here (they run inside the C
// entry points); everything else is in mutex_lock.cpp.
#pragma once

#include "layout.h"
#include "process.h"

#include <cstdint>

namespace ucs_lock::mutex {

constexpr std::uint32_t kOwnerMask = 0x3fffffffu;
constexpr std::uint32_t kWaiters = 1u << 30;
constexpr std::uint32_t kInconsistent = 1u << 31;

inline std::uint32_t owner(std::uint32_t w)
{
    return w & kOwnerMask;
}

inline std::uint32_t self_owner()
{
    return static_cast<std::uint32_t>(self_pid());
}

inline bool held_by_caller(MutexLayout *lock, std::uint32_t w)
{
    return owner(w) == self_owner() &&
           lock->owner_token.load(std::memory_order_relaxed) == thread_token();
}

inline ucs_status_t on_claimed(MutexLayout *lock, std::uint32_t w)
{
    lock->owner_token.store(thread_token(), std::memory_order_relaxed);
    return (w & kInconsistent) ? UCS_LOCK_ERR_OWNER_DEAD : UCS_OK;
}

inline bool try_claim(MutexLayout *lock, std::uint32_t &w, std::uint32_t extra)
{
    return owner(w) == 0 &&
           lock->word.compare_exchange_strong(w, w | self_owner() | extra,
                                              std::memory_order_acquire,
                                              std::memory_order_relaxed);
}

ucs_status_t init(MutexLayout *lock) noexcept;
ucs_status_t destroy(MutexLayout *lock) noexcept;
ucs_status_t acquire_slow(MutexLayout *lock) noexcept;
ucs_status_t try_acquire(MutexLayout *lock) noexcept;
ucs_status_t refuse_release(MutexLayout *lock) noexcept;
void futex_wake_one(MutexLayout *lock) noexcept;
ucs_status_t mark_consistent(MutexLayout *lock) noexcept;

inline ucs_status_t acquire(MutexLayout *lock) noexcept
{
    std::uint32_t w = lock->word.load(std::memory_order_relaxed);
    if (try_claim(lock, w, 0)) {
        return on_claimed(lock, w);
    }
    return acquire_slow(lock);
}

inline ucs_status_t release(MutexLayout *lock) noexcept
{
    const std::uint32_t w = lock->word.load(std::memory_order_relaxed);
    if (!held_by_caller(lock, w)) {
        return refuse_release(lock);
    }
    lock->owner_token.store(0, std::memory_order_relaxed);
    const std::uint32_t old = lock->word.fetch_and(~(kOwnerMask | kWaiters),
                                                   std::memory_order_release);
    if (old & kWaiters) {
        futex_wake_one(lock);
    }
    return UCS_OK;
}

} // namespace ucs_lock::mutex
