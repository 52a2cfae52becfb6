// SPDX-License-Identifier: BSD-3-Clause
// mm_incast groups with ranks as threads on one process (TSan sees them).
#include "incast_test_util.h"

#include <ucg_test/shm_names.h>
#include <ucg_test/thread_ranks.h>

#include <catch2/catch.hpp>

using namespace incast_test;

namespace {

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
    for (int o = UCT_MM_INCAST_OP_SUM; o < UCT_MM_INCAST_OP_LAST; ++o) {
        for (int d = 0; d < UCT_MM_INCAST_DTYPE_LAST; ++d) {
            GroupConfig c;
            c.op = static_cast<uct_mm_incast_op_t>(o);
            c.dtype = static_cast<uct_mm_incast_dtype_t>(d);
            if (check_op(c.op, c.dtype) != UCS_OK) {
                continue;
            }
            c.name = ucg_test::unique_shm_name("red");
            c.group_size = 4;
            c.root = static_cast<uint32_t>((o + d) % 4);
            c.mode = mode;
            c.elements = 4;
            c.max_bytes = 40 * dtype_size(c.dtype);
            INFO("mode " << mode_str(mode) << " op " << o << " dtype " << d);
            run_threads(c, 20, 37 * dtype_size(c.dtype));
        }
    }
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
