// SPDX-License-Identifier: BSD-3-Clause
// mm_incast direct messages (core/direct.h) with thread members on one
// mapping, so ThreadSanitizer sees every access: every kind, root, operator
// and dtype class for group sizes 2 to 8, more posts than slots and than
// the queue, member 0's configuration deciding, members that disagree, a
// sequence word past the message, and an abandoned post.
#include "direct_script.h"

#include "ucg_test/thread_ranks.h"

#include <catch2/catch.hpp>

using namespace incast_test;
using uct_mm_incast::DirectGeometry;

namespace {

constexpr std::uint32_t kDirect = 256;

IncastGroupConfig config(void *mem, std::size_t bytes, int rank, unsigned n)
{
    IncastGroupConfig c;
    c.name = "/ucgt-incast-direct";
    c.member = static_cast<std::uint32_t>(rank);
    c.size = n;
    c.elements = 4;
    c.seg_bytes = 256;
    c.max_outstanding = 4;
    c.direct_bytes = kDirect;
    c.direct_max_group = 8;
    c.memory = mem;
    c.memory_bytes = bytes;
    return c;
}

std::size_t segment_bytes(unsigned n)
{
    IncastGroupConfig c = config(nullptr, 0, 0, n);
    return uct_mm_common::link_segment_bytes(
        n, uct_mm_incast::geometry_of(c).region_bytes() +
               DirectGeometry{n, kDirect}.region_bytes());
}

// Member m's direct line (its slots follow) in a mapping of n members.
std::uint8_t *member_area(ucg_test::SharedMapping &mem, unsigned n, unsigned m)
{
    return static_cast<std::uint8_t *>(mem.data()) +
           uct_mm_common::link_region_offset(n) +
           uct_mm_incast::geometry_of(config(nullptr, 0, 0, n)).region_bytes() +
           m * DirectGeometry{n, kDirect}.member_bytes();
}

DirectMsg allreduce(void *src, void *dst, std::size_t count)
{
    DirectMsg m;
    m.coll = DirectColl::kAllreduce;
    m.dtype = UCG_DTYPE_INT32;
    m.length = count * 4;
    m.src = src;
    m.dst = dst;
    return m;
}

} // namespace

TEST_CASE("direct threads: every kind, root, operator and dtype class",
          "[mm][incast][direct][threads]")
{
    const unsigned n = GENERATE(2u, 3u, 5u, 8u);
    INFO("members " << n);
    ucg_test::SharedMapping mem(segment_bytes(n));
    const auto script = direct_script(n, kDirect);
    ucg_test::BarrierWitness w(static_cast<int>(n));
    ucg_test::run_thread_ranks(static_cast<int>(n), [&](int rank) {
        auto g = open_group(config(mem.data(), mem.size(), rank, n));
        DirectArea *d = direct_of(*g);
        UCG_CHECK(d != nullptr);
        UCG_CHECK_EQ(d->max_length(), std::size_t{kDirect});
        // 12 posts at a time: past the 8 slots, so some wait to publish.
        run_direct_script(*d, static_cast<uint32_t>(rank), n, script, 12, &w);
    });
}

TEST_CASE("direct threads: more posts in flight than the queue holds",
          "[mm][incast][direct][threads]")
{
    constexpr unsigned n = 3;
    ucg_test::SharedMapping mem(segment_bytes(n));
    std::vector<DirectSpec> script(
        200, DirectSpec{.dtype = UCG_DTYPE_UINT64, .count = 5});
    ucg_test::run_thread_ranks(static_cast<int>(n), [&](int rank) {
        auto g = open_group(config(mem.data(), mem.size(), rank, n));
        run_direct_script(*direct_of(*g), static_cast<uint32_t>(rank), n,
                          script, 100);
    });
}

TEST_CASE("direct threads: member 0's slot size and group limit decide",
          "[mm][incast][direct][threads]")
{
    struct Case {
        unsigned n;
        std::uint32_t bytes0, max_group0; // member 0's
        std::size_t expect;               // 0: no direct area
    };
    const Case c = GENERATE(Case{2, kDirect, 8, kDirect}, Case{2, 0, 8, 0},
                            Case{3, kDirect, 2, 0}, Case{3, 64, 3, 64});
    ucg_test::SharedMapping mem(segment_bytes(c.n));
    ucg_test::run_thread_ranks(static_cast<int>(c.n), [&](int rank) {
        IncastGroupConfig cfg = config(mem.data(), mem.size(), rank, c.n);
        if (rank == 0) {
            cfg.direct_bytes = c.bytes0;
            cfg.direct_max_group = c.max_group0;
        } else {
            cfg.direct_bytes = 1024; // ignored: member 0's is used
        }
        auto g = open_group(cfg);
        DirectArea *d = direct_of(*g);
        UCG_CHECK_EQ(d == nullptr ? 0 : d->max_length(), c.expect);
        if (d != nullptr) {
            std::uint64_t id;
            UCG_CHECK(direct_post(*d, DirectMsg{}, &id) !=
                      Status::kInvalidParam);
            UCG_CHECK(direct_wait(*d, id) == Status::kOk);
        }
    });
}

