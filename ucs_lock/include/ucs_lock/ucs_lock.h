/* SPDX-License-Identifier: BSD-3-Clause */
/* ucs_lock: locks that live in shared memory and are used by several
 * processes, with recovery when a holder dies. C API, C++ inside. */
#ifndef UCS_LOCK_UCS_LOCK_H_
#define UCS_LOCK_UCS_LOCK_H_

#include <stddef.h>
#include <stdint.h>
#include <ucs/type/status.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Marks the symbols this library exports (it builds -fvisibility=hidden). */
#define UCS_LOCK_EXPORT __attribute__((visibility("default")))

/** Every entry point is noexcept for C++ callers: errors are statuses. */
#ifdef __cplusplus
#define UCS_LOCK_NOEXCEPT noexcept
#else
#define UCS_LOCK_NOEXCEPT
#endif

/** Bytes of memory a lock of any kind occupies (see ucs_lock_t). */
#define UCS_LOCK_SIZE 512

/** Alignment in bytes the memory of a lock must have (one cache line). */
#define UCS_LOCK_ALIGN 64

/**
 * Returned by ucs_lock_acquire() and ucs_lock_try_acquire() when the caller
 * now HOLDS the lock, but a previous holder died inside its critical
 * section (or the lock was released without ucs_lock_mark_consistent()
 * after such a death), so the state the lock protects may be inconsistent.
 * The caller should repair that state and call ucs_lock_mark_consistent()
 * before it releases the lock; released unmarked, the lock stays usable and
 * the next acquire returns this status again. It is a negative status
 * so that code which only tests UCS_STATUS_IS_ERR() does not silently use
 * damaged state; remember to release the lock on that path.
 * ucs_status_string() calls it "Connection reset by remote peer".
 */
#define UCS_LOCK_ERR_OWNER_DEAD UCS_ERR_CONNECTION_RESET

/** C++ sees the kind enum with an int base, so that any int a C caller
 *  passes is a valid value to check (not undefined behaviour). */
#ifdef __cplusplus
#define UCS_LOCK_KIND_BASE : int
#else
#define UCS_LOCK_KIND_BASE
#endif

/** The kinds of lock. */
typedef enum ucs_lock_kind UCS_LOCK_KIND_BASE {
    /** Sleeping mutex, for critical sections of any length: waiters spin
     *  briefly, then sleep in the kernel (futex); no ordering among
     *  waiters, like a pthread mutex. A dead holder is detected from its
     *  pid within a few ms of waiting (see README.md). */
    UCS_LOCK_KIND_MUTEX = 0,
    /** Spin lock for short critical sections: waiters spin for a bounded
     *  time, then call sched_yield() (never sleep in the kernel). Fair: a
     *  waiter bypassed 8 times (or waiting 5 ms) queues, and queued
     *  waiters are served first come, first served. A dead holder (or
     *  dead queued waiter) is detected within about 1 ms of waiting, from
     *  its pid (see README.md). */
    UCS_LOCK_KIND_SPIN = 1,
    /** Number of kinds; not a kind. */
    UCS_LOCK_KIND_LAST
} ucs_lock_kind_t;

/**
 * Memory of one lock. Place it (or any memory of UCS_LOCK_SIZE bytes aligned
 * to UCS_LOCK_ALIGN) in memory shared by the processes, call ucs_lock_init()
 * once, then let the other processes use it. The contents are private.
 */
typedef struct ucs_lock_memory {
    uint64_t opaque[UCS_LOCK_SIZE / sizeof(uint64_t)]; /**< private */
} __attribute__((aligned(UCS_LOCK_ALIGN))) ucs_lock_t;

/**
 * Size and alignment of the memory a lock of @a kind needs.
 *
 * @param [in]  kind     Kind of lock.
 * @param [out] size_p   Bytes needed (at most UCS_LOCK_SIZE).
 * @param [out] align_p  Alignment needed (UCS_LOCK_ALIGN).
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a null pointer or an unknown
 *         kind.
 */
