// SPDX-License-Identifier: BSD-3-Clause
// The spin kind: one 64-bit word (owner pid, inconsistent bit, ticket
// queue), bounded spinning then sched_yield(), dead holder recovery.
#pragma once

#include "layout.h"

namespace ucs_lock::spin {

void init(SpinLayout *lock) noexcept;
ucs_status_t destroy(SpinLayout *lock) noexcept;
ucs_status_t acquire(SpinLayout *lock) noexcept;
ucs_status_t try_acquire(SpinLayout *lock) noexcept;
ucs_status_t release(SpinLayout *lock) noexcept;
ucs_status_t mark_consistent(SpinLayout *lock) noexcept;

} // namespace ucs_lock::spin
