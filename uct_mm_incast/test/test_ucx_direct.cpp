// SPDX-License-Identifier: BSD-3-Clause
// mm_incast direct messages through uct_mm_incast.h in forked ranks: every
// kind for group sizes 2 to 5 (member 0's DIRECT_SIZE), none where member
// 0 configured none, bad input, and a killed member.
#include "direct_script.h"
#include "ucx_iface_fixture.h"

#include "uct_group_test_util.h"

#include "ucg_test/fork_ranks.h"
#include "ucg_test/thread_ranks.h"

#include <catch2/catch.hpp>
#include <csignal>
#include <cstring>

using namespace incast_test;
using namespace uct_group_test;

namespace {

struct SharedBoard {
    ucg_test::SharedMapping mem{sizeof(Board)};
    Board *board = new (mem.data()) Board{};
};

ucg_test::ForkOptions opts(unsigned n)
{
    return ucg_test::ForkOptions(static_cast<int>(n), std::chrono::seconds(60));
}

// Connects the group (a first reduce joins everyone); returns what
// uct_mm_incast_group_direct says of it.
ucs_status_t connect_direct(Iface &r, uct_group_h g, int rank,
                            uct_mm_incast_direct_h *d, std::size_t *max)
{
    int32_t one = 1;
    uct_group_msg_t m{};
    m.coll = UCT_GROUP_COLL_REDUCE;
    m.dtype = UCG_DTYPE_INT32;
    m.buffer = &one;
    m.length = sizeof(one);
    UCG_CHECK(post_wait(r.worker, g, rank != 0, m) == UCS_OK);
    return uct_mm_incast_group_direct(g, d, max);
}

// A connected group's direct messages.
uct_mm_incast_direct_h connect_direct(Iface &r, uct_group_h g, int rank,
                                      std::size_t *max)
{
    uct_mm_incast_direct_h d = nullptr;
    UCG_CHECK(connect_direct(r, g, rank, &d, max) == UCS_OK);
    return d;
}

uct_mm_incast_direct_msg_t to_uct(const DirectMsg &m)
{
    uct_mm_incast_direct_msg_t u{};
    u.coll = static_cast<uct_mm_incast_direct_coll_t>(m.coll);
    u.root = m.root;
    u.op = m.op;
    u.dtype = m.dtype;
    u.length = m.length;
    u.src = m.src;
    u.dst = m.dst;
    return u;
}

ucs_status_t wait_direct(uct_mm_incast_direct_h d, std::uint64_t id)
{
    uct_mm_common::Backoff backoff;
    ucs_status_t st;
    while ((st = uct_mm_incast_direct_test(d, id)) == UCS_INPROGRESS) {
        backoff.pause();
    }
    return st;
}

} // namespace

