// SPDX-License-Identifier: BSD-3-Clause
// Multi-level gather and scatter (seed 000: topology-aware leaders), and
// the leader edges the multi-level exchanges share (hier_exchange.cpp).
//
// Idea: gather inside the innermost groups to their leaders, then among the
// leaders of the next level, up to the root; each level uses its own tree
// (linear or k-nomial; shm and mcast levels fall back to k-nomial). A
// non-root rank keeps the blocks it collected in scratch in arrival order
// (its own first) and forwards them as one message; the root receives
// straight into its output, and a leaf (a rank that collects nothing) sends
// from its input. Scatter runs the same edges top down.
// Vocabulary: holding (the blocks a rank collected, in scratch order), edge
// (child -> parent at one level).
// Cost (m bytes per block): per level ceil(log_k n_l) rounds; a leader at
// level l moves the blocks of all ranks below it, so the inter-node level
// carries (P - ppn) m bytes into the root in (nodes - 1) messages instead
// of P - 1.
#include "algorithms/flat.h"

#include <algorithm>

namespace ucg::algorithms::detail {

namespace {

// One team's edges: an incast gather where the level is shm and the
// members hold as many blocks each (members ascending), else the tree.
void team_edges(const Request &q, const Team &t, std::size_t l, bool incast,
                Collect &c)
{
    const LevelChoice how = level_choice(q, l);
    std::vector<int> members(t.ranks.size() - 1);
    for (int v = 1; v < t.size(); ++v) {
        members[static_cast<std::size_t>(v - 1)] = t.at(v);
    }
    std::sort(members.begin(), members.end());
    const auto held = [&c](int r) -> const std::vector<int> & {
        return c.holding[static_cast<std::size_t>(r)];
    };
    bool even = incast && how.shape == Shape::kShm;
    for (int r : members) {
        even = even && held(r).size() == held(members[0]).size();
    }
    const int parent = t.at(0);
    auto add = [&](int child, bool one_to_many) {
        auto &ph = c.holding[static_cast<std::size_t>(parent)];
        c.edges.push_back(Edge{child, parent, static_cast<int>(l),
                               static_cast<int>(ph.size()), held(child),
                               one_to_many});
        ph.insert(ph.end(), held(child).begin(), held(child).end());
    };
    if (even) {
        for (int r : members) {
            add(r, true);
        }
        return;
    }
    const Tree tree = level_tree(t.size(), how);
    for (auto it = tree.order.rbegin(); it != tree.order.rend(); ++it) {
        if (*it != 0) {
            const int up = t.at(tree.parent[static_cast<std::size_t>(*it)]);
            // Tree edges inside the team: the parent need not be its root.
            auto &ph = c.holding[static_cast<std::size_t>(up)];
            const int child = t.at(*it);
            c.edges.push_back(Edge{child, up, static_cast<int>(l),
                                   static_cast<int>(ph.size()), held(child)});
            ph.insert(ph.end(), held(child).begin(), held(child).end());
        }
    }
}

} // namespace

Collect collect_edges(const Request &q, int root, bool below_top, bool incast)
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
            if (t.size() > 1) {
                team_edges(q, t, l, incast, c);
            }
        }
    }
    return c;
}

int gather_chunks(const Request &q, const Collect &c)
{
    int n = q.segments;
    for (const Edge &e : c.edges) {
        if (e.incast) {
            n = std::max(n, fit_chunks(q, plan::Channel::kShmIncast,
                                       static_cast<int>(e.blocks.size())));
        }
    }
    return n;
}

