// SPDX-License-Identifier: BSD-3-Clause
// Bcast for large messages: scatter + allgather (van de Geijn) and two
// trees (Sanders, Speck and Traeff, Parallel Computing 2009).
//
// Scatter-allgather: the message is cut into P pieces (P*S chunks); a
// k-nomial scatter gives relative rank v piece v (intermediate ranks pass
// their subtree's pieces on), then a ring allgather over relative ranks
// completes every copy.
// Two trees: the n = P-1 non-root ranks form two binary trees (two_tree.h)
// in which every inner rank of one is a leaf of the other. The root sends
// the S chunks alternately to the two tree roots; chunk c goes down tree
// c % 2. A 2-colouring of the edges (a rank's two edges in differ, so do
// a sender's edges out) gives the schedule: in step s only edges of colour
// s % 2 carry a chunk, so every rank sends at most one chunk and receives
// at most one per step, and both trees run at full rate at once.
// Cost (m bytes, P ranks): scatter-allgather about (log_k P + P - 1) alpha
// + 2 (P-1)/P beta m; two trees at most S + 2 floor(log2(P-1)) steps of
// alpha + beta m/S, every rank receiving m bytes and sending at most
// m (S+1)/S.
#include "algorithms/flat.h"
#include "algorithms/two_tree.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace ucg::algorithms::detail {

namespace {

using IntVec = std::vector<int>;

std::size_t ix(int v)
{
    return static_cast<std::size_t>(v);
}

// Links the in-order tree over positions [lo, hi] below `up`. Its root is
// the position x whose x + 1 has the most trailing zero bits, so odd
// positions are inner and even ones leaves. lo and hi + 1 agree above
// bit b and differ at it, so hi + 1 with the bits below b cleared is the
// one multiple of 2^b in (lo, hi + 1]: that x + 1.
void link_in_order(IntVec &parent, int lo, int hi, int up)
{
    if (lo > hi) {
        return;
    }
    const auto diff = static_cast<unsigned>(lo ^ (hi + 1));
    const int b = static_cast<int>(std::bit_width(diff)) - 1;
    const int x = (((hi + 1) >> b) << b) - 1;
    parent[ix(x)] = up;
    link_in_order(parent, lo, x - 1, x);
    link_in_order(parent, x + 1, hi, x);
}

// Tree 1's name for tree 0's position i: mirror for even n, shift for odd
// n (both map odd positions to even ones; the shift's wrap n-1 -> 0 maps
// a leaf to a leaf).
int tree1_position(int n, int i)
{
    return n % 2 == 0 ? n - 1 - i : (i + 1) % n;
}

// Per tree, per position: its children.
using Children = std::array<std::vector<IntVec>, 2>;

Children children_of(const TwoTrees &tt)
{
    Children e;
    for (std::size_t t = 0; t < 2; ++t) {
        e[t].resize(ix(tt.n));
        for (int i = 0; i < tt.n; ++i) {
            const int up = tt.parent[t][ix(i)];
            if (up >= 0) {
                e[t][ix(up)].push_back(i);
            }
        }
    }
    return e;
}

// The edges (tree t, position i) that must differ in colour from the edge
// into i of tree t: the other edge into i and the other edge out of its
// sender (-1 where there is none). Edge ids are t * n + i.
std::array<int, 2> conflicts(const TwoTrees &tt, const Children &e, int id)
{
    const int n = tt.n, t = id / n, i = id % n;
    const int other = (1 - t) * n;
    const int up = tt.parent[ix(t)][ix(i)];
    int sibling = -1;
    if (up < 0) {
        sibling = other + tt.root[ix(1 - t)];
    } else {
        for (int c : e[ix(t)][ix(up)]) {
            sibling = c != i ? t * n + c : sibling;
        }
    }
    return {other + i, sibling};
}

// 2-colours the edges: the senders' and the receivers' sides form a
// bipartite graph of degree at most 2, whose components are paths and
// even cycles; alternate along each, the root's edge into tree 0 first.
void colour_edges(TwoTrees &tt, const Children &e)
{
    const int n = tt.n;
    IntVec colour(ix(2 * n), -1);
    IntVec todo;
    auto paint = [&](int start) {
        if (colour[ix(start)] >= 0) {
            return;
        }
        colour[ix(start)] = 0;
        todo.push_back(start);
        while (!todo.empty()) {
            const int id = todo.back();
            todo.pop_back();
            for (int nb : conflicts(tt, e, id)) {
                if (nb >= 0 && colour[ix(nb)] < 0) {
                    colour[ix(nb)] = 1 - colour[ix(id)];
                    todo.push_back(nb);
                }
                assert(nb < 0 || colour[ix(nb)] != colour[ix(id)]);
            }
        }
    };
    paint(tt.root[0]);
    for (int id = 0; id < 2 * n; ++id) {
        paint(id);
    }
    for (std::size_t t = 0; t < 2; ++t) {
        const auto first = colour.begin() + static_cast<std::ptrdiff_t>(t) * n;
        tt.colour[t].assign(first, first + n);
    }
}

// A chunk reaches a position one step after its parent got it if the edge
// below differs in colour from the edge above, else two.
void fill_delays(TwoTrees &tt, const Children &e)
{
    for (std::size_t t = 0; t < 2; ++t) {
        tt.delay[t].assign(ix(tt.n), 0);
        IntVec order{tt.root[t]};
        for (std::size_t k = 0; k < order.size(); ++k) {
            const auto v = ix(order[k]);
            for (int c : e[t][v]) {
                const auto w = ix(c);
                const bool turn = tt.colour[t][w] != tt.colour[t][v];
                tt.delay[t][w] = tt.delay[t][v] + (turn ? 1 : 2);
                order.push_back(c);
            }
        }
    }
}

} // namespace

