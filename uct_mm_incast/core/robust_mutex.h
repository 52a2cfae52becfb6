// SPDX-License-Identifier: BSD-3-Clause
// A process-shared robust mutex living in a shared segment. Interim helper
// until ucs_lock (ucs_lock/include/ucs_lock/ucs_lock.h) is available; the
// interface matches what the locked mode and the liveness table need.
#pragma once

#include <pthread.h>

namespace uct_mm_incast {

enum class LockResult {
    kAcquired,  ///< the caller holds the lock
    kBusy,      ///< trylock only: another holder is alive
    kOwnerDied, ///< acquired, but the previous holder died holding it
    kError
};

/// Initializes a mutex in shared memory (process-shared, robust).
bool robust_mutex_init(pthread_mutex_t *m);
LockResult robust_mutex_lock(pthread_mutex_t *m);
LockResult robust_mutex_trylock(pthread_mutex_t *m);
void robust_mutex_unlock(pthread_mutex_t *m);

} // namespace uct_mm_incast
