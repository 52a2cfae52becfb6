// SPDX-License-Identifier: BSD-3-Clause
// mm_incast groups through uct_group.h in forked ranks: every group size
// and root with gather and sums, every mode (UCX_MM_INCAST_MODE) for every
// operator of every datatype class, max_outstanding, a killed member, a
// member that never joins, a segment of another user, bad input, and idle
// groups costing no progress callback however many there are.
#include "incast_test_util.h"
#include "ucx_iface_fixture.h"

#include "uct_group_test_util.h"

#include "uct_mm_common/names.h"

#include "ucg_test/fork_ranks.h"
#include "ucg_test/thread_ranks.h"

#include <catch2/catch.hpp>
#include <csignal>
#include <fcntl.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
            s.accumulate = (k & 1) != 0;
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
                s.accumulate = (k & 1) != 0;
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

ucg_test::ForkOptions opts(unsigned n)
{
    ucg_test::ForkOptions o(static_cast<int>(n));
    o.timeout = std::chrono::milliseconds(60000);
    return o;
}

struct SharedBoard {
    ucg_test::SharedMapping mem{sizeof(Board)};
    Board *board = new (mem.data()) Board{};

    /// Whether group `key`'s segment is still in /dev/shm (unlinks it).
    bool left_behind(std::uint64_t key) const
    {
        std::uint64_t secret[2];
        std::memcpy(secret, board->addr[0], sizeof(secret));
        return shm_unlink(uct_mm_common::group_segment_name(
                              "ucg-mmig", {secret[0], secret[1]}, key)
                              .c_str()) == 0;
    }
};

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

} // namespace