void emit_gather_edges(PlanBuilder &pb, const Collect &c,
                       const ParentAt &parent_at)
{
    const int nc = pb.nchunks();
    const auto held = [&c](const Edge &e, Span s) {
        if (c.leaf(e.child)) {
            return std::vector<Range>{
                plan::chunks(Buffer::kInput, 0, s.chunk, s.n)};
        }
        return std::vector<Range>{
            plan::chunks(Buffer::kScratch, 0, s.chunk, s.n,
                         static_cast<int>(e.blocks.size()))};
    };
    for (std::size_t i = 0; i < c.edges.size();) {
        const Edge &e = c.edges[i];
        if (!e.incast) {
            pb.xfer(e.child, e.parent, e.tag, held(e, Span{0, nc}),
                    parent_at(e, Span{0, nc}));
            ++i;
            continue;
        }
        // The team's incast edges follow each other, members ascending.
        std::size_t j = i;
        plan::GroupMsg m{e.parent, {}, e.tag};
        std::vector<const Edge *> of_rank(static_cast<std::size_t>(pb.nranks()),
                                          nullptr);
        for (; j < c.edges.size() && c.edges[j].incast &&
               c.edges[j].parent == e.parent && c.edges[j].tag == e.tag;
             ++j) {
            m.members.push_back(c.edges[j].child);
            of_rank[static_cast<std::size_t>(c.edges[j].child)] = &c.edges[j];
        }
        for (int k = 0; k < nc; ++k) {
            const Span one{k, 1};
            const auto edge = [&of_rank](int r) -> const Edge & {
                return *of_rank[static_cast<std::size_t>(r)];
            };
            pb.gather(
                m, [&](int r) { return held(edge(r), one); },
                [&](int r) { return parent_at(edge(r), one); });
        }
        i = j;
    }
}

namespace {

// Where `parent` keeps the edge's blocks: output (gather) or input
// (scatter) at the root, scratch elsewhere; chunks `s`.
std::vector<Range> parent_side(const Request &q, const Edge &e, Buffer root,
                               Span s)
{
    if (e.parent == q.root) {
        std::vector<Range> v = block_runs(e.blocks, root, 1);
        for (Range &r : v) {
            r.chunk = s.chunk;
            r.nchunks = s.n;
        }
        return v;
    }
    return {plan::chunks(Buffer::kScratch, e.offset, s.chunk, s.n,
                         static_cast<int>(e.blocks.size()))};
}

Range child_side(const Collect &c, const Edge &e, int nc)
{
    if (c.leaf(e.child)) {
        return plan::chunks(Buffer::kOutput, 0, 0, nc);
    }
    return plan::chunks(Buffer::kScratch, 0, 0, nc,
                        static_cast<int>(e.blocks.size()));
}

// Scratch for the ranks that relay (not the root, not a leaf).
void size_scratch(PlanBuilder &pb, const Request &q, const Collect &c)
{
    for (int r = 0; r < q.nranks; ++r) {
        if (r != q.root && !c.leaf(r)) {
            pb.scratch(r, static_cast<int>(
                              c.holding[static_cast<std::size_t>(r)].size()));
        }
    }
}

} // namespace

Plan build_hier_gather(const Request &q, std::string_view name)
{
    const Collect c = collect_edges(q, q.root, false, true);
    const int nc = gather_chunks(q, c);
    PlanBuilder pb(Collective::kGather, q.nranks, q.root, nc, q.only_rank);
    size_scratch(pb, q, c);
    for (int r = 0; r < q.nranks; ++r) {
        if (r != q.root && c.leaf(r)) {
            continue; // sends from its input
        }
        const Buffer b = r == q.root ? Buffer::kOutput : Buffer::kScratch;
        pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, nc)},
                {plan::chunks(b, r == q.root ? r : 0, 0, nc)});
    }
    emit_gather_edges(pb, c, [&q](const Edge &e, Span s) {
        return parent_side(q, e, Buffer::kOutput, s);
    });
    return pb.take(describe(name, q));
}

Plan build_hier_scatter(const Request &q, std::string_view name)
{
    const int nc = q.segments;
    PlanBuilder pb(Collective::kScatter, q.nranks, q.root, nc, q.only_rank);
    const Collect c = collect_edges(q, q.root, false, false);
    size_scratch(pb, q, c);
    for (auto it = c.edges.rbegin(); it != c.edges.rend(); ++it) {
        pb.xfer(it->parent, it->child, it->tag,
                parent_side(q, *it, Buffer::kInput, Span{0, nc}),
                {child_side(c, *it, nc)});
    }
    for (int r = 0; r < q.nranks; ++r) {
        if (r != q.root && c.leaf(r)) {
            continue; // received into its output
        }
        const Buffer b = r == q.root ? Buffer::kInput : Buffer::kScratch;
        pb.copy(r, {plan::chunks(b, r == q.root ? r : 0, 0, nc)},
                {plan::chunks(Buffer::kOutput, 0, 0, nc)});
    }
    return pb.take(describe(name, q));
}

} // namespace ucg::algorithms::detail
