// SPDX-License-Identifier: BSD-3-Clause
// Is a member's process still alive? pid plus its start time (so a reused
// pid is not mistaken for the member), zombies count as dead.
#pragma once

#include <cstdint>
#include <sys/types.h>

namespace uct_mm_common {

/// Identity of a process as published in shared memory.
struct ProcessId {
    std::int32_t pid;         ///< getpid() of the process
    std::uint32_t reserved;   ///< zero
    std::uint64_t start_time; ///< clock ticks since boot (/proc/pid/stat #22)
};
static_assert(sizeof(ProcessId) == 16);

/// The calling process's identity.
ProcessId self_process_id() noexcept;

/// Start time of `pid` (0 when it cannot be read: gone or no /proc).
std::uint64_t process_start_time(pid_t pid) noexcept;

/// True while the process exists, is not a zombie and has the same start
/// time (when one was recorded).
bool process_alive(const ProcessId &id) noexcept;

} // namespace uct_mm_common
