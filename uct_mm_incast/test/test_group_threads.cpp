// SPDX-License-Identifier: BSD-3-Clause
// mm_incast groups (core) with thread ranks on one mapping, so that
// ThreadSanitizer sees every access: every mode configured explicitly, for
// every operator of every datatype class and gather (with and without
// member buffers), accumulating, with the root's operand apart and
// neither, roots changing, lengths around
// the chunk size; and AUTO for group sizes 1 to 8.
#include "incast_script.h"

#include "ucg_test/thread_ranks.h"

#include <catch2/catch.hpp>

using namespace incast_test;
using uct_mm_incast::AutoThresholds;

namespace {

constexpr std::uint32_t kSeg = 256;

IncastGroupConfig config(void *mem, std::size_t bytes, int rank, unsigned n,
                         uct_mm_incast_mode_t mode)
{
    IncastGroupConfig c;
    c.name = "/ucgt-incast-threads";
    c.member = static_cast<std::uint32_t>(rank);
    c.size = n;
    c.elements = 4;
    c.seg_bytes = kSeg;
    c.mode = mode;
    c.max_outstanding = 4;
    c.memory = mem;
    c.memory_bytes = bytes;
    return c;
}

std::size_t segment_bytes(unsigned n)
{
    IncastGroupConfig c;
    c.size = n;
    c.elements = 4;
    c.seg_bytes = kSeg;
    return uct_mm_common::link_segment_bytes(
        n, uct_mm_incast::geometry_of(c).region_bytes());
}

// Counts (elements) of one sender: one element, around one chunk of
// int8 (kSeg elements), several chunks; wider types scale the bytes.
const std::vector<std::size_t> kCounts = {1, kSeg - 1, kSeg + 1, 3 * kSeg + 5};

} // namespace

TEST_CASE("incast threads: every mode, op and dtype class, gather",
          "[mm][incast][threads]")
{
    const auto mode =
        GENERATE(UCT_MM_INCAST_MODE_BATCHED, UCT_MM_INCAST_MODE_CENTRALIZED,
                 UCT_MM_INCAST_MODE_LOCKED, UCT_MM_INCAST_MODE_ATOMIC,
                 UCT_MM_INCAST_MODE_AUTO);
    constexpr unsigned n = 4;
    INFO("mode " << uct_mm_incast::mode_name(mode));
    ucg_test::SharedMapping mem(segment_bytes(n));
    const auto script = op_dtype_script(n, kCounts);
    ucg_test::run_thread_ranks(n, [&](int rank) {
        auto g = open_group(config(mem.data(), mem.size(), rank, n, mode));
        run_script(*g, static_cast<uint32_t>(rank), n, script);
    });
}

TEST_CASE("incast threads: group sizes 1 to 8, auto mode",
          "[mm][incast][threads]")
{
    const unsigned n = GENERATE(1u, 2u, 3u, 4u, 5u, 7u, 8u);
    ucg_test::SharedMapping mem(segment_bytes(n));
    std::vector<Spec> script;
    for (std::size_t c : {std::size_t{0}, std::size_t{1}, std::size_t{64},
                          std::size_t{65}, std::size_t{300}}) {
        for (uint32_t root = 0; root < n; ++root) {
            Spec s;
            s.root = root;
            s.count = c;
            s.dtype = UCG_DTYPE_DOUBLE;
            s.accumulate = root % 3 == 1;
            s.operand = root % 3 == 2;
            script.push_back(s);
            s.coll = Coll::kGather;
            s.count = c * 4;
            script.push_back(s);
        }
    }
    ucg_test::run_thread_ranks(static_cast<int>(n), [&](int rank) {
        auto g = open_group(
            config(mem.data(), mem.size(), rank, n, UCT_MM_INCAST_MODE_AUTO));
        run_script(*g, static_cast<uint32_t>(rank), n, script, 3);
    });
}