TwoTrees make_two_trees(int n)
{
    TwoTrees tt;
    tt.n = n;
    if (n < 1) {
        return tt;
    }
    const auto sz = ix(n);
    tt.parent[0].assign(sz, -1);
    link_in_order(tt.parent[0], 0, n - 1, -1);
    tt.parent[1].assign(sz, -1);
    for (int i = 0; i < n; ++i) {
        const int up = tt.parent[0][ix(i)];
        tt.parent[1][ix(tree1_position(n, i))] =
            up < 0 ? -1 : tree1_position(n, up);
        if (up < 0) {
            tt.root = {i, tree1_position(n, i)};
        }
    }
    const Children e = children_of(tt);
    colour_edges(tt, e);
    fill_delays(tt, e);
    return tt;
}

void for_each_two_tree_send(const TwoTrees &tt, int nchunks,
                            const std::function<void(const TwoTreeSend &)> &f)
{
    // Positions by tree and delay: tree t's chunk c reaches them in step
    // c + delay.
    std::array<std::vector<IntVec>, 2> at_delay;
    int max_delay = 0;
    for (std::size_t t = 0; t < 2; ++t) {
        for (int i = 0; i < tt.n; ++i) {
            const int d = tt.delay[t][ix(i)];
            if (ix(d) >= at_delay[t].size()) {
                at_delay[t].resize(ix(d) + 1);
            }
            at_delay[t][ix(d)].push_back(i);
            max_delay = std::max(max_delay, d);
        }
    }
    for (int s = 0; tt.n > 0 && s < nchunks + max_delay; ++s) {
        for (int d = std::max(0, s - nchunks + 1); d <= std::min(s, max_delay);
             ++d) {
            const int c = s - d;
            const auto t = ix(c % 2);
            if (ix(d) >= at_delay[t].size()) {
                continue;
            }
            for (int i : at_delay[t][ix(d)]) {
                const int up = tt.parent[t][ix(i)];
                f(TwoTreeSend{s, c % 2, c, up + 1, i + 1});
            }
        }
    }
}

Plan build_scatter_allgather_bcast(const Request &q, std::string_view name)
{
    const int p = q.nranks, s = q.segments;
    PlanBuilder pb(Collective::kBcast, p, q.root, p * s, q.only_rank);
    const Team team = whole_team(p, q.root);
    auto pieces = [s](int v, int cnt) {
        return std::vector<Range>{
            plan::chunks(Buffer::kOutput, 0, v * s, cnt * s)};
    };
    pb.copy(q.root, {plan::chunks(Buffer::kInput, 0, 0, p * s)}, pieces(0, p));
    const Tree t = knomial_tree(p, q.radix);
    for (int v : t.order) {
        for (int c : t.children[static_cast<std::size_t>(v)]) {
            const int cnt = knomial_subtree(p, q.radix, c);
            pb.xfer(team.at(v), team.at(c), 0, pieces(c, cnt), pieces(c, cnt));
        }
    }
    for (int step = 0; step + 1 < p; ++step) {
        for (int v = 0; v < p; ++v) {
            const int j = ((v - step) % p + p) % p;
            pb.xfer(team.at(v), team.at((v + 1) % p), 1 + step, pieces(j, 1),
                    pieces(j, 1));
        }
    }
    return pb.take(describe(name, q));
}

// S = segments chunks; the root sends from its input while it copies it to
// its output. Tag: the tree (one rank pair can share both trees at P = 2).
Plan build_two_tree_bcast(const Request &q, std::string_view name)
{
    const int p = q.nranks, s = q.segments;
    PlanBuilder pb(Collective::kBcast, p, q.root, s, q.only_rank);
    pb.copy(q.root, {plan::chunks(Buffer::kInput, 0, 0, s)},
            {plan::chunks(Buffer::kOutput, 0, 0, s)});
    const Team team = whole_team(p, q.root);
    const auto send = [&](const TwoTreeSend &x) {
        const Buffer src = x.from == 0 ? Buffer::kInput : Buffer::kOutput;
        pb.xfer(team.at(x.from), team.at(x.to), x.tree,
                {plan::chunks(src, 0, x.chunk)},
                {plan::chunks(Buffer::kOutput, 0, x.chunk)});
    };
    for_each_two_tree_send(make_two_trees(p - 1), s, send);
    return pb.take(describe(name, q));
}

} // namespace ucg::algorithms::detail
