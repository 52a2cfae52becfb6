// SPDX-License-Identifier: BSD-3-Clause
// mm_bcast groups through uct_group.h in forked ranks: every group size and
// root, lengths around the fragment size and 4 MiB (ring and CMA), posts
// back to back with completions, max_outstanding, a killed member, a member
// that never joins, a segment of another user, bad input, and an idle
// group costing no progress callback however many groups there are (these
// four are uct_group_cases.h's, which mm_incast runs too).
#include "uct_fixture.h"

#include "group_test_util.h"
#include "uct_group_cases.h"
#include "uct_group_test_util.h"

#include "ucg_test/fork_ranks.h"
#include "ucg_test/shm_names.h"
#include "ucg_test/thread_ranks.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <ucg_test/skip.h>
#include <unistd.h>

using namespace uct_mm_bcast::test;
using namespace uct_group_test;
using uct_mm_common::test::first_mismatch;
using uct_mm_common::test::make_bytes;

namespace {

constexpr std::size_t kSeg = 1024;

Config small_ring()
{
    return {{"GROUP_SEG_SIZE", "1k"},
            {"GROUP_RING_SIZE", "8"},
            {"TIMEOUT", "200ms"},
            {"ATTACH_TIMEOUT", "10s"},
            {"MAX_OUTSTANDING", "4"}};
}

uct_group_msg_t bcast(unsigned root, void *buf, std::size_t len,
                      std::uint32_t tag)
{
    uct_group_msg_t m{};
    m.coll = UCT_GROUP_COLL_BCAST;
    m.root = root;
    m.buffer = buf;
    m.length = len;
    m.tag = tag;
    return m;
}

// Every root broadcasts every length; the others check every byte.
void sweep(UctRank &r, uct_group_h g, int rank, unsigned n,
           const std::vector<std::size_t> &lengths)
{
    unsigned msg = 0;
    for (unsigned root = 0; root < n; ++root) {
        for (std::size_t len : lengths) {
            ++msg;
            const bool send = static_cast<unsigned>(rank) == root;
            auto buf = send ? make_bytes(root, msg, len)
                            : std::vector<std::uint8_t>(len);
            UCG_CHECK(post_wait(r.worker, g, send,
                                bcast(root, buf.data(), len, msg)) == UCS_OK);
            UCG_CHECK_EQ(first_mismatch(buf.data(), root, msg, len), len);
        }
    }
}

constexpr const char *kPrefix = "ucg-mmbg";

bool root_sends(int rank)
{
    return rank == 0;
}

uct_group_msg_t root0(void *buf, std::size_t len, std::uint32_t tag)
{
    return bcast(0, buf, len, tag);
}

GroupTransport transport()
{
    return {{"mm_bcast", "mm_bcast", "memory", small_ring()},
            kPrefix,
            uct_mm_bcast_group_create,
            root0,
            root_sends};
}

} // namespace

TEST_CASE("uct bcast group: every size and root, lengths around a fragment",
          "[mm][bcast][ucx][fork]")
{
    const unsigned n = GENERATE(1u, 2u, 3u, 4u, 5u, 7u, 8u);
    SharedBoard sb(kPrefix);
    auto result =
        ucg_test::run_fork_ranks(group_fork_options(n), [&](int rank) {
            UctRank r(small_ring());
            uct_group_h g = make_group(uct_mm_bcast_group_create, r.iface,
                                       sb.board, rank, n, 7);
            sweep(r, g, rank, n,
                  {0, 1, kSeg - 1, kSeg, kSeg + 1, 5 * kSeg + 3, 20 * kSeg});
            UCG_CHECK(uct_group_status(g) == UCS_OK);
            barrier(sb.board, 1, n);
            uct_group_destroy(g);
        });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(!sb.left_behind(7));
}

TEST_CASE("uct bcast group: 4 MiB from every root, ring (streamed or not) "
          "and CMA",
          "[mm][bcast][ucx][fork]")
{
    const unsigned n = GENERATE(2u, 3u);
    const char *cma = GENERATE("inf", "64k");
    const char *stream = GENERATE("inf", "16k");
    SharedBoard sb(kPrefix);
    auto result =
        ucg_test::run_fork_ranks(group_fork_options(n), [&](int rank) {
            UctRank r(Config{{"CMA_THRESH", cma}, {"STREAM_THRESH", stream}});
            uct_group_h g = make_group(uct_mm_bcast_group_create, r.iface,
                                       sb.board, rank, n, 9);
            sweep(r, g, rank, n, {std::size_t{4} << 20, 100000});
            barrier(sb.board, 1, n);
            uct_group_destroy(g);
        });
    INFO(result.summary());
    REQUIRE(result.ok);
}

