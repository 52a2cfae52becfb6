// SPDX-License-Identifier: BSD-3-Clause
// Pid cache with its fork reset, liveness of other processes, the log line.
#include "process.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

namespace ucs_lock {
namespace {

static_assert(std::atomic<pid_t>::is_always_lock_free);

void reset_pid_in_child()
{
    g_self_pid.store(0, std::memory_order_relaxed);
}

// State letter of /proc/<pid>/stat ('Z' zombie, 'X' dead), or 0.
char proc_state(pid_t pid) noexcept
{
    char path[64];
    std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno == ENOENT ? 'X' : 0;
    }
    char buf[512];
    const ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        return 0;
    }
    buf[n] = '\0';
    // "pid (comm) S ...": comm may hold spaces and ')', so take the last.
    const char *paren = std::strrchr(buf, ')');
    return (paren != nullptr && paren[1] == ' ') ? paren[2] : 0;
}

} // namespace

std::atomic<pid_t> g_self_pid{0};

pid_t self_pid_slow() noexcept
{
    static const bool registered =
        pthread_atfork(nullptr, nullptr, reset_pid_in_child) == 0;
    (void)registered;
    const pid_t pid = getpid();
    g_self_pid.store(pid, std::memory_order_relaxed);
    return pid;
}

bool process_dead(pid_t pid, bool deep) noexcept
{
    if (kill(pid, 0) != 0) {
        return errno == ESRCH; // EPERM: alive, another user's
    }
    if (!deep) {
        return false;
    }
    const char state = proc_state(pid);
    return state == 'Z' || state == 'X';
}

std::uint64_t now_ns() noexcept
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

void log_line(const char *func, const void *lock, const char *fmt, ...) noexcept
{
    char line[256];
    int len =
        std::snprintf(line, sizeof(line), "[ucs_lock] %s(%p): ", func, lock);
    if (len < 0 || static_cast<std::size_t>(len) >= sizeof(line)) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    const int more = std::vsnprintf(
        line + len, sizeof(line) - 1 - static_cast<std::size_t>(len), fmt, ap);
    va_end(ap);
    if (more > 0) {
        len += more;
    }
    if (static_cast<std::size_t>(len) > sizeof(line) - 2) {
        len = static_cast<int>(sizeof(line) - 2);
    }
    line[len++] = '\n';
    const int saved_errno = errno;
    ssize_t rc = write(STDERR_FILENO, line, static_cast<std::size_t>(len));
    (void)rc;
    errno = saved_errno;
}

ucs_status_t retire(Header *header, const void *lock) noexcept
{
    std::uint32_t live = kMagicLive;
    if (!header->magic.compare_exchange_strong(live, kMagicRetired)) {
        log_line("ucs_lock_destroy", lock, "lock destroyed concurrently");
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

} // namespace ucs_lock
