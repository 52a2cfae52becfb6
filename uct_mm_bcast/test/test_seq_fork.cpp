// SPDX-License-Identifier: BSD-3-Clause
// mm_bcast groups (core) in forked processes: every group size and root,
// lengths around the fragment size up to 4 MiB, ring and CMA, back-to-back
// posts, max_outstanding, a post that disagrees, a killed member, a member
// that never joins, and nothing left in /dev/shm.
#include "seq_group.h"

#include "group_test_util.h"

#include "ucg_test/check.h"
#include "ucg_test/fork_ranks.h"
#include "ucg_test/shm_names.h"

#include <catch2/catch.hpp>
#include <csignal>
#include <memory>
#include <unistd.h>

using namespace uct_mm_bcast;
using uct_mm_common::Coll;
using uct_mm_common::test::make_bytes;
using uct_mm_common::test::Pending;
using uct_mm_common::test::post_wait;

namespace {

constexpr std::uint32_t kSeg = 1024;

SeqGroupConfig config(const std::string &name, int rank, unsigned n)
{
    SeqGroupConfig c;
    c.name = name;
    c.member = static_cast<std::uint32_t>(rank);
    c.size = n;
    c.geo.num_slots = 8;
    c.geo.seg_bytes = kSeg;
    c.timeout_ms = 200;
    c.attach_timeout_ms = 5000;
    return c;
}

std::unique_ptr<SeqGroup> open_group(const SeqGroupConfig &c)
{
    SeqGroup *g = nullptr;
    UCG_CHECK(SeqGroup::create(c, &g) == Status::kOk);
    return std::unique_ptr<SeqGroup>(g);
}

Message bcast(unsigned root, void *buf, std::size_t len, std::uint32_t tag)
{
    Message m;
    m.coll = Coll::kBcast;
    m.root = root;
    m.buffer = buf;
    m.length = len;
    m.tag = tag;
    return m;
}

// Every root sends every length in turn; the others check the bytes.
void run_sweep(SeqGroup &g, int rank, unsigned n,
               const std::vector<std::size_t> &lengths)
{
    unsigned msg = 0;
    for (unsigned root = 0; root < n; ++root) {
        for (std::size_t len : lengths) {
            ++msg;
            if (static_cast<unsigned>(rank) == root) {
                auto data = make_bytes(root, msg, len);
                UCG_CHECK(
                    post_wait(g, true, bcast(root, data.data(), len, msg)) ==
                    Status::kOk);
                continue;
            }
            std::vector<std::uint8_t> buf(len + 1, 0xee);
            UCG_CHECK(post_wait(g, false, bcast(root, buf.data(), len, msg)) ==
                      Status::kOk);
            UCG_CHECK_EQ(
                uct_mm_common::test::first_mismatch(buf.data(), root, msg, len),
                len);
            UCG_CHECK_EQ(unsigned{buf[len]}, 0xeeU); // nothing past it
        }
    }
}

ucg_test::ForkOptions fork_opts(unsigned n)
{
    ucg_test::ForkOptions o(static_cast<int>(n));
    o.timeout = std::chrono::milliseconds(40000);
    return o;
}

} // namespace