// A send by CMA completes only once the receiver has read the root's
// buffer; one through the ring completes once its fragments are in the
// ring (here the whole message fits). So whether a root's send completes
// while its receiver has not posted tells the path apart.
TEST_CASE("uct bcast group: CMA only from CMA_THRESH to below CMA_MAX, and "
          "never with UCT_GROUP_FLAG_NO_CMA",
          "[mm][bcast][ucx][fork]")
{
    struct Case {
        std::size_t len;
        bool no_cma;
        bool by_cma;
    };
    // The ring holds 8 x 1 KiB; CMA from 2 KiB below 6 KiB.
    const Case c =
        GENERATE(Case{1 * kSeg, false, false}, Case{3 * kSeg, false, true},
                 Case{3 * kSeg, true, false}, Case{6 * kSeg, false, false});
    SharedBoard sb(kPrefix);
    auto result =
        ucg_test::run_fork_ranks(group_fork_options(2), [&](int rank) {
            Config cfg = small_ring();
            cfg.push_back({"CMA_THRESH", "2k"});
            cfg.push_back({"CMA_MAX", "6k"});
            UctRank r(cfg);
            publish_address(r.iface, sb.board, rank);
            barrier(sb.board, 0, 2);
            GroupParams p(sb.board, {0, 1}, rank, 11);
            if (c.no_cma) {
                p.params.field_mask |= UCT_GROUP_PARAM_FIELD_FLAGS;
                p.params.flags = UCT_GROUP_FLAG_NO_CMA;
            }
            uct_group_h g = nullptr;
            UCG_CHECK(uct_mm_bcast_group_create(r.iface, &p.params, &g) ==
                      UCS_OK);
            auto data = make_bytes(0, 1, c.len);
            std::vector<std::uint8_t> got(c.len);
            Done d;
            if (rank == 0) {
                post(r.worker, g, true, bcast(0, data.data(), c.len, 1), &d);
                const auto until = std::chrono::steady_clock::now() +
                                   std::chrono::milliseconds(300);
                while (!d.done() && std::chrono::steady_clock::now() < until) {
                    uct_worker_progress(r.worker);
                }
                UCG_CHECK(d.done() == !c.by_cma);
                barrier(sb.board, 1, 2); // now the receiver posts
                UCG_CHECK(wait(r.worker, &d) == UCS_OK);
            } else {
                // Attached (progress) but no receive until the root's wait.
                while (sb.board->arrived[1].load() == 0) {
                    uct_worker_progress(r.worker);
                }
                barrier(sb.board, 1, 2);
                UCG_CHECK(post_wait(r.worker, g, false,
                                    bcast(0, got.data(), c.len, 1)) == UCS_OK);
                UCG_CHECK_EQ(first_mismatch(got.data(), 0, 1, c.len), c.len);
            }
            barrier(sb.board, 2, 2);
            uct_group_destroy(g);
        });
    INFO(result.summary());
    REQUIRE(result.ok);
}

TEST_CASE("uct bcast group: max_outstanding posts, then UCS_ERR_NO_RESOURCE",
          "[mm][bcast][ucx][fork]")
{
    SharedBoard sb(kPrefix);
    auto result =
        ucg_test::run_fork_ranks(group_fork_options(2), [&](int rank) {
            UctRank r(small_ring());
            uct_group_attr_t attr{};
            UCG_CHECK(uct_mm_bcast_group_iface_query(r.iface, &attr) == UCS_OK);
            UCG_CHECK_EQ(attr.max_outstanding, 4U);
            UCG_CHECK(attr.cap_flags ==
                      (UCT_GROUP_CAP_BCAST | UCT_GROUP_CAP_HOST_LOCAL));
            UCG_CHECK_EQ(attr.seg_length, 4 * kSeg);
            uct_group_h g = make_group(uct_mm_bcast_group_create, r.iface,
                                       sb.board, rank, 2, 3);
            std::vector<std::uint8_t> bufs[4];
            Done d[4];
            if (rank == 1) {
                // Nothing sent yet: four receives stay posted, a fifth is
                // refused and posts nothing.
                for (unsigned i = 0; i < 4; ++i) {
                    bufs[i].resize(64);
                    const auto m = bcast(0, bufs[i].data(), 64, i);
                    UCG_CHECK(uct_group_recv(g, &m, &d[i].comp) ==
                              UCS_INPROGRESS);
                }
                std::uint8_t extra[64];
                const auto m = bcast(0, extra, 64, 4);
                Done refused;
                UCG_CHECK(uct_group_recv(g, &m, &refused.comp) ==
                          UCS_ERR_NO_RESOURCE);
            }
            barrier(sb.board, 1, 2);
            for (unsigned i = 0; i < 4; ++i) {
                if (rank == 0) {
                    auto data = make_bytes(0, i, 64);
                    UCG_CHECK(post_wait(r.worker, g, true,
                                        bcast(0, data.data(), 64, i)) ==
                              UCS_OK);
                } else {
                    UCG_CHECK(wait(r.worker, &d[i]) == UCS_OK);
                    UCG_CHECK_EQ(first_mismatch(bufs[i].data(), 0, i, 64),
                                 std::size_t{64});
                }
            }
            barrier(sb.board, 2, 2);
            uct_group_destroy(g);
        });
    INFO(result.summary());
    REQUIRE(result.ok);
}

