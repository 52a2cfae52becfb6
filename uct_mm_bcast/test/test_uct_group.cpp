// SPDX-License-Identifier: BSD-3-Clause
// mm_bcast through the UCT API in forked ranks: group endpoints broadcast
// am_short/am_bcopy/am_zcopy from every root; bad input gets named errors;
// a killed member fails the others' endpoints in bounded time.
#include "uct_fixture.h"

#include <cstring>

#include "ucg_test/fork_ranks.h"
#include "ucg_test/shm_names.h"
#include "ucg_test/thread_ranks.h"

#include "uct_mm_common/backoff.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
#include <unistd.h>
#include <vector>

using namespace uct_mm_bcast::test;

namespace {

constexpr unsigned kMaxRanks = 8;
constexpr std::size_t kAddrBytes = 64;

// Address exchange and a barrier between forked ranks.
struct Board {
    std::atomic<unsigned> arrived[4];
    unsigned char addr[kMaxRanks][kAddrBytes];
};

void barrier(Board *b, int phase, unsigned n)
{
    b->arrived[phase].fetch_add(1);
    uct_mm_common::Backoff backoff;
    while (b->arrived[phase].load() < n) {
        backoff.pause();
    }
}

struct Inbox {
    std::vector<std::vector<unsigned char>> msgs;
};

ucs_status_t on_am(void *arg, void *data, size_t length, unsigned)
{
    auto *in = static_cast<Inbox *>(arg);
    auto *p = static_cast<unsigned char *>(data);
    in->msgs.emplace_back(p, p + length);
    return UCS_OK;
}

size_t pack_bytes(void *dest, void *arg)
{
    auto *m = static_cast<std::vector<unsigned char> *>(arg);
    std::memcpy(dest, m->data(), m->size());
    return m->size();
}

uct_ep_h make_group(UctRank &r, Board *b, int rank, unsigned n)
{
    UCG_CHECK(r.attr.iface_addr_len <= kAddrBytes);
    uct_iface_get_address(r.iface,
                          reinterpret_cast<uct_iface_addr_t *>(b->addr[rank]));
    barrier(b, 0, n);
    std::vector<const uct_iface_addr_t *> addrs(n);
    for (unsigned i = 0; i < n; ++i) {
        addrs[i] = reinterpret_cast<const uct_iface_addr_t *>(b->addr[i]);
    }
    uct_mm_bcast_group_params_t gp{};
    gp.field_mask = UCT_MM_BCAST_GROUP_PARAM_FIELD_KEY |
                    UCT_MM_BCAST_GROUP_PARAM_FIELD_MEMBER_INDEX |
                    UCT_MM_BCAST_GROUP_PARAM_FIELD_GROUP_SIZE |
                    UCT_MM_BCAST_GROUP_PARAM_FIELD_MEMBER_ADDRS;
    gp.group_key = 42;
    gp.member_index = static_cast<unsigned>(rank);
    gp.group_size = n;
    gp.member_addrs = addrs.data();
    uct_ep_h ep;
    UCG_CHECK(uct_mm_bcast_group_ep_create(r.iface, &gp, &ep) == UCS_OK);
    return ep;
}

std::vector<unsigned char> message(unsigned root, std::size_t size)
{
    std::vector<unsigned char> m(size);
    for (std::size_t i = 0; i < size; ++i) {
        m[i] = static_cast<unsigned char>(root * 31 + i * 7);
    }
    return m;
}

void comp_cb(uct_completion_t *comp)
{
    (void)comp;
}

// Sends `m` from the root with the given kind; waits for zcopy completion.
void root_send(UctRank &r, uct_ep_h ep, const std::vector<unsigned char> &m,
               int kind)
{
    uct_mm_common::Backoff backoff;
    ucs_status_t st;
    for (;;) {
        if (kind == 0) {
            uint64_t hdr;
            std::memcpy(&hdr, m.data(), 8);
            st = uct_ep_am_short(ep, 5, hdr, m.data() + 8,
                                 static_cast<unsigned>(m.size() - 8));
        } else if (kind == 1) {
            auto copy = m;
            ssize_t len = uct_ep_am_bcopy(ep, 5, pack_bytes, &copy, 0);
            st = len < 0 ? static_cast<ucs_status_t>(len) : UCS_OK;
        } else {
            uct_completion_t comp{comp_cb, 1, UCS_OK};
            uct_iov_t iov{const_cast<unsigned char *>(m.data()) + 16,
                          m.size() - 16, nullptr, 0, 1};
            st = uct_ep_am_zcopy(ep, 5, m.data(), 16, &iov, 1, 0, &comp);
            if (st == UCS_INPROGRESS) {
                while (comp.count != 0) {
                    uct_worker_progress(r.worker);
                }
                UCG_CHECK(comp.status == UCS_OK);
                return;
            }
        }
        if (st != UCS_ERR_NO_RESOURCE) {
            break;
        }
        uct_worker_progress(r.worker);
        backoff.pause();
    }
    UCG_CHECK(st == UCS_OK);
}

ucg_test::ForkOptions fork_opts(unsigned n)
{
    ucg_test::ForkOptions o;
    o.num_ranks = static_cast<int>(n);
    o.timeout = std::chrono::milliseconds(20000);
    return o;
}

} // namespace

