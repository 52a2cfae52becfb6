// SPDX-License-Identifier: BSD-3-Clause
// The validator and the symbolic checker catch deliberately broken plans.
#include "algorithms/registry.h"

#include <catch2/catch.hpp>

using namespace ucg::plan;

namespace {

Plan knomial_bcast(int p, int root)
{
    ucg::algorithms::Request q;
    q.collective = Collective::kBcast;
    q.nranks = p;
    q.root = root;
    return ucg::algorithms::build("knomial", q).value();
}

bool mentions(const std::vector<std::string> &errs, const std::string &what)
{
    for (const auto &e : errs) {
        if (e.find(what) != std::string::npos) {
            return true;
        }
    }
    return false;
}

// The index of the first op of `kind` on `rank`.
std::size_t first(const Plan &p, int rank, OpKind kind)
{
    const auto &ops = p.ranks[static_cast<std::size_t>(rank)].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].kind == kind) {
            return i;
        }
    }
    FAIL("no such op");
    return 0;
}

} // namespace

TEST_CASE("a correct plan passes", "[plan][validate]")
{
    const Plan p = knomial_bcast(5, 2);
    CHECK(validate(p).empty());
    CHECK(check_symbolic(p).empty());
}

TEST_CASE("validator reports a missing receive", "[plan][validate]")
{
    Plan p = knomial_bcast(4, 0);
    auto &ops = p.ranks[3].ops;
    ops.erase(ops.begin() + static_cast<long>(first(p, 3, OpKind::kRecv)));
    const auto errs = validate(p);
    REQUIRE_FALSE(errs.empty());
    CHECK(mentions(errs, "no matching receive"));
    CHECK(mentions(errs, "rank "));
}

TEST_CASE("validator reports a dependency cycle", "[plan][validate]")
{
    Plan p = knomial_bcast(4, 0);
    p.ranks[0].ops[0].deps = {1};
    const auto errs = validate(p);
    REQUIRE_FALSE(errs.empty());
    CHECK(mentions(errs, "rank 0 op 0 (copy)"));
    CHECK(mentions(errs, "cycle"));
}

TEST_CASE("validator reports a cross-rank deadlock", "[plan][validate]")
{
    // Two ranks that each receive before sending.
    Plan p;
    p.collective = Collective::kAllreduce;
    p.nranks = 2;
    p.ranks.resize(2);
    const Range o = chunks(Buffer::kOutput, 0, 0);
    const Range i = chunks(Buffer::kInput, 0, 0);
    for (int r = 0; r < 2; ++r) {
        auto &ops = p.ranks[static_cast<std::size_t>(r)].ops;
        ops.push_back(Op{OpKind::kCopy, Channel::kP2p, {}, 0, {i}, {o}, {}});
        ops.push_back(
            Op{OpKind::kRecvReduce, Channel::kP2p, {1 - r}, 0, {}, {o}, {0}});
        ops.push_back(
            Op{OpKind::kSend, Channel::kP2p, {1 - r}, 0, {i}, {}, {1}});
    }
    const auto errs = validate(p);
    REQUIRE(errs.size() == 1);
    CHECK(mentions(errs, "deadlock"));
}

TEST_CASE("validator reports a race and an unwritten read", "[plan][validate]")
{
    Plan p = knomial_bcast(2, 0);
    // Drop the copy's ordering: the send may read out before it is written.
    p.ranks[0].ops[1].deps.clear();
    CHECK(mentions(validate(p), "races with op 0"));
    p.ranks[0].ops.erase(p.ranks[0].ops.begin());
    p.ranks[0].ops[0].deps.clear();
    CHECK(mentions(validate(p), "reads unwritten out block 0 chunk 0"));
}

TEST_CASE("validator reports mismatched sizes and bad ranges",
          "[plan][validate]")
{
    Plan p = knomial_bcast(2, 0);
    p.nchunks = 2; // chunk 1 is never sent: valid, but not a bcast
    CHECK(validate(p).empty());
    CHECK(mentions(check_symbolic(p), "rank 1 out block 0 chunk 1"));
    p.ranks[1].ops[0].dst[0].nchunks = 2;
    CHECK(mentions(validate(p), "disagree on the message size"));
    p.ranks[1].ops[0].dst[0].block = 1;
    CHECK(mentions(validate(p), "out of bounds"));
}

TEST_CASE("symbolic checker reports a double contribution", "[plan][symbolic]")
{
    ucg::algorithms::Request q;
    q.collective = Collective::kAllreduce;
    q.nranks = 4;
    Plan p = ucg::algorithms::build("recursive_doubling", q).value();
    // Turn rank 0's first recv-reduce into two: its peer's data twice.
    auto &ops = p.ranks[0].ops;
    const std::size_t i = first(p, 0, OpKind::kRecvReduce);
    ops.push_back(Op{OpKind::kReduce,
                     Channel::kP2p,
                     {},
                     0,
                     ops[i].dst,
                     ops[i].dst,
                     {static_cast<int>(ops.size() - 1)}});
    REQUIRE(validate(p).empty());
    const auto errs = check_symbolic(p);
    REQUIRE_FALSE(errs.empty());
    CHECK(mentions(errs, "rank 0 out block 0 chunk 0"));
}

