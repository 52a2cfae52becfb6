// SPDX-License-Identifier: BSD-3-Clause
// The layouts of both lock kinds inside the caller's ucs_lock_t memory.
// Every process maps the same bytes; all shared fields are lock-free
// std::atomic (address-free, so they work across processes).
#pragma once

#include "ucs_lock/ucs_lock.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ucs_lock {

constexpr std::size_t kCacheLine = 64;

/// Magic words: a live lock, and one that ucs_lock_destroy() retired. Any
/// other value (zeroed memory, garbage) is an uninitialised lock.
constexpr std::uint32_t kMagicLive = 0x4c4f434bu;    // "LOCK"
constexpr std::uint32_t kMagicRetired = 0x44454144u; // "DEAD"

static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::atomic<std::int32_t>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

/// The first bytes of every kind.
struct Header {
    std::atomic<std::uint32_t> magic; ///< kMagic*; init, destroy
    std::atomic<std::uint32_t> kind;  ///< ucs_lock_kind_t; init
};

/// Waiter slots of the spin lock: a queued waiter publishes its pid under
/// its ticket, so the others can tell a dead waiter from a slow one.
constexpr std::size_t kSpinSlots = 48;

/*
 * Spin lock, UCS_LOCK_SIZE bytes. Line 0 is read by every call and written
 * only by init/destroy, so it stays shared in every cache; the hot word is
 * alone with the holder's token on line 1.
 *
 *   line 0  | magic | kind | pad                                      |
 *   line 1  | word (8)        | owner_token (8) | pad                   |
 *   line 2+ | slots[kSpinSlots]: (ticket << 32 | pid) of queued waiters |
 *
 * word (one 64-bit atomic, so a claim, a release and a recovery are each
 * one atomic step and no state exists where the lock is held by nobody
 * known):
 *
 *   63      48 47      32 31           30               0
 *   +---------+----------+-------------+-----------------+
 *   | next    | serving  | inconsistent| owner pid (0:   |
 *   | ticket  | ticket   |             | free)           |
 *   +---------+----------+-------------+-----------------+
 *
 * Waiters queue (take `next`) only after being bypassed a while; while the
 * queue is not empty (next != serving) only the waiter holding ticket
 * `serving` may claim the lock.
 */
struct SpinLayout {
    Header header;                                  ///< 0: read-mostly
    std::uint8_t pad0[kCacheLine - sizeof(Header)]; ///< 8
    std::atomic<std::uint64_t> word;                ///< 64: see above; all
    std::atomic<std::uint64_t> owner_token;         ///< 72: holder's thread
    std::uint8_t pad1[kCacheLine - 16];             ///< 80
    std::atomic<std::uint64_t> slots[kSpinSlots];   ///< 128: queued waiters
};
static_assert(offsetof(SpinLayout, word) == kCacheLine);
static_assert(offsetof(SpinLayout, owner_token) == kCacheLine + 8);
static_assert(offsetof(SpinLayout, slots) == 2 * kCacheLine);
static_assert(sizeof(SpinLayout) <= UCS_LOCK_SIZE);

/*
 * Mutex, UCS_LOCK_SIZE bytes; the holder writes only line 1:
 *
 *   line 0  | magic | kind | pad                      |
 *   line 1  | word (4) | pad (4) | owner_token (8) | pad |
 *
 * word is the futex (32 bits, as the kernel wants):
 *
 *   31             30        29                    0
 *   +--------------+---------+---------------------+
 *   | inconsistent | waiters | owner pid (0: free) |
 *   +--------------+---------+---------------------+
 *
 * waiters: someone may sleep in FUTEX_WAIT, so release must wake one.
 * Pids fit in 30 bits (the kernel's PID_MAX_LIMIT is 2^22).
 */
struct MutexLayout {
    Header header;                                  ///< 0: read-mostly
    std::uint8_t pad0[kCacheLine - sizeof(Header)]; ///< 8
    std::atomic<std::uint32_t> word;                ///< 64: the futex; all
    std::uint32_t pad1;                             ///< 68
    std::atomic<std::uint64_t> owner_token;         ///< 72: holder's thread
    std::uint8_t pad2[kCacheLine - 16];             ///< 80
};
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
static_assert(offsetof(MutexLayout, word) == kCacheLine);
static_assert(offsetof(MutexLayout, owner_token) == kCacheLine + 8);
static_assert(sizeof(MutexLayout) <= UCS_LOCK_SIZE);

static_assert(sizeof(ucs_lock_t) == UCS_LOCK_SIZE);
static_assert(alignof(ucs_lock_t) == UCS_LOCK_ALIGN);
static_assert(UCS_LOCK_ALIGN == kCacheLine);

} // namespace ucs_lock
