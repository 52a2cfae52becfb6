// SPDX-License-Identifier: BSD-3-Clause
// Bad input to every ucs_lock entry: a clear status and exactly one log
// line, never a crash or a silent success; good calls log nothing.
#include "lock_test_util.h"
#include "ucg_test/thread_ranks.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <functional>

using namespace ucg_test;
using namespace ucs_lock_test;

namespace {

// Runs `call`, expecting `status` and one log line containing `needle`.
void check_refused(const std::function<ucs_status_t()> &call,
                   ucs_status_t status, const char *needle)
{
    StderrCapture capture;
    const ucs_status_t got = call();
    const std::string log = capture.finish();
    CAPTURE(log);
    CHECK(got == status);
    CHECK(count_lines(log) == 1);
    CHECK_THAT(log, Catch::Contains("[ucs_lock]") && Catch::Contains(needle));
}

// Every entry that takes an existing lock, refused the same way.
void check_all_refused(ucs_lock_t *lock, const char *needle)
{
    check_refused([&] { return ucs_lock_acquire(lock); }, UCS_ERR_INVALID_PARAM,
                  needle);
    check_refused([&] { return ucs_lock_try_acquire(lock); },
                  UCS_ERR_INVALID_PARAM, needle);
    check_refused([&] { return ucs_lock_release(lock); }, UCS_ERR_INVALID_PARAM,
                  needle);
    check_refused([&] { return ucs_lock_mark_consistent(lock); },
                  UCS_ERR_INVALID_PARAM, needle);
    check_refused([&] { return ucs_lock_destroy(lock); }, UCS_ERR_INVALID_PARAM,
                  needle);
}

const auto kKinds = {UCS_LOCK_KIND_MUTEX, UCS_LOCK_KIND_SPIN};

} // namespace

TEST_CASE("the lock memory size and alignment are documented and queryable",
          "[lock]")
{
    STATIC_REQUIRE(sizeof(ucs_lock_t) == UCS_LOCK_SIZE);
    STATIC_REQUIRE(alignof(ucs_lock_t) == UCS_LOCK_ALIGN);
    for (auto kind : kKinds) {
        std::size_t size = 0, align = 0;
        REQUIRE(ucs_lock_mem_query(kind, &size, &align) == UCS_OK);
        CHECK(size > 0);
        CHECK(size <= UCS_LOCK_SIZE);
        CHECK(align == UCS_LOCK_ALIGN);
    }
    std::size_t value = 0;
    check_refused(
        [&] { return ucs_lock_mem_query(UCS_LOCK_KIND_SPIN, nullptr, &value); },
        UCS_ERR_INVALID_PARAM, "NULL");
    check_refused(
        [&] { return ucs_lock_mem_query(UCS_LOCK_KIND_SPIN, &value, nullptr); },
        UCS_ERR_INVALID_PARAM, "NULL");
    check_refused(
        [&] { return ucs_lock_mem_query(UCS_LOCK_KIND_LAST, &value, &value); },
        UCS_ERR_INVALID_PARAM, "unknown lock kind");
}

TEST_CASE("good calls succeed and log nothing", "[lock]")
{
    for (auto kind : kKinds) {
        CAPTURE(kind_name(kind));
        ucs_lock_t lock{};
        StderrCapture capture;
        CHECK(ucs_lock_init(&lock, kind) == UCS_OK);
        CHECK(ucs_lock_acquire(&lock) == UCS_OK);
        CHECK(ucs_lock_mark_consistent(&lock) == UCS_OK);
        CHECK(ucs_lock_release(&lock) == UCS_OK);
        CHECK(ucs_lock_try_acquire(&lock) == UCS_OK);
        CHECK(ucs_lock_release(&lock) == UCS_OK);
        CHECK(ucs_lock_destroy(&lock) == UCS_OK);
        CHECK(ucs_lock_init(&lock, kind) == UCS_OK); // reuse after destroy
        CHECK(ucs_lock_destroy(&lock) == UCS_OK);
        CHECK(capture.finish().empty());
    }
}

TEST_CASE("a null lock is refused by every entry", "[lock]")
{
    for (auto kind : kKinds) {
        check_refused([&] { return ucs_lock_init(nullptr, kind); },
                      UCS_ERR_INVALID_PARAM, "NULL");
    }
    check_all_refused(nullptr, "NULL");
}

