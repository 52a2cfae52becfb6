// SPDX-License-Identifier: BSD-3-Clause
// The receive FIFO with a forked producer that claims an element: killed
// before it publishes, the element is skipped (later messages still arrive,
// in order); alive but slow, it is waited for.
#include "fifo.h"

#include <ucg_test/fork_ranks.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <cstring>
#include <numeric>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace uct_mm_incast;

namespace {

constexpr uint32_t kElements = 4;
constexpr uint32_t kChildValue = 7;

// A child attaches to this process's FIFO and claims one element; once the
// claim is in (the parent waits for it), the child is killed (SIGKILL: no
// cleanup at all) or publishes kChildValue after `delay`.
pid_t claim_in_child(const FifoReceiver &rx, bool die,
                     std::chrono::milliseconds delay)
{
    const pid_t parent = getpid();
    return ucg_test::fork_until_ready([&](const auto &ready) {
        FifoSender tx;
        uint64_t index;
        std::byte *p;
        if (tx.attach(parent, rx.fd(), rx.bytes()) != UCS_OK ||
            (p = tx.claim(&index)) == nullptr) {
            _exit(1);
        }
        ready();
        if (die) {
            raise(SIGKILL);
        }
        std::this_thread::sleep_for(delay);
        std::memcpy(p, &kChildValue, sizeof(kChildValue));
        tx.publish(index, 1, sizeof(kChildValue));
    });
}

// Sends 100..100+count-1 from this process while draining the FIFO;
// returns what arrived, in order (gives up after 5 s).
std::vector<uint32_t> send_and_drain(FifoReceiver &rx, uint32_t count,
                                     std::size_t expect)
{
    FifoSender tx;
    REQUIRE(tx.attach(getpid(), rx.fd(), rx.bytes()) == UCS_OK);
    std::vector<uint32_t> got;
    uint32_t next = 100;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (got.size() < expect && std::chrono::steady_clock::now() < deadline) {
        uint64_t index;
        std::byte *p;
        if (next < 100 + count && (p = tx.claim(&index)) != nullptr) {
            std::memcpy(p, &next, sizeof(next));
            tx.publish(index, 1, sizeof(next));
            ++next;
        }
        if (rx.poll(1, [&](uint8_t, std::byte *data, uint32_t len) {
                uint32_t v;
                CHECK(len == sizeof(v));
                std::memcpy(&v, data, sizeof(v));
                got.push_back(v);
            }) == 0) {
            std::this_thread::yield();
        }
    }
    return got;
}

} // namespace

TEST_CASE("FIFO: a producer killed between claim and publish is skipped",
          "[mm_incast][fifo][fork]")
{
    FifoReceiver rx;
    REQUIRE(rx.init(kElements, 64) == UCS_OK);
    const pid_t child = claim_in_child(rx, true, {});
    int st = 0;
    REQUIRE(waitpid(child, &st, 0) == child);
    REQUIRE(WIFSIGNALED(st));
    // More messages than elements: the FIFO must wrap past the dead claim.
    std::vector<uint32_t> expect(3 * kElements);
    std::iota(expect.begin(), expect.end(), 100u);
    CHECK(send_and_drain(rx, 3 * kElements, expect.size()) == expect);
}

TEST_CASE("FIFO: a slow live producer is waited for, in order",
          "[mm_incast][fifo][fork]")
{
    FifoReceiver rx;
    REQUIRE(rx.init(kElements, 64) == UCS_OK);
    // Slower than two liveness checks (StallWatch::kCheckNs).
    const pid_t child =
        claim_in_child(rx, false, std::chrono::milliseconds(150));
    std::vector<uint32_t> expect(kElements);
    std::iota(expect.begin() + 1, expect.end(), 100u);
    expect[0] = kChildValue;
    CHECK(send_and_drain(rx, kElements - 1, expect.size()) == expect);
    int st = 0;
    REQUIRE(waitpid(child, &st, 0) == child);
    CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0));
}
