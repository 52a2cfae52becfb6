// SPDX-License-Identifier: BSD-3-Clause
// Process-shared robust mutex over pthreads.
#include "robust_mutex.h"

#include <cerrno>

namespace uct_mm_incast {
namespace {

LockResult classify(int rc, pthread_mutex_t *m)
{
    switch (rc) {
    case 0:
        return LockResult::kAcquired;
    case EBUSY:
        return LockResult::kBusy;
    case EOWNERDEAD:
        // Keep the mutex usable; the caller decides what the death means.
        pthread_mutex_consistent(m);
        return LockResult::kOwnerDied;
    default:
        return LockResult::kError;
    }
}

} // namespace

bool robust_mutex_init(pthread_mutex_t *m)
{
    pthread_mutexattr_t attr;
    if (pthread_mutexattr_init(&attr) != 0) {
        return false;
    }
    bool ok =
        (pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) == 0) &&
        (pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST) == 0) &&
        (pthread_mutex_init(m, &attr) == 0);
    pthread_mutexattr_destroy(&attr);
    return ok;
}

LockResult robust_mutex_lock(pthread_mutex_t *m)
{
    return classify(pthread_mutex_lock(m), m);
}

LockResult robust_mutex_trylock(pthread_mutex_t *m)
{
    return classify(pthread_mutex_trylock(m), m);
}

void robust_mutex_unlock(pthread_mutex_t *m)
{
    pthread_mutex_unlock(m);
}

} // namespace uct_mm_incast
