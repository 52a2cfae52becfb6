// SPDX-License-Identifier: BSD-3-Clause
// The public group API through the plugin: defaults from an mm_incast
// iface's UCX_MM_INCAST_* config, bad input refused with a named status.
#include "ucx_iface_fixture.h"

#include <uct_mm_incast.h>

#include <ucg_test/shm_names.h>
#include <ucg_test/thread_ranks.h>

#include <catch2/catch.hpp>
#include <uct/api/uct.h>

#include <unistd.h>

#include <cstring>
#include <string>

namespace {

using incast_test::Iface;

uct_mm_incast_group_params_t params(const std::string &name, unsigned n,
                                    unsigned member)
{
    uct_mm_incast_group_params_t p{};
    p.field_mask =
        UCT_MM_INCAST_GROUP_FIELD_NAME | UCT_MM_INCAST_GROUP_FIELD_GROUP_SIZE |
        UCT_MM_INCAST_GROUP_FIELD_MEMBER_INDEX |
        UCT_MM_INCAST_GROUP_FIELD_ROOT | UCT_MM_INCAST_GROUP_FIELD_OP |
        UCT_MM_INCAST_GROUP_FIELD_DTYPE;
    p.name = name.c_str();
    p.group_size = n;
    p.member_index = member;
    p.root = 0;
    p.op = UCT_MM_INCAST_OP_SUM;
    p.dtype = UCT_MM_INCAST_DTYPE_INT32;
    return p;
}

} // namespace

TEST_CASE("a group takes its mode from the iface's UCX_MM_INCAST_MODE",
          "[mm_incast][ucx]")
{
    Iface iface("locked");
    const std::string name = ucg_test::unique_shm_name("api");
    ucg_test::run_thread_ranks(3, [&](int r) {
        auto p = params(name, 3, static_cast<unsigned>(r));
        p.field_mask |= UCT_MM_INCAST_GROUP_FIELD_IFACE;
        p.iface = iface.iface;
        uct_mm_incast_group_h g;
        if (uct_mm_incast_group_create(&p, &g) != UCS_OK) {
            throw std::runtime_error("group create");
        }
        uct_mm_incast_group_attr_t attr;
        uct_mm_incast_group_query(g, &attr);
        if (attr.mode != UCT_MM_INCAST_MODE_LOCKED) {
            throw std::runtime_error("mode");
        }
        int32_t v[4] = {r, r, r, r};
        size_t len = 0;
        for (int k = 0; k < 100; ++k) {
            ucs_status_t st;
            do {
                st = (r == 0) ? uct_mm_incast_group_recv(g, v, sizeof(v), &len)
                              : uct_mm_incast_group_send(g, v, sizeof(v));
                sched_yield();
            } while ((st == UCS_INPROGRESS) || (st == UCS_ERR_NO_RESOURCE));
            if ((st != UCS_OK) || ((r == 0) && (v[3] != 3))) {
                throw std::runtime_error("incast");
            }
            if (r == 0) {
                std::fill(v, v + 4, 0);
            }
        }
        uct_mm_incast_group_destroy(g);
    });
}

TEST_CASE("the public API refuses bad input with a named status",
          "[mm_incast][ucx]")
{
    const std::string name = ucg_test::unique_shm_name("api");
    uct_mm_incast_group_h g;
    auto p = params(name, 2, 0);
    p.op = UCT_MM_INCAST_OP_BXOR;
    p.dtype = UCT_MM_INCAST_DTYPE_FLOAT;
    CHECK(uct_mm_incast_group_create(&p, &g) == UCS_ERR_UNSUPPORTED);
    p = params(name, 1000, 0);
    CHECK(uct_mm_incast_group_create(&p, &g) == UCS_ERR_EXCEEDS_LIMIT);
    p = params(name, 2, 0);
    p.field_mask &= ~uint64_t(UCT_MM_INCAST_GROUP_FIELD_ROOT);
    CHECK(uct_mm_incast_group_create(&p, &g) == UCS_ERR_INVALID_PARAM);
    p = params(name, 2, 0);
    p.field_mask |= UCT_MM_INCAST_GROUP_FIELD_IFACE;
    uct_iface_t other_iface{}; // an iface of another transport
    p.iface = &other_iface;
    CHECK(uct_mm_incast_group_create(&p, &g) == UCS_ERR_INVALID_PARAM);
    CHECK(std::string(uct_mm_incast_mode_name(UCT_MM_INCAST_MODE_ATOMIC)) ==
          "atomic");
    CHECK(uct_mm_incast_atomic_supported(UCT_MM_INCAST_OP_SUM,
                                         UCT_MM_INCAST_DTYPE_DOUBLE) == 1);
    CHECK(ucg_test::list_shm(name.substr(1)).empty());
}
