// SPDX-License-Identifier: BSD-3-Clause
// Groups of forked processes: every group size and root, sizes from 0 to
// 1 MiB (inline and CMA), back-to-back traffic, a killed member, cleanup.
#include "bcast_test_util.h"
#include "group.h"

#include "ucg_test/fork_ranks.h"
#include "ucg_test/shm_names.h"

#include <catch2/catch.hpp>
#include <csignal>
#include <sys/stat.h>
#include <unistd.h>

using namespace uct_mm_bcast;
using namespace uct_mm_bcast::test;

namespace {

ucg_test::ForkOptions fork_opts(int n)
{
    ucg_test::ForkOptions o;
    o.num_ranks = n;
    o.timeout = std::chrono::milliseconds(15000);
    return o;
}

GroupParams group_params(const std::string &name, int rank, unsigned size)
{
    GroupParams p;
    p.name = name;
    p.my_index = static_cast<std::uint32_t>(rank);
    p.size = size;
    p.num_slots = 16;
    p.slot_bytes = 4096 + 64;
    return p;
}

// Prefix of the names ucg_test::unique_shm_name gives in this process.
std::string shm_prefix()
{
    return "ucgt-" + std::to_string(getpid()) + "-";
}

void open_channel(const GroupParams &p, GroupSegment *g, Channel *ch,
                  std::uint32_t timeout_ms = 2000)
{
    UCG_CHECK(GroupSegment::open(p, g) == Status::kOk);
    ChannelConfig cfg;
    cfg.timeout_ms = timeout_ms;
    ch->init(g->ring(), cfg);
}

} // namespace

