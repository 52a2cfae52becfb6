// SPDX-License-Identifier: BSD-3-Clause
// mm_incast groups through uct_group.h in forked ranks: every group size
// and root with gather and sums, every mode (UCX_MM_INCAST_MODE) for every
// operator of every datatype class, max_outstanding, a killed member, a
// member that never joins, a segment of another user, bad input, and idle
// groups costing no progress callback however many there are (these four
// are uct_group_cases.h's, which mm_bcast runs too).
#include "incast_test_util.h"
#include "ucx_iface_fixture.h"

#include "uct_group_cases.h"
#include "uct_group_test_util.h"

#include "uct_mm_common/names.h"

#include "ucg_test/fork_ranks.h"
#include "ucg_test/thread_ranks.h"

#include <catch2/catch.hpp>
#include <sys/mman.h>
#include <ucg_test/skip.h>
#include <unistd.h>

using namespace incast_test;
using namespace uct_group_test;

namespace {

constexpr std::size_t kSeg = 1024;

Config small_ring(const char *mode = "auto")
{
    return {{"GROUP_SEG_SIZE", "1k"}, {"GROUP_RING_SIZE", "8"},
            {"TIMEOUT", "200ms"},     {"ATTACH_TIMEOUT", "10s"},
            {"MAX_OUTSTANDING", "4"}, {"MODE", mode}};
}

uct_group_msg_t to_uct(const Message &m)
{
    uct_group_msg_t u{};
    u.coll = static_cast<uct_group_coll_t>(m.coll);
    u.root = m.root;
    u.op = m.op;
    u.dtype = m.dtype;
    u.length = m.length;
    u.buffer = m.buffer;
    u.member_buffers = m.member_buffers;
    u.flags = m.accumulate ? UCT_GROUP_MSG_FLAG_ACCUMULATE : 0;
    u.operand = m.operand;
    u.tag = m.tag;
    return u;
}

// Runs `script` as `rank` of `n` through the UCT API, two posts in flight.
void run_uct_script(Iface &r, uct_group_h g, uint32_t rank, uint32_t n,
                    const std::vector<Spec> &script)
{
    constexpr std::size_t kWindow = 2;
    Buffers bufs[kWindow];
    Done done[kWindow];
    uct_group_msg_t msgs[kWindow];
    for (std::size_t base = 0; base < script.size(); base += kWindow) {
        const std::size_t w = std::min(kWindow, script.size() - base);
        for (std::size_t i = 0; i < w; ++i) {
            const Spec &s = script[base + i];
            msgs[i] = to_uct(prepare(s, rank, n, base + i, &bufs[i]));
            done[i] = Done();
            post(r.worker, g, rank != s.root, msgs[i], &done[i]);
        }
        for (std::size_t i = 0; i < w; ++i) {
            const Spec &s = script[base + i];
            UCG_CHECK(wait(r.worker, &done[i]) == UCS_OK);
            if (rank == s.root) {
                const auto mode = uct_mm_incast_group_msg_mode(g, &msgs[i]);
                UCG_CHECK(mode != UCT_MM_INCAST_MODE_AUTO &&
                          mode != UCT_MM_INCAST_MODE_LAST);
                check_root(s, n, base + i, mode, bufs[i]);
            }
        }
    }
}

std::vector<Spec> roots_script(uint32_t n)
{
    std::vector<Spec> script;
    uint32_t k = 0;
    for (uint32_t root = 0; root < n; ++root) {
        for (std::size_t bytes : {std::size_t{0}, std::size_t{4}, kSeg - 4,
                                  kSeg, kSeg + 4, 5 * kSeg + 12, 20 * kSeg}) {
            Spec s;
            s.root = root;
            s.count = bytes / 4;
            s.accumulate = (k & 2) != 0;
            s.operand = (k & 6) == 4;
            s.tag = k++;
            script.push_back(s);
            s.coll = Coll::kGather;
            s.count = bytes;
            s.member_buffers = (k & 2) != 0;
            s.tag = k++;
            script.push_back(s);
        }
    }
    return script;
}

// Every op of every dtype class, then gather, roots changing.
std::vector<Spec> ops_script(uint32_t n)
{
    std::vector<Spec> script;
    uint32_t k = 0;
    for (ucg_dtype_t d : dtype_classes()) {
        for (ucg_op_t op : ops_for(d)) {
            for (std::size_t count : {std::size_t{1}, std::size_t{700}}) {
                Spec s;
                s.dtype = d;
                s.op = op;
                s.count = count;
                s.root = k % n;
                s.accumulate = k % 3 == 1;
                s.operand = k % 3 == 2;
                s.tag = k++;
                script.push_back(s);
            }
        }
    }
    Spec g;
    g.coll = Coll::kGather;
    g.count = 3000;
    g.root = 1;
    script.push_back(g);
    return script;
}

constexpr const char *kPrefix = "ucg-mmig";

uct_group_msg_t sum(uint32_t root, int32_t *buf, std::size_t count,
                    uint32_t tag)
{
    uct_group_msg_t m{};
    m.coll = UCT_GROUP_COLL_REDUCE;
    m.root = root;
    m.op = UCG_OP_SUM;
    m.dtype = UCG_DTYPE_INT32;
    m.buffer = buf;
    m.length = count * sizeof(int32_t);
    m.tag = tag;
    return m;
}

bool members_send(int rank)
{
    return rank != 0;
}

uct_group_msg_t sum_to_0(void *buf, std::size_t len, std::uint32_t tag)
{
    return sum(0, static_cast<int32_t *>(buf), len / sizeof(int32_t), tag);
}

GroupTransport transport()
{
    return {
        {UCT_MM_INCAST_TL_NAME, UCT_MM_INCAST_TL_NAME, "memory", small_ring()},
        kPrefix,
        uct_mm_incast_group_create,
        sum_to_0,
        members_send};
}

} // namespace

