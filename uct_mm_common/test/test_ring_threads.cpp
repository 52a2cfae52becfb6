// SPDX-License-Identifier: BSD-3-Clause
// The ring protocol with ranks as threads on one mapping (run under TSan):
// every member is a producer and a reader at once.
#include "channel_test_util.h"

#include "ucg_test/thread_ranks.h"

#include <catch2/catch.hpp>

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
