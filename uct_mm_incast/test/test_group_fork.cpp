// SPDX-License-Identifier: BSD-3-Clause
// mm_incast groups (core) in forked processes: every group size and root,
// lengths around the chunk size and 4 MiB, max_outstanding, posts that
// disagree, a member killed mid-message, a member that never joins, and
// nothing left in /dev/shm.
#include "incast_script.h"

#include "ucg_test/fork_ranks.h"
#include "ucg_test/shm_names.h"
#include "ucg_test/thread_ranks.h"

#include <catch2/catch.hpp>
#include <csignal>
#include <unistd.h>

using namespace incast_test;
using uct_mm_common::test::Pending;
using uct_mm_common::test::post_wait;

namespace {

constexpr std::uint32_t kSeg = 1024;

IncastGroupConfig config(const std::string &name, int rank, unsigned n)
{
    IncastGroupConfig c;
    c.name = name;
    c.member = static_cast<std::uint32_t>(rank);
    c.size = n;
    c.elements = 8;
    c.seg_bytes = kSeg;
    c.timeout_ms = 200;
    c.attach_timeout_ms = 5000;
    return c;
}

ucg_test::ForkOptions fork_opts(unsigned n)
{
    return ucg_test::ForkOptions(static_cast<int>(n), std::chrono::seconds(60));
}

// Sum of int32 and gather from every root, for each byte length.
std::vector<Spec> roots_script(unsigned n, const std::vector<std::size_t> &len)
{
    std::vector<Spec> script;
    uint32_t k = 0;
    for (uint32_t root = 0; root < n; ++root) {
        for (std::size_t bytes : len) {
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

/// A counter in memory the forked ranks share, for a barrier.
struct Gate {
    ucg_test::SharedMapping mem{64};
    std::atomic<unsigned> *count = new (mem.data()) std::atomic<unsigned>{0};

    void pass_when(unsigned n) const
    {
        uct_mm_common::Backoff backoff;
        while (count->load() < n) {
            backoff.pause();
        }
    }
};

Message sum(uint32_t root, void *buf, std::size_t count, uint32_t tag)
{
    Message m;
    m.coll = Coll::kReduce;
    m.root = root;
    m.op = UCG_OP_SUM;
    m.dtype = UCG_DTYPE_INT32;
    m.buffer = buf;
    m.length = count * 4;
    m.tag = tag;
    return m;
}

} // namespace

TEST_CASE("incast group: every size and root, lengths around a chunk",
          "[mm][incast][fork]")
{
    const unsigned n = GENERATE(1u, 2u, 3u, 4u, 5u, 7u, 8u);
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("inc");
    const auto script = roots_script(
        n, {0, 4, kSeg - 4, kSeg, kSeg + 4, 5 * kSeg + 12, 30 * kSeg});
    auto result = ucg_test::run_fork_ranks(fork_opts(n), [&](int rank) {
        auto g = open_group(config(name, rank, n));
        run_script(*g, static_cast<uint32_t>(rank), n, script, 3);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("incast group: 4 MiB from every root", "[mm][incast][fork]")
{
    const unsigned n = GENERATE(2u, 3u, 8u);
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("inc");
    const auto script = roots_script(n, {std::size_t{4} << 20});
    auto result = ucg_test::run_fork_ranks(fork_opts(n), [&](int rank) {
        IncastGroupConfig c = config(name, rank, n);
        c.elements = 0; // as many as fit 4 MiB
        c.seg_bytes = 8192;
        auto g = open_group(c);
        run_script(*g, static_cast<uint32_t>(rank), n, script, 1);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("incast group: max_outstanding posts, then no resource",
          "[mm][incast][fork]")
{
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("inc");
    Gate posted;
    auto result = ucg_test::run_fork_ranks(fork_opts(2), [&](int rank) {
        IncastGroupConfig c = config(name, rank, 2);
        c.max_outstanding = 3;
        auto g = open_group(c);
        std::vector<int32_t> buf(4, 1);
        Pending p[4];
        if (rank == 0) {
            // Nothing sent yet: three receives stay posted, a fourth is
            // refused and posts nothing.
            for (uint32_t i = 0; i < 3; ++i) {
                UCG_CHECK(g->post(false, sum(0, buf.data(), 4, i), &p[i]) ==
                          Status::kInProgress);
            }
            UCG_CHECK(g->post(false, sum(0, buf.data(), 4, 3), &p[3]) ==
                      Status::kNoResource);
            posted.count->store(1);
            for (uint32_t i = 0; i < 3; ++i) {
                UCG_CHECK(uct_mm_common::test::wait(*g, &p[i]) == Status::kOk);
            }
        } else {
            posted.pass_when(1); // the root's receives are posted
            for (uint32_t i = 0; i < 3; ++i) {
                UCG_CHECK(post_wait(*g, true, sum(0, buf.data(), 4, i)) ==
                          Status::kOk);
            }
        }
        uct_mm_common::Backoff backoff;
        while (g->busy()) {
            g->progress(uct_mm_common::test::on_complete, nullptr);
            backoff.pause();
        }
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("incast group: posts that disagree fail the group with an I/O "
          "error",
          "[mm][incast][fork][trust]")
{
    const auto mode =
        GENERATE(UCT_MM_INCAST_MODE_BATCHED, UCT_MM_INCAST_MODE_CENTRALIZED,
                 UCT_MM_INCAST_MODE_LOCKED, UCT_MM_INCAST_MODE_ATOMIC);
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("inc");
    auto result = ucg_test::run_fork_ranks(fork_opts(3), [&](int rank) {
        IncastGroupConfig c = config(name, rank, 3);
        c.mode = mode;
        auto g = open_group(c);
        std::vector<int32_t> buf(1024, 1);
        // Member 2 sends a longer message than the others and the root.
        const std::size_t count = rank == 2 ? 300 : 200;
        Status st = post_wait(*g, rank != 0, sum(0, buf.data(), count, 1));
        for (uint32_t tag = 2; st == Status::kOk; ++tag) {
            st = post_wait(*g, rank != 0, sum(0, buf.data(), 2, tag));
        }
        UCG_CHECK(st == Status::kIoError);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("incast group: a member killed mid-message fails the others",
          "[mm][incast][fork]")
{
    const auto mode =
        GENERATE(UCT_MM_INCAST_MODE_BATCHED, UCT_MM_INCAST_MODE_CENTRALIZED,
                 UCT_MM_INCAST_MODE_LOCKED, UCT_MM_INCAST_MODE_ATOMIC);
    constexpr unsigned n = 4;
    constexpr int kVictim = 2;
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("inc");
    Gate done;
    auto opts = fork_opts(n);
    opts.may_be_killed = {kVictim};
    auto result = ucg_test::run_fork_ranks(opts, [&](int rank) {
        IncastGroupConfig c = config(name, rank, n);
        c.mode = mode;
        auto g = open_group(c);
        // 40 chunks over an 8-element ring: nobody completes it once the
        // victim stops after its first chunks.
        const std::size_t count = 40 * kSeg / 4;
        std::vector<int32_t> buf(count, 1);
        // One message first: everyone has joined before the victim dies.
        UCG_CHECK(post_wait(*g, rank != 0, sum(0, buf.data(), 1, 0)) ==
                  Status::kOk);
        done.count->fetch_add(1);
        done.pass_when(n);
        if (rank == kVictim) {
            Pending p;
            uct_mm_common::test::post(*g, true, sum(0, buf.data(), count, 1),
                                      &p);
            raise(SIGKILL);
        }
        UCG_CHECK(post_wait(*g, rank != 0, sum(0, buf.data(), count, 1)) ==
                  Status::kPeerDead);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("incast group: a member that never joins times the group out",
          "[mm][incast][fork]")
{
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("inc");
    // Three members expected, two come: the root and one sender.
    auto result = ucg_test::run_fork_ranks(fork_opts(2), [&](int rank) {
        IncastGroupConfig c = config(name, rank, 3);
        c.attach_timeout_ms = 100;
        auto g = open_group(c);
        std::vector<int32_t> buf(16, 1);
        Status st = Status::kOk;
        for (uint32_t tag = 0; st == Status::kOk; ++tag) {
            st = post_wait(*g, rank != 0, sum(0, buf.data(), 16, tag));
        }
        UCG_CHECK(st == Status::kTimeout);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}
