// SPDX-License-Identifier: BSD-3-Clause
// Rendezvous and message order (docs/decisions/0005 items 4 and 5): which
// receives are posted early, the synchronous-send checker, and matching in
// op-list order whatever order deps allow.
#include "algorithms/registry.h"

#include <catch2/catch.hpp>

using namespace ucg::plan;

namespace {

Plan build(const char *alg, Collective c, int p, int segments = 1)
{
    ucg::algorithms::Request q;
    q.collective = c;
    q.nranks = p;
    q.segments = segments;
    return ucg::algorithms::build(alg, q).value();
}

int count(const std::vector<char> &v)
{
    int n = 0;
    for (char c : v) {
        n += c;
    }
    return n;
}

// Rank 0 sends tags 0 then 1 (in that order by a dep); rank 1 receives
// tag 1 before tag 0 (by a dep). Eager sends finish; synchronous ones do
// not: rank 0's first send waits for a receive that waits for its second.
Plan crossed()
{
    Plan p;
    p.collective = Collective::kAllgather;
    p.nranks = 2;
    p.ranks.resize(2);
    const Range in = chunks(Buffer::kInput, 0, 0);
    for (int r = 0; r < 2; ++r) {
        p.ranks[static_cast<std::size_t>(r)].ops.push_back(
            Op{OpKind::kCopy,
               Channel::kP2p,
               {},
               0,
               {in},
               {chunks(Buffer::kOutput, r, 0)},
               {}});
    }
    const Range b0 = chunks(Buffer::kOutput, 0, 0);
    auto &r0 = p.ranks[0].ops;
    r0.push_back(Op{OpKind::kSend, Channel::kP2p, {1}, 0, {b0}, {}, {0}});
    r0.push_back(Op{OpKind::kSend, Channel::kP2p, {1}, 1, {b0}, {}, {0, 1}});
    r0.push_back(Op{OpKind::kRecv,
                    Channel::kP2p,
                    {1},
                    2,
                    {},
                    {chunks(Buffer::kOutput, 1, 0)},
                    {0}});
    auto &r1 = p.ranks[1].ops;
    r1.push_back(Op{OpKind::kRecv, Channel::kP2p, {0}, 1, {}, {b0}, {}});
    r1.push_back(Op{OpKind::kRecv, Channel::kP2p, {0}, 0, {}, {b0}, {1}});
    r1.push_back(Op{OpKind::kSend,
                    Channel::kP2p,
                    {0},
                    2,
                    {chunks(Buffer::kOutput, 1, 0)},
                    {},
                    {0}});
    return p;
}

} // namespace

TEST_CASE("receives behind a send of their rank are posted early",
          "[plan][sync]")
{
    // Recursive doubling: the second exchange receives into what it sent
    // (the first sends from the input, not from the copy it reduces into).
    const Plan rd = build("recursive_doubling", Collective::kAllreduce, 4);
    for (const auto &prog : rd.ranks) {
        const auto early = early_receives(prog);
        REQUIRE(early.size() == prog.ops.size());
        CHECK(count(early) == 1);
        int reductions = 0;
        for (std::size_t i = 0; i < early.size(); ++i) {
            const bool reduce = prog.ops[i].kind == OpKind::kRecvReduce;
            reductions += reduce ? 1 : 0;
            CHECK((early[i] != 0) == (reduce && reductions == 2));
        }
    }
    // A chain bcast receives before it sends: nothing early.
    const Plan chain = build("chain", Collective::kBcast, 4, 3);
    for (const auto &prog : chain.ranks) {
        CHECK(count(early_receives(prog)) == 0);
    }
}

TEST_CASE("synchronous sends finish where receives are posted early",
          "[plan][sync]")
{
    for (const char *alg : {"recursive_doubling", "ring", "rabenseifner"}) {
        INFO(alg);
        const Plan p = build(alg, Collective::kAllreduce, 6, 2);
        REQUIRE(validate(p).empty());
        CHECK(check_synchronous(p).empty());
    }
    CHECK(check_synchronous(build("dissemination", Collective::kBarrier, 5))
              .empty());
}

TEST_CASE("the synchronous checker reports a rendezvous deadlock",
          "[plan][sync]")
{
    const Plan p = crossed();
    REQUIRE(validate(p).empty());
    const auto errs = check_synchronous(p);
    REQUIRE_FALSE(errs.empty());
    CHECK(errs[0].find("synchronous sends deadlock: rank 0 op 1 (send) "
                       "posted, waiting for 1 peers") == 0);
}

TEST_CASE("messages of one key match in list order, not post order",
          "[plan][validate]")
{
    // Issue 12's mutant: rank 3's send of chunk 2 loses its FIFO dep on
    // the send of chunk 1, so an executor may post it first. The executor
    // numbers a key's messages in op-list order (0005 item 4), so chunk 2
    // still meets the receive of chunk 2: the plan stays correct.
    Plan p = build("chain", Collective::kBcast, 5, 3);
    Op &op = p.ranks[3].ops[5];
    REQUIRE(op.kind == OpKind::kSend);
    REQUIRE(op.deps == std::vector<int>{3, 4});
    op.deps = {4};
    CHECK(validate(p).empty());
    CHECK(check_symbolic(p).empty());
    CHECK(check_synchronous(p).empty());
}
