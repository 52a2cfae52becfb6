// SPDX-License-Identifier: BSD-3-Clause
// Segments: 0600, unique names, attach by name and by /proc link, unlink.
#include "uct_mm_common/segment.h"

#include "ucg_test/check.h"
#include "ucg_test/fork_ranks.h"
#include "ucg_test/shm_names.h"
#include "ucg_test/skip.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace uct_mm_common;

namespace {
const std::string kPrefix = "ucgt-mmc";

// What unique_segment_name(kPrefix) gives in this process: ctest runs the
// test cases side by side, so each sweeps and counts only its own.
std::string own_prefix()
{
    return kPrefix + "-" + std::to_string(getpid()) + "-";
}
} // namespace

TEST_CASE("segment is created 0600 and unlinked by its creator",
          "[mm][segment]")
{
    ucg_test::ShmSweeper sweeper(own_prefix());
    const std::string name = unique_segment_name(kPrefix);
    {
        Segment seg;
        REQUIRE(Segment::create(name, 4096, &seg) == Status::kOk);
        struct stat sb {};
        REQUIRE(fstat(seg.fd(), &sb) == 0);
        CHECK((sb.st_mode & 0777) == 0600);
        CHECK(sweeper.leftovers().size() == 1);
        // Zero-filled, writable.
        auto *bytes = static_cast<unsigned char *>(seg.data());
        CHECK(bytes[100] == 0);
        bytes[100] = 7;
        Segment other;
        REQUIRE(Segment::attach(name, 4096, &other) == Status::kOk);
        CHECK(static_cast<unsigned char *>(other.data())[100] == 7);
        CHECK(!other.linked());
    }
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("segment names are unique and attach reports a missing one",
          "[mm][segment]")
{
    ucg_test::ShmSweeper sweeper(own_prefix());
    CHECK(unique_segment_name(kPrefix) != unique_segment_name(kPrefix));
    Segment seg;
    CHECK(Segment::attach("/" + kPrefix + "-missing", 64, &seg) ==
          Status::kNotFound);
    const std::string name = unique_segment_name(kPrefix);
    Segment a;
    REQUIRE(Segment::create(name, 64, &a) == Status::kOk);
    Segment b; // O_EXCL: a second creator fails, the first keeps the name
    CHECK(Segment::create(name, 64, &b) == Status::kIoError);
    CHECK(sweeper.leftovers().size() == 1);
}

TEST_CASE("proc-link segment is shared with forked processes and leaves "
          "nothing in /dev/shm",
          "[mm][segment][fork]")
{
    ucg_test::ShmSweeper sweeper(own_prefix());
    Segment seg;
    REQUIRE(Segment::create_unlinked(kPrefix, 4096, &seg) == Status::kOk);
    CHECK(sweeper.leftovers().empty());
    auto *counter = static_cast<std::atomic<int> *>(seg.data());
    const pid_t owner = getpid();
    const int fd = seg.fd();
    auto result = ucg_test::run_fork_ranks(ucg_test::ForkOptions(3), [&](int) {
        Segment mine;
        UCG_CHECK(Segment::attach_proc(owner, fd, 4096, &mine) == Status::kOk);
        static_cast<std::atomic<int> *>(mine.data())->fetch_add(1);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(counter->load() == 3);
}

TEST_CASE("named segment: the last attacher unlinks it", "[mm][segment][fork]")
{
    ucg_test::ShmSweeper sweeper(own_prefix());
    const std::string name = unique_segment_name(kPrefix);
    constexpr int kMembers = 4;
    Segment seg;
    REQUIRE(Segment::create(name, 4096, &seg) == Status::kOk);
    auto *attached = static_cast<std::atomic<int> *>(seg.data());
    attached->store(1); // the creator
    auto result =
        ucg_test::run_fork_ranks(ucg_test::ForkOptions(kMembers - 1), [&](int) {
            Segment mine;
            UCG_CHECK(Segment::attach(name, 4096, &mine) == Status::kOk);
            auto *n = static_cast<std::atomic<int> *>(mine.data());
            if (n->fetch_add(1) + 1 == kMembers) {
                unlink_segment(name);
            }
        });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(attached->load() == kMembers);
    CHECK(sweeper.leftovers().empty());
}

namespace {

// Kilobytes of the mapping at `addr` whose page-table entries are dirty
// (smaps' Shared_Dirty + Private_Dirty): written by this process.
long dirty_kb(const void *addr)
{
    char start[32];
    std::snprintf(start, sizeof(start), "%lx-",
                  reinterpret_cast<unsigned long>(addr));
    std::FILE *f = std::fopen("/proc/self/smaps", "r");
    if (f == nullptr) {
        return -1;
    }
    char line[512];
    bool in = false;
    long kb = 0;
    while (std::fgets(line, sizeof(line), f) != nullptr) {
        unsigned long lo = 0;
        unsigned long hi = 0;
        if (std::sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { // a header
            if (in) {
                break;
            }
            in = std::strncmp(line, start, std::strlen(start)) == 0;
        }
        long v = 0;
        if (in && (std::sscanf(line, "Shared_Dirty: %ld kB", &v) == 1 ||
                   std::sscanf(line, "Private_Dirty: %ld kB", &v) == 1)) {
            kb += v;
        }
    }
    std::fclose(f);
    return kb;
}

} // namespace

TEST_CASE("segments are mapped writable in every page before first use, "
          "their bytes unchanged",
          "[mm][segment]")
{
    ucg_test::ShmSweeper sweeper(own_prefix());
    const std::string name = unique_segment_name(kPrefix);
    constexpr std::size_t kBytes = 64 * 1024;
    Segment seg;
    REQUIRE(Segment::create(name, kBytes, &seg) == Status::kOk);
    CHECK(dirty_kb(seg.data()) == static_cast<long>(kBytes / 1024));
    auto *bytes = static_cast<unsigned char *>(seg.data());
    for (std::size_t off = 0; off < kBytes; off += 4096) {
        bytes[off] = static_cast<unsigned char>(off / 4096 + 1);
    }
    Segment other;
    REQUIRE(Segment::attach(name, kBytes, &other) == Status::kOk);
    CHECK(dirty_kb(other.data()) == static_cast<long>(kBytes / 1024));
    const auto *seen = static_cast<const unsigned char *>(other.data());
    for (std::size_t off = 0; off < kBytes; off += 4096) {
        UCG_CHECK_EQ(seen[off], static_cast<unsigned char>(off / 4096 + 1));
    }
}

// The pages are taken at creation (map_fd touches every one): a full
// /dev/shm is a named error there, not SIGBUS. The child mounts a 1 MiB
// /dev/shm of its own.
TEST_CASE("segment creation on a full /dev/shm fails with kNoMemory and "
          "leaves no name",
          "[mm][segment][fork]")
{
    if (geteuid() != 0) {
        UCG_SKIP("needs root (a mount namespace and a tmpfs of its own)");
    }
    ucg_test::ForkOptions opts(1);
    const auto res = ucg_test::run_fork_ranks(opts, [](int) {
        UCG_CHECK(unshare(CLONE_NEWNS) == 0);
        UCG_CHECK(mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) ==
                  0);
        UCG_CHECK(mount("ucg-test-shm", "/dev/shm", "tmpfs", 0,
                        "size=1m,mode=1777") == 0);
        const std::string name = unique_segment_name(kPrefix);
        Segment seg;
        UCG_CHECK(Segment::create(name, 4 << 20, &seg) == Status::kNoMemory);
        dev_t dev;
        ino_t ino;
        UCG_CHECK(!segment_inode(name, &dev, &ino));
        UCG_CHECK(Segment::create(name, 512 << 10, &seg) == Status::kOk);
    });
    INFO(res.summary());
    CHECK(res.ok);
}
