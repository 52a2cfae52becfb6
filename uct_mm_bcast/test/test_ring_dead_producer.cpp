// SPDX-License-Identifier: BSD-3-Clause
// A producer that dies between claiming a ring position and publishing it
// (the p2p receive FIFO: any process may produce) must not stall the
// readers: they skip the position once its claimer is gone. A live but slow
// claimer is waited for, never skipped.
#include "ring.h"

#include "ucg_test/thread_ranks.h" // SharedMapping

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <cstring>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace uct_mm_bcast;

namespace {

constexpr std::uint32_t kSlots = 4;
constexpr std::uint8_t kAmId = 3;

RingGeometry fifo_geometry()
{
    RingGeometry geo;
    geo.num_members = 1; // the receiver; producers are not members
    geo.num_slots = kSlots;
    geo.slot_bytes = 128;
    return geo;
}

// Claims one position in a child; the child publishes `value` after
// `publish_after`, or dies first if `die` (SIGKILL: no cleanup at all).
pid_t claim_in_child(ucg_test::SharedMapping &mem, bool die,
                     std::chrono::milliseconds publish_after,
                     std::uint32_t value)
{
    const pid_t pid = fork();
    if (pid != 0) {
        return pid;
    }
    Ring r;
    std::uint64_t pos;
    if (r.open(mem.data(), mem.size(), kNoOrigin, true) != Status::kOk ||
        r.claim(&pos) != Status::kOk) {
        _exit(1);
    }
    if (die) {
        raise(SIGKILL);
    }
    std::this_thread::sleep_for(publish_after);
    std::memcpy(r.payload(pos), &value, sizeof(value));
    r.publish(pos, sizeof(value), kAmId, SlotKind::kInline);
    _exit(0);
}

// This process sends values first..first+count-1 as a non-member producer
// while its reader drains the ring; returns what the reader got, in order.
std::vector<std::uint32_t> send_and_drain(ucg_test::SharedMapping &mem,
                                          std::uint32_t first,
                                          std::uint32_t count,
                                          std::size_t expect)
{
    Ring reader;
    REQUIRE(reader.open(mem.data(), mem.size(), 0, true) == Status::kOk);
    Ring producer;
    REQUIRE(producer.open(mem.data(), mem.size(), kNoOrigin, true) ==
            Status::kOk);
    std::vector<std::uint32_t> got;
    std::uint32_t next = first;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (got.size() < expect && std::chrono::steady_clock::now() < deadline) {
        std::uint64_t pos;
        if (next < first + count && producer.claim(&pos) == Status::kOk) {
            std::memcpy(producer.payload(pos), &next, sizeof(next));
            producer.publish(pos, sizeof(next), kAmId, SlotKind::kInline);
            ++next;
        }
        if (const SlotHeader *sh = reader.peek()) {
            std::uint32_t v;
            std::memcpy(&v, reader.peek_payload(), sizeof(v));
            CHECK(sh->am_id == kAmId);
            got.push_back(v);
            reader.consume();
        } else {
            std::this_thread::yield();
        }
    }
    return got;
}

std::vector<std::uint32_t> iota(std::uint32_t first, std::uint32_t count)
{
    std::vector<std::uint32_t> v(count);
    for (std::uint32_t i = 0; i < count; ++i) {
        v[i] = first + i;
    }
    return v;
}

} // namespace

TEST_CASE("ring: a producer killed between claim and publish is skipped",
          "[mm][bcast][fork]")
{
    ucg_test::SharedMapping mem(fifo_geometry().segment_bytes());
    Ring::format(mem.data(), fifo_geometry());
    const pid_t child =
        claim_in_child(mem, true, std::chrono::milliseconds(0), 0);
    int st = 0;
    REQUIRE(waitpid(child, &st, 0) == child);
    REQUIRE(WIFSIGNALED(st));
    // More messages than slots: the dead claim must be passed for the ring
    // to wrap.
    CHECK(send_and_drain(mem, 100, 3 * kSlots, 3 * kSlots) ==
          iota(100, 3 * kSlots));
}

TEST_CASE("ring: a slow live producer is waited for, in order",
          "[mm][bcast][fork]")
{
    ucg_test::SharedMapping mem(fifo_geometry().segment_bytes());
    Ring::format(mem.data(), fifo_geometry());
    // Slower than two liveness checks (StallWatch::kCheckNs).
    const pid_t child =
        claim_in_child(mem, false, std::chrono::milliseconds(150), 7);
    // Wait until the child's claim is in, so that it comes first.
    Ring probe;
    REQUIRE(probe.open(mem.data(), mem.size(), 0, true) == Status::kOk);
    while (!probe.behind()) {
        std::this_thread::yield();
    }
    std::vector<std::uint32_t> expect = {7};
    for (std::uint32_t v : iota(100, kSlots - 1)) {
        expect.push_back(v);
    }
    CHECK(send_and_drain(mem, 100, kSlots - 1, kSlots) == expect);
    int st = 0;
    REQUIRE(waitpid(child, &st, 0) == child);
    CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0));
}
