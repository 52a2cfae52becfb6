// SPDX-License-Identifier: BSD-3-Clause
// The ring protocol with ranks as threads on one mapping (run under TSan):
// every member is a producer and a reader at once; and the owner's
// doorbell (arm, and the producer that must ring it).
#include "channel_test_util.h"

#include "ucg_test/thread_ranks.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

using namespace uct_mm_common;
using namespace uct_mm_common::test;

namespace {

void run_all_to_all(unsigned members, unsigned per_member, unsigned slots,
                    std::size_t size)
{
    RingGeometry geo;
    geo.num_members = members;
    geo.num_slots = slots;
    geo.slot_bytes = 256;
    ucg_test::SharedMapping mem(geo.segment_bytes());
    REQUIRE(Ring::validate(geo) == Status::kOk);
    Ring::format(mem.data(), geo);
    ucg_test::run_thread_ranks(static_cast<int>(members), [&](int rank) {
        Ring ring;
        UCG_CHECK(ring.open(mem.data(), mem.size(),
                            static_cast<std::uint32_t>(rank),
                            false) == Status::kOk);
        ring.join();
        Channel ch;
        ch.init(ring, ChannelConfig{});
        std::vector<Received> inbox;
        for (unsigned s = 0; s < per_member; ++s) {
            const auto m = make_message(static_cast<unsigned>(rank), s, size);
            UCG_CHECK(send_message(ch, m, &inbox) == Status::kOk);
        }
        UCG_CHECK(receive(ch, &inbox, std::size_t{members - 1} * per_member) ==
                  Status::kOk);
        // Per origin: in order, none lost or duplicated, intact.
        std::vector<unsigned> next(members, 0);
        for (const auto &r : inbox) {
            UCG_CHECK(r.origin < members);
            UCG_CHECK(r.origin != static_cast<unsigned>(rank));
            UCG_CHECK_EQ(r.seq, next[r.origin]);
            UCG_CHECK(r.pattern_ok);
            ++next[r.origin];
        }
        // Keep reading until every member has everything (no one waits on
        // a member that stopped polling).
        ring.leave();
    });
}

} // namespace

TEST_CASE("ring delivers every message once, in order per origin (threads)",
          "[mm][fifo][threads]")
{
    const unsigned members = GENERATE(1u, 2u, 3u, 4u, 5u);
    const std::size_t size = GENERATE(std::size_t{8}, std::size_t{200});
    run_all_to_all(members, 300, 8, size);
}

TEST_CASE("ring with two slots wraps around under flow control (threads)",
          "[mm][fifo][threads]")
{
    run_all_to_all(3, 1000, 2, 40);
}

TEST_CASE("ring geometry limits are checked", "[mm][bcast]")
{
    RingGeometry geo;
    geo.num_members = kMaxGroupMembers + 1;
    CHECK(Ring::validate(geo) == Status::kExceedsLimit);
    geo.num_members = 2;
    geo.num_slots = 3;
    CHECK(Ring::validate(geo) == Status::kInvalidParam);
    geo.num_slots = 4;
    geo.slot_bytes = 100;
    CHECK(Ring::validate(geo) == Status::kInvalidParam);
    geo.slot_bytes = 128;
    CHECK(Ring::validate(geo) == Status::kOk);
}

namespace {

RingGeometry fifo_geometry(std::uint32_t slots)
{
    RingGeometry geo;
    geo.num_members = 1; // the owner; producers are not members
    geo.num_slots = slots;
    geo.slot_bytes = 128;
    return geo;
}

// False if the owner gave up (its check failed) while the ring was full.
bool send_one(Ring &producer, std::atomic<unsigned> *rings,
              const std::atomic<bool> &owner_gone)
{
    std::uint64_t pos;
    while (producer.claim(&pos) != Status::kOk) {
        if (owner_gone.load()) {
            return false;
        }
        std::this_thread::yield(); // full: the owner drains
    }
    if (producer.publish(pos, 0, 1, SlotKind::kInline)) {
        rings->fetch_add(1);
        producer.rang();
    }
    return true;
}

// A FIFO of 8 slots, its owner and two producers.
struct OwnerAndTwo {
    OwnerAndTwo() : mem(fifo_geometry(8).segment_bytes())
    {
        Ring::format(mem.data(), fifo_geometry(8));
        REQUIRE(owner.open(mem.data(), mem.size(), 0, true) == Status::kOk);
        REQUIRE(a.open(mem.data(), mem.size(), kNoOrigin, true) == Status::kOk);
        REQUIRE(b.open(mem.data(), mem.size(), kNoOrigin, true) == Status::kOk);
    }
    ucg_test::SharedMapping mem;
    Ring owner, a, b;
};

} // namespace

