// SPDX-License-Identifier: BSD-3-Clause
// Sleeping mutex: a process-shared, robust, error-checking pthread mutex.
// The kernel hands a dead holder's mutex to the next locker with
// EOWNERDEAD; we make it consistent at once and keep our own sticky
// "inconsistent" flag instead, so an unrepaired lock stays usable (and
// keeps saying so) rather than becoming ENOTRECOVERABLE.
#include "mutex_lock.h"
#include "process.h"

#include <cerrno>
#include <cstring>

namespace ucs_lock::mutex {
namespace {

bool held_by_caller(const MutexLayout *lock)
{
    return lock->owner_pid.load(std::memory_order_relaxed) == self_pid() &&
           lock->owner_token.load(std::memory_order_relaxed) == thread_token();
}

ucs_status_t on_locked(MutexLayout *lock)
{
    lock->owner_pid.store(self_pid(), std::memory_order_relaxed);
    lock->owner_token.store(thread_token(), std::memory_order_relaxed);
    return lock->inconsistent.load(std::memory_order_relaxed) != 0
               ? UCS_LOCK_ERR_OWNER_DEAD
               : UCS_OK;
}

// The previous holder died: the kernel gave us the mutex in the
// "owner died" state.
void adopt_dead_holders_lock(MutexLayout *lock, const char *func)
{
    const int pid = lock->owner_pid.load(std::memory_order_relaxed);
    lock->inconsistent.store(1, std::memory_order_relaxed);
    pthread_mutex_consistent(&lock->mutex);
    log_line(func, lock,
             "holder pid %d died holding the lock; recovered, state marked "
             "inconsistent",
             pid);
}

// Maps the result of pthread_mutex_lock / trylock.
ucs_status_t after_lock(MutexLayout *lock, int rc, const char *func,
                        bool blocking)
{
    switch (rc) {
    case 0:
        return on_locked(lock);
    case EOWNERDEAD:
        adopt_dead_holders_lock(lock, func);
        return on_locked(lock);
    case EBUSY:
        return UCS_ERR_BUSY;
    case EDEADLK:
        if (blocking) { // for try_acquire "held by me" is just busy
            log_line(func, lock,
                     "the calling thread already holds this lock (deadlock)");
        }
        return UCS_ERR_BUSY;
    default:
        log_line(func, lock, "pthread mutex failed: %s", std::strerror(rc));
        return UCS_ERR_IO_ERROR;
    }
}

} // namespace

ucs_status_t init(MutexLayout *lock) noexcept
{
    lock->inconsistent.store(0, std::memory_order_relaxed);
    lock->owner_pid.store(0, std::memory_order_relaxed);
    lock->owner_token.store(0, std::memory_order_relaxed);
    pthread_mutexattr_t attr;
    int rc = pthread_mutexattr_init(&attr);
    if (rc == 0) {
        rc = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
        if (rc == 0) {
            rc = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
        }
        if (rc == 0) {
            rc = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
        }
        if (rc == 0) {
            rc = pthread_mutex_init(&lock->mutex, &attr);
        }
        pthread_mutexattr_destroy(&attr);
    }
    if (rc != 0) {
        log_line("ucs_lock_init", lock, "pthread mutex init failed: %s",
                 std::strerror(rc));
        return UCS_ERR_NO_RESOURCE;
    }
    return UCS_OK;
}

ucs_status_t destroy(MutexLayout *lock) noexcept
{
    const int rc = pthread_mutex_trylock(&lock->mutex);
    if (rc == EOWNERDEAD) {
        adopt_dead_holders_lock(lock, "ucs_lock_destroy");
        pthread_mutex_unlock(&lock->mutex);
    }
    if (rc != 0) {
        log_line(
            "ucs_lock_destroy", lock, "lock is held (pid %d)%s; not destroyed",
            lock->owner_pid.load(std::memory_order_relaxed),
            rc == EOWNERDEAD ? " by a dead process: acquire it first" : "");
        return UCS_ERR_BUSY;
    }
    std::uint32_t live = kMagicLive;
    const bool retired =
        lock->header.magic.compare_exchange_strong(live, kMagicRetired);
    pthread_mutex_unlock(&lock->mutex);
    if (!retired) {
        log_line("ucs_lock_destroy", lock, "lock destroyed concurrently");
        return UCS_ERR_INVALID_PARAM;
    }
    pthread_mutex_destroy(&lock->mutex);
    return UCS_OK;
}

ucs_status_t acquire(MutexLayout *lock) noexcept
{
    return after_lock(lock, pthread_mutex_lock(&lock->mutex),
                      "ucs_lock_acquire", true);
}

ucs_status_t try_acquire(MutexLayout *lock) noexcept
{
    return after_lock(lock, pthread_mutex_trylock(&lock->mutex),
                      "ucs_lock_try_acquire", false);
}

ucs_status_t release(MutexLayout *lock) noexcept
{
    if (!held_by_caller(lock)) {
        log_line("ucs_lock_release", lock,
                 "the calling thread does not hold this lock (holder pid "
                 "%d); not released",
                 lock->owner_pid.load(std::memory_order_relaxed));
        return UCS_ERR_INVALID_PARAM;
    }
    lock->owner_pid.store(0, std::memory_order_relaxed);
    lock->owner_token.store(0, std::memory_order_relaxed);
    const int rc = pthread_mutex_unlock(&lock->mutex);
    if (rc != 0) {
        log_line("ucs_lock_release", lock, "pthread mutex unlock failed: %s",
                 std::strerror(rc));
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

ucs_status_t mark_consistent(MutexLayout *lock) noexcept
{
    if (!held_by_caller(lock)) {
        log_line("ucs_lock_mark_consistent", lock,
                 "the calling thread does not hold this lock (holder pid "
                 "%d)",
                 lock->owner_pid.load(std::memory_order_relaxed));
        return UCS_ERR_INVALID_PARAM;
    }
    lock->inconsistent.store(0, std::memory_order_relaxed);
    return UCS_OK;
}

} // namespace ucs_lock::mutex
