// SPDX-License-Identifier: BSD-3-Clause
// Tree shapes and the per-level one-to-many / many-to-one emitters.
//
// Idea: a rooted tree over relative ranks (0 = root). One-to-many sends the
// root's data down each edge, parents before children; many-to-one sends
// partial sums up, children before parents, each parent reducing into its
// place. Vocabulary: k-nomial tree of radix k: at stride s = k^i a rank
// aligned to s*k has children v + j*s (j = 1..k-1); chain: v -> v+1;
// binary: heap order (2v+1, 2v+2); shm/mcast: one op reaches the group.
// Cost (n ranks, m bytes, chunks C): k-nomial ceil(log_k n) rounds of up to
// (k-1) messages of m bytes each; chain n-1+C-1 rounds of m/C bytes;
// binary about 2(log2 n + C - 1) rounds of m/C; shm/mcast C one-to-many ops.
#include "algorithms/common.h"

#include <algorithm>
#include <cassert>

namespace ucg::algorithms::detail {

namespace {

void fill_order(Tree &t)
{
    t.order.clear();
    t.order.push_back(0);
    for (std::size_t i = 0; i < t.order.size(); ++i) {
        const auto &ch = t.children[static_cast<std::size_t>(t.order[i])];
        t.order.insert(t.order.end(), ch.begin(), ch.end());
    }
}

Tree empty_tree(int n)
{
    Tree t;
    t.parent.assign(static_cast<std::size_t>(n), -1);
    t.children.resize(static_cast<std::size_t>(n));
    return t;
}

void link(Tree &t, int parent, int child)
{
    t.parent[static_cast<std::size_t>(child)] = parent;
    t.children[static_cast<std::size_t>(parent)].push_back(child);
}

void tree_reduce(PlanBuilder &pb, const Team &team, const Tree &t, int tag,
                 Span span, const PlaceFn &place)
{
    for (auto it = t.order.rbegin(); it != t.order.rend(); ++it) {
        if (*it == 0) {
            continue;
        }
        const int from = team.at(*it);
        const int to = team.at(t.parent[static_cast<std::size_t>(*it)]);
        if (!pb.active(from) && !pb.active(to)) {
            continue; // another rank's edge (one-rank build)
        }
        pb.xfer(from, to, tag, {at(place(from), span)}, {at(place(to), span)},
                true);
    }
}

// A one-to-many message over the team (root: relative rank 0). Its
// members keep the data at the same place, as every place function here
// gives one place to all ranks but the collective's root, which leads
// every team holding it.
plan::GroupMsg group_msg(const Team &team, int tag, const PlaceFn &place)
{
    plan::GroupMsg m{team.at(0), {}, tag};
    for (int v = 1; v < team.size(); ++v) {
        m.members.push_back(team.at(v));
        assert(at(place(team.at(v)), Span{}) == at(place(team.at(1)), Span{}));
    }
    (void)place;
    return m;
}

bool pipelined(Shape s)
{
    return s == Shape::kChain || s == Shape::kBinary || s == Shape::kShm ||
           s == Shape::kMcast;
}

} // namespace

void tree_bcast(PlanBuilder &pb, const Team &team, const Tree &t, int tag,
                Span span, const PlaceFn &place)
{
    for (int v : t.order) {
        const int from = team.at(v);
        for (int c : t.children[static_cast<std::size_t>(v)]) {
            const int to = team.at(c);
            if (!pb.active(from) && !pb.active(to)) {
                continue; // another rank's edge (one-rank build)
            }
            pb.xfer(from, to, tag, {at(place(from), span)},
                    {at(place(to), span)});
        }
    }
}

Tree tree_from_parents(const std::vector<int> &parent)
{
    Tree t = empty_tree(static_cast<int>(parent.size()));
    for (std::size_t v = 1; v < parent.size(); ++v) {
        link(t, parent[v], static_cast<int>(v));
    }
    fill_order(t);
    return t;
}

Tree level_tree(int n, LevelChoice how)
{
    switch (how.shape) {
    case Shape::kChain:
        return chain_tree(n);
    case Shape::kBinary:
        return binary_tree(n);
    case Shape::kLinear:
        return knomial_tree(n, std::max(n, 2));
    default:
        return knomial_tree(n, how.radix);
    }
}

Team whole_team(int nranks, int root)
{
    Team t;
    t.ranks.resize(static_cast<std::size_t>(nranks));
    for (int r = 0; r < nranks; ++r) {
        t.ranks[static_cast<std::size_t>(r)] = r;
    }
    t.root = root;
    return t;
}

std::vector<int> visit(const PlanBuilder &pb, int n,
                       std::initializer_list<int> who)
{
    std::vector<int> out;
    if (!pb.only_rank()) {
        out.resize(static_cast<std::size_t>(n));
        for (int r = 0; r < n; ++r) {
            out[static_cast<std::size_t>(r)] = r;
        }
        return out;
    }
    for (int r : who) {
        if (r >= 0 && r < n) {
            out.push_back(r);
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

Tree knomial_tree(int n, int radix)
{
    const long long k = std::max(radix, 2);
    Tree t = empty_tree(n);
    for (int v = 0; v < n; ++v) {
        std::vector<int> ch;
        for (long long s = 1; s < n && v % (s * k) == 0; s *= k) {
            for (long long j = 1; j < k && v + j * s < n; ++j) {
                ch.push_back(static_cast<int>(v + j * s));
            }
        }
        // Farthest (largest subtree) first.
        std::reverse(ch.begin(), ch.end());
        for (int c : ch) {
            link(t, v, c);
        }
    }
    fill_order(t);
    return t;
}

int knomial_subtree(int n, int radix, int v)
{
    const long long k = std::max(radix, 2);
    long long s = 1;
    while (s < n && v % (s * k) == 0) {
        s *= k;
    }
    return static_cast<int>(std::min<long long>(s, n - v));
}

Tree chain_tree(int n)
{
    Tree t = empty_tree(n);
    for (int v = 1; v < n; ++v) {
        link(t, v - 1, v);
    }
    fill_order(t);
    return t;
}

Tree binary_tree(int n)
{
    Tree t = empty_tree(n);
    for (int v = 1; v < n; ++v) {
        link(t, (v - 1) / 2, v);
    }
    fill_order(t);
    return t;
}

void level_bcast(PlanBuilder &pb, const Team &team, LevelChoice how, int tag,
                 Span span, const PlaceFn &place, bool whole)
{
    if (team.size() < 2) {
        return;
    }
    if (how.shape == Shape::kShm || how.shape == Shape::kMcast) {
        const auto ch = how.shape == Shape::kShm ? plan::Channel::kShmBcast
                                                 : plan::Channel::kMcast;
        const plan::GroupMsg m = group_msg(team, tag, place);
        const int n = whole ? span.n : 1; // chunks per op
        for (int c = span.chunk; c < span.chunk + span.n; c += n) {
            const Span one{c, n};
            // Every member's place has the same shape (one level's).
            pb.bcast(m, ch, {at(place(m.root), one)},
                     {at(place(m.members[0]), one)});
        }
        return;
    }
    const Tree t = level_tree(team.size(), how);
    if (whole || !pipelined(how.shape)) {
        tree_bcast(pb, team, t, tag, span, place);
        return;
    }
    for (int c = span.chunk; c < span.chunk + span.n; ++c) {
        tree_bcast(pb, team, t, tag, Span{c, 1}, place);
    }
}

void level_reduce(PlanBuilder &pb, const Team &team, LevelChoice how, int tag,
                  Span span, const PlaceFn &place, bool whole)
{
    if (team.size() < 2) {
        return;
    }
    if (how.shape == Shape::kShm || how.shape == Shape::kMcast) {
        const plan::GroupMsg m = group_msg(team, tag, place);
        const int n = whole ? span.n : 1; // chunks per op
        for (int c = span.chunk; c < span.chunk + span.n; c += n) {
            const Span one{c, n};
            pb.incast(m, {at(place(m.members[0]), one)},
                      {at(place(m.root), one)});
        }
        return;
    }
    const Tree t = level_tree(team.size(), how);
    if (whole || !pipelined(how.shape)) {
        tree_reduce(pb, team, t, tag, span, place);
        return;
    }
    for (int c = span.chunk; c < span.chunk + span.n; ++c) {
        tree_reduce(pb, team, t, tag, Span{c, 1}, place);
    }
}

Place out0(int /*rank*/)
{
    return Place{Buffer::kOutput, 0};
}

PlaceFn reduce_place(PlanBuilder &pb, int root)
{
    for (int r = 0; r < pb.nranks(); ++r) {
        if (r != root) {
            pb.scratch(r, 1);
        }
    }
    return [root](int r) {
        return r == root ? Place{Buffer::kOutput, 0}
                         : Place{Buffer::kScratch, 0};
    };
}

std::string describe(std::string_view name, const Request &req)
{
    return std::string(name) + " radix=" + std::to_string(req.radix) +
           " segments=" + std::to_string(req.segments);
}

} // namespace ucg::algorithms::detail
