// SPDX-License-Identifier: BSD-3-Clause
// mm_incast refuses bad input with a named status and creates nothing.
#include "incast_test_util.h"

#include <ucg_test/shm_names.h>

#include <catch2/catch.hpp>

using namespace incast_test;

namespace {

GroupConfig base()
{
    GroupConfig c;
    c.name = ucg_test::unique_shm_name("bad");
    c.group_size = 2;
    c.root = 0;
    c.member = 0;
    return c;
}

ucs_status_t try_create(const GroupConfig &c)
{
    std::unique_ptr<Group> g;
    return Group::create(c, &g);
}

} // namespace

TEST_CASE("bad group parameters are refused with a named status",
          "[mm_incast][fork]")
{
    ucg_test::ShmSweeper sweeper(own_shm_prefix());
    auto c = base();
    c.op = UCT_MM_INCAST_OP_BAND;
    c.dtype = UCT_MM_INCAST_DTYPE_DOUBLE;
    CHECK(try_create(c) == UCS_ERR_UNSUPPORTED);
    c = base();
    c.group_size = UCT_MM_INCAST_MAX_GROUP_SIZE + 1;
    CHECK(try_create(c) == UCS_ERR_EXCEEDS_LIMIT);
    c = base();
    c.mode = UCT_MM_INCAST_MODE_LOCKED; // gather needs slots
    CHECK(try_create(c) == UCS_ERR_UNSUPPORTED);
    c = base();
    c.root = 5;
    CHECK(try_create(c) == UCS_ERR_INVALID_PARAM);
    c = base();
    c.name = "no-slash";
    CHECK(try_create(c) == UCS_ERR_INVALID_PARAM);
    c = base();
    c.member = 1;
    c.timeout_sec = 0.05; // the root never comes
    CHECK(try_create(c) == UCS_ERR_TIMED_OUT);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("bad contributions are refused with a named status",
          "[mm_incast][fork]")
{
    ucg_test::ShmSweeper sweeper(own_shm_prefix());
    auto c = base();
    c.group_size = 1; // root alone: its own group, nothing to wait for
    c.op = UCT_MM_INCAST_OP_SUM;
    c.dtype = UCT_MM_INCAST_DTYPE_INT32;
    c.max_bytes = 64;
    std::unique_ptr<Group> g;
    REQUIRE(Group::create(c, &g) == UCS_OK);
    int32_t buf[32] = {};
    CHECK(g->send(buf, 4) == UCS_ERR_INVALID_PARAM); // root cannot send
    std::size_t len = 1;
    CHECK(g->recv(buf, sizeof(buf), &len) == UCS_OK);
    CHECK(len == 0);

    auto s = base();
    s.group_size = 2;
    s.root = 1;
    s.member = 0;
    s.op = UCT_MM_INCAST_OP_SUM;
    s.dtype = UCT_MM_INCAST_DTYPE_INT32;
    s.max_bytes = 64;
    auto r = s;
    r.member = 1;
    std::unique_ptr<Group> root, sender;
    REQUIRE(Group::create(r, &root) == UCS_OK);
    REQUIRE(Group::create(s, &sender) == UCS_OK);
    CHECK(sender->send(buf, 65) == UCS_ERR_EXCEEDS_LIMIT); // over max
    CHECK(sender->send(buf, 6) == UCS_ERR_INVALID_PARAM);  // not n*4
    CHECK(root->recv(buf, sizeof(buf), &len) == UCS_INPROGRESS);
    CHECK(sender->send(buf, 64) == UCS_OK);
    CHECK(root->recv(buf, 8, &len) == UCS_ERR_MESSAGE_TRUNCATED);
    CHECK(root->recv(buf, sizeof(buf), &len) == UCS_OK);
    CHECK(len == 64);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("a full ring answers no-resource until the root drains",
          "[mm_incast][fork]")
{
    ucg_test::ShmSweeper sweeper(own_shm_prefix());
    auto s = base();
    s.root = 1;
    s.elements = 2;
    s.max_bytes = 8;
    auto r = s;
    r.member = 1;
    std::unique_ptr<Group> root, sender;
    REQUIRE(Group::create(r, &root) == UCS_OK);
    REQUIRE(Group::create(s, &sender) == UCS_OK);
    char buf[8] = {};
    CHECK(sender->send(buf, 8) == UCS_OK);
    CHECK(sender->send(buf, 8) == UCS_OK);
    CHECK(sender->send(buf, 8) == UCS_ERR_NO_RESOURCE);
    std::size_t len = 0;
    CHECK(root->recv(buf, sizeof(buf), &len) == UCS_OK);
    CHECK(sender->send(buf, 8) == UCS_OK);
}

TEST_CASE("an idle poll costs the same for 2 and 256 members",
          "[mm_incast][fork]")
{
    ucg_test::ShmSweeper sweeper(own_shm_prefix());
    auto idle_ns = [](uint32_t n, uct_mm_incast_mode_t mode) {
        auto c = base();
        c.group_size = n;
        c.mode = mode;
        c.max_bytes = 8;
        c.elements = 2;
        std::unique_ptr<Group> g; // the root alone: nothing ever arrives
        REQUIRE(Group::create(c, &g) == UCS_OK);
        char buf[8 * 256];
        std::size_t len = 0;
        double best = 1e30;
        for (int trial = 0; trial < 5; ++trial) {
            const auto t0 = std::chrono::steady_clock::now();
            int busy = 0;
            for (int i = 0; i < 100000; ++i) {
                busy += (g->recv(buf, sizeof(buf), &len) == UCS_INPROGRESS);
            }
            REQUIRE(busy == 100000);
            best = std::min(best, std::chrono::duration<double, std::nano>(
                                      std::chrono::steady_clock::now() - t0)
                                          .count() /
                                      100000);
        }
        return best;
    };
    for (auto mode :
         {UCT_MM_INCAST_MODE_BATCHED, UCT_MM_INCAST_MODE_CENTRALIZED}) {
        const double small = idle_ns(2, mode);
        const double large = idle_ns(256, mode);
        INFO(mode_str(mode) << ": " << small << " ns vs " << large << " ns");
        CHECK(large < 4 * small + 50);
    }
    CHECK(sweeper.leftovers().empty());
}
