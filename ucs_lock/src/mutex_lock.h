// SPDX-License-Identifier: BSD-3-Clause
// The mutex kind: a futex word (owner pid, waiters, inconsistent bits);
// waiters sleep in the kernel, a dead holder is found from its pid.
#pragma once

#include "layout.h"

namespace ucs_lock::mutex {

ucs_status_t init(MutexLayout *lock) noexcept;
ucs_status_t destroy(MutexLayout *lock) noexcept;
ucs_status_t acquire(MutexLayout *lock) noexcept;
ucs_status_t try_acquire(MutexLayout *lock) noexcept;
ucs_status_t release(MutexLayout *lock) noexcept;
ucs_status_t mark_consistent(MutexLayout *lock) noexcept;

} // namespace ucs_lock::mutex
