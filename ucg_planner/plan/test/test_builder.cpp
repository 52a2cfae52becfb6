// SPDX-License-Identifier: BSD-3-Clause
// PlanBuilder's input forwarding in one-block reductions: a read of a
// slot that holds an unchanged copy of the input reads the input, and a
// copy nothing reads any more is dropped.
#include "algorithms/registry.h"

#include <catch2/catch.hpp>

using namespace ucg::plan;

namespace {

const Range kIn = chunks(Buffer::kInput, 0, 0);
const Range kOut = chunks(Buffer::kOutput, 0, 0);
const Range kScr = chunks(Buffer::kScratch, 0, 0);

std::vector<OpKind> kinds(const RankProgram &p)
{
    std::vector<OpKind> k;
    for (const Op &op : p.ops) {
        k.push_back(op.kind);
    }
    return k;
}

} // namespace

TEST_CASE("a reduction's send of its copied input reads the input and the "
          "copy goes",
          "[plan][builder]")
{
    PlanBuilder pb(Collective::kAllreduce, 2, 0, 1);
    pb.scratch(0, 1);
    pb.copy(0, {kIn}, {kScr});
    pb.send(0, 1, 0, {kScr});
    pb.recv(0, 1, 1, {kOut});
    const Plan p = pb.take("test");
    const RankProgram &r0 = p.ranks[0];
    REQUIRE(kinds(r0) == std::vector<OpKind>{OpKind::kSend, OpKind::kRecv});
    CHECK(r0.ops[0].src == std::vector<Range>{kIn});
    CHECK(r0.ops[0].deps.empty());
    CHECK(r0.ops[1].deps.empty());
}

TEST_CASE("a receive that reduces into a copy of the input reduces the "
          "input itself",
          "[plan][builder]")
{
    for (bool incast : {false, true}) {
        INFO("incast " << incast);
        PlanBuilder pb(Collective::kReduce, 2, 0, 1);
        pb.copy(0, {kIn}, {kOut});
        pb.send(0, 1, 0, {kOut});
        if (incast) {
            pb.incast(GroupMsg{0, {1}, 1}, {kIn}, {kOut});
        } else {
            pb.recv(0, 1, 1, {kOut}, true);
        }
        const Plan p = pb.take("test");
        const RankProgram &r0 = p.ranks[0];
        REQUIRE(r0.ops.size() == 2);
        CHECK(r0.ops[0].src == std::vector<Range>{kIn});
        CHECK(r0.ops[1].src == std::vector<Range>{kIn});
        CHECK(r0.ops[1].dst == std::vector<Range>{kOut});
        CHECK(r0.ops[1].deps.empty());
    }
}

TEST_CASE("a copy reduced into, read in part or left as the result stays",
          "[plan][builder]")
{
    SECTION("reduced into locally")
    {
        PlanBuilder pb(Collective::kReduce, 2, 0, 1);
        pb.scratch(0, 1);
        pb.copy(0, {kIn}, {kOut});
        pb.recv(0, 1, 0, {kScr});
        pb.copy(0, {kScr}, {kOut}, true);
        const Plan p = pb.take("test");
        REQUIRE(kinds(p.ranks[0]) == std::vector<OpKind>{OpKind::kCopy,
                                                         OpKind::kRecv,
                                                         OpKind::kReduce});
        CHECK(p.ranks[0].ops[2].deps == std::vector<int>{0, 1});
    }
    SECTION("received into with the message first")
    {
        PlanBuilder pb(Collective::kReduce, 2, 0, 1);
        pb.copy(0, {kIn}, {kOut});
        pb.recv(0, 1, 0, {kOut}, true, true);
        const Plan p = pb.take("test");
        REQUIRE(kinds(p.ranks[0]) ==
                std::vector<OpKind>{OpKind::kCopy, OpKind::kRecvReduce});
        CHECK(p.ranks[0].ops[1].src.empty());
    }
    SECTION("the output's last write")
    {
        PlanBuilder pb(Collective::kAllreduce, 1, 0, 1);
        pb.copy(0, {kIn}, {kOut});
        CHECK(kinds(pb.take("test").ranks[0]) ==
              std::vector<OpKind>{OpKind::kCopy});
    }
    SECTION("read together with a slot it did not write")
    {
        PlanBuilder pb(Collective::kAllreduce, 2, 0, 2);
        pb.copy(0, {chunks(Buffer::kInput, 0, 0)},
                {chunks(Buffer::kOutput, 0, 0)});
        pb.recv(0, 1, 0, {chunks(Buffer::kOutput, 0, 1)});
        pb.send(0, 1, 1, {chunks(Buffer::kOutput, 0, 0, 2)});
        pb.recv(0, 1, 2, {chunks(Buffer::kOutput, 0, 0, 2)});
        const Plan p = pb.take("test");
        REQUIRE(p.ranks[0].ops.size() == 4);
        CHECK(p.ranks[0].ops[2].src ==
              std::vector<Range>{chunks(Buffer::kOutput, 0, 0, 2)});
    }
}