TEST_CASE("direct threads: a message past the slot is refused",
          "[mm][incast][direct][threads]")
{
    ucg_test::SharedMapping mem(segment_bytes(2));
    auto g = open_group(config(mem.data(), mem.size(), 0, 2));
    DirectArea *d = direct_of(*g);
    std::vector<std::int32_t> buf(kDirect / 4 + 1);
    const char *why = nullptr;
    CHECK(d->check(allreduce(buf.data(), buf.data(), buf.size()), &why) ==
          Status::kInvalidParam);
    CHECK(why != nullptr);
    DirectMsg m = allreduce(buf.data(), buf.data(), 2);
    m.dtype = UCG_DTYPE_FLOAT;
    m.op = UCG_OP_BAND;
    CHECK(d->check(m, &why) == Status::kInvalidParam);
    m = allreduce(nullptr, buf.data(), 2);
    CHECK(d->check(m, &why) == Status::kInvalidParam);
    // An alltoall's two blocks share the slot: half of it each at most.
    m = allreduce(buf.data(), buf.data(), kDirect / 8);
    m.coll = DirectColl::kAlltoall;
    CHECK(d->check(m, &why) == Status::kOk);
    m.length += 4;
    CHECK(d->check(m, &why) == Status::kInvalidParam);
    m.coll = DirectColl::kBcast;
    m.root = 2;
    CHECK(d->check(m, &why) == Status::kInvalidParam);
}

TEST_CASE("direct threads: members that disagree fail with an I/O error",
          "[mm][incast][direct][threads]")
{
    ucg_test::SharedMapping mem(segment_bytes(2));
    ucg_test::run_thread_ranks(2, [&](int rank) {
        auto g = open_group(config(mem.data(), mem.size(), rank, 2));
        DirectArea *d = direct_of(*g);
        std::vector<std::int32_t> src(4, 1), dst(4);
        std::uint64_t id;
        // Member 1 sums 4 elements where member 0 sums 2.
        const Status st =
            d->post(allreduce(src.data(), dst.data(), rank == 0 ? 2 : 4), &id);
        UCG_CHECK(st == Status::kInProgress || st == Status::kIoError);
        UCG_CHECK(direct_wait(*d, id) == Status::kIoError);
    });
}

TEST_CASE("direct threads: a sequence word past the message fails the group",
          "[mm][incast][direct][threads]")
{
    // Member 1 never comes; its slot 0 claims message 8 (seq 9), which no
    // member can publish before member 0 is done with message 0.
    ucg_test::SharedMapping mem(segment_bytes(2));
    auto g = open_group(config(mem.data(), mem.size(), 0, 2));
    DirectArea *d = direct_of(*g);
    auto *h = reinterpret_cast<uct_mm_incast::DirectSlotHeader *>(
        member_area(mem, 2, 1) + sizeof(uct_mm_incast::DirectLine));
    h->seq.store(9);
    std::uint64_t id;
    const Status st = d->post(DirectMsg{}, &id);
    CHECK((st == Status::kIoError ||
           (st == Status::kInProgress && d->test(id) == Status::kIoError)));
}

TEST_CASE("direct threads: an abandoned post completes without its dst",
          "[mm][incast][direct][threads]")
{
    ucg_test::SharedMapping mem(segment_bytes(2));
    std::atomic<bool> abandoned{false};
    ucg_test::run_thread_ranks(2, [&](int rank) {
        auto g = open_group(config(mem.data(), mem.size(), rank, 2));
        DirectArea *d = direct_of(*g);
        std::vector<std::int32_t> src(2, rank + 1), gone(2, -1), dst(2, -1);
        std::uint64_t first, second;
        if (rank == 1) {
            // Member 0's first post cannot complete before this one.
            uct_mm_common::Backoff backoff;
            while (!abandoned.load()) {
                backoff.pause();
            }
        }
        UCG_CHECK(direct_post(*d, allreduce(src.data(), gone.data(), 2),
                              &first) != Status::kIoError);
        if (rank == 0) {
            d->abandon(first);
            abandoned.store(true);
        }
        UCG_CHECK(direct_post(*d, allreduce(src.data(), dst.data(), 2),
                              &second) != Status::kIoError);
        UCG_CHECK(direct_wait(*d, second) == Status::kOk);
        UCG_CHECK(d->test(first) == Status::kOk); // done, in order
        UCG_CHECK_EQ(dst[0], 3);
        UCG_CHECK_EQ(gone[0], rank == 0 ? -1 : 3);
    });
}

TEST_CASE("direct threads: a done counter past flow control fails the group",
          "[mm][incast][direct][threads]")
{
    // Member 1 never comes, but its done counter claims 100 messages:
    // member 0's ninth bcast reads it (slot 0 again) and refuses it.
    ucg_test::SharedMapping mem(segment_bytes(2));
    auto g = open_group(config(mem.data(), mem.size(), 0, 2));
    DirectArea *d = direct_of(*g);
    reinterpret_cast<uct_mm_incast::DirectLine *>(member_area(mem, 2, 1))
        ->done.store(100);
    std::uint8_t byte = 7;
    DirectMsg m;
    m.coll = DirectColl::kBcast;
    m.length = 1;
    m.src = &byte;
    std::uint64_t id;
    for (int k = 0; k < 8; ++k) {
        REQUIRE(d->post(m, &id) == Status::kOk); // the root is done at once
    }
    const Status st = d->post(m, &id);
    CHECK((st == Status::kIoError ||
           (st == Status::kInProgress && d->test(id) == Status::kIoError)));
}
