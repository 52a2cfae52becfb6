// SPDX-License-Identifier: BSD-3-Clause
// GroupLink: non-blocking create and attach, unlink once all joined, the
// attach timeout, the shared failure word, a dead member, and refusal of a
// segment another user owns.
#include "uct_mm_common/group_link.h"

#include "uct_mm_common/backoff.h"
#include "uct_mm_common/log.h"
#include "uct_mm_common/names.h"

#include "ucg_test/check.h"
#include "ucg_test/fork_ranks.h"
#include "ucg_test/shm_names.h"
#include "ucg_test/thread_ranks.h"

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <functional>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <ucg_test/skip.h>
#include <unistd.h>

using namespace uct_mm_common;

namespace {

LinkConfig config(const std::string &name, unsigned member, unsigned size)
{
    LinkConfig c;
    c.name = name;
    c.layout = 0x54000001;
    c.member = member;
    c.size = size;
    c.region_bytes = 4096;
    c.params.value[0] = 77;
    c.timeout_ms = 200;
    c.attach_timeout_ms = 2000;
    return c;
}

// Polls until joined and everyone is in, or a failure.
Status connect(GroupLink &link)
{
    Backoff backoff;
    for (;;) {
        const Status st = link.poll_connect(now_ns());
        if (st != Status::kOk && st != Status::kInProgress) {
            return st;
        }
        if (link.joined() && link.all_attached()) {
            return Status::kOk;
        }
        backoff.pause();
    }
}

Status open_link(GroupLink &link, const LinkConfig &c)
{
    if (c.member == 0) {
        const Status st = link.create(c);
        if (st != Status::kOk) {
            return st;
        }
        link.publish();
    } else {
        link.prepare(c);
    }
    return connect(link);
}

// Member 0 creates and publishes: joined, the others not yet in.
Status open_link_alone(GroupLink &link, const LinkConfig &c)
{
    const Status st = link.create(c);
    if (st == Status::kOk) {
        link.publish();
    }
    return st;
}

// Member 0 of a two-member group `c` opens it and leaves before member 1
// came: the name stays for member 1 until c.attach_timeout_ms.
void leave_before_member_1(const LinkConfig &c)
{
    GroupLink creator;
    REQUIRE(open_link_alone(creator, c) == Status::kOk);
}

// A child process opens `c` as member 0 (the others never come) and
// ends in `end`, which gets the open link; returns its wait status.
int creator_child(const LinkConfig &c,
                  const std::function<void(GroupLink &)> &end)
{
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        GroupLink creator;
        if (open_link_alone(creator, c) != Status::kOk) {
            _exit(2);
        }
        end(creator);
        _exit(4); // `end` must not return
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    return status;
}

} // namespace

