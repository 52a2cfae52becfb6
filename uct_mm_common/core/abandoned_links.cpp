// SPDX-License-Identifier: BSD-3-Clause
// The group segments every member was killed away from (group_link.h:
// sweep_abandoned_links): found in /dev/shm by their name's family and
// unlinked when no member line names a live process.
#include "uct_mm_common/group_link.h"
#include "uct_mm_common/liveness.h"
#include "uct_mm_common/log.h"
#include "uct_mm_common/names.h"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace uct_mm_common {
namespace {

std::uint64_t ns_of(const timespec &ts) noexcept
{
    return std::uint64_t(ts.tv_sec) * 1'000'000'000ULL +
           std::uint64_t(ts.tv_nsec);
}

std::uint64_t realtime_ns() noexcept
{
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return ns_of(ts);
}

// Whether the segment open as `fd` (already checked: ours, 0600, old
// enough) holds no place of a live process. Only reads, through a
// read-only mapping of the prefix; a prefix it cannot make sense of is
// kept (not ours to judge).
bool abandoned(int fd, std::size_t size) noexcept
{
    if (size < sizeof(LinkHeader)) {
        return false;
    }
    const std::size_t bytes =
        std::min(size, link_region_offset(kMaxGroupMembers));
    void *addr = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (addr == MAP_FAILED) {
        return false;
    }
    const auto *base = static_cast<const std::uint8_t *>(addr);
    const auto *hdr = reinterpret_cast<const LinkHeader *>(base);
    bool result = false;
    const std::uint64_t magic = hdr->magic.load(std::memory_order_acquire);
    if (magic == 0) {
        result = true; // member 0 died between create() and publish()
    } else if (magic == kLinkMagic && hdr->num_members >= 1 &&
               hdr->num_members <= kMaxGroupMembers &&
               link_region_offset(hdr->num_members) <= bytes) {
        result = true;
        for (std::uint32_t i = 0; i < hdr->num_members && result; ++i) {
            const auto *ln = reinterpret_cast<const MemberLine *>(
                base + kLinkMembersOffset + std::size_t{i} * kCacheLine);
            ProcessId id{};
            id.pid = ln->pid.load(std::memory_order_acquire);
            id.start_time = ln->start_time.load(std::memory_order_acquire);
            result = !process_alive(id);
        }
    }
    munmap(addr, bytes);
    return result;
}

} // namespace

int sweep_abandoned_links(const std::string &family,
                          std::uint64_t min_age_ns) noexcept
{
    DIR *dir = opendir("/dev/shm");
    if (dir == nullptr) {
        return 0;
    }
    const std::uint64_t now = realtime_ns();
    int unlinked = 0;
    std::string found;
    while (const dirent *e = readdir(dir)) {
        const std::string name = std::string("/") + e->d_name;
        if (!group_segment_family(name, &found) || found != family) {
            continue;
        }
        const int fd = shm_open(name.c_str(), O_RDONLY, 0);
        if (fd < 0) {
            continue; // gone meanwhile, or not ours to open
        }
        struct stat st {};
        const bool candidate =
            fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
            (st.st_mode & 07777) == 0600 &&
            ns_of(st.st_ctim) + min_age_ns <= now &&
            abandoned(fd, static_cast<std::size_t>(st.st_size));
        close(fd);
        if (!candidate) {
            continue;
        }
        // Unlink only the segment judged (a new group may have taken the
        // name since).
        if (unlink_segment_of(name, st.st_dev, st.st_ino)) {
            ++unlinked;
            log(LogLevel::kWarn,
                "unlinked %s: a group segment no live process holds (its "
                "members were killed before all had attached)",
                name.c_str());
        }
    }
    closedir(dir);
    return unlinked;
}

} // namespace uct_mm_common