TEST_CASE("uct group ep broadcasts short, bcopy and zcopy from every root",
          "[mm][bcast][ucx][fork]")
{
    const unsigned n = GENERATE(2u, 3u, 5u);
    ucg_test::SharedMapping shared(sizeof(Board));
    auto *board = new (shared.data()) Board{};
    auto result = ucg_test::run_fork_ranks(fork_opts(n), [&](int rank) {
        UctRank r;
        Inbox inbox;
        UCG_CHECK(uct_iface_set_am_handler(r.iface, 5, on_am, &inbox, 0) ==
                  UCS_OK);
        uct_ep_h ep = make_group(r, board, rank, n);
        const std::size_t sizes[3] = {64, 4000, 200000};
        std::size_t expect = 0;
        for (unsigned root = 0; root < n; ++root) {
            for (int kind = 0; kind < 3; ++kind) {
                const auto m = message(root * 3 + kind, sizes[kind]);
                if (static_cast<unsigned>(rank) == root) {
                    root_send(r, ep, m, kind);
                    continue;
                }
                ++expect;
                while (inbox.msgs.size() < expect) {
                    uct_worker_progress(r.worker);
                    UCG_CHECK(uct_mm_bcast_ep_status(ep) == UCS_OK);
                }
                UCG_CHECK(inbox.msgs[expect - 1] == m);
            }
        }
        barrier(board, 1, n); // nobody leaves while others still read
        uct_ep_destroy(ep);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
}

TEST_CASE("uct bad input gets a named status", "[mm][bcast][ucx]")
{
    UctRank r;
    // The receive FIFO is shared through /proc/<pid>/fd: never in /dev/shm.
    // (Only the FIFO's prefix: group rings of tests running beside this one
    // are in /dev/shm until their last member attaches.)
    CHECK(ucg_test::list_shm("ucg-mmbf").empty());
    CHECK(uct_mm_bcast_max_group_size(r.iface) == 64);
    ucg_test::SharedMapping shared(sizeof(Board));
    auto *board = new (shared.data()) Board{};
    uct_iface_get_address(r.iface,
                          reinterpret_cast<uct_iface_addr_t *>(board->addr[0]));
    const uct_iface_addr_t *addrs[1] = {
        reinterpret_cast<const uct_iface_addr_t *>(board->addr[0])};
    uct_mm_bcast_group_params_t gp{};
    gp.field_mask = UCT_MM_BCAST_GROUP_PARAM_FIELD_KEY |
                    UCT_MM_BCAST_GROUP_PARAM_FIELD_MEMBER_INDEX |
                    UCT_MM_BCAST_GROUP_PARAM_FIELD_GROUP_SIZE |
                    UCT_MM_BCAST_GROUP_PARAM_FIELD_MEMBER_ADDRS;
    gp.group_key = 7;
    gp.member_addrs = addrs;
    gp.group_size = 65;
    uct_ep_h ep;
    CHECK(uct_mm_bcast_group_ep_create(r.iface, &gp, &ep) ==
          UCS_ERR_EXCEEDS_LIMIT);
    gp.group_size = 1;
    gp.member_index = 1;
    CHECK(uct_mm_bcast_group_ep_create(r.iface, &gp, &ep) ==
          UCS_ERR_INVALID_PARAM);
    gp.field_mask = 0;
    CHECK(uct_mm_bcast_group_ep_create(r.iface, &gp, &ep) ==
          UCS_ERR_INVALID_PARAM);
    gp.field_mask = UCT_MM_BCAST_GROUP_PARAM_FIELD_KEY |
                    UCT_MM_BCAST_GROUP_PARAM_FIELD_MEMBER_INDEX |
                    UCT_MM_BCAST_GROUP_PARAM_FIELD_GROUP_SIZE |
                    UCT_MM_BCAST_GROUP_PARAM_FIELD_MEMBER_ADDRS;
    gp.member_index = 0;
    REQUIRE(uct_mm_bcast_group_ep_create(r.iface, &gp, &ep) == UCS_OK);
    std::vector<unsigned char> big(r.attr.cap.am.max_short + 1);
    CHECK(uct_ep_am_short(ep, 5, 0, big.data(),
                          static_cast<unsigned>(big.size())) ==
          UCS_ERR_INVALID_PARAM);
    uct_iov_t iov{big.data(), 0, nullptr, 0, 1};
    CHECK(uct_ep_am_zcopy(ep, 5, nullptr, 0, &iov, 1, 0, nullptr) ==
          UCS_ERR_INVALID_PARAM);
    iov.length = r.attr.cap.am.max_zcopy + 1;
    CHECK(uct_ep_am_zcopy(ep, 5, nullptr, 0, &iov, 1, 0, nullptr) ==
          UCS_ERR_EXCEEDS_LIMIT);
    CHECK(uct_ep_am_short(ep, UCT_AM_ID_MAX, 0, nullptr, 0) ==
          UCS_ERR_INVALID_PARAM);
    uct_ep_destroy(ep);
}

TEST_CASE("uct group: a killed member fails the endpoints in bounded time",
          "[mm][bcast][ucx][fork]")
{
    constexpr unsigned n = 3;
    setenv("UCX_MM_BCAST_TIMEOUT", "200ms", 1);
    ucg_test::SharedMapping shared(sizeof(Board));
    auto *board = new (shared.data()) Board{};
    auto opts = fork_opts(n);
    opts.may_be_killed = {2};
    const auto start = std::chrono::steady_clock::now();
    auto result = ucg_test::run_fork_ranks(opts, [&](int rank) {
        UctRank r;
        Inbox inbox;
        uct_iface_set_am_handler(r.iface, 5, on_am, &inbox, 0);
        uct_ep_h ep = make_group(r, board, rank, n);
        barrier(board, 1, n);
        if (rank == 2) {
            raise(SIGKILL);
        }
        uint64_t i = 0;
        uct_mm_common::Backoff backoff;
        while (uct_mm_bcast_ep_status(ep) == UCS_OK) {
            if (rank == 0) {
                const ucs_status_t st = uct_ep_am_short(ep, 5, i, nullptr, 0);
                i += st == UCS_OK;
            }
            uct_worker_progress(r.worker);
            backoff.pause();
        }
        UCG_CHECK(uct_mm_bcast_ep_status(ep) == UCS_ERR_CONNECTION_RESET);
        uct_ep_destroy(ep);
    });
    unsetenv("UCX_MM_BCAST_TIMEOUT");
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(6));
}
