// SPDX-License-Identifier: BSD-3-Clause
// One-to-many groups and the incast gather: what the validator requires of
// them (docs/decisions/0005 items 2 and 3), the symbolic checker and the
// simulator on them, and placement (shm within a host).
#include "cost/simulator.h"
#include "plan/plan.h"

#include <catch2/catch.hpp>

using namespace ucg::plan;

namespace {

bool mentions(const std::vector<std::string> &errs, const std::string &what)
{
    for (const auto &e : errs) {
        if (e.find(what) != std::string::npos) {
            return true;
        }
    }
    return false;
}

Range blocks(Buffer b, int first, int n = 1)
{
    return chunks(b, first, 0, 1, n);
}

// A gather of 4 ranks to rank 2 through one incast gather.
Plan incast_gather()
{
    PlanBuilder pb(Collective::kGather, 4, 2, 1);
    pb.copy(2, {blocks(Buffer::kInput, 0)}, {blocks(Buffer::kOutput, 2)});
    pb.gather(
        GroupMsg{2, {3, 0, 1}, 0},
        [](int) { return std::vector<Range>{blocks(Buffer::kInput, 0)}; },
        [](int r) { return std::vector<Range>{blocks(Buffer::kOutput, r)}; });
    return pb.take("test-incast-gather");
}

// Two shm bcasts over ranks {0, 1, 2} with tags 1 and 2.
Plan two_bcasts()
{
    PlanBuilder pb(Collective::kBcast, 3, 0, 2);
    const Range in = chunks(Buffer::kInput, 0, 0, 2);
    pb.copy(0, {in}, {chunks(Buffer::kOutput, 0, 0, 2)});
    for (int c = 0; c < 2; ++c) {
        const Range one = chunks(Buffer::kOutput, 0, c);
        pb.bcast(GroupMsg{0, {1, 2}, 1 + c}, Channel::kShmBcast, {one}, {one});
    }
    return pb.take("test-two-bcasts");
}

} // namespace

TEST_CASE("an incast gather lists each sender's slots in peer order",
          "[plan][groups]")
{
    const Plan p = incast_gather();
    REQUIRE(p.groups == std::vector<std::vector<int>>{{0, 1, 2, 3}});
    const Op &root = p.ranks[2].ops[1];
    CHECK(root.kind == OpKind::kIncastRecv);
    CHECK(root.peers == std::vector<int>{0, 1, 3});
    CHECK(root.dst.size() == 3);
    CHECK(p.ranks[0].ops[0].kind == OpKind::kIncastGatherSend);
    CHECK(validate(p).empty());
    CHECK(check_symbolic(p).empty());
    CHECK(check_synchronous(p).empty());
    const auto back = parse(print(p));
    REQUIRE(back.ok());
    CHECK(back.value() == p);
    ucg::cost::SimConfig cfg;
    cfg.count = 100;
    const auto sim = ucg::cost::simulate(p, {nullptr, {100, 0, 100, 1}}, cfg);
    REQUIRE(sim.ok());
    CHECK(sim->messages == 3);
}

TEST_CASE("the validator checks an incast gather's sizes and kinds",
          "[plan][groups]")
{
    SECTION("a sender sends more than its part")
    {
        Plan p = incast_gather();
        p.nchunks = 2;
        p.ranks[1].ops[0].src[0] = chunks(Buffer::kInput, 0, 0, 2);
        CHECK(mentions(validate(p), "disagree on the message size"));
    }
    SECTION("parts must be even")
    {
        Plan p = incast_gather();
        p.ranks[2].ops[1].dst.pop_back();
        CHECK(mentions(validate(p), "does not split evenly"));
    }
    SECTION("a reduce contribution does not feed a gather")
    {
        Plan p = incast_gather();
        p.ranks[3].ops[0].kind = OpKind::kIncastSend;
        CHECK(mentions(validate(p), "incompatible kind"));
    }
    SECTION("the symbolic checker sees blocks in the wrong place")
    {
        Plan p = incast_gather();
        std::swap(p.ranks[2].ops[1].dst[0], p.ranks[2].ops[1].dst[1]);
        REQUIRE(validate(p).empty());
        CHECK(mentions(check_symbolic(p), "rank 2 out block 0"));
    }
}

TEST_CASE("the validator requires groups on one-to-many ops only",
          "[plan][groups]")
{
    SECTION("a one-to-many op without a group")
    {
        Plan p = two_bcasts();
        p.ranks[1].ops[0].group = -1;
        CHECK(mentions(validate(p), "names no group"));
    }
    SECTION("a point-to-point op with one")
    {
        Plan p = two_bcasts();
        p.ranks[0].ops[0].group = 0;
        CHECK(mentions(validate(p), "names a group"));
    }
    SECTION("peers out of member order")
    {
        Plan p = two_bcasts();
        p.ranks[0].ops[1].peers = {2, 1};
        CHECK(mentions(validate(p), "ascending order"));
    }
    SECTION("a member list out of order")
    {
        Plan p = two_bcasts();
        p.groups[0] = {0, 2, 1};
        CHECK(mentions(validate(p), "two or more ascending ranks"));
    }
    SECTION("a rank outside the group")
    {
        Plan p = two_bcasts();
        p.groups.push_back({0, 1});
        p.ranks[2].ops[0].group = 1;
        CHECK(mentions(validate(p), "not a member of its group 1"));
    }
}

TEST_CASE("every member lists a group's ops in the same order",
          "[plan][groups]")
{
    Plan p = two_bcasts();
    REQUIRE(validate(p).empty());
    // Rank 2 lists the two bcasts the other way round. Matching by
    // (sender, receiver, channel, tag) still pairs them, but the transport
    // matches a group's messages by their order alone.
    auto &ops = p.ranks[2].ops;
    std::swap(ops[0], ops[1]);
    ops[0].deps.clear();
    ops[1].deps.clear();
    const auto errs = validate(p);
    CHECK(mentions(errs, "group 0 message 0"));
    CHECK(mentions(errs, "different orders"));
}

TEST_CASE("every member takes part in every message of its group",
          "[plan][groups]")
{
    Plan p = two_bcasts();
    // The second bcast skips rank 2: a group op whose peers are not all
    // the other members.
    p.ranks[0].ops[2].peers = {1};
    p.ranks[2].ops.pop_back();
    CHECK(mentions(validate(p), "not the other members"));
}

TEST_CASE("shared memory stays within a host, mcast within its domain",
          "[plan][groups][placement]")
{
    const Plan p = two_bcasts();
    CHECK(validate(p, Placement{{0, 0, 0}, {}}).empty());
    CHECK(mentions(validate(p, Placement{{0, 0, 1}, {}}),
                   "shm_bcast with rank 2 on another host"));
    Plan m = p;
    for (auto &prog : m.ranks) {
        for (Op &op : prog.ops) {
            if (is_one_to_many(op.kind)) {
                op.channel = Channel::kMcast;
            }
        }
    }
    CHECK(validate(m).empty()); // placement unknown: not checked
    CHECK(mentions(validate(m, Placement{{0, 1, 2}, {}}),
                   "where the rank has no multicast"));
    CHECK(validate(m, Placement{{0, 1, 2}, {5, 5, 5}}).empty());
    CHECK(mentions(validate(m, Placement{{0, 1, 2}, {5, 5, 6}}),
                   "outside its multicast domain"));
}
