// SPDX-License-Identifier: BSD-3-Clause
// The receive FIFO with forked producers: one killed between claiming an
// element and publishing it is skipped (the others' messages still arrive,
// in order); a live but slow one is waited for.
#include "fifo.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <cstring>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace uct_mm_incast;

namespace {

constexpr uint32_t kElements = 4;

// A child attaches to this process's FIFO, claims one element and is
// killed (SIGKILL: no cleanup at all) before it publishes it.
pid_t claim_and_die_in_child(const FifoReceiver &rx)
{
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid != 0) {
        return pid;
    }
    FifoSender tx;
    uint64_t index;
    std::byte *p;
    if (tx.attach(parent, rx.fd(), rx.bytes()) != UCS_OK ||
        (p = tx.claim(&index)) == nullptr) {
        _exit(1);
    }
    p[0] = std::byte{0}; // the claim is ours
    raise(SIGKILL);
    _exit(2);
}

// Sends first..first+count-1 from this process while draining the FIFO;
// returns what arrived, in order (gives up after 5 s).
std::vector<uint32_t> send_and_drain(FifoReceiver &rx, uint32_t first,
                                     uint32_t count, std::size_t expect)
{
    FifoSender tx;
    REQUIRE(tx.attach(getpid(), rx.fd(), rx.bytes()) == UCS_OK);
    std::vector<uint32_t> got;
    uint32_t next = first;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (got.size() < expect && std::chrono::steady_clock::now() < deadline) {
        uint64_t index;
        std::byte *p;
        if (next < first + count && (p = tx.claim(&index)) != nullptr) {
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

std::vector<uint32_t> iota(uint32_t first, uint32_t count)
{
    std::vector<uint32_t> v(count);
    for (uint32_t i = 0; i < count; ++i) {
        v[i] = first + i;
    }
    return v;
}

} // namespace

TEST_CASE("FIFO: a producer killed between claim and publish is skipped",
          "[mm_incast][fifo][fork]")
{
    FifoReceiver rx;
    REQUIRE(rx.init(kElements, 64) == UCS_OK);
    const pid_t child = claim_and_die_in_child(rx);
    int st = 0;
    REQUIRE(waitpid(child, &st, 0) == child);
    REQUIRE(WIFSIGNALED(st));
    // More messages than elements: the FIFO must wrap past the dead claim.
    CHECK(send_and_drain(rx, 100, 3 * kElements, 3 * kElements) ==
          iota(100, 3 * kElements));
}

TEST_CASE("FIFO: a slow live producer is waited for, in order",
          "[mm_incast][fifo][fork]")
{
    FifoReceiver rx;
    REQUIRE(rx.init(kElements, 64) == UCS_OK);
    // Slower than two liveness checks (StallWatch::kCheckNs); the claim
    // comes first because the child publishes to a pipe once it has it.
    int ready[2];
    REQUIRE(pipe(ready) == 0);
    const pid_t parent = getpid();
    const pid_t child = fork();
    if (child == 0) {
        close(ready[0]);
        FifoSender tx;
        uint64_t index;
        std::byte *p;
        if (tx.attach(parent, rx.fd(), rx.bytes()) != UCS_OK ||
            (p = tx.claim(&index)) == nullptr) {
            _exit(1);
        }
        const char c = 1;
        if (write(ready[1], &c, 1) != 1) {
            _exit(1);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        const uint32_t value = 7;
        std::memcpy(p, &value, sizeof(value));
        tx.publish(index, 1, sizeof(value));
        _exit(0);
    }
    close(ready[1]);
    char c = 0;
    REQUIRE(read(ready[0], &c, 1) == 1);
    close(ready[0]);
    std::vector<uint32_t> expect = {7};
    for (uint32_t v : iota(100, kElements - 1)) {
        expect.push_back(v);
    }
    CHECK(send_and_drain(rx, 100, kElements - 1, kElements) == expect);
    int st = 0;
    REQUIRE(waitpid(child, &st, 0) == child);
    CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0));
}