TEST_CASE("uct incast group: every size and root, gather and sums",
          "[mm][incast][ucx][fork]")
{
    const unsigned n = GENERATE(1u, 2u, 3u, 4u, 5u, 7u, 8u);
    SharedBoard sb;
    const auto script = roots_script(n);
    auto result = ucg_test::run_fork_ranks(opts(n), [&](int rank) {
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
    SharedBoard sb;
    const auto script = ops_script(n);
    auto result = ucg_test::run_fork_ranks(opts(n), [&](int rank) {
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
    SharedBoard sb;
    auto result = ucg_test::run_fork_ranks(opts(2), [&](int rank) {
        Iface r(small_ring());
        uct_group_attr_t attr{};
        UCG_CHECK(uct_mm_incast_group_iface_query(r.iface, &attr) == UCS_OK);
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
                UCG_CHECK(uct_group_recv(g, &m, &d[i].comp) == UCS_INPROGRESS);
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
                UCG_CHECK(post_wait(r.worker, g, true, sum(0, data, 4, i)) ==
                          UCS_OK);
            }
        }
        barrier(sb.board, 2, 2);
        uct_group_destroy(g);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
}

TEST_CASE("uct incast group: a killed member resets the others' connection",
          "[mm][incast][ucx][fork]")
{
    constexpr unsigned n = 3;
    SharedBoard sb;
    auto o = opts(n);
    o.may_be_killed = {2};
    auto result = ucg_test::run_fork_ranks(o, [&](int rank) {
        Iface r(small_ring());
        uct_group_h g = make_group(uct_mm_incast_group_create, r.iface,
                                   sb.board, rank, n, 5);
        std::vector<int32_t> buf(30 * kSeg / 4, 1);
        UCG_CHECK(post_wait(r.worker, g, rank != 0, sum(0, buf.data(), 4, 0)) ==
                  UCS_OK);
        barrier(sb.board, 1, n);
        if (rank == 2) {
            raise(SIGKILL);
        }
        // 30 chunks over an 8-element ring: nobody completes it.
        UCG_CHECK(post_wait(r.worker, g, rank != 0,
                            sum(0, buf.data(), buf.size(), 1)) ==
                  UCS_ERR_CONNECTION_RESET);
        UCG_CHECK(uct_group_status(g) == UCS_ERR_CONNECTION_RESET);
        uct_group_destroy(g);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(!sb.left_behind(5));
}

TEST_CASE("uct incast group: a member that never joins times out",
          "[mm][incast][ucx][fork]")
{
    SharedBoard sb;
    auto result = ucg_test::run_fork_ranks(opts(2), [&](int rank) {
        Config c = small_ring();
        c.push_back({"ATTACH_TIMEOUT", "100ms"});
        Iface r(c);
        UCG_CHECK(uct_iface_get_address(r.iface,
                                        reinterpret_cast<uct_iface_addr_t *>(
                                            sb.board->addr[rank])) == UCS_OK);
        barrier(sb.board, 0, 2);
        const uct_iface_addr_t *addrs[3] = {
            reinterpret_cast<const uct_iface_addr_t *>(sb.board->addr[0]),
            reinterpret_cast<const uct_iface_addr_t *>(sb.board->addr[1]),
            reinterpret_cast<const uct_iface_addr_t *>(sb.board->addr[0])};
        uct_group_params_t p{};
        p.field_mask = UCT_GROUP_PARAM_FIELD_KEY |
                       UCT_GROUP_PARAM_FIELD_MEMBER_INDEX |
                       UCT_GROUP_PARAM_FIELD_GROUP_SIZE |
                       UCT_GROUP_PARAM_FIELD_MEMBER_ADDRS;
        p.group_key = 13;
        p.member_index = static_cast<unsigned>(rank);
        p.group_size = 3;
        p.member_addrs = addrs;
        uct_group_h g;
        UCG_CHECK(uct_mm_incast_group_create(r.iface, &p, &g) == UCS_OK);
        int32_t buf[16] = {};
        ucs_status_t st = UCS_OK;
        for (uint32_t i = 0; st == UCS_OK; ++i) {
            st = post_wait(r.worker, g, rank != 0, sum(0, buf, 16, i));
        }
        UCG_CHECK(st == UCS_ERR_ENDPOINT_TIMEOUT);
        uct_group_destroy(g);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(!sb.left_behind(13));
}

TEST_CASE("uct incast group: a segment of another user is refused",
          "[mm][incast][ucx][fork][trust]")
{
    if (geteuid() != 0) {
        UCG_SKIP("needs root to give a segment to another user");
    }
    SharedBoard sb;
    auto result = ucg_test::run_fork_ranks(opts(2), [&](int rank) {
        Iface r(small_ring());
        UCG_CHECK(uct_iface_get_address(r.iface,
                                        reinterpret_cast<uct_iface_addr_t *>(
                                            sb.board->addr[rank])) == UCS_OK);
        barrier(sb.board, 0, 2);
        std::uint64_t secret[2];
        std::memcpy(secret, sb.board->addr[0], sizeof(secret));
        const std::string name = uct_mm_common::group_segment_name(
            "ucg-mmig", {secret[0], secret[1]}, 21);
        if (rank == 0) {
            // Member 0's name pre-created by "nobody", mode 0666.
            const int fd =
                shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0666);
            UCG_CHECK(fd >= 0);
            UCG_CHECK(ftruncate(fd, 1 << 20) == 0);
            UCG_CHECK(fchmod(fd, 0666) == 0);
            const passwd *nobody = getpwnam("nobody");
            UCG_CHECK(nobody != nullptr);
            UCG_CHECK(fchown(fd, nobody->pw_uid, nobody->pw_gid) == 0);
            close(fd);
        }
        barrier(sb.board, 1, 2);
        const uct_iface_addr_t *addrs[2] = {
            reinterpret_cast<const uct_iface_addr_t *>(sb.board->addr[0]),
            reinterpret_cast<const uct_iface_addr_t *>(sb.board->addr[1])};
        uct_group_params_t p{};
        p.field_mask = UCT_GROUP_PARAM_FIELD_KEY |
                       UCT_GROUP_PARAM_FIELD_MEMBER_INDEX |
                       UCT_GROUP_PARAM_FIELD_GROUP_SIZE |
                       UCT_GROUP_PARAM_FIELD_MEMBER_ADDRS;
        p.group_key = 21;
        p.member_index = static_cast<unsigned>(rank);
        p.group_size = 2;
        p.member_addrs = addrs;
        uct_group_h g;
        const ucs_status_t st = uct_mm_incast_group_create(r.iface, &p, &g);
        if (rank == 0) {
            UCG_CHECK(st == UCS_ERR_IO_ERROR); // its exclusive create fails
        } else {
            UCG_CHECK(st == UCS_OK);
            uct_mm_common::Backoff backoff;
            while (uct_group_status(g) == UCS_OK) {
                uct_worker_progress(r.worker);
                backoff.pause();
            }
            UCG_CHECK(uct_group_status(g) == UCS_ERR_REJECTED);
            uct_group_destroy(g);
        }
        barrier(sb.board, 2, 2);
        if (rank == 0) {
            shm_unlink(name.c_str());
        }
    });
    INFO(result.summary());
    REQUIRE(result.ok);
}

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

TEST_CASE("uct incast group: idle groups register no progress callback",
          "[mm][incast][ucx][fork]")
{
    const unsigned groups = GENERATE(1u, 16u);
    SharedBoard sb;
    auto result = ucg_test::run_fork_ranks(opts(2), [&](int rank) {
        Iface r(small_ring());
        settle(r.worker, 10);
        const int base = live_progress_callbacks();
        std::vector<uct_group_h> gs;
        for (unsigned k = 0; k < groups; ++k) {
            gs.push_back(make_group(uct_mm_incast_group_create, r.iface,
                                    sb.board, rank, 2, 100 + k));
        }
        barrier(sb.board, 1, 2);
        int32_t buf[4] = {1, 2, 3, 4};
        for (uct_group_h g : gs) {
            UCG_CHECK(post_wait(r.worker, g, rank != 0, sum(0, buf, 4, 0)) ==
                      UCS_OK);
        }
        uct_mm_common::Backoff backoff;
        while (live_progress_callbacks() != base) {
            uct_worker_progress(r.worker);
            backoff.pause();
        }
        barrier(sb.board, 2, 2);
        // Idle: however many groups, no callback runs in worker progress.
        settle(r.worker, 100);
        UCG_CHECK_EQ(live_progress_callbacks(), base);
        Done d;
        if (rank == 0) {
            const auto m = sum(0, buf, 4, 1);
            UCG_CHECK(uct_group_recv(gs[0], &m, &d.comp) == UCS_INPROGRESS);
            UCG_CHECK_EQ(live_progress_callbacks(), base + 1);
        }
        barrier(sb.board, 3, 2);
        if (rank == 1) {
            UCG_CHECK(post_wait(r.worker, gs[0], true, sum(0, buf, 4, 1)) ==
                      UCS_OK);
        } else {
            UCG_CHECK(wait(r.worker, &d) == UCS_OK);
        }
        // It stays for the next message (registering per message took
        // the callback queue's lock twice a message) ...
        if (rank == 0) {
            UCG_CHECK_EQ(live_progress_callbacks(), base + 1);
        }
        // ... and leaves once progress finds the group idle
        // (group_glue.h: kIdleProgressCalls, 1,024 calls).
        settle(r.worker, 2000);
        UCG_CHECK_EQ(live_progress_callbacks(), base);
        barrier(sb.board, 4, 2);
        for (uct_group_h g : gs) {
            uct_group_destroy(g);
        }
    });
    INFO(result.summary());
    REQUIRE(result.ok);
}