TEST_CASE("uct bcast group: back-to-back posts with changing roots complete",
          "[mm][bcast][ucx][fork]")
{
    const unsigned n = GENERATE(3u, 5u);
    constexpr unsigned kWindow = 4;
    constexpr unsigned kMessages = 400;
    SharedBoard sb(kPrefix);
    auto result =
        ucg_test::run_fork_ranks(group_fork_options(n), [&](int rank) {
            UctRank r(small_ring());
            uct_group_h g = make_group(uct_mm_bcast_group_create, r.iface,
                                       sb.board, rank, n, 11);
            std::vector<std::uint8_t> bufs[kWindow];
            Done d[kWindow];
            for (unsigned base = 0; base < kMessages; base += kWindow) {
                for (unsigned i = 0; i < kWindow; ++i) {
                    const unsigned msg = base + i;
                    const unsigned root = (msg * 7) % n;
                    const std::size_t len = (msg * 331) % (6 * kSeg);
                    const bool send = static_cast<unsigned>(rank) == root;
                    bufs[i] = send ? make_bytes(root, msg, len)
                                   : std::vector<std::uint8_t>(len);
                    d[i] = Done();
                    post(r.worker, g, send,
                         bcast(root, bufs[i].data(), len, msg), &d[i]);
                }
                for (unsigned i = 0; i < kWindow; ++i) {
                    const unsigned msg = base + i;
                    UCG_CHECK(wait(r.worker, &d[i]) == UCS_OK);
                    UCG_CHECK_EQ(first_mismatch(bufs[i].data(), (msg * 7) % n,
                                                msg, bufs[i].size()),
                                 bufs[i].size());
                }
            }
            barrier(sb.board, 1, n);
            uct_group_destroy(g);
        });
    INFO(result.summary());
    REQUIRE(result.ok);
}

UCT_GROUP_CASES("bcast", "[mm][bcast][ucx]", transport, kSeg)

TEST_CASE("uct bcast group: bad input gets a named status", "[mm][bcast][ucx]")
{
    UctRank r(small_ring());
    unsigned char addr[kAddrBytes];
    REQUIRE(uct_iface_get_address(
                r.iface, reinterpret_cast<uct_iface_addr_t *>(addr)) == UCS_OK);
    const uct_iface_addr_t *addrs[1] = {
        reinterpret_cast<const uct_iface_addr_t *>(addr)};
    uct_group_params_t p{};
    p.field_mask =
        UCT_GROUP_PARAM_FIELD_KEY | UCT_GROUP_PARAM_FIELD_MEMBER_INDEX |
        UCT_GROUP_PARAM_FIELD_GROUP_SIZE | UCT_GROUP_PARAM_FIELD_MEMBER_ADDRS;
    p.group_key = 1;
    p.group_size = 65;
    p.member_addrs = addrs;
    uct_group_h g = nullptr;
    CHECK(uct_mm_bcast_group_create(r.iface, &p, &g) == UCS_ERR_EXCEEDS_LIMIT);
    p.group_size = 1;
    p.member_index = 1;
    CHECK(uct_mm_bcast_group_create(r.iface, &p, &g) == UCS_ERR_INVALID_PARAM);
    p.member_index = 0;
    p.field_mask = UCT_GROUP_PARAM_FIELD_KEY;
    CHECK(uct_mm_bcast_group_create(r.iface, &p, &g) == UCS_ERR_INVALID_PARAM);
    CHECK(uct_mm_bcast_group_create(nullptr, &p, &g) == UCS_ERR_INVALID_PARAM);
    uct_group_attr_t attr;
    CHECK(uct_mm_bcast_group_iface_query(nullptr, &attr) ==
          UCS_ERR_INVALID_PARAM);
    CHECK(g == nullptr);
    p.field_mask =
        UCT_GROUP_PARAM_FIELD_KEY | UCT_GROUP_PARAM_FIELD_MEMBER_INDEX |
        UCT_GROUP_PARAM_FIELD_GROUP_SIZE | UCT_GROUP_PARAM_FIELD_MEMBER_ADDRS;
    REQUIRE(uct_mm_bcast_group_create(r.iface, &p, &g) == UCS_OK);
    std::uint8_t buf[64] = {};
    Done d;
    auto m = bcast(0, buf, 64, 0);
    CHECK(uct_group_recv(g, &m, &d.comp) == UCS_ERR_INVALID_PARAM); // root
    m.root = 1;
    CHECK(uct_group_send(g, &m, &d.comp) == UCS_ERR_INVALID_PARAM);
    m.root = 0;
    m.coll = UCT_GROUP_COLL_REDUCE;
    CHECK(uct_group_send(g, &m, &d.comp) == UCS_ERR_INVALID_PARAM);
    const int bad_kind = 7; // as a C caller could store it
    std::memcpy(&m.coll, &bad_kind, sizeof(bad_kind));
    CHECK(uct_group_send(g, &m, &d.comp) == UCS_ERR_INVALID_PARAM);
    m.coll = UCT_GROUP_COLL_BCAST;
    m.length = SIZE_MAX;
    CHECK(uct_group_send(g, &m, &d.comp) == UCS_ERR_INVALID_PARAM);
    // A group of one: a broadcast with nobody to receive it is complete.
    m.length = 64;
    CHECK(uct_group_send(g, &m, &d.comp) == UCS_OK);
    CHECK(uct_group_status(g) == UCS_OK);
    uct_group_destroy(g);
}

