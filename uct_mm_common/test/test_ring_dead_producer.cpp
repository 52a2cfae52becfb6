// SPDX-License-Identifier: BSD-3-Clause
// A producer that dies between claiming a ring position and publishing it
// (the p2p receive FIFO: any process may produce) must not stall the
// readers: they skip the position once its claimer is gone. A live but slow
// claimer is waited for, never skipped.
#include "channel_test_util.h"
#include "uct_mm_common/doorbell.h"
#include "uct_mm_common/ring.h"

#include "ucg_test/fork_ranks.h"
#include "ucg_test/skip.h"
#include "ucg_test/thread_ranks.h" // SharedMapping

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <poll.h>
#include <sched.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace uct_mm_common;

namespace {

constexpr std::uint32_t kSlots = 4;
constexpr std::uint8_t kAmId = 3;
constexpr std::uint32_t kChildValue = 7;

// A zero-copy send's completion (Channel::progress_completions).
struct Completion {
    bool called = false;
    Status status = Status::kOk;
    static void record(void *arg, void *, Status s)
    {
        auto *d = static_cast<Completion *>(arg);
        d->called = true;
        d->status = s;
    }
};

RingGeometry fifo_geometry()
{
    RingGeometry geo;
    geo.num_members = 1; // the receiver; producers are not members
    geo.num_slots = kSlots;
    geo.slot_bytes = 128;
    return geo;
}

// A formatted FIFO of kSlots slots in a shared mapping (made before any
// fork), and rings on it.
struct Fifo {
    Fifo() : mem(fifo_geometry().segment_bytes())
    {
        Ring::format(mem.data(), fifo_geometry());
    }
    /// The reader (member 0) or a producer (kNoOrigin).
    Ring open(std::uint32_t index)
    {
        Ring r;
        REQUIRE(r.open(mem.data(), mem.size(), index, true) == Status::kOk);
        return r;
    }
    ucg_test::SharedMapping mem;
};

// A child claims one position as a non-member producer; once the claim is
// in (the parent waits for it), the child is killed (SIGKILL: no cleanup at
// all) or publishes kChildValue after `delay`.
pid_t claim_in_child(ucg_test::SharedMapping &mem, bool die,
                     std::chrono::milliseconds delay)
{
    return ucg_test::fork_until_ready([&](const auto &ready) {
        Ring r;
        std::uint64_t pos;
        if (r.open(mem.data(), mem.size(), kNoOrigin, true) != Status::kOk ||
            r.claim(&pos) != Status::kOk) {
            _exit(1);
        }
        ready();
        if (die) {
            raise(SIGKILL);
        }
        std::this_thread::sleep_for(delay);
        std::memcpy(r.payload(pos), &kChildValue, sizeof(kChildValue));
        r.publish(pos, sizeof(kChildValue), kAmId, SlotKind::kInline);
    });
}

// This process sends 100..100+count-1 as a non-member producer while its
// reader drains the ring; returns what the reader got, in order (gives up
// after 5 s).
std::vector<std::uint32_t> send_and_drain(Fifo &fifo, std::uint32_t count,
                                          std::size_t expect)
{
    Ring reader = fifo.open(0);
    Ring producer = fifo.open(kNoOrigin);
    std::vector<std::uint32_t> got;
    std::uint32_t next = 100;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (got.size() < expect && std::chrono::steady_clock::now() < deadline) {
        std::uint64_t pos;
        if (next < 100 + count && producer.claim(&pos) == Status::kOk) {
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

} // namespace

TEST_CASE("ring: a producer killed between claim and publish is skipped",
          "[mm][fifo][fork]")
{
    Fifo fifo;
    const pid_t child = claim_in_child(fifo.mem, true, {});
    int st = 0;
    REQUIRE(waitpid(child, &st, 0) == child);
    REQUIRE(WIFSIGNALED(st));
    // More messages than slots: the ring must wrap past the dead claim.
    std::vector<std::uint32_t> expect(3 * kSlots);
    std::iota(expect.begin(), expect.end(), 100u);
    CHECK(send_and_drain(fifo, 3 * kSlots, expect.size()) == expect);
}

TEST_CASE("ring: a slow live producer is waited for, in order",
          "[mm][fifo][fork]")
{
    Fifo fifo;
    // Slower than two liveness checks (StallWatch::kCheckNs).
    const pid_t child =
        claim_in_child(fifo.mem, false, std::chrono::milliseconds(150));
    std::vector<std::uint32_t> expect(kSlots);
    std::iota(expect.begin() + 1, expect.end(), 100u);
    expect[0] = kChildValue;
    CHECK(send_and_drain(fifo, kSlots - 1, expect.size()) == expect);
    int st = 0;
    REQUIRE(waitpid(child, &st, 0) == child);
    CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0));
}

namespace {

Ring *g_late_producer = nullptr; // publishes position 0 from the probe

void publish_position_0()
{
    g_stall_watch_probe = nullptr; // once
    std::memcpy(g_late_producer->payload(0), &kChildValue, sizeof(kChildValue));
    g_late_producer->publish(0, sizeof(kChildValue), kAmId, SlotKind::kInline);
}

} // namespace

// The window of issue 33: the reader loaded the claim, then the producer
// published and died, then the reader found it dead. The probe publishes
// in that window (the claimer is already dead): the message is delivered.
TEST_CASE("ring: a message published just before its producer died is "
          "delivered, not skipped",
          "[mm][fifo][fork]")
{
    Fifo fifo;
    const pid_t child = claim_in_child(fifo.mem, true, {});
    int st = 0;
    REQUIRE(waitpid(child, &st, 0) == child);
    Ring late = fifo.open(kNoOrigin);
    g_late_producer = &late;
    g_stall_watch_probe = publish_position_0;
    std::vector<std::uint32_t> expect(kSlots);
    std::iota(expect.begin() + 1, expect.end(), 100u);
    expect[0] = kChildValue;
    const std::vector<std::uint32_t> got =
        send_and_drain(fifo, kSlots - 1, expect.size());
    g_stall_watch_probe = nullptr;
    CHECK(got == expect);
}

// A claim whose pid is now another process's (pid reuse): the start time in
// the claim tells them apart, and the position is skipped.
TEST_CASE("ring: a claim whose pid now runs another process is skipped",
          "[mm][fifo]")
{
    const ProcessId me = self_process_id();
    REQUIRE(me.start_time != 0);
    CHECK_FALSE(claimer_dead(claim_word(5, me), 5));
    ProcessId other = me;
    other.start_time += 1; // the claimer that had this pid before us
    CHECK(claimer_dead(claim_word(5, other), 5));
    CHECK(claimer_of(claim_word(5, me)) == me.pid);
    CHECK(is_claim_of(claim_word(5 + (1u << 24), me), 5)); // modulo 2^24

    Fifo fifo;
    Ring producer = fifo.open(kNoOrigin);
    std::uint64_t pos = 0;
    REQUIRE(producer.claim(&pos) == Status::kOk);
    REQUIRE(pos == 0);
    // Rewrite the claim as the earlier owner of our pid's.
    auto *sh = reinterpret_cast<SlotHeader *>(producer.payload(0) -
                                              sizeof(SlotHeader));
    sh->seq.store(claim_word(0, other));
    std::vector<std::uint32_t> expect(kSlots);
    std::iota(expect.begin(), expect.end(), 100u);
    CHECK(send_and_drain(fifo, kSlots, expect.size()) == expect);
}

// The receive FIFO's idle test (Channel::poll's inline fast path): quiet
// only while the cursor's slot holds neither a claim nor a message, so a
// claim still reaches peek() and its stall watch; across wrap-arounds too.
TEST_CASE("ring: quiet only while nothing is claimed or published at the "
          "cursor",
          "[mm][fifo]")
{
    Fifo fifo;
    Ring reader = fifo.open(0);
    Ring producer = fifo.open(kNoOrigin);
    for (std::uint32_t i = 0; i < 3 * kSlots; ++i) {
        CHECK(reader.quiet());
        std::uint64_t pos;
        REQUIRE(producer.claim(&pos) == Status::kOk);
        CHECK_FALSE(reader.quiet()); // claimed, not published yet
        std::memcpy(producer.payload(pos), &i, sizeof(i));
        producer.publish(pos, sizeof(i), kAmId, SlotKind::kInline);
        CHECK_FALSE(reader.quiet());
        REQUIRE(reader.peek() != nullptr);
        std::uint32_t v;
        std::memcpy(&v, reader.peek_payload(), sizeof(v));
        CHECK(v == i);
        reader.consume();
    }
    CHECK(reader.quiet());
}

// Issue 33: a zero-copy send on a ring of several readers fails when one
// reader dies, but the sender's buffer is its own again only once no live
// reader can still copy from it: the live reader here has not polled yet.
TEST_CASE("channel: a failed zero-copy send completes only after every "
          "live reader is done with it",
          "[mm][fifo][fork]")
{
    RingGeometry geo;
    geo.num_members = 3; // 0 sends, 1 dies, 2 reads late
    geo.num_slots = 4;
    geo.slot_bytes = 256;
    ucg_test::SharedMapping mem(geo.segment_bytes());
    Ring::format(mem.data(), geo);
    const pid_t dead = ucg_test::fork_until_ready([&](const auto &ready) {
        Ring r;
        if (r.open(mem.data(), mem.size(), 1, false) != Status::kOk) {
            _exit(1);
        }
        r.join();
        ready();
        raise(SIGKILL);
    });
    int st = 0;
    REQUIRE(waitpid(dead, &st, 0) == dead);
    ChannelConfig cfg;
    cfg.timeout_ms = 20;
    Ring r0, r2;
    REQUIRE(r0.open(mem.data(), mem.size(), 0, false) == Status::kOk);
    REQUIRE(r2.open(mem.data(), mem.size(), 2, false) == Status::kOk);
    r0.join();
    r2.join();
    Channel sender, late;
    sender.init(r0, cfg);
    late.init(r2, cfg);
    std::vector<std::uint8_t> buf(64 << 10, 0x5a);
    RemoteIov iov{reinterpret_cast<std::uint64_t>(buf.data()), buf.size()};
    REQUIRE(sender.send_cma(2, nullptr, 0, &iov, 1, nullptr) == Status::kOk);
    Completion done;
    // The sender finds member 1 dead and fails; member 2 has not read.
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (sender.state() == Status::kOk &&
           std::chrono::steady_clock::now() < until) {
        sender.progress_completions(Completion::record, &done);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    REQUIRE(sender.state() == Status::kPeerDead);
    for (int i = 0; i < 50; ++i) { // 50 ms more: still not complete
        sender.progress_completions(Completion::record, &done);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CHECK_FALSE(done.called);
    // Member 2 polls: it reads the message or sees the failure and
    // leaves; either way the sender completes then, with the failure.
    std::vector<test::Received> inbox;
    while (!done.called && std::chrono::steady_clock::now() < until) {
        late.poll(16, test::record, &inbox);
        late.check_health();
        sender.progress_completions(Completion::record, &done);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    CHECK(done.called);
    CHECK(done.status == Status::kPeerDead);
}

namespace {

bool g_rewrote = false;

void rewrite_length(SlotHeader *sh)
{
    g_deliver_probe = nullptr; // once
    g_rewrote = true;
    __atomic_store_n(&sh->length, std::uint32_t{1} << 30, __ATOMIC_RELAXED);
}

} // namespace

// Issue 33: a slot's length rewritten after the receiver checked it (a
// racing writer of the same uid) is not what the receiver delivers.
TEST_CASE("channel: a receiver delivers the slot length it checked, not a "
          "later rewrite",
          "[mm][fifo]")
{
    Fifo fifo;
    Ring owner = fifo.open(0);
    Ring producer = fifo.open(kNoOrigin);
    std::uint64_t pos = 0;
    REQUIRE(producer.claim(&pos) == Status::kOk);
    std::memcpy(producer.payload(pos), &kChildValue, sizeof(kChildValue));
    producer.publish(pos, sizeof(kChildValue), kAmId, SlotKind::kInline);
    Channel ch;
    ch.init(owner, ChannelConfig{});
    std::vector<test::Received> inbox;
    g_deliver_probe = rewrite_length;
    ch.poll(16, test::record, &inbox);
    g_deliver_probe = nullptr;
    CHECK(g_rewrote);
    REQUIRE(inbox.size() == 1);
    CHECK(inbox[0].length == sizeof(kChildValue));
}

// Issue 29: a slot word no producer writes (a corrupt peer's) at the head
// does not hold a producer's claim for ever: the ring reads as full.
TEST_CASE("ring: a garbage sequence word at the head reads as a full ring",
          "[mm][fifo][trust]")
{
    Fifo fifo;
    Ring producer = fifo.open(kNoOrigin);
    auto *sh = reinterpret_cast<SlotHeader *>(producer.payload(0) -
                                              sizeof(SlotHeader));
    sh->seq.store(12345);
    std::uint64_t pos = 0;
    CHECK(producer.claim(&pos) == Status::kNoResource);
}

namespace {

// A child sends one zero-copy message of `bytes` to the FIFO as a
// non-member producer, then dies (SIGKILL) or, when `die` is false, waits
// up to 5 s for its completion: exit 0 when it failed with kIoError and a
// send after it fails too, 1 otherwise.
pid_t cma_in_child(ucg_test::SharedMapping &mem, std::size_t bytes, bool die)
{
    return ucg_test::fork_until_ready([&](const auto &ready) {
        Ring r;
        if (r.open(mem.data(), mem.size(), kNoOrigin, true) != Status::kOk) {
            _exit(2);
        }
        Channel ch;
        ch.init(r, ChannelConfig{});
        std::vector<std::uint8_t> buf(bytes, 0x5a);
        RemoteIov iov{reinterpret_cast<std::uint64_t>(buf.data()), buf.size()};
        if (ch.send_cma(kAmId, nullptr, 0, &iov, 1, nullptr) != Status::kOk) {
            _exit(3);
        }
        ready();
        if (die) {
            raise(SIGKILL);
        }
        Completion done;
        const auto until =
            std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!done.called && std::chrono::steady_clock::now() < until) {
            ch.progress_completions(Completion::record, &done);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        _exit(done.called && done.status == Status::kIoError &&
                      ch.send_short(kAmId, 0, nullptr, 0) == Status::kIoError
                  ? 0
                  : 1);
    });
}

// This process sends seq 0..count-1 (origin 1) to the FIFO, inline, while
// `owner` (member 0) receives; until it has them all and
// `child` (if > 0) has exited (its exit status in *child_status). Gives
// up after 10 s.
std::vector<test::Received> send_beside(Fifo &fifo, Channel &owner,
                                        unsigned count, pid_t child,
                                        int *child_status)
{
    Channel producer;
    producer.init(fifo.open(kNoOrigin), ChannelConfig{});
    std::vector<test::Received> got;
    unsigned next = 0;
    bool exited = false;
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while ((got.size() < count || !exited) &&
           std::chrono::steady_clock::now() < until) {
        const std::uint64_t header = std::uint64_t{next} << 32 | 1u;
        if (next < count &&
            producer.send_short(kAmId, header, nullptr, 0) == Status::kOk) {
            ++next;
        }
        owner.poll(4, test::record, &got);
        exited = exited || child <= 0 ||
                 waitpid(child, child_status, WNOHANG) == child;
        std::this_thread::yield();
    }
    return got;
}

} // namespace

// Issue 29: a sender killed after it published a zero-copy message cannot
// be read; the receiver drops that message and goes on with the others'.
TEST_CASE("channel: a sender killed mid zero-copy leaves the others' "
          "messages flowing",
          "[mm][fifo][fork]")
{
    Fifo fifo;
    Channel owner;
    owner.init(fifo.open(0), ChannelConfig{});
    const pid_t child = cma_in_child(fifo.mem, 512, true);
    int st = 0;
    REQUIRE(waitpid(child, &st, 0) == child);
    REQUIRE(WIFSIGNALED(st));
    const std::vector<test::Received> got =
        send_beside(fifo, owner, 3 * kSlots, 0, &st);
    CHECK(owner.state() == Status::kOk);
    REQUIRE(got.size() == 3 * kSlots); // the dead sender's is not among them
    for (unsigned i = 0; i < got.size(); ++i) {
        CHECK((got[i].origin == 1 && got[i].seq == i));
    }
}

// Issue 29: a live sender whose zero-copy message the receiver refuses
// (larger than the receiver's max_zcopy) fails its own sends; the FIFO
// goes on for the others.
TEST_CASE("channel: a zero-copy message the receiver refuses fails that "
          "sender alone",
          "[mm][fifo][fork]")
{
    Fifo fifo;
    Channel owner;
    ChannelConfig small;
    small.max_zcopy = 1024;
    owner.init(fifo.open(0), small);
    const pid_t child = cma_in_child(fifo.mem, 4096, false);
    int st = -1;
    const std::vector<test::Received> got =
        send_beside(fifo, owner, 3 * kSlots, child, &st);
    CHECK(owner.state() == Status::kOk);
    CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0));
    REQUIRE(got.size() == 3 * kSlots);
    for (unsigned i = 0; i < got.size(); ++i) {
        CHECK((got[i].origin == 1 && got[i].seq == i));
    }
}

// Issue 29: anyone may send datagrams to a doorbell's name; drain() reads
// at most kDrainMax a call, so a flood cannot hold the owner in it, and
// what is left keeps the descriptor readable (the owner wakes again). A
// host queues only net.unix.max_dgram_qlen datagrams (10 by default) per
// socket: the child raises it in a network namespace of its own, so that
// more than a batch wait.
TEST_CASE("doorbell: a flood of datagrams is drained a bounded batch per "
          "call",
          "[mm][fifo][fork]")
{
    if (geteuid() != 0) {
        UCG_SKIP("needs root (a network namespace of its own)");
    }
    ucg_test::ForkOptions opts(1);
    const auto res = ucg_test::run_fork_ranks(opts, [](int) {
        UCG_CHECK(unshare(CLONE_NEWNET) == 0);
        std::FILE *f = std::fopen("/proc/sys/net/unix/max_dgram_qlen", "w");
        UCG_CHECK(f != nullptr);
        std::fprintf(f, "1000\n");
        std::fclose(f);
        Doorbell bell;
        const BellAddress addr{static_cast<std::int32_t>(getpid()), 7};
        UCG_CHECK(bell.open(addr) == Status::kOk);
        constexpr int kBatches = 3;
        for (int i = 0; i < kBatches * Doorbell::kDrainMax; ++i) {
            Doorbell::ring(addr);
        }
        pollfd p{bell.fd(), POLLIN, 0};
        for (int call = 1; call < kBatches; ++call) {
            bell.drain();
            UCG_CHECK(poll(&p, 1, 0) == 1); // more left: still readable
        }
        bell.drain();
        UCG_CHECK(poll(&p, 1, 0) == 0); // each call took one whole batch
    });
    INFO(res.summary());
    CHECK(res.ok);
}