TEST_CASE("uct incast group: every size and root, gather and sums",
          "[mm][incast][ucx][fork]")
{
    const unsigned n = GENERATE(1u, 2u, 3u, 4u, 5u, 7u, 8u);
    SharedBoard sb(kPrefix);
    const auto script = roots_script(n);
    auto result =
        ucg_test::run_fork_ranks(group_fork_options(n), [&](int rank) {
            Iface r(small_ring());
            uct_group_h g = make_group(uct_mm_incast_group_create, r.iface,
                                       sb.board, rank, n, 7);
            run_uct_script(r, g, static_cast<uint32_t>(rank), n, script);
            barrier(sb.board, 1, n);
            uct_group_destroy(g);
        });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(!sb.left_behind(7));
}

TEST_CASE("uct incast group: every mode, op and dtype class",
          "[mm][incast][ucx][fork]")
{
    const char *mode =
        GENERATE("batched", "centralized", "locked", "atomic", "auto");
    INFO("mode " << mode);
    constexpr unsigned n = 3;
    SharedBoard sb(kPrefix);
    const auto script = ops_script(n);
    auto result =
        ucg_test::run_fork_ranks(group_fork_options(n), [&](int rank) {
            // Member 0's mode is the group's: the others ask for another.
            Iface r(small_ring(rank == 0 ? mode : "centralized"));
            uct_group_h g = make_group(uct_mm_incast_group_create, r.iface,
                                       sb.board, rank, n, 8);
            run_uct_script(r, g, static_cast<uint32_t>(rank), n, script);
            barrier(sb.board, 1, n);
            uct_group_destroy(g);
        });
    INFO(result.summary());
    REQUIRE(result.ok);
}

TEST_CASE("uct incast group: max_outstanding posts, then no resource",
          "[mm][incast][ucx][fork]")
{
    SharedBoard sb(kPrefix);
    auto result =
        ucg_test::run_fork_ranks(group_fork_options(2), [&](int rank) {
            Iface r(small_ring());
            uct_group_attr_t attr{};
            UCG_CHECK(uct_mm_incast_group_iface_query(r.iface, &attr) ==
                      UCS_OK);
            UCG_CHECK_EQ(attr.max_outstanding, 4U);
            UCG_CHECK(attr.cap_flags ==
                      (UCT_GROUP_CAP_GATHER | UCT_GROUP_CAP_REDUCE |
                       UCT_GROUP_CAP_HOST_LOCAL));
            UCG_CHECK_EQ(attr.seg_length, 4 * kSeg);
            uct_group_h g = make_group(uct_mm_incast_group_create, r.iface,
                                       sb.board, rank, 2, 3);
            int32_t bufs[4][4] = {};
            Done d[4];
            if (rank == 0) {
                for (uint32_t i = 0; i < 4; ++i) {
                    const auto m = sum(0, bufs[i], 4, i);
                    UCG_CHECK(uct_group_recv(g, &m, &d[i].comp) ==
                              UCS_INPROGRESS);
                }
                int32_t extra[4];
                const auto m = sum(0, extra, 4, 4);
                Done refused;
                UCG_CHECK(uct_group_recv(g, &m, &refused.comp) ==
                          UCS_ERR_NO_RESOURCE);
            }
            barrier(sb.board, 1, 2);
            for (uint32_t i = 0; i < 4; ++i) {
                if (rank == 0) {
                    UCG_CHECK(wait(r.worker, &d[i]) == UCS_OK);
                    UCG_CHECK_EQ(bufs[i][3], 7);
                } else {
                    int32_t data[4] = {7, 7, 7, 7};
                    UCG_CHECK(post_wait(r.worker, g, true,
                                        sum(0, data, 4, i)) == UCS_OK);
                }
            }
            barrier(sb.board, 2, 2);
            uct_group_destroy(g);
        });
    INFO(result.summary());
    REQUIRE(result.ok);
}