TEST_CASE("uct bcast group: destroyed between messages, worker progress "
          "calls nothing of it",
          "[mm][bcast][ucx][fork]")
{
    // Its callback stays registered after a message (on UCX's fast path,
    // where a removal is applied only at the queue's next purge): destroy
    // must take it out at once, or the next progress calls into the freed
    // group (ASan: heap-use-after-free; without, a crash at finalize).
    SharedBoard sb(kPrefix);
    auto result =
        ucg_test::run_fork_ranks(group_fork_options(2), [&](int rank) {
            UctRank r(small_ring());
            settle(r.worker, 10);
            const int base = live_progress_callbacks();
            uct_group_h g = make_group(uct_mm_bcast_group_create, r.iface,
                                       sb.board, rank, 2, 7);
            barrier(sb.board, 1, 2);
            std::uint8_t buf[64] = {};
            for (unsigned i = 0; i < 3; ++i) { // the second run promotes it
                UCG_CHECK(post_wait(r.worker, g, rank == 0,
                                    bcast(0, buf, sizeof(buf), i)) == UCS_OK);
            }
            barrier(sb.board, 2, 2);
            uct_group_destroy(g);
            UCG_CHECK_EQ(live_progress_callbacks(), base);
            settle(r.worker, 100);
        });
    INFO(result.summary());
    REQUIRE(result.ok);
}

namespace {

struct DestroyOnDone {
    uct_completion_t comp;
    uct_group_h group;
    bool done = false;
};

void destroy_group(uct_completion_t *comp)
{
    auto *d = reinterpret_cast<DestroyOnDone *>(comp);
    uct_group_destroy(d->group); // from inside uct_worker_progress
    d->done = true;
}

} // namespace

TEST_CASE("uct bcast group: a completion callback may destroy its group",
          "[mm][bcast][ucx][fork]")
{
    SharedBoard sb(kPrefix);
    auto result =
        ucg_test::run_fork_ranks(group_fork_options(2), [&](int rank) {
            UctRank r(small_ring());
            uct_group_h g = make_group(uct_mm_bcast_group_create, r.iface,
                                       sb.board, rank, 2, 17);
            std::uint8_t buf[2][64] = {};
            if (rank == 0) {
                barrier(sb.board, 1, 2); // member 1 has posted both
                for (int i = 0; i < 2; ++i) {
                    UCG_CHECK(post_wait(r.worker, g, true,
                                        bcast(0, buf[i], 64, i)) == UCS_OK);
                }
                barrier(sb.board, 2, 2);
                uct_group_destroy(g);
                return;
            }
            // Two receives; the first one's callback destroys the group: the
            // second is dropped without a completion.
            DestroyOnDone first{{destroy_group, 1, UCS_OK}, g};
            Done second;
            const auto m0 = bcast(0, buf[0], 64, 0);
            const auto m1 = bcast(0, buf[1], 64, 1);
            UCG_CHECK(uct_group_recv(g, &m0, &first.comp) == UCS_INPROGRESS);
            UCG_CHECK(uct_group_recv(g, &m1, &second.comp) == UCS_INPROGRESS);
            barrier(sb.board, 1, 2);
            uct_mm_common::Backoff backoff;
            while (!first.done) {
                uct_worker_progress(r.worker);
                backoff.pause();
            }
            settle(r.worker, 100);
            UCG_CHECK(!second.done());
            barrier(sb.board, 2, 2);
        });
    INFO(result.summary());
    REQUIRE(result.ok);
}