TEST_CASE("incast geometry: auto chunk bytes are the largest from 8 to 64 "
          "KiB whose ring holds 16 positions in 4 MiB, 8 KiB where "
          "reductions lock",
          "[mm][incast]")
{
    using uct_mm_incast::auto_seg_bytes;
    // The default thresholds lock reductions from 4 members.
    CHECK(auto_seg_bytes(2, 4) == 65536);
    CHECK(auto_seg_bytes(3, 4) == 32768);
    CHECK(auto_seg_bytes(4, 4) == 8192);
    CHECK(auto_seg_bytes(8, 4) == 8192);
    // Thresholds that lock later leave larger groups larger chunks.
    CHECK(auto_seg_bytes(4, 256) == 32768);
    CHECK(auto_seg_bytes(8, 256) == 16384);
    CHECK(auto_seg_bytes(16, 256) == 8192);
    CHECK(auto_seg_bytes(200, 256) == 8192); // the smallest, past the budget
    for (unsigned n = 2; n <= 16; ++n) {
        IncastGroupConfig c;
        c.size = n;
        c.elements = 0;
        c.seg_bytes = 0; // GROUP_SEG_SIZE=auto
        c.thresholds.locked_min_group = 256;
        const auto geo = uct_mm_incast::geometry_of(c);
        INFO(n << " members");
        CHECK(geo.seg_bytes == auto_seg_bytes(n, 256));
        CHECK(geo.elements >= uct_mm_incast::kAutoRingPositions);
        CHECK(geo.region_bytes() <= uct_mm_incast::kAutoRingBytes);
        // Twice the chunk would not leave the ring its positions.
        IncastGroupConfig twice = c;
        twice.seg_bytes = 2 * geo.seg_bytes;
        CHECK((geo.seg_bytes == uct_mm_incast::kAutoSegMax ||
               uct_mm_incast::geometry_of(twice).elements <
                   uct_mm_incast::kAutoRingPositions));
        c.thresholds.locked_min_group = n;
        CHECK(uct_mm_incast::geometry_of(c).seg_bytes == 8192);
    }
}

TEST_CASE("incast chunks: a reduction's are the ring's, a gather's a "
          "quarter of the message within 8 KiB and the ring's",
          "[mm][incast]")
{
    using uct_mm_incast::message_chunk;
    for (std::size_t len : {0, 8, 4096, 65536, 1 << 20}) {
        CHECK(message_chunk(Coll::kReduce, len, 65536) == 65536);
    }
    CHECK(message_chunk(Coll::kGather, 8, 65536) == 8192);
    CHECK(message_chunk(Coll::kGather, 16384, 65536) == 8192);
    CHECK(message_chunk(Coll::kGather, 65536, 65536) == 16384);
    // A quarter rounds up to whole cache lines.
    CHECK(message_chunk(Coll::kGather, 65537, 65536) == 16448);
    CHECK(message_chunk(Coll::kGather, 1 << 20, 65536) == 65536);
    // The ring's chunk bounds the quarter.
    CHECK(message_chunk(Coll::kGather, 65536, 4096) == 4096);
}

TEST_CASE("incast threads: chunks of 32-64 KiB, messages of several",
          "[mm][incast][threads]")
{
    // Member 0's chunk bytes are every member's: the others configure 8
    // KiB and must follow its chunks (reductions whole, gathers in
    // quarters). Auto at 2 and 3 members (64 and 32 KiB, reductions in
    // slots); 32 KiB set at 4 members whose reductions lock from 3.
    const unsigned n = GENERATE(2u, 3u, 4u);
    IncastGroupConfig zero;
    zero.size = n;
    zero.elements = 0;
    zero.seg_bytes = n == 4 ? 32768 : 0;
    zero.thresholds.locked_min_group = n == 4 ? 3 : 4;
    ucg_test::SharedMapping mem(uct_mm_common::link_segment_bytes(
        n, uct_mm_incast::geometry_of(zero).region_bytes()));
    std::vector<Spec> script;
    for (std::size_t count : {std::size_t{1}, std::size_t{16384},
                              std::size_t{16385}, std::size_t{70000}}) {
        Spec s;
        s.count = count; // doubles: 8 B to 560 KB, up to 18 chunks
        s.dtype = UCG_DTYPE_DOUBLE;
        s.root = static_cast<std::uint32_t>(count % n);
        script.push_back(s);
        s.coll = Coll::kGather;
        script.push_back(s);
    }
    std::vector<uct_mm_incast_mode_t> modes(n);
    ucg_test::run_thread_ranks(static_cast<int>(n), [&](int rank) {
        IncastGroupConfig c =
            config(mem.data(), mem.size(), rank, n, UCT_MM_INCAST_MODE_AUTO);
        c.elements = 0;
        c.seg_bytes = rank == 0 ? zero.seg_bytes : 8192;
        c.thresholds = zero.thresholds;
        auto g = open_group(c);
        run_script(*g, static_cast<uint32_t>(rank), n, script);
        Message m;
        m.coll = Coll::kReduce;
        m.dtype = UCG_DTYPE_DOUBLE;
        m.length = 131072;
        modes[static_cast<std::size_t>(rank)] = g->mode_of(m);
    });
    for (auto mode : modes) {
        CHECK((n == 4) == (mode == UCT_MM_INCAST_MODE_LOCKED));
    }
}

