// SPDX-License-Identifier: BSD-3-Clause
// Who the caller is (cached pid, thread token), whether another process is
// alive, time, and the one-line misuse log of ucs_lock.
#pragma once

#include "layout.h"

#include <atomic>
#include <cstdint>
#include <sys/types.h>

namespace ucs_lock {

/// The cached pid of this process, 0 until known; reset in fork's child.
/// (glibc no longer caches getpid(): a syscall per acquire would double the
/// cost of the spin lock.)
extern std::atomic<pid_t> g_self_pid __attribute__((visibility("hidden")));

/// Fills g_self_pid (and registers its reset at fork).
pid_t self_pid_slow() noexcept;

/// The caller's pid.
inline pid_t self_pid() noexcept
{
    const pid_t pid = g_self_pid.load(std::memory_order_relaxed);
    return pid != 0 ? pid : self_pid_slow();
}

/// A value unique among the live threads of this process, never 0 (the
/// address of a thread-local object): tells threads of one process apart.
/// initial-exec: no __tls_get_addr call when linked into a plugin.
inline std::uint64_t thread_token() noexcept
{
    static thread_local char anchor __attribute__((tls_model("initial-exec")));
    return reinterpret_cast<std::uintptr_t>(&anchor);
}

/// True when `pid` no longer runs: kill(pid, 0) fails with ESRCH or, when
/// `deep`, /proc says it is a zombie (dead but not yet reaped).
bool process_dead(pid_t pid, bool deep) noexcept;

/// CLOCK_MONOTONIC in nanoseconds.
std::uint64_t now_ns() noexcept;

/// One pause of a spin loop.
inline void cpu_relax() noexcept
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

/// The last step of destroy for either kind: flips the header's magic from
/// live to retired, so a second destroy or a later use is refused.
ucs_status_t retire(Header *header, const void *lock) noexcept;

/// Writes one line "[ucs_lock] <func>(<lock>): <message>" to stderr with a
/// single write(2), so lines of several processes do not interleave.
void log_line(const char *func, const void *lock, const char *fmt, ...) noexcept
    __attribute__((format(printf, 3, 4)));

} // namespace ucs_lock