TEST_CASE("misaligned lock memory is refused by every entry", "[lock]")
{
    alignas(UCS_LOCK_ALIGN) unsigned char mem[2 * UCS_LOCK_SIZE] = {};
    auto *lock = reinterpret_cast<ucs_lock_t *>(mem + 8);
    for (auto kind : kKinds) {
        check_refused([&] { return ucs_lock_init(lock, kind); },
                      UCS_ERR_INVALID_PARAM, "not aligned");
    }
    check_all_refused(lock, "not aligned");
}

TEST_CASE("an unknown kind is refused and initialises nothing", "[lock]")
{
    ucs_lock_t lock{};
    for (int bad : {-1, static_cast<int>(UCS_LOCK_KIND_LAST), 77}) {
        CAPTURE(bad);
        check_refused(
            [&] {
                return ucs_lock_init(&lock, static_cast<ucs_lock_kind_t>(bad));
            },
            UCS_ERR_INVALID_PARAM, "unknown lock kind");
    }
    check_refused([&] { return ucs_lock_acquire(&lock); },
                  UCS_ERR_INVALID_PARAM, "not initialised");
}

TEST_CASE("uninitialised memory is refused by every entry", "[lock]")
{
    ucs_lock_t lock{};
    SECTION("zeroed")
    {
        check_all_refused(&lock, "not initialised");
    }
    SECTION("garbage")
    {
        std::memset(&lock, 0xab, sizeof(lock));
        check_all_refused(&lock, "not initialised");
    }
}

TEST_CASE("a lock whose kind word is corrupt is refused", "[lock]")
{
    ucs_lock_t lock{};
    REQUIRE(ucs_lock_init(&lock, UCS_LOCK_KIND_SPIN) == UCS_OK);
    const std::uint32_t bad_kind = 9; // the word after the magic
    std::memcpy(reinterpret_cast<unsigned char *>(&lock) + 4, &bad_kind, 4);
    check_refused([&] { return ucs_lock_acquire(&lock); },
                  UCS_ERR_INVALID_PARAM, "corrupt");
}

TEST_CASE("double destroy and use after destroy are refused", "[lock]")
{
    for (auto kind : kKinds) {
        CAPTURE(kind_name(kind));
        ucs_lock_t lock{};
        REQUIRE(ucs_lock_init(&lock, kind) == UCS_OK);
        REQUIRE(ucs_lock_destroy(&lock) == UCS_OK);
        check_all_refused(&lock, "destroyed");
    }
}

TEST_CASE("init over a live lock is refused and leaves it working", "[lock]")
{
    for (auto kind : kKinds) {
        CAPTURE(kind_name(kind));
        ucs_lock_t lock{};
        REQUIRE(ucs_lock_init(&lock, kind) == UCS_OK);
        REQUIRE(ucs_lock_acquire(&lock) == UCS_OK);
        check_refused([&] { return ucs_lock_init(&lock, kind); },
                      UCS_ERR_ALREADY_EXISTS, "live lock");
        CHECK(ucs_lock_release(&lock) == UCS_OK);
        CHECK(ucs_lock_destroy(&lock) == UCS_OK);
    }
}

TEST_CASE("misuse by the caller is refused without changing the lock", "[lock]")
{
    for (auto kind : kKinds) {
        CAPTURE(kind_name(kind));
        ucs_lock_t lock{};
        REQUIRE(ucs_lock_init(&lock, kind) == UCS_OK);
        // Free lock: nobody to release for, nothing to mark.
        check_refused([&] { return ucs_lock_release(&lock); },
                      UCS_ERR_INVALID_PARAM, "does not hold");
        check_refused([&] { return ucs_lock_mark_consistent(&lock); },
                      UCS_ERR_INVALID_PARAM, "does not hold");
        REQUIRE(ucs_lock_acquire(&lock) == UCS_OK);
        // Held by the caller: acquiring again would deadlock.
        check_refused([&] { return ucs_lock_acquire(&lock); }, UCS_ERR_BUSY,
                      "already holds");
        check_refused([&] { return ucs_lock_destroy(&lock); }, UCS_ERR_BUSY,
                      "held");
        // Still held exactly once.
        CHECK(ucs_lock_release(&lock) == UCS_OK);
        CHECK(ucs_lock_try_acquire(&lock) == UCS_OK);
        CHECK(ucs_lock_release(&lock) == UCS_OK);
        CHECK(ucs_lock_destroy(&lock) == UCS_OK);
    }
}