TEST_CASE("bcast group: every size and root, lengths around a fragment",
          "[mm][bcast][fork]")
{
    const unsigned n = GENERATE(1u, 2u, 3u, 4u, 5u, 7u, 8u);
    const bool cma = GENERATE(false, true);
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("seq");
    const std::vector<std::size_t> lengths = {
        0, 1, kSeg - 1, kSeg, kSeg + 1, 5 * kSeg + 3, 40 * kSeg + 17};
    auto result = ucg_test::run_fork_ranks(fork_opts(n), [&](int rank) {
        SeqGroupConfig c = config(name, rank, n);
        c.cma_min = cma ? 2 * kSeg : ~std::size_t{0};
        auto g = open_group(c);
        run_sweep(*g, rank, n, lengths);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("bcast group: 4 MiB from every root", "[mm][bcast][fork]")
{
    const unsigned n = GENERATE(2u, 3u, 8u);
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("seq");
    auto result = ucg_test::run_fork_ranks(fork_opts(n), [&](int rank) {
        SeqGroupConfig c = config(name, rank, n);
        c.geo.num_slots = 64;
        c.geo.seg_bytes = 8192;
        auto g = open_group(c);
        run_sweep(*g, rank, n, {std::size_t{4} << 20});
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("bcast group: back-to-back posts complete in order",
          "[mm][bcast][fork]")
{
    const unsigned n = GENERATE(2u, 4u, 7u);
    constexpr unsigned kMessages = 600;
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("seq");
    auto result = ucg_test::run_fork_ranks(fork_opts(n), [&](int rank) {
        SeqGroupConfig c = config(name, rank, n);
        c.max_outstanding = 8;
        c.cma_min = 3 * kSeg;
        auto g = open_group(c);
        // Windows of up to 8 posts, the root changing with every message.
        std::vector<std::vector<std::uint8_t>> bufs(8);
        std::vector<Pending> pend(8);
        for (unsigned base = 0; base < kMessages; base += 8) {
            for (unsigned i = 0; i < 8; ++i) {
                const unsigned msg = base + i;
                const unsigned root = msg % n;
                const std::size_t len = (msg * 977) % (4 * kSeg);
                const bool send = static_cast<unsigned>(rank) == root;
                bufs[i] = send ? make_bytes(root, msg, len)
                               : std::vector<std::uint8_t>(len);
                pend[i] = Pending{};
                uct_mm_common::test::post(
                    *g, send, bcast(root, bufs[i].data(), len, msg), &pend[i]);
            }
            for (unsigned i = 0; i < 8; ++i) {
                const unsigned msg = base + i;
                UCG_CHECK(uct_mm_common::test::wait(*g, &pend[i]) ==
                          Status::kOk);
                UCG_CHECK_EQ(uct_mm_common::test::first_mismatch(
                                 bufs[i].data(), msg % n, msg, bufs[i].size()),
                             bufs[i].size());
            }
        }
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("bcast group: max_outstanding posts, then no resource",
          "[mm][bcast][fork]")
{
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("seq");
    auto result = ucg_test::run_fork_ranks(fork_opts(2), [&](int rank) {
        SeqGroupConfig c = config(name, rank, 2);
        c.max_outstanding = 3;
        auto g = open_group(c);
        std::vector<std::uint8_t> buf(16);
        Pending p[4];
        if (rank == 1) {
            // Receives from a root that has sent nothing yet stay posted.
            for (int i = 0; i < 3; ++i) {
                UCG_CHECK(g->post(false, bcast(0, buf.data(), 16, 0), &p[i]) ==
                          Status::kInProgress);
            }
            UCG_CHECK(g->post(false, bcast(0, buf.data(), 16, 0), &p[3]) ==
                      Status::kNoResource);
        }
        auto data = make_bytes(0, 0, 16);
        for (int i = 0; i < 3; ++i) {
            if (rank == 0) {
                UCG_CHECK(post_wait(*g, true, bcast(0, data.data(), 16, 0)) ==
                          Status::kOk);
            } else {
                UCG_CHECK(uct_mm_common::test::wait(*g, &p[i]) == Status::kOk);
            }
        }
        // Busy until it has seen every member join; then idle.
        uct_mm_common::Backoff backoff;
        while (g->busy()) {
            g->progress(uct_mm_common::test::on_complete, nullptr);
            backoff.pause();
        }
        UCG_CHECK(g->state() == Status::kOk);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
}

TEST_CASE("bcast group: posts that disagree fail the group with an I/O error",
          "[mm][bcast][fork][trust]")
{
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("seq");
    auto result = ucg_test::run_fork_ranks(fork_opts(3), [&](int rank) {
        auto g = open_group(config(name, rank, 3));
        std::vector<std::uint8_t> buf(3 * kSeg);
        // Member 2 expects a longer message than the root sends.
        const std::size_t len = rank == 2 ? 3 * kSeg : 2 * kSeg;
        const Status st =
            post_wait(*g, rank == 0, bcast(0, buf.data(), len, 5));
        if (rank == 2) {
            UCG_CHECK(st == Status::kIoError);
        }
        // The others learn it from the shared failure word: at the latest
        // when the ring fills (the root) or the root stops (receivers).
        Status later = st;
        for (std::uint32_t tag = 6; later == Status::kOk; ++tag) {
            later = post_wait(*g, rank == 0, bcast(0, buf.data(), 8, tag));
        }
        UCG_CHECK(later == Status::kIoError);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("bcast group: a member killed mid-message fails the others",
          "[mm][bcast][fork]")
{
    constexpr unsigned n = 4;
    constexpr int kVictim = 2;
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("seq");
    auto opts = fork_opts(n);
    opts.may_be_killed = {kVictim};
    auto result = ucg_test::run_fork_ranks(opts, [&](int rank) {
        auto g = open_group(config(name, rank, n));
        // A message of 40 fragments over an 8-slot ring: the root is mid-
        // message when the victim dies after its first fragment.
        const std::size_t len = 40 * kSeg;
        std::vector<std::uint8_t> buf(len, 0);
        if (rank == 0) {
            buf = make_bytes(0, 1, len);
        }
        if (rank == kVictim) {
            Pending p;
            uct_mm_common::test::post(*g, false, bcast(0, buf.data(), len, 1),
                                      &p);
            uct_mm_common::Backoff backoff;
            while (buf[0] == 0) { // until its first fragment is in
                g->progress(uct_mm_common::test::on_complete, nullptr);
                backoff.pause();
            }
            raise(SIGKILL);
        }
        // The root cannot get more than a ring ahead of the victim, so
        // nobody completes the message.
        UCG_CHECK(post_wait(*g, rank == 0, bcast(0, buf.data(), len, 1)) ==
                  Status::kPeerDead);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("bcast group: a member that never joins times the group out",
          "[mm][bcast][fork]")
{
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("seq");
    // Three members expected, two come.
    auto result = ucg_test::run_fork_ranks(fork_opts(2), [&](int rank) {
        SeqGroupConfig c = config(name, rank, 3);
        c.attach_timeout_ms = 100;
        auto g = open_group(c);
        std::vector<std::uint8_t> buf(4 * kSeg);
        UCG_CHECK(
            post_wait(*g, rank == 0, bcast(0, buf.data(), buf.size(), 0)) ==
                Status::kOk ||
            g->state() == Status::kTimeout);
        // Sooner or later every post sees the timeout.
        Status st = Status::kOk;
        for (unsigned i = 1; st == Status::kOk; ++i) {
            st = post_wait(*g, rank == 0, bcast(0, buf.data(), buf.size(), i));
        }
        UCG_CHECK(st == Status::kTimeout);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("bcast group: bad configurations are refused", "[mm][bcast]")
{
    SeqGroupConfig c = config("/ucgt-never", 0, 2);
    SeqGroup *g = nullptr;
    c.member = 2;
    CHECK(SeqGroup::create(c, &g) == Status::kInvalidParam);
    c = config("/ucgt-never", 0, 2);
    c.geo.num_slots = 6;
    CHECK(SeqGroup::create(c, &g) == Status::kInvalidParam);
    c = config("/ucgt-never", 0, 2);
    c.geo.seg_bytes = 100;
    CHECK(SeqGroup::create(c, &g) == Status::kInvalidParam);
    CHECK(g == nullptr);
}
