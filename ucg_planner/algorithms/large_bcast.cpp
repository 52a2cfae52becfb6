// SPDX-License-Identifier: BSD-3-Clause
// Bcast for large messages: scatter + allgather (van de Geijn) and two
// trees.
//
// Scatter-allgather: the message is cut into P pieces (P*S chunks); a
// k-nomial scatter gives relative rank v piece v (intermediate ranks pass
// their subtree's pieces on), then a ring allgather over relative ranks
// completes every copy. Two trees (an approximation of Sanders' two-tree):
// the non-root ranks form a heap-ordered binary tree T1 and its mirror T2
// (position i -> n+1-i), so T1's inner ranks are T2's leaves; the root
// feeds the first half of the chunks into T1 and the second into T2, both
// pipelined chunk by chunk.
// Cost (m bytes, P ranks): scatter-allgather about (log_k P + P - 1) alpha
// + 2 (P-1)/P beta m; two trees about 2 (log2 P + S) (alpha + beta m/2S)
// with every rank sending at most m bytes in total.
#include "algorithms/flat.h"

namespace ucg::algorithms::detail {

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

Plan build_two_tree_bcast(const Request &q, std::string_view name)
{
    const int p = q.nranks, s = q.segments;
    PlanBuilder pb(Collective::kBcast, p, q.root, 2 * s, q.only_rank);
    pb.copy(q.root, {plan::chunks(Buffer::kInput, 0, 0, 2 * s)},
            {plan::chunks(Buffer::kOutput, 0, 0, 2 * s)});
    const int n = p - 1;
    // Team position 0 is the root, positions 1..n a 1-based heap.
    std::vector<int> parent(static_cast<std::size_t>(p), -1);
    for (int i = 1; i <= n; ++i) {
        parent[static_cast<std::size_t>(i)] = i / 2;
    }
    const Tree tree = tree_from_parents(parent);
    const Team all = whole_team(p, q.root);
    Team t1, t2;
    t1.ranks.push_back(q.root);
    t2.ranks.push_back(q.root);
    for (int i = 1; i <= n; ++i) {
        t1.ranks.push_back(all.at(i));
        t2.ranks.push_back(all.at(n + 1 - i));
    }
    for (int c = 0; c < s; ++c) {
        tree_bcast(pb, t1, tree, 0, Span{c, 1}, out0);
        tree_bcast(pb, t2, tree, 1, Span{s + c, 1}, out0);
    }
    return pb.take(describe(name, q));
}

} // namespace ucg::algorithms::detail
