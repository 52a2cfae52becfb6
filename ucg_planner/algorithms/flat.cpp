// SPDX-License-Identifier: BSD-3-Clause
// One-block collectives over one tree: bcast, reduce, allreduce (reduce to
// rank 0, then bcast) and barrier (fan-in, fan-out), with the shapes of
// tree.cpp: linear, k-nomial, pipelined chain, pipelined binary tree, shm.
//
// Idea: reduce moves partial sums up the tree into the root's output;
// bcast moves the root's data down. Pipelined shapes do it chunk by chunk so
// that chunk c+1 flows up while chunk c flows down.
// Cost (P ranks, m bytes, C chunks; alpha per message, beta per byte):
// linear bcast/reduce (P-1)(alpha + beta m) at the root; k-nomial
// ceil(log_k P)(k-1)(alpha + beta m); chain (P-1+C-1)(alpha + beta m/C);
// binary tree 2(log2 P + C - 1)(alpha + beta m/C); allreduce twice these.
#include "algorithms/flat.h"

namespace ucg::algorithms::detail {

namespace {

LevelChoice choice(const Request &q, Shape shape)
{
    return LevelChoice{shape, q.radix};
}

Span all_chunks(const PlanBuilder &pb)
{
    return Span{0, pb.nchunks()};
}

// Copies the input into each rank's place.
void load(PlanBuilder &pb, const PlaceFn &place)
{
    for (int r = 0; r < pb.nranks(); ++r) {
        const Span s = all_chunks(pb);
        pb.copy(r, {plan::chunks(Buffer::kInput, 0, s.chunk, s.n)},
                {at(place(r), s)});
    }
}

// The shm shape's messages follow its channel's limits.
int tree_chunks(const Request &q, Shape shape, plan::Channel ch)
{
    return shape == Shape::kShm ? fit_chunks(q, ch, 1) : q.segments;
}

} // namespace

Plan build_tree_bcast(const Request &q, Shape shape, std::string_view name)
{
    PlanBuilder pb(Collective::kBcast, q.nranks, q.root,
                   tree_chunks(q, shape, plan::Channel::kShmBcast),
                   q.only_rank);
    const Span s = all_chunks(pb);
    pb.copy(q.root, {plan::chunks(Buffer::kInput, 0, 0, s.n)},
            {at(out0(q.root), s)});
    level_bcast(pb, whole_team(q.nranks, q.root), choice(q, shape), 0, s, out0);
    return pb.take(describe(name, q));
}

Plan build_tree_reduce(const Request &q, Shape shape, std::string_view name)
{
    PlanBuilder pb(Collective::kReduce, q.nranks, q.root,
                   tree_chunks(q, shape, plan::Channel::kShmIncast),
                   q.only_rank);
    const PlaceFn place = reduce_place(pb, q.root);
    load(pb, place);
    level_reduce(pb, whole_team(q.nranks, q.root), choice(q, shape), 0,
                 all_chunks(pb), place);
    return pb.take(describe(name, q));
}

Plan build_tree_allreduce(const Request &q, Shape shape, std::string_view name)
{
    const bool barrier = q.collective == Collective::kBarrier;
    PlanBuilder pb(q.collective, q.nranks, 0, barrier ? 1 : q.segments,
                   q.only_rank);
    load(pb, out0);
    const Team team = whole_team(q.nranks, 0);
    level_reduce(pb, team, choice(q, shape), 0, all_chunks(pb), out0);
    level_bcast(pb, team, choice(q, shape), 1, all_chunks(pb), out0);
    return pb.take(describe(name, q));
}

Plan build_rk_allreduce(const Request &q, int radix, std::string_view name)
{
    const bool barrier = q.collective == Collective::kBarrier;
    PlanBuilder pb(q.collective, q.nranks, 0, barrier ? 1 : q.segments,
                   q.only_rank);
    load(pb, out0);
    team_allreduce_rk(pb, whole_team(q.nranks, 0), radix, 0, all_chunks(pb),
                      out0);
    return pb.take(describe(name, q));
}

} // namespace ucg::algorithms::detail