namespace {

// Each member's mode of an int32 reduction of `reduce_bytes` and of a
// 64-byte gather, after one message of each, when rank 0 alone configures
// `t0` (the others keep the defaults).
std::vector<std::pair<uct_mm_incast_mode_t, uct_mm_incast_mode_t>>
modes_of(unsigned n, const AutoThresholds &t0, std::size_t reduce_bytes)
{
    ucg_test::SharedMapping mem(segment_bytes(n));
    Spec s;
    s.count = reduce_bytes / 4;
    std::vector<Spec> script = {s};
    s.coll = Coll::kGather;
    s.count = 64;
    script.push_back(s);
    std::vector<std::pair<uct_mm_incast_mode_t, uct_mm_incast_mode_t>> modes(n);
    ucg_test::run_thread_ranks(static_cast<int>(n), [&](int rank) {
        IncastGroupConfig c =
            config(mem.data(), mem.size(), rank, n, UCT_MM_INCAST_MODE_AUTO);
        if (rank == 0) {
            c.thresholds = t0;
        }
        auto g = open_group(c);
        run_script(*g, static_cast<uint32_t>(rank), n, script);
        Message m;
        m.coll = Coll::kReduce;
        m.dtype = UCG_DTYPE_INT32;
        m.length = reduce_bytes;
        Message gm;
        gm.coll = Coll::kGather;
        gm.length = 64;
        modes[static_cast<std::size_t>(rank)] = {g->mode_of(m), g->mode_of(gm)};
    });
    return modes;
}

} // namespace

TEST_CASE("incast threads: member 0's AUTO thresholds decide for all",
          "[mm][incast][threads]")
{
    // 8 bytes of int32 run ATOMIC by default, LOCKED with these.
    const AutoThresholds t{.atomic_max_bytes = 0,
                           .locked_min_bytes = 8,
                           .locked_min_group = 2,
                           .pair_group = 1};
    for (const auto &[reduce, gather] : modes_of(2, t, 8)) {
        CHECK(reduce == UCT_MM_INCAST_MODE_LOCKED);
    }
}

TEST_CASE("incast threads: member 0's pair and gather thresholds travel",
          "[mm][incast][threads]")
{
    // Pairs reduce locked from 64 B; 3 members with no pair rule reduce
    // locked from 64 B and gather centralized.
    const AutoThresholds pair{.pair_locked_min_bytes = 64};
    const AutoThresholds three{.locked_min_bytes = 64,
                               .locked_min_group = 3,
                               .pair_group = 1,
                               .gather_batched_max_group = 2};
    for (const auto &[reduce, gather] : modes_of(2, pair, 64)) {
        CHECK(reduce == UCT_MM_INCAST_MODE_LOCKED);
        CHECK(gather == UCT_MM_INCAST_MODE_CENTRALIZED);
    }
    for (const auto &[reduce, gather] : modes_of(3, three, 64)) {
        CHECK(reduce == UCT_MM_INCAST_MODE_LOCKED);
        CHECK(gather == UCT_MM_INCAST_MODE_CENTRALIZED);
    }
}

TEST_CASE("incast threads: senders stream messages from stream_min, and the "
          "root's results are exact",
          "[mm][incast][threads]")
{
    const auto mode =
        GENERATE(UCT_MM_INCAST_MODE_BATCHED, UCT_MM_INCAST_MODE_CENTRALIZED,
                 UCT_MM_INCAST_MODE_LOCKED);
    const bool stream = GENERATE(false, true);
    constexpr unsigned n = 3;
    INFO("mode " << uct_mm_incast::mode_name(mode) << " stream " << stream);
    ucg_test::SharedMapping mem(segment_bytes(n));
    const auto script = op_dtype_script(n, kCounts);
    ucg_test::run_thread_ranks(n, [&](int rank) {
        IncastGroupConfig c = config(mem.data(), mem.size(), rank, n, mode);
        if (stream) {
            c.stream_min = kSeg; // chunks of longer messages cut unaligned
        }
        auto g = open_group(c);
        run_script(*g, static_cast<uint32_t>(rank), n, script);
        // Every member sends messages of several chunks to the others.
        UCG_CHECK_EQ(g->streamed_chunks() > 0, stream);
    });
}

TEST_CASE("incast: an operand only on a REDUCE receive without ACCUMULATE",
          "[mm][incast][threads]")
{
    ucg_test::SharedMapping mem(segment_bytes(2));
    ucg_test::run_thread_ranks(2, [&](int rank) {
        auto g = open_group(config(mem.data(), mem.size(), rank, 2,
                                   UCT_MM_INCAST_MODE_BATCHED));
        if (rank != 0) {
            return;
        }
        std::int32_t own = 1, dst = 0;
        Message m;
        m.coll = Coll::kReduce;
        m.dtype = UCG_DTYPE_INT32;
        m.length = sizeof(dst);
        m.buffer = &dst;
        m.operand = &own;
        const char *why = "";
        CHECK(g->check(false, m, &why) == Status::kOk);
        m.accumulate = true;
        CHECK(g->check(false, m, &why) == Status::kInvalidParam);
        CHECK(std::string(why).find("operand") != std::string::npos);
        m.accumulate = false;
        m.root = 1;
        CHECK(g->check(true, m, &why) == Status::kInvalidParam);
        m.root = 0;
        m.coll = Coll::kGather;
        CHECK(g->check(false, m, &why) == Status::kInvalidParam);
    });
}
