// SPDX-License-Identifier: BSD-3-Clause
// The UCT group cases both mm transports must pass alike, written once: a
// killed member resets the others, a member that never joins times the
// group out, a segment pre-created by another user is refused, and idle
// groups cost no progress callback. Each runs in forked ranks over a
// GroupTransport, which says how to open the transport's iface, create its
// group and post one message; the transports' test files name the cases.
#pragma once

#include "uct_group_test_util.h"

#include "foreign_shm.h"

#include "uct_mm_common/backoff.h"
#include "uct_mm_common/names.h"

#include "ucg_test/fork_ranks.h"
#include "ucg_test/skip.h"
#include "ucg_test/thread_ranks.h"
#include "ucg_test/uct_iface.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace uct_group_test {

/// What the shared cases need of a transport.
struct GroupTransport {
    ucg_test::UctIfaceSpec iface; ///< a small ring, short timeouts
    const char *segment_prefix;   ///< of its group segments' names
    CreateFn create;
    /// The message every member posts: `len` bytes (a multiple of 4), root 0.
    uct_group_msg_t (*message)(void *buf, std::size_t len, std::uint32_t tag);
    /// Whether member `rank` sends it; the others receive.
    bool (*sends)(int rank);
};

/// An iface of `t` with send and receive progress enabled; `extra` config
/// overrides come after the transport's.
struct GroupRank : ucg_test::UctIface {
    explicit GroupRank(
        const GroupTransport &t,
        const std::vector<std::pair<std::string, std::string>> &extra = {})
        : UctIface(with(t.iface, extra))
    {
        uct_iface_progress_enable(iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    }

  private:
    static ucg_test::UctIfaceSpec
    with(ucg_test::UctIfaceSpec spec,
         const std::vector<std::pair<std::string, std::string>> &extra)
    {
        spec.config.insert(spec.config.end(), extra.begin(), extra.end());
        return spec;
    }
};

inline ucg_test::ForkOptions group_fork_options(unsigned n)
{
    return ucg_test::ForkOptions(static_cast<int>(n), std::chrono::seconds(60));
}

/// The name of group `key`'s segment, whose member 0 published `addr0`
/// (its secret leads its iface address).
inline std::string segment_name(const char *prefix, const unsigned char *addr0,
                                std::uint64_t key)
{
    std::uint64_t secret[2];
    std::memcpy(secret, addr0, sizeof(secret));
    return uct_mm_common::group_segment_name(prefix, {secret[0], secret[1]},
                                             key);
}

/// The ranks' board in a shared mapping, and whether a group's segment
/// was left in /dev/shm.
struct SharedBoard {
    explicit SharedBoard(const char *segment_prefix) : prefix(segment_prefix) {}

    const char *prefix;
    ucg_test::SharedMapping mem{sizeof(Board)};
    Board *board = new (mem.data()) Board{};

