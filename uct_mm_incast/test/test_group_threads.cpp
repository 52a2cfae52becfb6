// SPDX-License-Identifier: BSD-3-Clause
// mm_incast groups with ranks as threads on one process (TSan sees them).
#include "incast_test_util.h"

#include <ucg_test/shm_names.h>
#include <ucg_test/thread_ranks.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <utility>

using namespace incast_test;

namespace {

// Calls fn(config, op index, dtype index) for every operator x datatype
// pair the transport supports, with config.op and config.dtype set.
template <class F> void for_each_op_dtype(F &&fn)
{
    for (int o = UCT_MM_INCAST_OP_SUM; o < UCT_MM_INCAST_OP_LAST; ++o) {
        for (int d = 0; d < UCT_MM_INCAST_DTYPE_LAST; ++d) {
            GroupConfig c;
            c.op = static_cast<uct_mm_incast_op_t>(o);
            c.dtype = static_cast<uct_mm_incast_dtype_t>(d);
            if (check_op(c.op, c.dtype) == UCS_OK) {
                fn(c, o, d);
            }
        }
    }
}

void run_threads(GroupConfig c, uint64_t iters, std::size_t bytes)
{
    ucg_test::run_thread_ranks(static_cast<int>(c.group_size), [&](int r) {
        GroupConfig mine = c;
        mine.member = static_cast<uint32_t>(r);
        run_member(mine, iters, bytes);
    });
}

} // namespace