UCT_GROUP_CASES("incast", "[mm][incast][ucx]", transport, kSeg)

TEST_CASE("uct incast group: bad input gets a named status",
          "[mm][incast][ucx]")
{
    Iface r(small_ring());
    unsigned char addr[kAddrBytes];
    REQUIRE(uct_iface_get_address(
                r.iface, reinterpret_cast<uct_iface_addr_t *>(addr)) == UCS_OK);
    const uct_iface_addr_t *addrs[2] = {
        reinterpret_cast<const uct_iface_addr_t *>(addr),
        reinterpret_cast<const uct_iface_addr_t *>(addr)};
    uct_group_params_t p{};
    p.field_mask =
        UCT_GROUP_PARAM_FIELD_KEY | UCT_GROUP_PARAM_FIELD_MEMBER_INDEX |
        UCT_GROUP_PARAM_FIELD_GROUP_SIZE | UCT_GROUP_PARAM_FIELD_MEMBER_ADDRS;
    p.group_key = 1;
    p.group_size = 65;
    p.member_addrs = addrs;
    uct_group_h g = nullptr;
    CHECK(uct_mm_incast_group_create(r.iface, &p, &g) == UCS_ERR_EXCEEDS_LIMIT);
    p.group_size = 2;
    p.member_index = 2;
    CHECK(uct_mm_incast_group_create(r.iface, &p, &g) == UCS_ERR_INVALID_PARAM);
    CHECK(uct_mm_incast_group_create(nullptr, &p, &g) == UCS_ERR_INVALID_PARAM);
    CHECK(g == nullptr);
    p.member_index = 0;
    REQUIRE(uct_mm_incast_group_create(r.iface, &p, &g) == UCS_OK);
    float f[4] = {};
    int32_t i32[4] = {};
    Done d;
    uct_group_msg_t m = sum(0, i32, 4, 0);
    CHECK(uct_group_send(g, &m, &d.comp) == UCS_ERR_INVALID_PARAM); // root
    m.root = 2;
    CHECK(uct_group_recv(g, &m, &d.comp) == UCS_ERR_INVALID_PARAM);
    m.root = 0;
    m.length = 6; // not whole int32s
    CHECK(uct_group_recv(g, &m, &d.comp) == UCS_ERR_INVALID_PARAM);
    m.length = 16;
    m.dtype = UCG_DTYPE_FLOAT;
    m.op = UCG_OP_BAND;
    m.buffer = f;
    CHECK(uct_group_recv(g, &m, &d.comp) == UCS_ERR_INVALID_PARAM);
    m.op = UCG_OP_MAXLOC;
    CHECK(uct_group_recv(g, &m, &d.comp) == UCS_ERR_INVALID_PARAM);
    m.coll = UCT_GROUP_COLL_BCAST;
    CHECK(uct_group_recv(g, &m, &d.comp) == UCS_ERR_INVALID_PARAM);
    void *const no_buffers[2] = {nullptr, nullptr};
    m.coll = UCT_GROUP_COLL_GATHER;
    m.member_buffers = no_buffers; // member 1's is missing
    CHECK(uct_group_recv(g, &m, &d.comp) == UCS_ERR_INVALID_PARAM);
    m.flags = 0x80;
    CHECK(uct_group_recv(g, &m, &d.comp) == UCS_ERR_INVALID_PARAM);
    CHECK(uct_group_status(g) == UCS_OK);
    uct_group_destroy(g);
    // Member 1 may still come (within its attach timeout): the name stays
    // for it after member 0 left.
    std::uint64_t secret[2];
    std::memcpy(secret, addr, sizeof(secret));
    CHECK(shm_unlink(uct_mm_common::group_segment_name(
                         "ucg-mmig", {secret[0], secret[1]}, 1)
                         .c_str()) == 0);
}
