// SPDX-License-Identifier: BSD-3-Clause
// Process liveness from kill(pid, 0) and /proc/<pid>/stat.
#include "uct_mm_common/liveness.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace uct_mm_common {
namespace {

// Reads state (field 3) and start time (field 22) of /proc/<pid>/stat.
bool read_stat(pid_t pid, char *state, std::uint64_t *start)
{
    char path[64];
    std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
    FILE *f = std::fopen(path, "r");
    if (f == nullptr) {
        return false;
    }
    char buf[1024];
    const std::size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    // The command name may hold spaces and ')': fields follow the last ')'.
    const char *p = std::strrchr(buf, ')');
    if (p == nullptr) {
        return false;
    }
    unsigned long long st = 0;
    if (std::sscanf(p + 2,
                    "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
                    "%*d %*d %*d %*d %*d %*d %llu",
                    state, &st) != 2) {
        return false;
    }
    *start = st;
    return true;
}

} // namespace

std::uint64_t process_start_time(pid_t pid) noexcept
{
    char state = 0;
    std::uint64_t start = 0;
    return read_stat(pid, &state, &start) ? start : 0;
}

ProcessId self_process_id() noexcept
{
    ProcessId id{};
    id.pid = static_cast<std::int32_t>(getpid());
    id.start_time = process_start_time(getpid());
    return id;
}

bool process_alive(const ProcessId &id) noexcept
{
    if (id.pid <= 0) {
        return false;
    }
    if (kill(id.pid, 0) != 0 && errno == ESRCH) {
        return false;
    }
    char state = 0;
    std::uint64_t start = 0;
    if (!read_stat(id.pid, &state, &start)) {
        return kill(id.pid, 0) == 0 || errno == EPERM;
    }
    if (state == 'Z' || state == 'X') {
        return false;
    }
    return id.start_time == 0 || start == id.start_time;
}

} // namespace uct_mm_common
