// SPDX-License-Identifier: BSD-3-Clause
// Multi-level gather and scatter (seed 000: topology-aware leaders), and
// the leader edges the multi-level exchanges share (hier_exchange.cpp).
//
// Idea: gather inside the innermost groups to their leaders, then among the
// leaders of the next level, up to the root; each level uses its own tree
// (linear or k-nomial; shm and mcast levels fall back to k-nomial). A
// non-root rank keeps the blocks it collected in scratch in arrival order
// (its own first) and forwards them as one message; the root receives
// straight into its output. Scatter runs the same edges top down.
// Vocabulary: holding (the blocks a rank collected, in scratch order), edge
// (child -> parent at one level).
// Cost (m bytes per block): per level ceil(log_k n_l) rounds; a leader at
// level l moves the blocks of all ranks below it, so the inter-node level
// carries (P - ppn) m bytes into the root in (nodes - 1) messages instead
// of P - 1.
#include "algorithms/flat.h"

namespace ucg::algorithms::detail {

Collect collect_edges(const Request &q, int root, bool below_top)
{
    Collect c;
    c.holding.resize(static_cast<std::size_t>(q.nranks));
    for (int r = 0; r < q.nranks; ++r) {
        c.holding[static_cast<std::size_t>(r)] = {r};
    }
    const auto teams = level_teams(q.levels, root);
    const std::size_t nlevels = teams.size() - (below_top ? 1 : 0);
    for (std::size_t l = 0; l < nlevels; ++l) {
        for (const Team &t : teams[l]) {
            const Tree tree = level_tree(t.size(), level_choice(q, l));
            for (auto it = tree.order.rbegin(); it != tree.order.rend(); ++it) {
                if (*it == 0) {
                    continue;
                }
                const int child = t.at(*it);
                const int parent =
                    t.at(tree.parent[static_cast<std::size_t>(*it)]);
                auto &ph = c.holding[static_cast<std::size_t>(parent)];
                const auto &ch = c.holding[static_cast<std::size_t>(child)];
                c.edges.push_back(Edge{child, parent, static_cast<int>(l),
                                       static_cast<int>(ph.size()), ch});
                ph.insert(ph.end(), ch.begin(), ch.end());
            }
        }
    }
    return c;
}

namespace {

// Where `parent` keeps the edge's blocks: output (gather) or input
// (scatter) at the root, scratch elsewhere.
std::vector<Range> parent_side(const Request &q, const Edge &e, Buffer root)
{
    if (e.parent == q.root) {
        return block_runs(e.blocks, root, q.segments);
    }
    return {plan::chunks(Buffer::kScratch, e.offset, 0, q.segments,
                         static_cast<int>(e.blocks.size()))};
}

Range child_side(const Request &q, const Edge &e)
{
    return plan::chunks(Buffer::kScratch, 0, 0, q.segments,
                        static_cast<int>(e.blocks.size()));
}

void size_scratch(PlanBuilder &pb, const Request &q, const Collect &c)
{
    for (int r = 0; r < q.nranks; ++r) {
        if (r != q.root) {
            pb.scratch(r, static_cast<int>(
                              c.holding[static_cast<std::size_t>(r)].size()));
        }
    }
}

} // namespace

namespace {

void emit_gather(PlanBuilder &pb, const Request &q, const Collect &c)
{
    const int nc = q.segments;
    size_scratch(pb, q, c);
    for (int r = 0; r < q.nranks; ++r) {
        const Buffer b = r == q.root ? Buffer::kOutput : Buffer::kScratch;
        pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, nc)},
                {plan::chunks(b, r == q.root ? r : 0, 0, nc)});
    }
    for (const Edge &e : c.edges) {
        pb.xfer(e.child, e.parent, e.tag, {child_side(q, e)},
                parent_side(q, e, Buffer::kOutput));
    }
}

} // namespace

Plan build_hier_gather(const Request &q, std::string_view name)
{
    PlanBuilder pb(Collective::kGather, q.nranks, q.root, q.segments,
                   q.only_rank);
    emit_gather(pb, q, collect_edges(q, q.root, false));
    return pb.take(describe(name, q));
}

Plan build_hier_scatter(const Request &q, std::string_view name)
{
    const int nc = q.segments;
    PlanBuilder pb(Collective::kScatter, q.nranks, q.root, nc, q.only_rank);
    const Collect c = collect_edges(q, q.root, false);
    size_scratch(pb, q, c);
    for (auto it = c.edges.rbegin(); it != c.edges.rend(); ++it) {
        pb.xfer(it->parent, it->child, it->tag,
                parent_side(q, *it, Buffer::kInput), {child_side(q, *it)});
    }
    for (int r = 0; r < q.nranks; ++r) {
        const Buffer b = r == q.root ? Buffer::kInput : Buffer::kScratch;
        pb.copy(r, {plan::chunks(b, r == q.root ? r : 0, 0, nc)},
                {plan::chunks(Buffer::kOutput, 0, 0, nc)});
    }
    return pb.take(describe(name, q));
}

} // namespace ucg::algorithms::detail
