// SPDX-License-Identifier: BSD-3-Clause
// The text form: exact round trips and strict parsing.
#include "algorithms/registry.h"

#include <catch2/catch.hpp>

#include <type_traits>

using namespace ucg::plan;

// One result type across the planner: the parser and the registry return
// ucg::Result (its error() is a ucg::Error).
static_assert(std::is_same_v<decltype(parse("")), ucg::Result<Plan>>);
static_assert(std::is_same_v<decltype(ucg::algorithms::build("", {})),
                             ucg::Result<Plan>>);

TEST_CASE("print then parse gives the same plan", "[plan][text]")
{
    ucg::algorithms::Request q;
    q.collective = Collective::kAllreduce;
    q.nranks = 8;
    q.segments = 2;
    q.levels = ucg::algorithms::make_levels(8, {4});
    q.per_level = {{ucg::algorithms::Shape::kShm, 2}};
    const Plan p = ucg::algorithms::build("hierarchical", q).value();
    const std::string text = print(p);
    const auto back = parse(text);
    REQUIRE(back.ok());
    CHECK(back.value() == p);
    CHECK(print(back.value()) == text);
    CHECK(text.find("incast_recv_reduce shm_incast") != std::string::npos);
    CHECK(text.find("bcast_send shm_bcast") != std::string::npos);
}

TEST_CASE("parser rejects malformed text and names the line", "[plan][text]")
{
    ucg::algorithms::Request q;
    q.collective = Collective::kBcast;
    q.nranks = 2;
    const std::string good = print(ucg::algorithms::build("linear", q).value());
    REQUIRE(parse(good).ok());
    CHECK_FALSE(parse("").ok());
    CHECK_FALSE(parse(good.substr(0, good.size() - 4)).ok());
    CHECK_FALSE(parse(good + "extra\n").ok());
    std::string bad = good;
    bad.replace(bad.find("send"), 4, "snd");
    const auto r = parse(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("line ") == 0);
    std::string bad_range = good;
    bad_range.replace(bad_range.find("in:0+1"), 6, "in:0+x");
    CHECK_FALSE(parse(bad_range).ok());
}

TEST_CASE("chunk split covers the block", "[plan]")
{
    for (std::size_t count : {0, 1, 5, 7, 8, 100}) {
        for (int n : {1, 2, 3, 7}) {
            std::size_t total = 0;
            for (int c = 0; c < n; ++c) {
                CHECK(chunk_begin(count, n, c) == total);
                total += chunk_count(count, n, c);
            }
            CHECK(total == count);
        }
    }
    const std::vector<Range> v = {chunks(Buffer::kOutput, 0, 1, 2, 3)};
    CHECK(range_slots(v) == 6);
    CHECK(range_elements(v, 3, 10) == 3 * (3 + 3));
}

TEST_CASE("groups and src_first print and parse back", "[plan][text]")
{
    PlanBuilder pb(Collective::kAllreduce, 3, 0, 1);
    const Range in = chunks(Buffer::kInput, 0, 0);
    const Range out = chunks(Buffer::kOutput, 0, 0);
    for (int r = 0; r < 3; ++r) {
        pb.copy(r, {in}, {out});
    }
    pb.send(1, 0, 0, {out});
    pb.recv(0, 1, 0, {out}, true, true);
    pb.bcast(GroupMsg{0, {2, 1}, 1}, Channel::kShmBcast, {out}, {out});
    const Plan p = pb.take("test");
    const std::string text = print(p);
    CHECK(text.find("group 0 0,1,2\n") != std::string::npos);
    CHECK(text.find("bcast_send shm_bcast peers=1,2 ") != std::string::npos);
    CHECK(text.find(" deps=0 src_first\n") != std::string::npos);
    CHECK(text.find(" group=0\n") != std::string::npos);
    const auto back = parse(text);
    REQUIRE(back.ok());
    CHECK(back.value() == p);
    CHECK(print(back.value()) == text);
    std::string bad = text;
    bad.replace(bad.find(" group=0"), 8, " group=-1");
    CHECK_FALSE(parse(bad).ok());
    bad = text;
    bad.replace(bad.find("group 0 "), 8, "group 1 ");
    CHECK_FALSE(parse(bad).ok());
    bad = text;
    bad.replace(bad.find(" src_first"), 10, " src_frst");
    CHECK_FALSE(parse(bad).ok());
}

TEST_CASE("a projection keeps the groups its rank names", "[plan]")
{
    PlanBuilder pb(Collective::kBcast, 4, 0, 1);
    const Range out = chunks(Buffer::kOutput, 0, 0);
    pb.copy(0, {chunks(Buffer::kInput, 0, 0)}, {out});
    pb.bcast(GroupMsg{0, {1}, 0}, Channel::kShmBcast, {out}, {out});
    pb.bcast(GroupMsg{0, {2}, 0}, Channel::kShmBcast, {out}, {out});
    pb.bcast(GroupMsg{2, {3}, 0}, Channel::kShmBcast, {out}, {out});
    const Plan p = pb.take("test");
    REQUIRE(p.groups.size() == 3);
    const Plan two = project(p, 2);
    REQUIRE(two.groups.size() == 2);
    CHECK(two.groups[0] == std::vector<int>{0, 2});
    CHECK(two.groups[1] == std::vector<int>{2, 3});
    CHECK(two.ranks[2].ops[0].group == 0);
    CHECK(two.ranks[2].ops[1].group == 1);
    CHECK(two.ranks[0].ops.empty());
    CHECK(project(p, 1).groups == std::vector<std::vector<int>>{{0, 1}});
}
