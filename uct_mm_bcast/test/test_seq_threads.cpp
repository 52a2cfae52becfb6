// SPDX-License-Identifier: BSD-3-Clause
// mm_bcast groups (core) with thread ranks on one mapping, so that
// ThreadSanitizer sees every access of the protocol: sizes, roots and
// lengths (ring and CMA), and windows of back-to-back posts.
#include "seq_group.h"

#include "group_test_util.h"

#include "ucg_test/check.h"
#include "ucg_test/thread_ranks.h"

#include <catch2/catch.hpp>
#include <memory>
#include <utility>
#include <vector>

using namespace uct_mm_bcast;
using uct_mm_common::Coll;
using uct_mm_common::test::make_bytes;
using uct_mm_common::test::Pending;

namespace {

constexpr std::uint32_t kSeg = 256;

SeqGroupConfig config(void *mem, std::size_t bytes, int rank, unsigned n)
{
    SeqGroupConfig c;
    c.name = "/ucgt-threads";
    c.member = static_cast<std::uint32_t>(rank);
    c.size = n;
    c.geo.num_slots = 4;
    c.geo.seg_bytes = kSeg;
    c.cma_min = 8 * kSeg;
    c.max_outstanding = 4;
    c.memory = mem;
    c.memory_bytes = bytes;
    return c;
}

std::size_t segment_bytes(unsigned n)
{
    SeqGeometry geo;
    geo.num_slots = 4;
    geo.seg_bytes = kSeg;
    return uct_mm_common::link_segment_bytes(n, geo.region_bytes());
}

Message bcast(unsigned root, void *buf, std::size_t len, std::uint32_t tag)
{
    Message m;
    m.coll = Coll::kBcast;
    m.root = root;
    m.buffer = buf;
    m.length = len;
    m.tag = tag;
    return m;
}

// A group of `c`, created or the rank's check failed.
std::unique_ptr<SeqGroup> make_group(const SeqGroupConfig &c)
{
    SeqGroup *raw = nullptr;
    UCG_CHECK(SeqGroup::create(c, &raw) == Status::kOk);
    return std::unique_ptr<SeqGroup>(raw);
}

// One bcast of `len` bytes from `root`, message `msg`: posted, waited
// for, every byte checked. True on the root.
bool bcast_checked(SeqGroup &g, int rank, unsigned root, std::uint32_t msg,
                   std::size_t len)
{
    const bool send = static_cast<unsigned>(rank) == root;
    std::vector<std::uint8_t> buf =
        send ? make_bytes(root, msg, len) : std::vector<std::uint8_t>(len);
    Pending pend;
    uct_mm_common::test::post(g, send, bcast(root, buf.data(), len, msg),
                              &pend);
    UCG_CHECK(uct_mm_common::test::wait(g, &pend) == Status::kOk);
    UCG_CHECK_EQ(
        uct_mm_common::test::first_mismatch(buf.data(), root, msg, len), len);
    return send;
}

} // namespace

TEST_CASE("bcast group threads: sizes, roots, lengths in windows of posts",
          "[mm][bcast][threads]")
{
    const unsigned n = GENERATE(1u, 2u, 3u, 4u, 5u, 7u, 8u);
    ucg_test::SharedMapping mem(segment_bytes(n));
    const std::vector<std::size_t> lengths = {
        0, 1, kSeg - 1, kSeg, kSeg + 1, 6 * kSeg + 5, 9 * kSeg, 20 * kSeg};
    ucg_test::run_thread_ranks(static_cast<int>(n), [&](int rank) {
        SeqGroup *raw = nullptr;
        UCG_CHECK(SeqGroup::create(config(mem.data(), mem.size(), rank, n),
                                   &raw) == Status::kOk);
        std::unique_ptr<SeqGroup> g(raw);
        constexpr unsigned kWindow = 4;
        std::vector<std::vector<std::uint8_t>> bufs(kWindow);
        Pending pend[kWindow];
        unsigned msg = 0;
        for (unsigned root = 0; root < n; ++root) {
            for (std::size_t k = 0; k < lengths.size(); k += kWindow) {
                for (unsigned i = 0; i < kWindow; ++i) {
                    const unsigned r = (root + i) % n; // roots change
                    const std::size_t len = lengths[(k + i) % lengths.size()];
                    const bool send = static_cast<unsigned>(rank) == r;
                    bufs[i] = send ? make_bytes(r, msg + i, len)
                                   : std::vector<std::uint8_t>(len);
                    pend[i] = Pending{};
                    uct_mm_common::test::post(
                        *g, send, bcast(r, bufs[i].data(), len, msg + i),
                        &pend[i]);
                }
                for (unsigned i = 0; i < kWindow; ++i) {
                    UCG_CHECK(uct_mm_common::test::wait(*g, &pend[i]) ==
                              Status::kOk);
                    const unsigned r = (root + i) % n;
                    UCG_CHECK_EQ(
                        uct_mm_common::test::first_mismatch(
                            bufs[i].data(), r, msg + i, bufs[i].size()),
                        bufs[i].size());
                }
                msg += kWindow;
            }
        }
    });
}