TEST_CASE("symbolic checker reports a missing contribution", "[plan][symbolic]")
{
    ucg::algorithms::Request q;
    q.collective = Collective::kReduce;
    q.nranks = 3;
    Plan p = ucg::algorithms::build("linear", q).value();
    // Rank 2 sends its (unreduced) input instead of its work copy... which
    // is the same value; instead make the root receive without reducing.
    const std::size_t i = first(p, 0, OpKind::kRecvReduce);
    p.ranks[0].ops[i].kind = OpKind::kRecv;
    p.ranks[0].ops[i].src.clear(); // a receive names no operand
    REQUIRE(validate(p).empty());
    CHECK_FALSE(check_symbolic(p).empty());
}

TEST_CASE("validator checks one-to-many and many-to-one matching",
          "[plan][validate]")
{
    ucg::algorithms::Request q;
    q.collective = Collective::kAllreduce;
    q.nranks = 4;
    q.levels = ucg::algorithms::make_levels(4, {4});
    q.per_level = {{ucg::algorithms::Shape::kShm, 2}};
    q.top = "tree";
    const Plan good = ucg::algorithms::build("hierarchical", q).value();
    REQUIRE(validate(good).empty());
    REQUIRE(check_symbolic(good).empty());
    SECTION("an incast member that never contributes")
    {
        Plan p = good;
        auto &ops = p.ranks[2].ops;
        ops.erase(ops.begin() +
                  static_cast<long>(first(p, 2, OpKind::kIncastSend)));
        for (auto &op : ops) {
            op.deps.clear();
        }
        CHECK(mentions(validate(p), "has no matching send from rank 2"));
    }
    SECTION("a bcast receiver on the wrong channel")
    {
        Plan p = good;
        p.ranks[3].ops[first(p, 3, OpKind::kBcastRecv)].channel =
            Channel::kMcast;
        CHECK(mentions(validate(p), "rank 3"));
    }
    SECTION("a p2p op on a shm channel")
    {
        Plan p = good;
        p.ranks[0].ops[0].channel = Channel::kShmBcast;
        CHECK(mentions(validate(p), "channel does not fit the op"));
    }
}

TEST_CASE("validator rejects writes to the input buffer", "[plan][validate]")
{
    Plan p = knomial_bcast(2, 0);
    p.ranks[0].ops[0].dst[0].buf = Buffer::kInput;
    CHECK(mentions(validate(p), "writes the input buffer"));
}

namespace {

// Allreduce over 3 ranks: ranks 1 and 2 send their input to rank 0, which
// combines them into its own; rank 0 sends the result back.
Plan gather_reduce(bool src_first_of_2)
{
    PlanBuilder pb(Collective::kAllreduce, 3, 0, 1);
    const Range in = chunks(Buffer::kInput, 0, 0);
    const Range out = chunks(Buffer::kOutput, 0, 0);
    pb.copy(0, {in}, {out});
    pb.scratch(0, 1);
    pb.xfer(2, 0, 0, {in}, {chunks(Buffer::kScratch, 0, 0)});
    pb.xfer(1, 0, 0, {in}, {out}, true); // out = in0 (+) in1
    pb.copy(0, {chunks(Buffer::kScratch, 0, 0)}, {out}, true, src_first_of_2);
    for (int r : {1, 2}) {
        pb.xfer(0, r, 1, {out}, {out});
    }
    return pb.take("test-gather-reduce");
}

} // namespace

TEST_CASE("the ordered symbolic mode follows each op's operand order",
          "[plan][symbolic]")
{
    const Plan good = gather_reduce(false);
    REQUIRE(validate(good).empty());
    CHECK(check_symbolic(good).empty());
    CHECK(check_symbolic(good, Combine::kOrdered).empty());
    // in2 (+) (in0 (+) in1): right in any order, wrong in rank order.
    const Plan swapped = gather_reduce(true);
    REQUIRE(validate(swapped).empty());
    CHECK(check_symbolic(swapped).empty());
    const auto errs = check_symbolic(swapped, Combine::kOrdered);
    REQUIRE_FALSE(errs.empty());
    CHECK(mentions(errs, "rank 0 out block 0 chunk 0: expected {0,1,2} got "
                         "{2,0,1}"));
}

TEST_CASE("src_first applies to point-to-point reductions only",
          "[plan][validate]")
{
    Plan p = knomial_bcast(2, 0);
    p.ranks[1].ops[0].src_first = true; // a plain recv
    CHECK(mentions(validate(p), "src_first on an op that does not reduce"));
}

TEST_CASE("a reducing receive may name its operand: the same slices, and "
          "not with src_first",
          "[plan][validate]")
{
    ucg::algorithms::Request q;
    q.collective = Collective::kReduce;
    q.nranks = 2;
    q.segments = 2;
    Plan p = ucg::algorithms::build("chain", q).value();
    REQUIRE(p.nchunks == 2);
    const std::size_t i = first(p, 0, OpKind::kRecvReduce);
    Op &op = p.ranks[0].ops[i];
    REQUIRE(op.src.size() == 1);
    CHECK(op.src[0].buf == Buffer::kInput);
    CHECK(validate(p).empty());
    CHECK(check_symbolic(p).empty());
    op.src_first = true;
    CHECK(
        mentions(validate(p), "src_first on a receive that names its operand"));
    op.src_first = false;
    op.src[0].chunk = 1 - op.src[0].chunk;
    CHECK(mentions(validate(p), "src and dst differ in slices"));
    op.src[0].chunk = 1 - op.src[0].chunk;
    // A plain receive names none.
    op.kind = OpKind::kRecv;
    CHECK(mentions(validate(p), "src/dst do not fit the op"));
}
