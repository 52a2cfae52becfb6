// SPDX-License-Identifier: BSD-3-Clause
// Lowering: segments, message ids, early receives, staging.
#include "exec/program.h"

#include "algorithms/registry.h"

#include <catch2/catch.hpp>

#include <set>

namespace ucg::exec {

namespace {

using plan::Buffer;
using plan::Collective;
using plan::OpKind;

Layout one_block(std::uint64_t count, std::size_t es)
{
    Layout l;
    l.elem_bytes = es;
    l.input = BufferLayout::uniform(1, count, es);
    l.output = BufferLayout::uniform(1, count, es);
    l.scratch_count = count;
    return l;
}

plan::Plan build(Collective c, const char *name, int p, int segments = 1)
{
    algorithms::Request q;
    q.collective = c;
    q.nranks = p;
    q.segments = segments;
    auto plan = algorithms::build(name, q);
    REQUIRE(plan);
    return plan.value();
}

} // namespace

TEST_CASE("adjacent chunks of a block become one segment", "[exec][lower]")
{
    plan::Plan p;
    p.collective = Collective::kAllreduce;
    p.nranks = 1;
    p.nchunks = 4;
    plan::RankProgram rp;
    rp.ops.push_back(plan::Op{OpKind::kCopy,
                              plan::Channel::kP2p,
                              {},
                              0,
                              {plan::chunks(Buffer::kInput, 0, 0, 4)},
                              {plan::chunks(Buffer::kOutput, 0, 0, 2),
                               plan::chunks(Buffer::kOutput, 0, 2, 2)},
                              {}});
    p.ranks.push_back(rp);
    const auto prog = lower(p, 0, one_block(10, 8));
    REQUIRE(prog);
    const LOp &op = prog->ops[0];
    CHECK(op.nsrc == 1);
    CHECK(op.ndst == 1);
    CHECK(prog->segs[op.dst].length == 80);
    CHECK(op.bytes == 80);
}

TEST_CASE("both sides of every message number it alike", "[exec][lower]")
{
    for (const char *alg : {"ring", "recursive_doubling", "rabenseifner"}) {
        const int p = 5;
        const plan::Plan plan = build(Collective::kAllreduce, alg, p, 2);
        std::vector<Program> progs;
        for (int r = 0; r < p; ++r) {
            auto prog = lower(plan, r, one_block(100, 4));
            REQUIRE(prog);
            progs.push_back(std::move(prog.value()));
        }
        // (from, to, id) -> bytes, from the senders; receivers must find it.
        std::map<std::tuple<int, int, std::uint32_t>, std::uint64_t> sent;
        for (const Program &pr : progs) {
            for (const LOp &op : pr.ops) {
                if (op.kind == OpKind::kSend) {
                    CHECK(sent.emplace(std::tuple{pr.rank, op.peer, op.msg_id},
                                       op.bytes)
                              .second);
                }
            }
        }
        std::size_t received = 0;
        for (const Program &pr : progs) {
            for (const LOp &op : pr.ops) {
                if (op.kind == OpKind::kRecv ||
                    op.kind == OpKind::kRecvReduce) {
                    const auto it = sent.find({op.peer, pr.rank, op.msg_id});
                    REQUIRE(it != sent.end());
                    CHECK(it->second == op.bytes);
                    ++received;
                }
            }
        }
        CHECK(received == sent.size());
    }
}

TEST_CASE("the messages of a pair fit the wire tag's id field, or the plan "
          "is refused",
          "[exec][lower]")
{
    // Empty sends from rank 0 to rank 1: kMaxWireMessages of them fit
    // (ids 0 to 2^19 - 1); one more would take the answers' bit.
    auto sends = [](std::uint32_t n) {
        plan::Plan p;
        p.collective = Collective::kBarrier;
        p.nranks = 2;
        p.nchunks = 1;
        plan::RankProgram rp;
        plan::Op send;
        send.peers = {1};
        rp.ops.resize(n, send);
        p.ranks = {rp, plan::RankProgram{}};
        return p;
    };
    const auto fits = lower(sends(kMaxWireMessages), 0, one_block(0, 1));
    REQUIRE(fits);
    CHECK(fits->ops.back().msg_id == kMaxWireMessages - 1);
    const auto over = lower(sends(kMaxWireMessages + 1), 0, one_block(0, 1));
    REQUIRE_FALSE(over);
    CHECK_THAT(over.error().message,
               Catch::Contains("between rank 0 and rank 1"));
}

TEST_CASE("receives after a send of the same rank are early", "[exec][lower]")
{
    // Recursive doubling sends a slot, then receives into it: posted at
    // start into staging, or rendezvous sends would deadlock.
    const plan::Plan plan =
        build(Collective::kAllreduce, "recursive_doubling", 4);
    auto prog = lower(plan, 0, one_block(64, 4));
    REQUIRE(prog);
    int early = 0;
    for (const LOp &op : prog->ops) {
        if (op.flags & kOpEarly) {
            CHECK((op.flags & kOpStaged) != 0);
            ++early;
        }
    }
    CHECK(early > 0);
    CHECK(prog->staging_bytes >= 64 * 4);
    // A bcast root only sends: nothing early.
    const plan::Plan b = build(Collective::kBcast, "knomial", 4);
    auto bprog = lower(b, 0, one_block(64, 4));
    REQUIRE(bprog);
    CHECK(bprog->early.empty());
}

TEST_CASE("messages of no bytes (a barrier's) are posted early but never "
          "staged",
          "[exec][lower]")
{
    const plan::Plan plan =
        build(Collective::kAllreduce, "recursive_doubling", 4);
    auto prog = lower(plan, 1, one_block(0, 1));
    REQUIRE(prog);
    int early = 0;
    for (const LOp &op : prog->ops) {
        CHECK((op.flags & kOpStaged) == 0);
        early += (op.flags & kOpEarly) != 0;
    }
    CHECK(early > 0); // still posted at start: the send side is unchanged
    CHECK(prog->staging_bytes == 0);
}

TEST_CASE("copies and reductions of no bytes are left out, their waits "
          "kept",
          "[exec][lower]")
{
    // 0 copy (input -> output), 1 send after it, 2 reduce after both,
    // 3 receive after 2: with no bytes, 0 and 2 go and 3 waits for 1.
    plan::Plan p;
    p.collective = Collective::kAllreduce;
    p.nranks = 2;
    const auto in = plan::chunks(Buffer::kInput, 0, 0, 1);
    const auto out = plan::chunks(Buffer::kOutput, 0, 0, 1);
    plan::RankProgram rp;
    rp.ops.push_back(
        plan::Op{OpKind::kCopy, plan::Channel::kP2p, {}, 0, {in}, {out}, {}});
    rp.ops.push_back(
        plan::Op{OpKind::kSend, plan::Channel::kP2p, {1}, 1, {out}, {}, {0}});
    rp.ops.push_back(plan::Op{
        OpKind::kReduce, plan::Channel::kP2p, {}, 0, {in}, {out}, {0, 1}});
    rp.ops.push_back(
        plan::Op{OpKind::kRecv, plan::Channel::kP2p, {1}, 1, {}, {out}, {2}});
    p.ranks = {rp, rp};

    const auto empty = lower(p, 0, one_block(0, 4));
    REQUIRE(empty);
    REQUIRE(empty->ops.size() == 2);
    CHECK(empty->ops[0].kind == OpKind::kSend);
    CHECK(empty->ops[1].kind == OpKind::kRecv);
    CHECK(empty->roots == std::vector<std::uint32_t>{0});
    CHECK(empty->ops[1].ndeps == 1);
    REQUIRE(empty->ops[0].nnext == 1);
    CHECK(empty->next[empty->ops[0].next] == 1);

    const auto full = lower(p, 0, one_block(16, 4));
    REQUIRE(full);
    CHECK(full->ops.size() == 4); // bytes to move: every op stays
    CHECK(full->roots == std::vector<std::uint32_t>{0});

    // A barrier's program is its messages alone.
    const plan::Plan b = build(Collective::kBarrier, "recursive_doubling", 4);
    for (int r = 0; r < 4; ++r) {
        const auto prog = lower(b, r, one_block(0, 1));
        REQUIRE(prog);
        for (const LOp &op : prog->ops) {
            CHECK((op.kind == OpKind::kSend || op.kind == OpKind::kRecv ||
                   op.kind == OpKind::kRecvReduce));
        }
        CHECK(prog->ops.size() == 4); // two steps, a send and a receive each
    }
}

TEST_CASE("a layout without the plan's blocks is refused", "[exec][lower]")
{
    const plan::Plan plan = build(Collective::kAllgather, "ring", 3);
    Layout l = one_block(8, 4); // allgather output needs 3 blocks
    const auto prog = lower(plan, 0, l);
    REQUIRE(!prog);
    CHECK(prog.error().message.find("block") != std::string::npos);
}

TEST_CASE("scratch with blocks of its own holds each block at its size",
          "[exec][lower]")
{
    // A reduce_scatter with counts {5, 0, 2} of 4-byte elements: scratch
    // block b is input block b, 28 bytes in all.
    const plan::Plan plan = build(Collective::kReduceScatter, "ring", 3);
    Layout l;
    l.elem_bytes = 4;
    l.input = BufferLayout::vector({5, 0, 2}, {0, 5, 5}, 4);
    l.output = BufferLayout::uniform(1, 5, 4);
    l.scratch = l.input;
    const auto prog = lower(plan, 0, l);
    REQUIRE(prog);
    CHECK(prog->scratch_bytes == 28);
    std::set<std::pair<std::uint64_t, std::uint64_t>> spans;
    for (const Segment &s : prog->segs) {
        if (s.buf == Buf::kScratch) {
            spans.insert({s.offset, s.length});
        }
    }
    // Rank 0 sends block 2 from its input, reduces block 1 (no bytes)
    // and block 0 into scratch with its input's blocks as operands
    // (decision 0055), and copies block 0 out.
    CHECK(spans == std::set<std::pair<std::uint64_t, std::uint64_t>>{{0, 20}});

    l.scratch = BufferLayout::vector({5, 0}, {0, 5}, 4);
    const auto fewer = lower(plan, 0, l);
    REQUIRE(!fewer);
    CHECK(fewer.error().message.find("scratch") != std::string::npos);
}

} // namespace ucg::exec
