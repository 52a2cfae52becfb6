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