TEST_CASE("ring doorbell: an armed owner is rung by one producer, an unarmed "
          "one by none",
          "[mm][fifo]")
{
    OwnerAndTwo rings;
    Ring &owner = rings.owner, &a = rings.a, &b = rings.b;
    std::uint64_t pa, pb;
    // Not armed: nobody rings.
    REQUIRE(a.claim(&pa) == Status::kOk);
    CHECK_FALSE(a.publish(pa, 0, 1, SlotKind::kInline));
    CHECK_FALSE(owner.arm()); // a message is at hand: not armed
    REQUIRE(owner.peek() != nullptr);
    owner.consume();
    // Armed: of two producers that claimed after, the first to publish
    // rings, the other does not.
    CHECK(owner.arm());
    REQUIRE(a.claim(&pa) == Status::kOk);
    REQUIRE(b.claim(&pb) == Status::kOk);
    CHECK(b.publish(pb, 0, 1, SlotKind::kInline));
    b.rang();
    CHECK_FALSE(a.publish(pa, 0, 1, SlotKind::kInline));
    // A claim alone (not yet published) keeps the owner from sleeping.
    for (int i = 0; i < 2; ++i) {
        REQUIRE(owner.peek() != nullptr);
        owner.consume();
    }
    REQUIRE(a.claim(&pa) == Status::kOk);
    CHECK_FALSE(owner.arm());
    CHECK_FALSE(a.publish(pa, 0, 1, SlotKind::kInline)); // disarmed again
}

TEST_CASE("ring doorbell: a producer that dies before its ring leaves the "
          "owner armed, a late clear does not take a later arm",
          "[mm][fifo]")
{
    OwnerAndTwo rings;
    Ring &owner = rings.owner, &a = rings.a, &b = rings.b;
    std::uint64_t pa, pb;
    CHECK(owner.arm());
    REQUIRE(a.claim(&pa) == Status::kOk);
    CHECK(a.publish(pa, 0, 1, SlotKind::kInline));
    // a dies here: no ring, no rang(). The next producer rings.
    REQUIRE(b.claim(&pb) == Status::kOk);
    CHECK(b.publish(pb, 0, 1, SlotKind::kInline));
    b.rang();
    // The owner wakes, reads both, arms again; a producer that rang for
    // the old arm clears late: the new arm stays.
    for (int i = 0; i < 2; ++i) {
        REQUIRE(owner.peek() != nullptr);
        owner.consume();
    }
    REQUIRE(a.claim(&pa) == Status::kOk);
    CHECK_FALSE(owner.arm()); // a's claim is at hand
    REQUIRE(b.claim(&pb) == Status::kOk);
    CHECK_FALSE(a.publish(pa, 0, 1, SlotKind::kInline)); // not armed then
    CHECK_FALSE(b.publish(pb, 0, 1, SlotKind::kInline));
    for (int i = 0; i < 2; ++i) {
        REQUIRE(owner.peek() != nullptr);
        owner.consume();
    }
    REQUIRE(b.claim(&pb) == Status::kOk); // sees no arm
    CHECK(owner.arm() == false);          // b's claim is at hand
    CHECK_FALSE(b.publish(pb, 0, 1, SlotKind::kInline));
    REQUIRE(owner.peek() != nullptr);
    owner.consume();
    CHECK(owner.arm()); // generation 2
    REQUIRE(a.claim(&pa) == Status::kOk);
    CHECK(a.publish(pa, 0, 1, SlotKind::kInline));
    REQUIRE(owner.peek() != nullptr);
    owner.consume();
    CHECK(owner.arm()); // generation 3, before a's late clear
    a.rang();           // clears generation 2 only: nothing
    REQUIRE(b.claim(&pb) == Status::kOk);
    CHECK(b.publish(pb, 0, 1, SlotKind::kInline)); // still armed: rings
}

TEST_CASE("ring doorbell: an owner that sleeps whenever it is armed is "
          "always woken (threads)",
          "[mm][fifo][threads]")
{
    constexpr unsigned kProducers = 3, kEach = 3000;
    ucg_test::SharedMapping mem(fifo_geometry(4).segment_bytes());
    Ring::format(mem.data(), fifo_geometry(4));
    std::atomic<unsigned> rings{0};
    std::atomic<bool> owner_gone{false};
    ucg_test::run_thread_ranks(kProducers + 1, [&](int rank) {
        Ring ring;
        if (rank > 0) {
            UCG_CHECK(ring.open(mem.data(), mem.size(), kNoOrigin, true) ==
                      Status::kOk);
            for (unsigned i = 0; i < kEach; ++i) {
                UCG_CHECK(send_one(ring, &rings, owner_gone));
            }
            return;
        }
        UCG_CHECK(ring.open(mem.data(), mem.size(), 0, true) == Status::kOk);
        unsigned got = 0;
        while (got < kProducers * kEach) {
            const unsigned seen = rings.load();
            if (ring.arm()) {
                // Asleep until rung: a missed ring would leave messages
                // unread (and producers blocked on a full ring) for good.
                const auto limit =
                    std::chrono::steady_clock::now() + std::chrono::seconds(10);
                while (rings.load() == seen) {
                    if (std::chrono::steady_clock::now() > limit) {
                        owner_gone.store(true);
                        UCG_CHECK(!"an armed owner was never rung");
                    }
                    std::this_thread::yield();
                }
            }
            while (ring.peek() != nullptr) {
                ring.consume();
                ++got;
            }
        }
    });
    CHECK(rings.load() > 0);
}
