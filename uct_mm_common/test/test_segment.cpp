// SPDX-License-Identifier: BSD-3-Clause
// Segments: 0600, unique names, attach by name and by /proc link, unlink.
#include "uct_mm_common/segment.h"

#include "ucg_test/check.h"
#include "ucg_test/fork_ranks.h"
#include "ucg_test/shm_names.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
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