TEST_CASE("bcast group threads: the root streams messages from stream_min, "
          "and every receiver gets every byte",
          "[mm][bcast][threads]")
{
    const unsigned n = GENERATE(2u, 3u);
    ucg_test::SharedMapping mem(segment_bytes(n));
    const std::size_t stream_min = 3 * kSeg;
    // Below, at and above the threshold; lengths the non-temporal copy
    // cuts unaligned (the payload sits after a fragment header).
    const std::vector<std::size_t> lengths = {stream_min - 1, stream_min,
                                              7 * kSeg + 13, 20 * kSeg + 1};
    ucg_test::run_thread_ranks(static_cast<int>(n), [&](int rank) {
        SeqGroupConfig c = config(mem.data(), mem.size(), rank, n);
        c.cma_min = ~std::size_t{0};
        c.stream_min = stream_min;
        const std::unique_ptr<SeqGroup> g = make_group(c);
        std::uint64_t streamed = 0;
        std::uint32_t msg = 0;
        for (unsigned root = 0; root < n; ++root) {
            for (const std::size_t len : lengths) {
                const bool send = bcast_checked(*g, rank, root, msg, len);
                if (send && len >= stream_min) {
                    streamed += (len + kSeg - 1) / kSeg;
                }
                ++msg;
            }
        }
        UCG_CHECK_EQ(g->streamed_frags(), streamed);
    });
}

TEST_CASE("bcast group threads: a message goes in eighths of itself, from "
          "8 KiB up to a slot, and every receiver gets every byte",
          "[mm][bcast][threads]")
{
    const unsigned n = GENERATE(2u, 3u);
    constexpr std::uint32_t kBigSeg = 64 << 10;
    SeqGeometry geo;
    geo.num_slots = 4;
    geo.seg_bytes = kBigSeg;
    ucg_test::SharedMapping mem(
        uct_mm_common::link_segment_bytes(n, geo.region_bytes()));
    // Length -> fragments: up to 64 KiB in 8 KiB ones, then eighths (a
    // cache line multiple), from 512 KiB whole slots.
    const std::vector<std::pair<std::size_t, std::uint64_t>> cases = {
        {8191, 1},   {16384, 2},  {32769, 5},
        {100000, 8}, {262144, 8}, {(1 << 20) + 5, 17}};
    ucg_test::run_thread_ranks(static_cast<int>(n), [&](int rank) {
        SeqGroupConfig c = config(mem.data(), mem.size(), rank, n);
        c.geo = geo;
        c.cma_min = ~std::size_t{0};
        c.stream_min = 1; // every fragment counted by streamed_frags()
        const std::unique_ptr<SeqGroup> g = make_group(c);
        std::uint64_t frags = 0;
        std::uint32_t msg = 0;
        for (unsigned root = 0; root < n; ++root) {
            for (const auto &[len, nfrag] : cases) {
                frags += bcast_checked(*g, rank, root, msg, len) ? nfrag : 0;
                ++msg;
            }
        }
        UCG_CHECK_EQ(g->streamed_frags(), frags);
    });
}
