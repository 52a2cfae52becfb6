// SPDX-License-Identifier: BSD-3-Clause
// The names groups left for members that had not attached yet
// (group_link.h: keep_for_late_members): unlinked after their attach
// deadline, or when the process exits, if the name still names the
// segment that was left.
#include "uct_mm_common/group_link.h"

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <unistd.h>
#include <vector>

namespace uct_mm_common {
namespace {

struct LateName {
    std::string name;
    dev_t dev;
    ino_t ino;
    std::uint64_t deadline_ns;
};

struct Registry {
    std::mutex mutex;
    std::vector<LateName> names;
    pid_t owner = 0; ///< the process that left them (a fork child did not)
};

Registry &registry()
{
    static Registry *r = new Registry(); // outlives every static destructor
    return *r;
}

void unlink_all_at_exit()
{
    unlink_late_names(UINT64_MAX);
}

} // namespace

void keep_for_late_members(const std::string &name,
                           std::uint64_t deadline_ns) noexcept
{
    LateName late{name, 0, 0, deadline_ns};
    if (!segment_inode(name, &late.dev, &late.ino)) {
        return; // gone already (the last member to join unlinked it)
    }
    static std::once_flag at_exit;
    try {
        std::call_once(at_exit, [] { std::atexit(unlink_all_at_exit); });
        Registry &r = registry();
        const std::lock_guard<std::mutex> lock(r.mutex);
        if (r.owner != getpid()) {
            r.names.clear(); // inherited over fork: the parent's to unlink
            r.owner = getpid();
        }
        r.names.push_back(std::move(late));
    } catch (...) {
        // No memory to remember it: unlink now (late members time out).
        unlink_segment(name);
    }
}

int unlink_late_names(std::uint64_t now_ns) noexcept
{
    Registry &r = registry();
    const std::lock_guard<std::mutex> lock(r.mutex);
    if (r.owner != getpid()) {
        r.names.clear(); // inherited over fork: the parent's to unlink
        return 0;
    }
    int unlinked = 0;
    for (std::size_t i = 0; i < r.names.size();) {
        const LateName &late = r.names[i];
        if (late.deadline_ns > now_ns) {
            ++i;
            continue;
        }
        // A name that now names another segment belongs to a new group.
        if (unlink_segment_of(late.name, late.dev, late.ino)) {
            ++unlinked;
        }
        r.names[i] = std::move(r.names.back());
        r.names.pop_back();
    }
    return unlinked;
}

} // namespace uct_mm_common
