// SPDX-License-Identifier: BSD-3-Clause
// The C entry points: argument checks (once, here), dispatch by kind, and
// the guard that keeps exceptions inside.
#include "ucs_lock/ucs_lock.h"

#include "layout.h"
#include "mutex_lock.h"
#include "process.h"
#include "spin_lock.h"

#include <cstdint>
#include <exception>
#include <new>

namespace ucs_lock {
namespace {

// Runs an entry's body; a stray exception becomes a status and one line.
template <typename Body>
ucs_status_t guarded(const char *func, const void *lock, Body &&body) noexcept
{
    try {
        return body();
    } catch (const std::bad_alloc &) {
        log_line(func, lock, "out of memory");
        return UCS_ERR_NO_MEMORY;
    } catch (const std::exception &e) {
        log_line(func, lock, "unexpected exception: %s", e.what());
        return UCS_ERR_IO_ERROR;
    } catch (...) {
        log_line(func, lock, "unexpected exception");
        return UCS_ERR_IO_ERROR;
    }
}

bool valid_kind(ucs_lock_kind_t kind)
{
    return kind == UCS_LOCK_KIND_MUTEX || kind == UCS_LOCK_KIND_SPIN;
}

// Null and alignment: the checks every entry makes first.
ucs_status_t check_memory(const char *func, const ucs_lock_t *lock)
{
    if (lock == nullptr) {
        log_line(func, lock, "lock is NULL");
        return UCS_ERR_INVALID_PARAM;
    }
    if (reinterpret_cast<std::uintptr_t>(lock) % UCS_LOCK_ALIGN != 0) {
        log_line(func, lock, "lock memory is not aligned to %d bytes",
                 UCS_LOCK_ALIGN);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

Header *header_of(ucs_lock_t *lock)
{
    return reinterpret_cast<Header *>(lock);
}

// Checks that `lock` is a live lock; returns its kind in *kind_p.
ucs_status_t check_live(const char *func, ucs_lock_t *lock,
                        ucs_lock_kind_t *kind_p)
{
    ucs_status_t status = check_memory(func, lock);
    if (status != UCS_OK) {
        return status;
    }
    const Header *header = header_of(lock);
    const std::uint32_t magic = header->magic.load(std::memory_order_relaxed);
    if (magic != kMagicLive) {
        log_line(func, lock, "%s",
                 magic == kMagicRetired
                     ? "lock was destroyed (use after destroy)"
                     : "lock is not initialised (bad magic word)");
        return UCS_ERR_INVALID_PARAM;
    }
    const auto kind = static_cast<ucs_lock_kind_t>(
        header->kind.load(std::memory_order_relaxed));
    if (!valid_kind(kind)) {
        log_line(func, lock, "lock memory is corrupt (kind %d)",
                 static_cast<int>(kind));
        return UCS_ERR_INVALID_PARAM;
    }
    *kind_p = kind;
    return UCS_OK;
}

SpinLayout *as_spin(ucs_lock_t *lock)
{
    return reinterpret_cast<SpinLayout *>(lock);
}

MutexLayout *as_mutex(ucs_lock_t *lock)
{
    return reinterpret_cast<MutexLayout *>(lock);
}

// The common shape of the entries that act on a live lock.
template <typename SpinOp, typename MutexOp>
ucs_status_t dispatch(const char *func, ucs_lock_t *lock, SpinOp spin_op,
                      MutexOp mutex_op) noexcept
{
    return guarded(func, lock, [&] {
        ucs_lock_kind_t kind;
        const ucs_status_t status = check_live(func, lock, &kind);
        if (status != UCS_OK) {
            return status;
        }
        return kind == UCS_LOCK_KIND_SPIN ? spin_op(as_spin(lock))
                                          : mutex_op(as_mutex(lock));
    });
}

} // namespace
} // namespace ucs_lock

using namespace ucs_lock;

extern "C" {

ucs_status_t ucs_lock_mem_query(ucs_lock_kind_t kind, size_t *size_p,
                                size_t *align_p) noexcept
{
    return guarded(__func__, nullptr, [&] {
        if (size_p == nullptr || align_p == nullptr) {
            log_line(__func__, nullptr, "size_p or align_p is NULL");
            return UCS_ERR_INVALID_PARAM;
        }
        if (!valid_kind(kind)) {
            log_line(__func__, nullptr, "unknown lock kind %d",
                     static_cast<int>(kind));
            return UCS_ERR_INVALID_PARAM;
        }
        *size_p = kind == UCS_LOCK_KIND_SPIN ? sizeof(SpinLayout)
                                             : sizeof(MutexLayout);
        *align_p = UCS_LOCK_ALIGN;
        return UCS_OK;
    });
}

ucs_status_t ucs_lock_init(ucs_lock_t *lock, ucs_lock_kind_t kind) noexcept
{
    return guarded(__func__, lock, [&] {
        ucs_status_t status = check_memory(__func__, lock);
        if (status != UCS_OK) {
            return status;
        }
        if (!valid_kind(kind)) {
            log_line(__func__, lock, "unknown lock kind %d",
                     static_cast<int>(kind));
            return UCS_ERR_INVALID_PARAM;
        }
        Header *header = header_of(lock);
        if (header->magic.load(std::memory_order_acquire) == kMagicLive) {
            log_line(__func__, lock,
                     "memory already holds a live lock; destroy it first");
            return UCS_ERR_ALREADY_EXISTS;
        }
        if (kind == UCS_LOCK_KIND_SPIN) {
            spin::init(new (lock) SpinLayout{});
        } else {
            status = mutex::init(new (lock) MutexLayout{});
            if (status != UCS_OK) {
                return status;
            }
        }
        header->kind.store(kind, std::memory_order_relaxed);
        header->magic.store(kMagicLive, std::memory_order_release);
        return UCS_OK;
    });
}

ucs_status_t ucs_lock_destroy(ucs_lock_t *lock) noexcept
{
    return dispatch(
        __func__, lock, [](SpinLayout *l) { return spin::destroy(l); },
        [](MutexLayout *l) { return mutex::destroy(l); });
}

ucs_status_t ucs_lock_acquire(ucs_lock_t *lock) noexcept
{
    return dispatch(
        __func__, lock, [](SpinLayout *l) { return spin::acquire(l); },
        [](MutexLayout *l) { return mutex::acquire(l); });
}

ucs_status_t ucs_lock_try_acquire(ucs_lock_t *lock) noexcept
{
    return dispatch(
        __func__, lock, [](SpinLayout *l) { return spin::try_acquire(l); },
        [](MutexLayout *l) { return mutex::try_acquire(l); });
}

ucs_status_t ucs_lock_release(ucs_lock_t *lock) noexcept
{
    return dispatch(
        __func__, lock, [](SpinLayout *l) { return spin::release(l); },
        [](MutexLayout *l) { return mutex::release(l); });
}

ucs_status_t ucs_lock_mark_consistent(ucs_lock_t *lock) noexcept
{
    return dispatch(
        __func__, lock, [](SpinLayout *l) { return spin::mark_consistent(l); },
        [](MutexLayout *l) { return mutex::mark_consistent(l); });
}

} // extern "C"