TEST_CASE("group: every root, sizes 0 B to 64 KiB, group sizes 1 to 8",
          "[mm][bcast][fork]")
{
    const unsigned n = GENERATE(1u, 2u, 3u, 4u, 5u, 7u, 8u);
    const std::vector<std::size_t> sizes = {0,  1,  7,    8,    63,
                                            64, 65, 4096, 65536};
    ucg_test::ShmSweeper sweeper(shm_prefix());
    const std::string name = ucg_test::unique_shm_name("mmb");
    auto result =
        ucg_test::run_fork_ranks(fork_opts(static_cast<int>(n)), [&](int rank) {
            GroupSegment g;
            Channel ch;
            open_channel(group_params(name, rank, n), &g, &ch);
            std::vector<Received> inbox;
            std::size_t got = 0;
            unsigned seq = 0;
            for (unsigned root = 0; root < n; ++root) {
                for (std::size_t size : sizes) {
                    ++seq;
                    if (static_cast<unsigned>(rank) == root) {
                        const auto m = make_message(root, seq, size);
                        UCG_CHECK(send_message(ch, m, &inbox) == Status::kOk);
                        continue;
                    }
                    UCG_CHECK(receive(ch, &inbox, got + 1) == Status::kOk);
                    const Received &r = inbox[got++];
                    UCG_CHECK_EQ(r.origin, root);
                    UCG_CHECK_EQ(r.seq, seq);
                    UCG_CHECK_EQ(r.length, size < 8 ? 8 : size);
                    UCG_CHECK(r.pattern_ok);
                }
            }
        });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("group: 1 MiB zero-copy broadcast for a few group sizes",
          "[mm][bcast][fork]")
{
    const unsigned n = GENERATE(2u, 4u);
    ucg_test::ShmSweeper sweeper(shm_prefix());
    const std::string name = ucg_test::unique_shm_name("mmb");
    auto result =
        ucg_test::run_fork_ranks(fork_opts(static_cast<int>(n)), [&](int rank) {
            GroupSegment g;
            Channel ch;
            open_channel(group_params(name, rank, n), &g, &ch);
            std::vector<Received> inbox;
            std::size_t got = 0;
            for (unsigned root = 0; root < n; ++root) {
                if (static_cast<unsigned>(rank) == root) {
                    const auto m = make_message(root, root, 1 << 20);
                    UCG_CHECK(send_message(ch, m, &inbox) == Status::kOk);
                } else {
                    UCG_CHECK(receive(ch, &inbox, got + 1) == Status::kOk);
                    UCG_CHECK_EQ(inbox[got].origin, root);
                    UCG_CHECK_EQ(inbox[got].length, std::size_t{1} << 20);
                    UCG_CHECK(inbox[got].pattern_ok);
                    ++got;
                }
            }
        });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("group: thousands of back-to-back messages from every member",
          "[mm][bcast][fork]")
{
    const unsigned n = GENERATE(2u, 4u, 7u);
    constexpr unsigned kPerMember = 1500;
    ucg_test::ShmSweeper sweeper(shm_prefix());
    const std::string name = ucg_test::unique_shm_name("mmb");
    auto result =
        ucg_test::run_fork_ranks(fork_opts(static_cast<int>(n)), [&](int rank) {
            GroupSegment g;
            Channel ch;
            open_channel(group_params(name, rank, n), &g, &ch);
            std::vector<Received> inbox;
            for (unsigned s = 0; s < kPerMember; ++s) {
                const auto m =
                    make_message(static_cast<unsigned>(rank), s, 8 + s % 100);
                UCG_CHECK(send_message(ch, m, &inbox) == Status::kOk);
            }
            UCG_CHECK(receive(ch, &inbox, std::size_t{n - 1} * kPerMember) ==
                      Status::kOk);
            std::vector<unsigned> next(n, 0);
            for (const auto &r : inbox) {
                UCG_CHECK(r.origin < n);
                UCG_CHECK_EQ(r.seq, next[r.origin]);
                UCG_CHECK(r.pattern_ok);
                ++next[r.origin];
            }
        });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("group: a member killed during a broadcast makes the others fail "
          "in bounded time",
          "[mm][bcast][fork]")
{
    constexpr unsigned n = 4;
    constexpr int kVictim = 2;
    ucg_test::ShmSweeper sweeper(shm_prefix());
    const std::string name = ucg_test::unique_shm_name("mmb");
    auto opts = fork_opts(n);
    opts.may_be_killed = {kVictim};
    const auto start = std::chrono::steady_clock::now();
    auto result = ucg_test::run_fork_ranks(opts, [&](int rank) {
        GroupSegment g;
        Channel ch;
        open_channel(group_params(name, rank, n), &g, &ch, 200);
        std::vector<Received> inbox;
        if (rank == 0) {
            Status st = Status::kOk;
            for (unsigned s = 0; st == Status::kOk; ++s) {
                st = send_message(ch, make_message(0, s, 100), &inbox);
            }
            UCG_CHECK(st == Status::kPeerDead);
            return;
        }
        if (rank == kVictim) {
            UCG_CHECK(receive(ch, &inbox, 10) == Status::kOk);
            raise(SIGKILL);
        }
        Status st = receive(ch, &inbox, ~std::size_t{0});
        UCG_CHECK(st == Status::kPeerDead);
    });
    const auto elapsed = std::chrono::steady_clock::now() - start;
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(elapsed < std::chrono::seconds(5));
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("group: bad parameters are refused", "[mm][bcast]")
{
    GroupSegment g;
    GroupParams p = group_params("/ucgt-never", 0, kMaxMembers + 1);
    CHECK(GroupSegment::open(p, &g) == Status::kExceedsLimit);
    p = group_params("/ucgt-never", 3, 3);
    CHECK(GroupSegment::open(p, &g) == Status::kInvalidParam);
}

TEST_CASE("group: the segment is 0600 until the last member attaches, then "
          "gone",
          "[mm][bcast]")
{
    ucg_test::ShmSweeper sweeper(shm_prefix());
    const std::string name = ucg_test::unique_shm_name("mmb");
    GroupSegment first, second;
    REQUIRE(GroupSegment::open(group_params(name, 0, 2), &first) ==
            Status::kOk);
    struct stat sb {};
    REQUIRE(stat(("/dev/shm" + name).c_str(), &sb) == 0);
    CHECK((sb.st_mode & 0777) == 0600);
    REQUIRE(GroupSegment::open(group_params(name, 1, 2), &second) ==
            Status::kOk);
    CHECK(stat(("/dev/shm" + name).c_str(), &sb) != 0);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("group: a member whose creator never comes times out and leaves "
          "nothing",
          "[mm][bcast]")
{
    ucg_test::ShmSweeper sweeper(shm_prefix());
    GroupParams p = group_params(ucg_test::unique_shm_name("mmb"), 1, 2);
    p.attach_timeout_ms = 50;
    GroupSegment g;
    CHECK(GroupSegment::open(p, &g) == Status::kTimeout);
    CHECK(sweeper.leftovers().empty());
}