TEST_CASE("ops behind a dropped copy keep its ordering", "[plan][builder]")
{
    // The send reads out before the copy overwrites it, the receive
    // overwrites the copy: without the copy, the receive still waits for
    // the send.
    PlanBuilder pb(Collective::kAllreduce, 2, 0, 1);
    pb.send(0, 1, 0, {kOut});
    pb.copy(0, {kIn}, {kOut});
    pb.recv(0, 1, 1, {kOut});
    const Plan p = pb.take("test");
    REQUIRE(kinds(p.ranks[0]) ==
            std::vector<OpKind>{OpKind::kSend, OpKind::kRecv});
    CHECK(p.ranks[0].ops[1].deps == std::vector<int>{0});
}

TEST_CASE("collectives whose blocks differ in size keep their copies",
          "[plan][builder]")
{
    for (Collective c :
         {Collective::kGather, Collective::kAllgather, Collective::kBcast}) {
        INFO(to_string(c));
        PlanBuilder pb(c, 2, 0, 1);
        pb.scratch(0, 1);
        pb.copy(0, {kIn}, {kScr});
        pb.send(0, 1, 0, {kScr});
        const Plan p = pb.take("test");
        REQUIRE(kinds(p.ranks[0]) ==
                std::vector<OpKind>{OpKind::kCopy, OpKind::kSend});
        CHECK(p.ranks[0].ops[1].src == std::vector<Range>{kScr});
    }
}

TEST_CASE("a reduce_scatter reads its input where scratch holds a copy of "
          "it, but keeps copies into its output",
          "[plan][builder]")
{
    // Its scratch blocks are the input's (coll_shape.cpp); its output
    // block 0 is the rank's own block, another size.
    PlanBuilder pb(Collective::kReduceScatter, 2, 0, 1);
    pb.scratch(0, 2);
    pb.copy(0, {chunks(Buffer::kInput, 0, 0, 1, 2)},
            {chunks(Buffer::kScratch, 0, 0, 1, 2)});
    pb.send(0, 1, 0, {chunks(Buffer::kScratch, 1, 0)});
    pb.recv(0, 1, 0, {chunks(Buffer::kScratch, 0, 0)}, true);
    pb.copy(0, {kIn}, {kOut});
    pb.send(0, 1, 1, {kOut});
    const Plan p = pb.take("test");
    const RankProgram &r = p.ranks[0];
    REQUIRE(kinds(r) == std::vector<OpKind>{OpKind::kSend, OpKind::kRecvReduce,
                                            OpKind::kCopy, OpKind::kSend});
    CHECK(r.ops[0].src ==
          std::vector<Range>{chunks(Buffer::kInput, 1, 0)}); // no copy first
    CHECK(r.ops[1].src == std::vector<Range>{chunks(Buffer::kInput, 0, 0)});
    CHECK(r.ops[1].dst == std::vector<Range>{chunks(Buffer::kScratch, 0, 0)});
    CHECK(r.ops[3].src == std::vector<Range>{kOut});
}

TEST_CASE("a hierarchical reduce's sender passes its input on uncopied and "
          "its root reduces its input as it receives",
          "[plan][builder][algorithms]")
{
    using ucg::algorithms::Shape;
    for (Shape shape : {Shape::kShm, Shape::kKnomial}) {
        ucg::algorithms::Request q;
        q.collective = Collective::kReduce;
        q.nranks = 2;
        q.root = 0;
        q.segments = 4;
        q.levels = ucg::algorithms::make_levels(2, {2});
        q.per_level = {{shape, 2}};
        const auto plan = ucg::algorithms::build("hierarchical", q);
        REQUIRE(plan.ok());
        CHECK(validate(plan.value()).empty());
        CHECK(check_symbolic(plan.value()).empty());
        const RankProgram &sender = plan.value().ranks[1];
        CHECK(sender.ops.size() == 4);
        for (const Op &op : sender.ops) {
            CHECK(is_send(op.kind));
            CHECK(op.src.at(0).buf == Buffer::kInput);
        }
        const RankProgram &root = plan.value().ranks[0];
        CHECK(root.ops.size() == 4);
        for (const Op &op : root.ops) {
            CHECK(is_recv(op.kind));
            CHECK(op.src.at(0).buf == Buffer::kInput);
            CHECK(op.dst.at(0).buf == Buffer::kOutput);
        }
    }
}