    /// Whether group `key`'s segment is still there; unlinks it if so. Only
    /// this test's own name: other tests' groups run beside it.
    bool left_behind(std::uint64_t key) const
    {
        return shm_unlink(segment_name(prefix, board->addr[0], key).c_str()) ==
               0;
    }
};

/// A killed member fails the others' message and group with
/// UCS_ERR_CONNECTION_RESET; nothing is left in /dev/shm.
inline void case_killed_member_resets(const GroupTransport &t,
                                      std::size_t seg_bytes)
{
    constexpr unsigned n = 3;
    SharedBoard sb(t.segment_prefix);
    auto o = group_fork_options(n);
    o.may_be_killed = {2};
    auto result = ucg_test::run_fork_ranks(o, [&](int rank) {
        GroupRank r(t);
        uct_group_h g = make_group(t.create, r.iface, sb.board, rank, n, 5);
        // One message so every member has joined, then the victim dies
        // during a message of 30 fragments (the ring holds 8).
        std::vector<std::uint8_t> buf(30 * seg_bytes);
        UCG_CHECK(post_wait(r.worker, g, t.sends(rank),
                            t.message(buf.data(), 64, 0)) == UCS_OK);
        barrier(sb.board, 1, n);
        if (rank == 2) {
            raise(SIGKILL);
        }
        UCG_CHECK(post_wait(r.worker, g, t.sends(rank),
                            t.message(buf.data(), buf.size(), 1)) ==
                  UCS_ERR_CONNECTION_RESET);
        UCG_CHECK(uct_group_status(g) == UCS_ERR_CONNECTION_RESET);
        uct_group_destroy(g);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(!sb.left_behind(5));
}

/// Two ranks create a group of three: member 2 never comes, and messages
/// end with UCS_ERR_ENDPOINT_TIMEOUT after the attach timeout.
inline void case_never_joins_times_out(const GroupTransport &t,
                                       std::size_t seg_bytes)
{
    SharedBoard sb(t.segment_prefix);
    auto result =
        ucg_test::run_fork_ranks(group_fork_options(2), [&](int rank) {
            GroupRank r(t, {{"ATTACH_TIMEOUT", "100ms"}});
            publish_address(r.iface, sb.board, rank);
            barrier(sb.board, 0, 2);
            // Member 2's address is member 0's: it is never used.
            GroupParams p(sb.board, {0, 1, 0}, rank, 13);
            uct_group_h g;
            UCG_CHECK(t.create(r.iface, &p.params, &g) == UCS_OK);
            std::vector<std::uint8_t> buf(4 * seg_bytes);
            ucs_status_t st = UCS_OK;
            for (std::uint32_t i = 0; st == UCS_OK; ++i) {
                st = post_wait(r.worker, g, t.sends(rank),
                               t.message(buf.data(), buf.size(), i));
            }
            UCG_CHECK(st == UCS_ERR_ENDPOINT_TIMEOUT);
            uct_group_destroy(g);
        });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(!sb.left_behind(13));
}

/// Member 0's segment name pre-created by "nobody", mode 0666 (as if the
/// secret had leaked): member 0's exclusive create fails with
/// UCS_ERR_IO_ERROR, and member 1 refuses the foreign segment
/// (UCS_ERR_REJECTED). Needs root (ForeignSegment::available()).
inline void case_foreign_segment_refused(const GroupTransport &t)
{
    SharedBoard sb(t.segment_prefix);
    auto result =
        ucg_test::run_fork_ranks(group_fork_options(2), [&](int rank) {
            GroupRank r(t);
            publish_address(r.iface, sb.board, rank);
            barrier(sb.board, 0, 2);
            const std::string name =
                segment_name(t.segment_prefix, sb.board->addr[0], 21);
            std::unique_ptr<uct_mm_common::test::ForeignSegment> foreign;
            if (rank == 0) {
                foreign = std::make_unique<uct_mm_common::test::ForeignSegment>(
                    name, 1 << 20);
                UCG_CHECK(foreign->ok());
            }
            barrier(sb.board, 1, 2);
            GroupParams p(sb.board, {0, 1}, rank, 21);
            uct_group_h g;
            const ucs_status_t st = t.create(r.iface, &p.params, &g);
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
            barrier(sb.board, 2,
                    2); // member 0 unlinks it after member 1 looked
        });
    INFO(result.summary());
    REQUIRE(result.ok);
}

/// However many groups (`groups`), idle ones register no worker progress
/// callback; a post that must wait registers one, which stays for the next
/// message and leaves once progress finds the group idle.
inline void case_idle_groups_no_callback(const GroupTransport &t,
                                         unsigned groups)
{
    SharedBoard sb(t.segment_prefix);
    // The member that receives, and so waits for the other.
    const int waiter = t.sends(0) ? 1 : 0;
    auto result =
        ucg_test::run_fork_ranks(group_fork_options(2), [&](int rank) {
            GroupRank r(t);
            settle(r.worker, 10);
            const int base = live_progress_callbacks();
            std::vector<uct_group_h> gs;
            for (unsigned k = 0; k < groups; ++k) {
                gs.push_back(
                    make_group(t.create, r.iface, sb.board, rank, 2, 100 + k));
            }
            // Connecting: a callback per group until everyone has joined.
            barrier(sb.board, 1, 2);
            std::uint8_t buf[64] = {1, 2, 3, 4};
            for (uct_group_h g : gs) {
                UCG_CHECK(post_wait(r.worker, g, t.sends(rank),
                                    t.message(buf, sizeof(buf), 0)) == UCS_OK);
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
            // A post that must wait registers exactly one.
            Done d;
            if (rank == waiter) {
                const auto m = t.message(buf, sizeof(buf), 1);
                UCG_CHECK(uct_group_recv(gs[0], &m, &d.comp) == UCS_INPROGRESS);
                UCG_CHECK_EQ(live_progress_callbacks(), base + 1);
            }
            barrier(sb.board, 3, 2);
            if (rank != waiter) {
                UCG_CHECK(post_wait(r.worker, gs[0], true,
                                    t.message(buf, sizeof(buf), 1)) == UCS_OK);
            } else {
                UCG_CHECK(wait(r.worker, &d) == UCS_OK);
                // It stays for the next message (registering per message took
                // the callback queue's lock twice a message) ...
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

} // namespace uct_group_test

/// The shared cases as TEST_CASEs named "uct <name> group: ...", tagged
/// `tags` (a string literal such as "[mm][bcast][ucx]"), over the
/// GroupTransport `transport()` returns, with ring fragments of `seg` bytes.
#define UCT_GROUP_CASES(name, tags, transport, seg)                            \
    TEST_CASE("uct " name " group: a killed member resets the others' "        \
              "connection",                                                    \
              tags "[fork]")                                                   \
    {                                                                          \
        uct_group_test::case_killed_member_resets(transport(), seg);           \
    }                                                                          \
    TEST_CASE("uct " name " group: a member that never joins times out",       \
              tags "[fork]")                                                   \
    {                                                                          \
        uct_group_test::case_never_joins_times_out(transport(), seg);          \
    }                                                                          \
    TEST_CASE("uct " name " group: a segment of another user is refused",      \
              tags "[fork][trust]")                                            \
    {                                                                          \
        if (!uct_mm_common::test::ForeignSegment::available()) {               \
            UCG_SKIP("needs root to give a segment to another user");          \
        }                                                                      \
        uct_group_test::case_foreign_segment_refused(transport());             \
    }                                                                          \
    TEST_CASE("uct " name " group: idle groups register no progress callback", \
              tags "[fork]")                                                   \
    {                                                                          \
        uct_group_test::case_idle_groups_no_callback(transport(),              \
                                                     GENERATE(1u, 16u));       \
    }
