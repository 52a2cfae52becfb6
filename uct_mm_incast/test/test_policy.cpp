// SPDX-License-Identifier: BSD-3-Clause
// AUTO's choice (policy.h) follows the thresholds it is given (member 0's
// UCX_MM_INCAST_AUTO_*): the defaults reproduce the measured table, and
// each threshold moved changes the mode of the messages it covers.
#include "policy.h"

#include <catch2/catch.hpp>

using uct_mm_common::Coll;
using uct_mm_common::Message;
using uct_mm_incast::AutoThresholds;
using uct_mm_incast::message_mode;

namespace {

Message reduce_i32(std::size_t length)
{
    Message m;
    m.coll = Coll::kReduce;
    m.op = UCG_OP_SUM;
    m.dtype = UCG_DTYPE_INT32;
    m.length = length;
    return m;
}

Message gather(std::size_t length)
{
    Message m;
    m.coll = Coll::kGather;
    m.length = length;
    return m;
}

uct_mm_incast_mode_t auto_mode(const Message &m, std::uint32_t n,
                               const AutoThresholds &t = {})
{
    return message_mode(m, n, UCT_MM_INCAST_MODE_AUTO, t);
}

} // namespace

TEST_CASE("incast policy: default thresholds give the measured table",
          "[mm][incast][policy]")
{
    CHECK(AutoThresholds{}.valid());
    CHECK(auto_mode(reduce_i32(8), 2) == UCT_MM_INCAST_MODE_ATOMIC);
    CHECK(auto_mode(reduce_i32(16), 2) == UCT_MM_INCAST_MODE_CENTRALIZED);
    CHECK(auto_mode(reduce_i32(16), 4) == UCT_MM_INCAST_MODE_BATCHED);
    CHECK(auto_mode(reduce_i32(32768), 4) == UCT_MM_INCAST_MODE_LOCKED);
    CHECK(auto_mode(reduce_i32(32768), 3) == UCT_MM_INCAST_MODE_BATCHED);
    CHECK(auto_mode(gather(64), 2) == UCT_MM_INCAST_MODE_CENTRALIZED);
    CHECK(auto_mode(gather(64), 4) == UCT_MM_INCAST_MODE_BATCHED);
    CHECK(auto_mode(gather(64), 5) == UCT_MM_INCAST_MODE_CENTRALIZED);
}

TEST_CASE("incast policy: each threshold moves the mode AUTO picks",
          "[mm][incast][policy]")
{
    AutoThresholds t;
    t.atomic_max_bytes = 0; // never atomic: a pair runs centralized
    CHECK(auto_mode(reduce_i32(8), 2, t) == UCT_MM_INCAST_MODE_CENTRALIZED);
    t = {};
    t.atomic_max_bytes = 64;
    CHECK(auto_mode(reduce_i32(64), 4, t) == UCT_MM_INCAST_MODE_ATOMIC);
    t = {};
    t.locked_min_bytes = 4096;
    CHECK(auto_mode(reduce_i32(4096), 4, t) == UCT_MM_INCAST_MODE_LOCKED);
    t.locked_min_bytes = SIZE_MAX; // "inf": never locked
    CHECK(auto_mode(reduce_i32(1 << 20), 8, t) == UCT_MM_INCAST_MODE_BATCHED);
    t = {};
    t.locked_min_group = 3;
    CHECK(auto_mode(reduce_i32(32768), 3, t) == UCT_MM_INCAST_MODE_LOCKED);
    t = {};
    t.pair_group = 1; // no pair rule
    CHECK(auto_mode(reduce_i32(16), 2, t) == UCT_MM_INCAST_MODE_BATCHED);
    CHECK(auto_mode(gather(64), 2, t) == UCT_MM_INCAST_MODE_BATCHED);
    t = {};
    t.gather_batched_max_group = 8;
    CHECK(auto_mode(gather(64), 5, t) == UCT_MM_INCAST_MODE_BATCHED);
    t = {};
    t.pair_locked_min_bytes = 64; // pairs reduce locked from 64 B ...
    CHECK(auto_mode(reduce_i32(64), 2, t) == UCT_MM_INCAST_MODE_LOCKED);
    CHECK(auto_mode(reduce_i32(32), 2, t) == UCT_MM_INCAST_MODE_CENTRALIZED);
    CHECK(auto_mode(reduce_i32(8), 2, t) == UCT_MM_INCAST_MODE_ATOMIC);
    // ... their gathers stay centralized, bigger groups are not pairs.
    CHECK(auto_mode(gather(64), 2, t) == UCT_MM_INCAST_MODE_CENTRALIZED);
    CHECK(auto_mode(reduce_i32(64), 3, t) == UCT_MM_INCAST_MODE_BATCHED);
    // An explicit mode still wins.
    CHECK(message_mode(reduce_i32(8), 2, UCT_MM_INCAST_MODE_BATCHED, t) ==
          UCT_MM_INCAST_MODE_BATCHED);
}

TEST_CASE("incast policy: group-size thresholds out of 1..256 are invalid",
          "[mm][incast][policy]")
{
    AutoThresholds t;
    t.pair_group = 0;
    CHECK(!t.valid());
    t = {};
    t.locked_min_group = 257;
    CHECK(!t.valid());
    t = {};
    t.gather_batched_max_group = 0;
    CHECK(!t.valid());
    t = {};
    t.atomic_max_bytes = SIZE_MAX; // sizes: any
    CHECK(t.valid());
}