TEST_CASE("every mode x operator x datatype reduces (threads)",
          "[mm_incast][threads]")
{
    const auto mode = static_cast<uct_mm_incast_mode_t>(GENERATE(
        int(UCT_MM_INCAST_MODE_BATCHED), int(UCT_MM_INCAST_MODE_CENTRALIZED),
        int(UCT_MM_INCAST_MODE_LOCKED), int(UCT_MM_INCAST_MODE_ATOMIC)));
    ucg_test::ShmSweeper sweeper(own_shm_prefix());
    for_each_op_dtype([&](GroupConfig c, int o, int d) {
        c.name = ucg_test::unique_shm_name("red");
        c.group_size = 4;
        c.root = static_cast<uint32_t>((o + d) % 4);
        c.mode = mode;
        c.elements = 4;
        c.max_bytes = 40 * dtype_size(c.dtype);
        INFO("mode " << mode_str(mode) << " op " << o << " dtype " << d);
        run_threads(c, 20, 37 * dtype_size(c.dtype));
    });
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("gather over group sizes, roots and message sizes (threads)",
          "[mm_incast][threads]")
{
    const auto mode = static_cast<uct_mm_incast_mode_t>(GENERATE(
        int(UCT_MM_INCAST_MODE_BATCHED), int(UCT_MM_INCAST_MODE_CENTRALIZED)));
    ucg_test::ShmSweeper sweeper(own_shm_prefix());
    for (uint32_t n : {1u, 2u, 3u, 5u, 8u}) {
        for (std::size_t bytes : {0ul, 1ul, 7ul, 64ul, 65ul}) {
            GroupConfig c;
            c.name = ucg_test::unique_shm_name("gat");
            c.group_size = n;
            c.root = static_cast<uint32_t>(bytes % n);
            c.mode = mode;
            c.elements = 3;
            c.max_bytes = 128;
            INFO("n " << n << " bytes " << bytes);
            run_threads(c, 50, bytes);
        }
    }
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("thousands of back-to-back incasts wrap the ring (threads)",
          "[mm_incast][threads]")
{
    const auto mode = static_cast<uct_mm_incast_mode_t>(GENERATE(
        int(UCT_MM_INCAST_MODE_BATCHED), int(UCT_MM_INCAST_MODE_CENTRALIZED),
        int(UCT_MM_INCAST_MODE_LOCKED), int(UCT_MM_INCAST_MODE_ATOMIC)));
    ucg_test::ShmSweeper sweeper(own_shm_prefix());
    GroupConfig c;
    c.name = ucg_test::unique_shm_name("b2b");
    c.group_size = 3;
    c.root = 2;
    c.mode = mode;
    c.op = UCT_MM_INCAST_OP_SUM;
    c.dtype = UCT_MM_INCAST_DTYPE_INT64;
    c.elements = 4;
    c.max_bytes = 64;
    run_threads(c, 3000, 64);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("auto mode follows the measured crossovers", "[mm_incast][auto]")
{
    using T = AutoThresholds;
    struct Case {
        uct_mm_incast_op_t op;
        uct_mm_incast_dtype_t dtype;
        std::size_t max_bytes;
        uint32_t group_size;
        uct_mm_incast_mode_t expect;
    };
    constexpr auto kSum = UCT_MM_INCAST_OP_SUM;
    constexpr auto kGather = UCT_MM_INCAST_OP_GATHER;
    constexpr auto kI32 = UCT_MM_INCAST_DTYPE_INT32;
    constexpr auto kF64 = UCT_MM_INCAST_DTYPE_DOUBLE;
    constexpr auto kU8 = UCT_MM_INCAST_DTYPE_UINT8;
    const Case cases[] = {
        // Large sums in bigger groups: senders reduce in parallel.
        {kSum, kF64, 1 << 20, 8, UCT_MM_INCAST_MODE_LOCKED},
        {kSum, kF64, T::kLockedMinBytes, T::kLockedMinGroup,
         UCT_MM_INCAST_MODE_LOCKED},
        {kSum, kF64, T::kLockedMinBytes - 8, 8, UCT_MM_INCAST_MODE_BATCHED},
        {kSum, kF64, 1 << 20, T::kLockedMinGroup - 1,
         UCT_MM_INCAST_MODE_BATCHED},
        // Atomic only for one element of a one-RMW pair.
        {kSum, kI32, 8, 8, UCT_MM_INCAST_MODE_ATOMIC},
        {kSum, kI32, 64, 8, UCT_MM_INCAST_MODE_BATCHED},
        {kSum, kI32, 256, 4, UCT_MM_INCAST_MODE_BATCHED},
        {kSum, kF64, 8, 8, UCT_MM_INCAST_MODE_BATCHED}, // a CAS loop
        // A pair: centralized up to 4 KiB, then batched.
        {kSum, kI32, 512, 2, UCT_MM_INCAST_MODE_CENTRALIZED},
        {kSum, kF64, T::kPairCentralizedMaxBytes, 2,
         UCT_MM_INCAST_MODE_CENTRALIZED},
        {kSum, kF64, 1 << 18, 2, UCT_MM_INCAST_MODE_BATCHED},
        {kGather, kU8, 64, 2, UCT_MM_INCAST_MODE_CENTRALIZED},
        {kGather, kU8, 1 << 16, 2, UCT_MM_INCAST_MODE_BATCHED},
        // Gather: batched in small groups, centralized in bigger ones.
        {kGather, kU8, 64, T::kGatherBatchedMaxGroup,
         UCT_MM_INCAST_MODE_BATCHED},
        {kGather, kU8, 64, 8, UCT_MM_INCAST_MODE_CENTRALIZED},
    };
    for (const Case &k : cases) {
        GroupConfig c;
        c.name = "/unused";
        c.group_size = k.group_size;
        c.op = k.op;
        c.dtype = k.dtype;
        c.max_bytes = k.max_bytes;
        INFO("op " << k.op << " dtype " << k.dtype << " bytes " << k.max_bytes
                   << " N " << k.group_size);
        CHECK(resolve_mode(c) == k.expect);
        // An explicit mode always wins over the crossovers.
        c.mode = UCT_MM_INCAST_MODE_BATCHED;
        CHECK(resolve_mode(c) == UCT_MM_INCAST_MODE_BATCHED);
    }
}

namespace {

/// A sender that stops after its first chunk until the test lets it go.
struct ChunkGate {
    std::atomic<int> stopped{0}; ///< senders parked after their first chunk
    std::atomic<bool> go{false};
};

void park_after_first_chunk(void *arg, std::size_t bytes)
{
    auto *gate = static_cast<ChunkGate *>(arg);
    if (bytes != kChunkBytes) {
        return;
    }
    gate->stopped.fetch_add(1);
    Backoff backoff;
    const auto start = std::chrono::steady_clock::now();
    while (!gate->go.load() && (std::chrono::steady_clock::now() - start <
                                std::chrono::seconds(10))) {
        backoff.pause();
    }
}

} // namespace

TEST_CASE("the root consumes the first chunk before the last is published "
          "(threads)",
          "[mm_incast][threads]")
{
    const auto mode = static_cast<uct_mm_incast_mode_t>(GENERATE(
        int(UCT_MM_INCAST_MODE_BATCHED), int(UCT_MM_INCAST_MODE_CENTRALIZED)));
    const auto op = static_cast<uct_mm_incast_op_t>(
        GENERATE(int(UCT_MM_INCAST_OP_GATHER), int(UCT_MM_INCAST_OP_SUM)));
    const uint32_t n = GENERATE(2u, 3u);
    ucg_test::ShmSweeper sweeper(own_shm_prefix());
    ChunkGate gate;
    GroupConfig c;
    c.name = ucg_test::unique_shm_name("chk");
    c.group_size = n;
    c.root = 0;
    c.mode = mode;
    c.op = op;
    c.dtype = UCT_MM_INCAST_DTYPE_DOUBLE;
    c.max_bytes = 4 * kChunkBytes;
    c.hooks.chunk_published = park_after_first_chunk;
    c.hooks.arg = &gate;
    const std::size_t bytes = c.max_bytes;
    INFO("mode " << mode_str(mode) << " op " << op << " n " << n);
    std::size_t seen_parked = 0; // root: consumed with every sender parked
    std::size_t seen_later = 0;  // root: consumed 1000 polls later
    ucg_test::run_thread_ranks(static_cast<int>(n), [&](int r) {
        GroupConfig mine = c;
        mine.member = static_cast<uint32_t>(r);
        std::unique_ptr<Group> g;
        UCG_CHECK_EQ(static_cast<int>(Group::create(mine, &g)), 0);
        std::vector<double> buf(bytes / sizeof(double) * n);
        if (r != 0) {
            std::fill(buf.begin(), buf.end(), double(r));
            UCG_CHECK_EQ(static_cast<int>(g->send(buf.data(), bytes)), 0);
            return;
        }
        std::size_t len = 0;
        Backoff backoff;
        const auto start = std::chrono::steady_clock::now();
        while ((gate.stopped.load() < int(n - 1)) ||
               (g->consumed_bytes() < (n - 1) * kChunkBytes)) {
            UCG_CHECK(g->recv(buf.data(), bytes * n, &len) == UCS_INPROGRESS);
            backoff.pause();
            UCG_CHECK(std::chrono::steady_clock::now() - start <
                      std::chrono::seconds(5));
        }
        seen_parked = g->consumed_bytes();
        for (int i = 0; i < 1000; ++i) {
            UCG_CHECK(g->recv(buf.data(), bytes * n, &len) == UCS_INPROGRESS);
        }
        seen_later = g->consumed_bytes();
        gate.go.store(true);
        ucs_status_t st;
        while ((st = g->recv(buf.data(), bytes * n, &len)) == UCS_INPROGRESS) {
            backoff.pause();
        }
        UCG_CHECK_EQ(static_cast<int>(st), 0);
        UCG_CHECK_EQ(g->consumed_bytes(), 0ul);
        const bool gather = (op == UCT_MM_INCAST_OP_GATHER);
        UCG_CHECK_EQ(len, gather ? bytes * (n - 1) : bytes);
        for (std::size_t i = 0; i < len / sizeof(double); ++i) {
            const double want = gather
                                    ? double(1 + i / (bytes / sizeof(double)))
                                    : double(n * (n - 1) / 2);
            UCG_CHECK_EQ(buf[i], want);
        }
    });
    // Exactly one chunk per sender: nothing past what was published.
    CHECK(seen_parked == (n - 1) * kChunkBytes);
    CHECK(seen_later == (n - 1) * kChunkBytes);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("chunked contributions: every slot mode x operator x datatype "
          "around the chunk size (threads)",
          "[mm_incast][threads]")
{
    const auto mode = static_cast<uct_mm_incast_mode_t>(GENERATE(
        int(UCT_MM_INCAST_MODE_BATCHED), int(UCT_MM_INCAST_MODE_CENTRALIZED),
        int(UCT_MM_INCAST_MODE_LOCKED), int(UCT_MM_INCAST_MODE_ATOMIC)));
    ucg_test::ShmSweeper sweeper(own_shm_prefix());
    for_each_op_dtype([&](GroupConfig c, int o, int d) {
        const std::size_t t = dtype_size(c.dtype);
        c.group_size = 3;
        c.root = static_cast<uint32_t>((o + d) % 3);
        c.mode = mode;
        c.elements = 2;
        c.max_bytes = 3 * kChunkBytes;
        for (std::size_t bytes : {kChunkBytes - t, kChunkBytes, kChunkBytes + t,
                                  5 * kChunkBytes / 2}) {
            c.name = ucg_test::unique_shm_name("cred");
            INFO("mode " << mode_str(mode) << " op " << o << " dtype " << d
                         << " bytes " << bytes);
            run_threads(c, 4, bytes);
        }
    });
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("chunked gather over group sizes, roots and sizes up to 1 MiB "
          "back to back (threads)",
          "[mm_incast][threads]")
{
    const auto mode = static_cast<uct_mm_incast_mode_t>(GENERATE(
        int(UCT_MM_INCAST_MODE_BATCHED), int(UCT_MM_INCAST_MODE_CENTRALIZED)));
    ucg_test::ShmSweeper sweeper(own_shm_prefix());
    for (uint32_t n : {2u, 3u, 5u}) {
        for (std::size_t bytes : {kChunkBytes - 1, kChunkBytes + 1,
                                  3 * kChunkBytes + 5, std::size_t{1} << 20}) {
            GroupConfig c;
            c.name = ucg_test::unique_shm_name("cgat");
            c.group_size = n;
            c.root = static_cast<uint32_t>(bytes % n);
            c.mode = mode;
            c.elements = 2;
            c.max_bytes = std::size_t{1} << 20;
            INFO("n " << n << " bytes " << bytes);
            run_threads(c, (bytes >= (1u << 20)) ? 3 : 10, bytes);
        }
    }
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("1 MiB reductions back to back in every mode (threads)",
          "[mm_incast][threads]")
{
    const auto mode = static_cast<uct_mm_incast_mode_t>(GENERATE(
        int(UCT_MM_INCAST_MODE_BATCHED), int(UCT_MM_INCAST_MODE_CENTRALIZED),
        int(UCT_MM_INCAST_MODE_LOCKED), int(UCT_MM_INCAST_MODE_ATOMIC)));
    ucg_test::ShmSweeper sweeper(own_shm_prefix());
    const std::pair<uct_mm_incast_op_t, uct_mm_incast_dtype_t> pairs[] = {
        {UCT_MM_INCAST_OP_SUM, UCT_MM_INCAST_DTYPE_FLOAT},
        {UCT_MM_INCAST_OP_SUM, UCT_MM_INCAST_DTYPE_DOUBLE},
        {UCT_MM_INCAST_OP_MAX, UCT_MM_INCAST_DTYPE_INT32},
        {UCT_MM_INCAST_OP_BXOR, UCT_MM_INCAST_DTYPE_UINT8}};
    for (const auto &[op, dtype] : pairs) {
        GroupConfig c;
        c.name = ucg_test::unique_shm_name("cbig");
        c.group_size = 4;
        c.root = 1;
        c.mode = mode;
        c.op = op;
        c.dtype = dtype;
        c.elements = 2;
        c.max_bytes = std::size_t{1} << 20;
        INFO("mode " << mode_str(mode) << " op " << op << " dtype " << dtype);
        run_threads(c, 3, c.max_bytes);
    }
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("chunked float sums equal the member-order reference bit for bit "
          "(threads)",
          "[mm_incast][threads]")
{
    const auto mode = static_cast<uct_mm_incast_mode_t>(GENERATE(
        int(UCT_MM_INCAST_MODE_BATCHED), int(UCT_MM_INCAST_MODE_CENTRALIZED)));
    ucg_test::ShmSweeper sweeper(own_shm_prefix());
    constexpr uint32_t kN = 4; // root 0, senders 1..3
    const std::size_t count = 5 * kChunkBytes / 2 / sizeof(float);
    // Magnitudes that make float addition order visible: 1e8 + x loses x.
    auto contribution = [](uint32_t m, uint64_t k, std::size_t i) {
        const float x = 1.0f + static_cast<float>((i + k) % 11) / 7.0f;
        return (m == 1) ? 1e8f * x : (m == 3) ? -1e8f * x : x / 3.0f;
    };
    std::vector<float> ref(count), other(count);
    bool order_matters = false;
    for (std::size_t i = 0; i < count; ++i) {
        ref[i] = (contribution(1, 0, i) + contribution(2, 0, i)) +
                 contribution(3, 0, i);
        other[i] = (contribution(1, 0, i) + contribution(3, 0, i)) +
                   contribution(2, 0, i);
        order_matters = order_matters || (ref[i] != other[i]);
    }
    REQUIRE(order_matters); // the test can tell the orders apart
    GroupConfig c;
    c.name = ucg_test::unique_shm_name("cflt");
    c.group_size = kN;
    c.mode = mode;
    c.op = UCT_MM_INCAST_OP_SUM;
    c.dtype = UCT_MM_INCAST_DTYPE_FLOAT;
    c.max_bytes = count * sizeof(float);
    ucg_test::run_thread_ranks(int(kN), [&](int r) {
        GroupConfig mine = c;
        mine.member = static_cast<uint32_t>(r);
        std::unique_ptr<Group> g;
        UCG_CHECK_EQ(static_cast<int>(Group::create(mine, &g)), 0);
        std::vector<float> buf(count);
        Backoff backoff;
        ucs_status_t st;
        if (r != 0) {
            for (std::size_t i = 0; i < count; ++i) {
                buf[i] = contribution(mine.member, 0, i);
            }
            while ((st = g->send(buf.data(), c.max_bytes)) ==
                   UCS_ERR_NO_RESOURCE) {
                backoff.pause();
            }
            UCG_CHECK_EQ(static_cast<int>(st), 0);
            return;
        }
        std::size_t len = 0;
        while ((st = g->recv(buf.data(), c.max_bytes, &len)) ==
               UCS_INPROGRESS) {
            backoff.pause();
        }
        UCG_CHECK_EQ(static_cast<int>(st), 0);
        UCG_CHECK_EQ(len, c.max_bytes);
        UCG_CHECK(std::memcmp(buf.data(), ref.data(), len) == 0);
    });
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("slot rings from 4 KiB span kRingMinBytes of buffers; flow control "
          "still counts elements",
          "[mm_incast][threads]")
{
    // Small contributions and buffer modes keep one buffer per element.
    CHECK(compute_layout(3, 8, kDeepRingMinBytes - 8, true).buffers == 8);
    CHECK(compute_layout(3, 8, 1 << 16, false).buffers == 8);
    for (std::size_t bytes :
         {kDeepRingMinBytes, std::size_t{1} << 16, std::size_t{1} << 20}) {
        const LayoutSizes s = compute_layout(3, 8, bytes, true);
        INFO("bytes " << bytes);
        CHECK(s.buffers >= 8);
        CHECK(s.buffers <= kMaxBuffers);
        CHECK(((s.buffers == kMaxBuffers) || (s.buffers == 8) ||
               (s.buffers * s.element_bytes >= kRingMinBytes)));
    }
    ucg_test::ShmSweeper sweeper(own_shm_prefix());
    GroupConfig c;
    c.name = ucg_test::unique_shm_name("deep");
    c.group_size = 2;
    c.root = 1;
    c.mode = UCT_MM_INCAST_MODE_CENTRALIZED;
    c.elements = 2;
    c.max_bytes = 2 * kChunkBytes;
    GroupConfig r = c;
    r.member = 1;
    std::unique_ptr<Group> root, sender;
    REQUIRE(Group::create(r, &root) == UCS_OK);
    REQUIRE(Group::create(c, &sender) == UCS_OK);
    std::vector<std::byte> buf(c.max_bytes);
    CHECK(sender->send(buf.data(), buf.size()) == UCS_OK);
    CHECK(sender->send(buf.data(), buf.size()) == UCS_OK);
    CHECK(sender->send(buf.data(), buf.size()) == UCS_ERR_NO_RESOURCE);
    std::size_t len = 0;
    CHECK(root->recv(buf.data(), buf.size(), &len) == UCS_OK);
    CHECK(sender->send(buf.data(), buf.size()) == UCS_OK);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("back-to-back incasts wrap a deep buffer ring (threads)",
          "[mm_incast][threads]")
{
    const auto mode = static_cast<uct_mm_incast_mode_t>(GENERATE(
        int(UCT_MM_INCAST_MODE_BATCHED), int(UCT_MM_INCAST_MODE_CENTRALIZED)));
    ucg_test::ShmSweeper sweeper(own_shm_prefix());
    GroupConfig c;
    c.name = ucg_test::unique_shm_name("wrap");
    c.group_size = 3;
    c.root = 1;
    c.mode = mode;
    c.op = UCT_MM_INCAST_OP_SUM;
    c.dtype = UCT_MM_INCAST_DTYPE_INT32;
    c.elements = 2;
    c.max_bytes = kDeepRingMinBytes;
    const uint32_t buffers = compute_layout(3, 2, c.max_bytes, true).buffers;
    REQUIRE(buffers > c.elements);
    run_threads(c, 2 * buffers + 3, c.max_bytes);
    CHECK(sweeper.leftovers().empty());
}