UCS_LOCK_EXPORT ucs_status_t ucs_lock_mem_query(
    ucs_lock_kind_t kind, size_t *size_p, size_t *align_p) UCS_LOCK_NOEXCEPT;

/**
 * Initialises a lock of @a kind, free and consistent, in caller memory.
 * Not safe against concurrent use of the same memory: publish the lock to
 * other processes after this returns.
 *
 * @param [in] lock  UCS_LOCK_SIZE bytes aligned to UCS_LOCK_ALIGN, e.g. in
 *                   a MAP_SHARED mapping; must not hold a live lock.
 * @param [in] kind  Kind of lock.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM for a null or misaligned @a lock
 *         or an unknown kind; UCS_ERR_ALREADY_EXISTS when @a lock already
 *         holds a live lock (destroy it first).
 */
UCS_LOCK_EXPORT ucs_status_t
ucs_lock_init(ucs_lock_t *lock, ucs_lock_kind_t kind) UCS_LOCK_NOEXCEPT;

/**
 * Destroys a free lock; any later use returns UCS_ERR_INVALID_PARAM.
 * Not safe against concurrent use of the same lock.
 *
 * @param [in] lock  An initialised lock nobody holds.
 *
 * @return UCS_OK; UCS_ERR_BUSY when the lock is held or has queued waiters
 *         (a lock whose holder died: acquire it to recover, release, then
 *         destroy); UCS_ERR_INVALID_PARAM for a null, misaligned,
 *         uninitialised or already destroyed lock.
 */
UCS_LOCK_EXPORT ucs_status_t ucs_lock_destroy(ucs_lock_t *lock)
    UCS_LOCK_NOEXCEPT;

/**
 * Acquires the lock, waiting as long as a live holder keeps it.
 *
 * @param [in] lock  An initialised lock.
 *
 * @return UCS_OK: the caller holds the lock.
 *         UCS_LOCK_ERR_OWNER_DEAD: the caller holds the lock, and the state
 *         it protects may be inconsistent (see that macro).
 *         UCS_ERR_BUSY: the calling thread already holds it (it would
 *         deadlock); nothing changed.
 *         UCS_ERR_INVALID_PARAM: null, misaligned, uninitialised or
 *         destroyed lock; nothing acquired.
 */
UCS_LOCK_EXPORT ucs_status_t ucs_lock_acquire(ucs_lock_t *lock)
    UCS_LOCK_NOEXCEPT;

/**
 * Acquires the lock if it is free, without waiting.
 *
 * @param [in] lock  An initialised lock.
 *
 * @return UCS_OK or UCS_LOCK_ERR_OWNER_DEAD as ucs_lock_acquire() (the
 *         caller holds the lock); UCS_ERR_BUSY when someone (the caller
 *         included) holds it or waiters are queued for it; otherwise as
 *         ucs_lock_acquire().
 */
UCS_LOCK_EXPORT ucs_status_t ucs_lock_try_acquire(ucs_lock_t *lock)
    UCS_LOCK_NOEXCEPT;

/**
 * Releases a lock the calling thread holds. When the lock was reported
 * inconsistent and not marked consistent, it stays inconsistent for the
 * next holder.
 *
 * @param [in] lock  A lock the calling thread holds.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM when the calling thread does not
 *         hold the lock (nothing changes), or for a null, misaligned,
 *         uninitialised or destroyed lock.
 */
UCS_LOCK_EXPORT ucs_status_t ucs_lock_release(ucs_lock_t *lock)
    UCS_LOCK_NOEXCEPT;

/**
 * Declares the state a recovered lock protects repaired, like
 * pthread_mutex_consistent(): later acquires return UCS_OK again. Calling
 * it on a consistent lock is harmless.
 *
 * @param [in] lock  A lock the calling thread holds.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM when the calling thread does not
 *         hold the lock, or for a null, misaligned, uninitialised or
 *         destroyed lock.
 */
UCS_LOCK_EXPORT ucs_status_t ucs_lock_mark_consistent(ucs_lock_t *lock)
    UCS_LOCK_NOEXCEPT;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* UCS_LOCK_UCS_LOCK_H_ */