TEST_CASE("link: members join without waiting, the name goes once all are in",
          "[mm][link][fork]")
{
    const unsigned n = GENERATE(1u, 2u, 5u);
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("link");
    auto result = ucg_test::run_fork_ranks(static_cast<int>(n), [&](int r) {
        // Late creators are fine: attachers poll (member 0 starts last).
        if (r == 0) {
            usleep(20000);
        }
        GroupLink link;
        UCG_CHECK(open_link(link, config(name, static_cast<unsigned>(r), n)) ==
                  Status::kOk);
        UCG_CHECK_EQ(link.params().value[0], std::uint64_t{77});
        UCG_CHECK(link.region_bytes() >= 4096);
        UCG_CHECK(link.state() == Status::kOk);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("link: a member that never joins fails the group with a timeout",
          "[mm][link]")
{
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("link");
    LinkConfig c = config(name, 0, 2);
    c.attach_timeout_ms = 50;
    GroupLink creator;
    REQUIRE(creator.create(c) == Status::kOk);
    creator.publish();
    CHECK(connect(creator) == Status::kTimeout);
    CHECK(sweeper.leftovers().empty());
    // An attacher whose member 0 never comes times out too.
    LinkConfig lc = config(ucg_test::unique_shm_name("none"), 1, 2);
    lc.attach_timeout_ms = 50;
    GroupLink attacher;
    attacher.prepare(lc);
    CHECK(connect(attacher) == Status::kTimeout);
}

TEST_CASE("link: one member's failure reaches the others", "[mm][link]")
{
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("link");
    GroupLink a, b;
    REQUIRE(a.create(config(name, 0, 2)) == Status::kOk);
    a.publish();
    b.prepare(config(name, 1, 2));
    REQUIRE(connect(b) == Status::kOk);
    CHECK(a.state() == Status::kOk);
    b.fail(Status::kIoError, 0, "test");
    CHECK(a.state() == Status::kIoError);
    CHECK(b.state() == Status::kIoError);
    // The first failure wins: a later one does not change the word.
    a.fail(Status::kPeerDead, 1, "test");
    CHECK(a.state() == Status::kIoError);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("link: an attacher refuses member 0's constants written over "
          "after member 0 wrote them",
          "[mm][link]")
{
    // Members derive a message's mode and geometry from these constants:
    // one that read other values than its peers would silently disagree.
    ucg_test::SharedMapping mem(link_segment_bytes(2, 4096));
    LinkConfig ca = config("/ucgt-link-params", 0, 2);
    ca.memory = mem.data();
    ca.memory_bytes = mem.size();
    LinkConfig cb = ca;
    cb.member = 1;
    GroupLink a, b;
    REQUIRE(a.create(ca) == Status::kOk);
    a.publish();
    auto *params = reinterpret_cast<LinkParams *>(mem.as<std::uint8_t>() +
                                                  kLinkParamsOffset);
    params->value[3] += 1; // still a plausible threshold
    b.prepare(cb);
    CHECK(connect(b) == Status::kIoError);
    CHECK(a.state() == Status::kIoError); // published: member 0 knows
}

TEST_CASE("link: a failure reaches the others after a peer overwrote the "
          "magic",
          "[mm][link]")
{
    // A joined member checked the header once; a same-user peer that later
    // scribbles over the magic must not silence the failure word (the
    // others would wait on a member that gave up).
    ucg_test::SharedMapping mem(link_segment_bytes(2, 4096));
    GroupLink a, b;
    LinkConfig ca = config("/ucgt-link-magic", 0, 2);
    ca.memory = mem.data();
    ca.memory_bytes = mem.size();
    LinkConfig cb = ca;
    cb.member = 1;
    REQUIRE(a.create(ca) == Status::kOk);
    a.publish();
    b.prepare(cb);
    REQUIRE(connect(b) == Status::kOk);
    REQUIRE(connect(a) == Status::kOk);
    mem.as<LinkHeader>()->magic.store(0x0badc0de);
    b.fail(Status::kIoError, 0, "test");
    CHECK(a.state() == Status::kIoError);
}

TEST_CASE("link: a killed member is found by a stalled one", "[mm][link][fork]")
{
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("link");
    ucg_test::ForkOptions opts(2);
    opts.may_be_killed = {1};
    auto result = ucg_test::run_fork_ranks(opts, [&](int r) {
        GroupLink link;
        UCG_CHECK(open_link(link, config(name, static_cast<unsigned>(r), 2)) ==
                  Status::kOk);
        if (r == 1) {
            raise(SIGKILL);
        }
        Backoff backoff;
        while (link.on_stall(1) == Status::kOk) {
            backoff.pause();
        }
        UCG_CHECK(link.state() == Status::kPeerDead);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("link: a segment of another user or mode is refused",
          "[mm][link][trust]")
{
    if (geteuid() != 0) {
        UCG_SKIP("needs root to give a segment to another user");
    }
    const passwd *nobody = getpwnam("nobody");
    REQUIRE(nobody != nullptr);
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("evil");
    const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0666);
    REQUIRE(fd >= 0);
    REQUIRE(ftruncate(fd, 1 << 16) == 0);
    REQUIRE(fchmod(fd, 0666) == 0);
    REQUIRE(fchown(fd, nobody->pw_uid, nobody->pw_gid) == 0);
    GroupLink link;
    link.prepare(config(name, 1, 2));
    CHECK(connect(link) == Status::kNotTrusted);
    Segment seg;
    CHECK(Segment::attach(name, 4096, &seg) == Status::kNotTrusted);
    CHECK(Segment::attach_proc(getpid(), fd, 4096, &seg) ==
          Status::kNotTrusted);
    // Ours but with a mode other than 0600: refused too.
    REQUIRE(fchown(fd, geteuid(), getegid()) == 0);
    CHECK(Segment::attach(name, 4096, &seg) == Status::kNotTrusted);
    REQUIRE(fchmod(fd, 0600) == 0);
    CHECK(Segment::attach(name, 4096, &seg) == Status::kOk);
    close(fd);
}

TEST_CASE("link: members that never progressed leave no name behind",
          "[mm][link]")
{
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("link");
    {
        GroupLink creator;
        REQUIRE(creator.create(config(name, 0, 2)) == Status::kOk);
        creator.publish();
        {
            GroupLink other;
            other.prepare(config(name, 1, 2)); // no poll_connect at all
        } // leaving, it is counted in: the last of two, it unlinks
        CHECK(sweeper.leftovers().empty());
    }
    CHECK(sweeper.leftovers().empty());
}

// A member that never progressed attaches as it leaves, to count itself
// in, and calls the region's validator then: its owner leaves from its own
// destructor, while the members the validator writes are whole, and
// ~GroupLink's call must do nothing (it attached again and logged "joined
// already" for a member that had only left).
namespace {
int g_link_errors = 0;
} // namespace

TEST_CASE("link: leaving is once, the validator called by the first leave "
          "only",
          "[mm][link]")
{
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("link");
    GroupLink creator;
    REQUIRE(open_link_alone(creator, config(name, 0, 3)) == Status::kOk);
    int calls = 0;
    LinkConfig c = config(name, 1, 3);
    c.validate = [](void *arg, const LinkParams &, std::size_t) {
        ++*static_cast<int *>(arg);
        return Status::kOk;
    };
    c.validate_arg = &calls;
    g_link_errors = 0;
    set_log_sink([](LogLevel level, const char *) {
        g_link_errors += level == LogLevel::kError ? 1 : 0;
    });
    {
        GroupLink other;
        other.prepare(c); // no poll_connect at all
        other.leave();
        CHECK(calls == 1);
        other.leave();
    }
    set_log_sink(nullptr);
    CHECK(calls == 1);
    CHECK(g_link_errors == 0);
}

// Issue 29: a group destroyed before every member attached stays for its
// late members until the attach deadline; after it, nothing is left.
TEST_CASE("link: a name left for late members goes after the deadline",
          "[mm][link]")
{
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("late");
    LinkConfig c = config(name, 0, 2);
    c.attach_timeout_ms = 100;
    leave_before_member_1(c); // the name stays for member 1 ...
    CHECK(sweeper.leftovers().size() == 1);
    {
        GroupLink late;
        late.prepare(config(name, 1, 2));
        REQUIRE(late.poll_connect(now_ns()) == Status::kOk); // ... it joins,
    } // the last of two: it unlinks the name
    CHECK(sweeper.leftovers().empty());
    // A new group takes the name: what was left under it is not this one.
    GroupLink taker;
    REQUIRE(open_link_alone(taker, c) == Status::kOk);
    // Another group left with a member that never comes.
    LinkConfig c2 = config(ucg_test::unique_shm_name("late-other"), 0, 2);
    c2.attach_timeout_ms = 100;
    leave_before_member_1(c2);
    CHECK(sweeper.leftovers().size() == 2);
    usleep(150 * 1000);
    {
        // Past the deadline, the next link this process makes unlinks the
        // name left behind, and not the one a live group holds.
        GroupLink next;
        next.prepare(config(ucg_test::unique_shm_name("none"), 1, 2));
    }
    const auto left = sweeper.leftovers();
    REQUIRE(left.size() == 1);
    CHECK("/" + left[0] == name);
}

TEST_CASE("link: a process that exits unlinks the names it left for late "
          "members",
          "[mm][link][fork]")
{
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("late-exit");
    LinkConfig c = config(name, 0, 2);
    c.attach_timeout_ms = 60000; // long after the process is gone
    const int status = creator_child(c, [&](GroupLink &creator) {
        creator.leave();
        if (ucg_test::list_shm(name.substr(1)).size() != 1) {
            _exit(3); // the name must stay for member 1 while we live
        }
        std::exit(0); // exit handlers run
    });
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(sweeper.leftovers().empty());
}

TEST_CASE("link: a fork child leaves the names its parent kept alone",
          "[mm][link][fork]")
{
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("late-fork");
    LinkConfig c = config(name, 0, 2);
    c.attach_timeout_ms = 60000;
    leave_before_member_1(c); // kept for member 1 until the deadline
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        std::exit(0); // its exit handlers run: the name is not its own
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(sweeper.leftovers().size() == 1);
}

namespace {

bool g_grew = false;

void grow_segment_bytes(std::uint8_t *base)
{
    g_link_check_probe = nullptr; // once
    g_grew = true;
    auto *hdr = reinterpret_cast<LinkHeader *>(base);
    __atomic_store_n(&hdr->segment_bytes, std::uint64_t{1} << 40,
                     __ATOMIC_RELAXED);
}

} // namespace

// Issue 33: a header value rewritten between a member's check and its use
// (a racing writer of the same uid) is not used: the member keeps what it
// checked, so it never takes a region larger than its mapping.
TEST_CASE("link: a member uses the header values it checked, not a later "
          "rewrite",
          "[mm][link][trust]")
{
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string name = ucg_test::unique_shm_name("reread");
    GroupLink creator, joiner;
    REQUIRE(creator.create(config(name, 0, 2)) == Status::kOk);
    creator.publish();
    const std::size_t region = creator.region_bytes();
    joiner.prepare(config(name, 1, 2));
    g_link_check_probe = grow_segment_bytes;
    Backoff backoff;
    Status st = Status::kInProgress;
    for (int i = 0; i < 100000 && st == Status::kInProgress; ++i) {
        (void)creator.poll_connect(now_ns());
        st = joiner.poll_connect(now_ns());
        if (st == Status::kOk && !joiner.joined()) {
            st = Status::kInProgress;
        }
        backoff.pause();
    }
    g_link_check_probe = nullptr;
    REQUIRE(st == Status::kOk);
    CHECK(g_grew); // the probe ran between the check and the use
    CHECK(joiner.region_bytes() == region);
}

namespace {

// A group segment name of `family` (as the transports name theirs).
std::string family_name(const std::string &family, std::uint64_t key)
{
    return group_segment_name(family.c_str(), Secret{1, 2}, key);
}

bool shm_exists(const std::string &name)
{
    const int fd = shm_open(name.c_str(), O_RDONLY, 0);
    if (fd >= 0) {
        close(fd);
    }
    return fd >= 0;
}

// A child opens `c` (member 0, the others never come) and is killed:
// nothing runs at its exit, so the name stays.
void create_and_die(const LinkConfig &c)
{
    const int status = creator_child(c, [](GroupLink &) { raise(SIGKILL); });
    REQUIRE(WIFSIGNALED(status));
    REQUIRE(shm_exists(c.name));
}

// A family of this process's test names (swept at the end) and a segment
// of it whose one member that came was killed.
struct DeadFamily {
    ucg_test::ShmSweeper sweeper{ucg_test::own_shm_prefix()};
    std::string family;
    std::string dead;

    explicit DeadFamily(const std::string &tag)
        : family(ucg_test::own_shm_prefix() + tag), dead(family_name(family, 1))
    {
        create_and_die(config(dead, 0, 2));
    }
};

} // namespace

TEST_CASE("link: a segment whose members were all killed is swept once old "
          "enough",
          "[mm][link][fork]")
{
    DeadFamily f("sweep1");
    // Too young: a late member may still come and fail fast on it.
    CHECK(sweep_abandoned_links(f.family, kSweepMinAgeNs) == 0);
    CHECK(shm_exists(f.dead));
    // Another family's sweep leaves it alone.
    CHECK(sweep_abandoned_links(f.family + "x", 0) == 0);
    CHECK(shm_exists(f.dead));
    CHECK(sweep_abandoned_links(f.family, 0) == 1);
    CHECK_FALSE(shm_exists(f.dead));
    CHECK(f.sweeper.leftovers().empty());
}

TEST_CASE("link: the sweep keeps a segment any live member holds, and what "
          "is not a group segment of ours",
          "[mm][link][fork]")
{
    ucg_test::ShmSweeper sweeper(ucg_test::own_shm_prefix());
    const std::string family = ucg_test::own_shm_prefix() + "sweep2";
    // Member 0 alive, member 1 not come yet.
    const std::string live = family_name(family, 1);
    GroupLink creator;
    REQUIRE(open_link_alone(creator, config(live, 0, 3)) == Status::kOk);
    // Member 0 killed, member 1 attached and alive (member 2 never came).
    const std::string half = family_name(family, 2);
    create_and_die(config(half, 0, 3));
    GroupLink survivor;
    survivor.prepare(config(half, 1, 3));
    REQUIRE(survivor.poll_connect(now_ns()) == Status::kOk);
    REQUIRE(survivor.joined());
    // Ours and zero-filled (never published) but opened up to 0644.
    const std::string open_mode = family_name(family, 3);
    const int fd = shm_open(open_mode.c_str(), O_CREAT | O_EXCL | O_RDWR, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(fchmod(fd, 0644) == 0);
    REQUIRE(ftruncate(fd, 1 << 16) == 0);
    close(fd);
    // Never published and 0600: member 0 died before publish().
    const std::string unpublished = family_name(family, 4);
    Segment seg;
    REQUIRE(Segment::create(unpublished, 1 << 16, &seg) == Status::kOk);
    seg.disown();

    CHECK(sweep_abandoned_links(family, 0) == 1);
    CHECK(shm_exists(live));
    CHECK(shm_exists(half));
    CHECK(shm_exists(open_mode));
    CHECK_FALSE(shm_exists(unpublished));
    shm_unlink(open_mode.c_str());
    shm_unlink(half.c_str());
}

TEST_CASE("link: the first group a process creates sweeps its family's "
          "abandoned segments",
          "[mm][link][fork]")
{
    DeadFamily f("sweep3");
    const std::uint64_t saved = g_sweep_min_age_ns;
    g_sweep_min_age_ns = 0;
    {
        GroupLink next;
        CHECK(open_link_alone(next, config(family_name(f.family, 2), 0, 2)) ==
              Status::kOk);
    }
    g_sweep_min_age_ns = saved;
    CHECK_FALSE(shm_exists(f.dead));
}