TEST_CASE("uct incast direct: every kind, root and operator",
          "[mm][incast][direct][ucx][fork]")
{
    const unsigned n = GENERATE(2u, 3u, 5u);
    SharedBoard sb;
    const auto script = direct_script(n, 512);
    ucg_test::BarrierWitness w(static_cast<int>(n)); // mapped before the fork
    auto result = ucg_test::run_fork_ranks(opts(n), [&](int rank) {
        // Member 0's slot size is the group's.
        Iface r(Config{{"DIRECT_SIZE", rank == 0 ? "512" : "64"}});
        uct_group_h g = make_group(uct_mm_incast_group_create, r.iface,
                                   sb.board, rank, n, 21);
        std::size_t max = 0;
        uct_mm_incast_direct_h d = connect_direct(r, g, rank, &max);
        UCG_CHECK_EQ(max, std::size_t{512});
        const auto me = static_cast<uint32_t>(rank);
        for (std::size_t k = 0; k < script.size(); ++k) {
            DirectBuffers b;
            const auto m = to_uct(prepare_direct(script[k], me, n, k, &b));
            std::uint64_t id = 0;
            witness_arrive(&w, script[k], me, k);
            const ucs_status_t st = uct_mm_incast_direct_post(d, &m, &id);
            UCG_CHECK(st == UCS_OK || st == UCS_INPROGRESS);
            UCG_CHECK(wait_direct(d, id) == UCS_OK);
            witness_left(&w, script[k], me, k);
            check_direct(script[k], me, n, k, b);
        }
        barrier(sb.board, 1, n);
        uct_group_destroy(g);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
}

TEST_CASE("uct incast direct: none where member 0 configured none, bad "
          "input is refused",
          "[mm][incast][direct][ucx][fork]")
{
    SharedBoard sb;
    auto result = ucg_test::run_fork_ranks(opts(3), [&](int rank) {
        Iface r(Config{{"DIRECT_SIZE", rank == 0 ? "0" : "1k"}});
        uct_group_h g = make_group(uct_mm_incast_group_create, r.iface,
                                   sb.board, rank, 3, 22);
        uct_mm_incast_direct_h d = nullptr;
        std::size_t max = 0;
        UCG_CHECK(connect_direct(r, g, rank, &d, &max) == UCS_ERR_UNSUPPORTED);
        UCG_CHECK(uct_mm_incast_group_direct(nullptr, &d, &max) ==
                  UCS_ERR_INVALID_PARAM);
        barrier(sb.board, 1, 3);
        uct_group_destroy(g);
    });
    INFO(result.summary());
    REQUIRE(result.ok);

    SharedBoard sb2;
    result = ucg_test::run_fork_ranks(opts(2), [&](int rank) {
        Iface r(Config{{"DIRECT_SIZE", "64"}});
        uct_group_h g = make_group(uct_mm_incast_group_create, r.iface,
                                   sb2.board, rank, 2, 23);
        std::size_t max = 0;
        uct_mm_incast_direct_h d = connect_direct(r, g, rank, &max);
        std::int32_t buf[17] = {};
        uct_mm_incast_direct_msg_t m{};
        m.coll = UCT_MM_INCAST_DIRECT_ALLREDUCE;
        m.dtype = UCG_DTYPE_INT32;
        m.src = buf;
        m.dst = buf;
        m.length = sizeof(buf); // 68 bytes: past the slot
        std::uint64_t id;
        UCG_CHECK(uct_mm_incast_direct_post(d, &m, &id) ==
                  UCS_ERR_INVALID_PARAM);
        m.length = 8;
        const int nine = 9; // as C code can store it
        std::memcpy(&m.coll, &nine, sizeof(nine));
        UCG_CHECK(uct_mm_incast_direct_post(d, &m, &id) ==
                  UCS_ERR_INVALID_PARAM);
        UCG_CHECK(uct_mm_incast_direct_post(d, nullptr, &id) ==
                  UCS_ERR_INVALID_PARAM);
        // Nothing was posted: the next message is everyone's first.
        m.coll = UCT_MM_INCAST_DIRECT_ALLREDUCE;
        buf[0] = rank + 1;
        buf[1] = 0;
        UCG_CHECK(uct_mm_incast_direct_post(d, &m, &id) != UCS_ERR_IO_ERROR);
        UCG_CHECK(wait_direct(d, id) == UCS_OK);
        UCG_CHECK_EQ(buf[0], 3);
        barrier(sb2.board, 1, 2);
        uct_group_destroy(g);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
}

TEST_CASE("uct incast direct: a killed member resets the others' connection",
          "[mm][incast][direct][ucx][fork]")
{
    constexpr unsigned n = 3;
    SharedBoard sb;
    auto o = opts(n);
    o.may_be_killed = {2};
    auto result = ucg_test::run_fork_ranks(o, [&](int rank) {
        Iface r(Config{{"TIMEOUT", "200ms"}});
        uct_group_h g = make_group(uct_mm_incast_group_create, r.iface,
                                   sb.board, rank, n, 24);
        std::size_t max = 0;
        uct_mm_incast_direct_h d = connect_direct(r, g, rank, &max);
        barrier(sb.board, 1, n);
        if (rank == 2) {
            raise(SIGKILL);
        }
        uct_mm_incast_direct_msg_t m{}; // a barrier
        std::uint64_t id;
        ucs_status_t st = uct_mm_incast_direct_post(d, &m, &id);
        if (st == UCS_INPROGRESS) {
            st = wait_direct(d, id);
        }
        UCG_CHECK(st == UCS_ERR_CONNECTION_RESET);
        UCG_CHECK(uct_group_status(g) == UCS_ERR_CONNECTION_RESET);
        uct_group_destroy(g);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
}
