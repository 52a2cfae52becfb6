// SPDX-License-Identifier: BSD-3-Clause
// Internal to algorithms/: teams, tree shapes and the per-level emitters
// that flat and composed builders share.
#pragma once

#include "algorithms/registry.h"
#include "cost/formulas.h"

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace ucg::algorithms {
/* Levels whose groups are disjoint per level but need not cover every
 * rank (pruned levels of one-rank builds). */
bool levels_partial_ok(const Levels &levels, int nranks);
} // namespace ucg::algorithms

namespace ucg::algorithms::detail {

using plan::Buffer;
using plan::Collective;
using plan::Plan;
using plan::PlanBuilder;
using plan::Range;

/* The ranks in [0, n) a per-step loop must visit: all of them in an
 * all-rank build; in a one-rank build only those of `who` (the rank and
 * the peers whose ops reach it; out-of-range entries dropped), ascending
 * and once each, so its ops come in the all-rank order and a step costs
 * O(peers), not O(n). */
std::vector<int> visit(const PlanBuilder &pb, int n,
                       std::initializer_list<int> who);

/* A team: the global ranks taking part; `root` indexes `ranks`. Relative
 * rank v (0 = root) is ranks[(root + v) % size]. */
struct Team {
    std::vector<int> ranks;
    int root = 0;
    int size() const { return static_cast<int>(ranks.size()); }
    int at(int v) const
    {
        return ranks[static_cast<std::size_t>((root + v) % size())];
    }
};
Team whole_team(int nranks, int root);

/* Chunks [chunk, chunk + n). */
struct Span {
    int chunk = 0;
    int n = 1;
};

/* Where a rank keeps its working copy of the single block. */
struct Place {
    Buffer buf = Buffer::kOutput;
    int block = 0;
    int nblocks = 1;
};
using PlaceFn = std::function<Place(int rank)>;
inline Range at(const Place &p, Span s)
{
    return plan::chunks(p.buf, p.block, s.chunk, s.n, p.nblocks);
}

/* A rooted tree over relative ranks 0..n-1 (0 = root). children are in
 * one-to-many order (largest subtree first); order is breadth first. */
struct Tree {
    std::vector<int> parent;
    std::vector<std::vector<int>> children;
    std::vector<int> order;
};
Tree knomial_tree(int n, int radix); // radix >= n gives the flat tree
Tree chain_tree(int n);
Tree binary_tree(int n); // heap order: children 2v+1, 2v+2
/* A tree from parent links (parent[0] = -1, parent[v] < v). */
Tree tree_from_parents(const std::vector<int> &parent);
/* One-to-many down a tree (parents before children). */
void tree_bcast(PlanBuilder &pb, const Team &team, const Tree &t, int tag,
                Span span, const PlaceFn &place);
/* The tree a level's shape uses (shm and mcast: k-nomial of the radix). */
Tree level_tree(int n, LevelChoice how);
/* Size of the k-nomial subtree rooted at v: [v, v + size). */
int knomial_subtree(int n, int radix, int v);

/* Emit a one-to-many (bcast) or many-to-one (reduce) over a team. The
 * root's place already holds the data (bcast) and every place holds its
 * rank's contribution (reduce). Chain and binary shapes, shm and mcast
 * pipeline chunk by chunk; linear and knomial send the span at once, as
 * every shape does with `whole` (a segment cut into pieces for the top's
 * sake only). */
void level_bcast(PlanBuilder &pb, const Team &team, LevelChoice how, int tag,
                 Span span, const PlaceFn &place, bool whole = false);
void level_reduce(PlanBuilder &pb, const Team &team, LevelChoice how, int tag,
                  Span span, const PlaceFn &place, bool whole = false);

/* Recursive k-ing allreduce among a team (any size; ranks beyond the
 * largest power of k fold in first and get the result last). */
void team_allreduce_rk(PlanBuilder &pb, const Team &team, int radix, int tag,
                       Span span, const PlaceFn &place);

/* The largest power of k up to n (cost::largest_power's, an int). */
inline int largest_power(int n, int k)
{
    return static_cast<int>(cost::largest_power(n, k));
}

/* Rabenseifner allreduce among a team: recursive halving reduce_scatter,
 * recursive doubling allgather (rabenseifner.cpp), over `span`, whose
 * chunks split into P' equal pieces (P' = largest_power(team size, 2)). Tags
 * from `tag` up, one per step. */
void team_allreduce_halving(PlanBuilder &pb, const Team &team, int tag,
                            Span span, const PlaceFn &place);

/* Chunks of a multi-level plan over `nlevels` levels (the top group
 * included) whose one-to-many messages carry `blocks` blocks: fit_chunks()
 * for every channel the levels' shapes use going up (many-to-one: shm
 * incast) and down (one-to-many: shm bcast or mcast). */
int level_chunks(const Request &q, std::size_t nlevels, bool up, bool down,
                 int blocks);

/* Teams per level, innermost first, the top group last; with root >= 0
 * the root leads every group it belongs to (hierarchical.cpp). */
std::vector<std::vector<Team>> level_teams(Levels levels, int root);
/* The shape for level l (the last per_level entry is reused). */
LevelChoice level_choice(const Request &q, std::size_t l);

/* Runs of consecutive blocks (b, b+1, ...) in sequence order, each with
 * all `nchunks` chunks. */
std::vector<Range> block_runs(const std::vector<int> &blocks, Buffer buf,
                              int nchunks);

/* Places used by the one-block collectives. */
Place out0(int rank);
PlaceFn reduce_place(PlanBuilder &pb, int root); // out at root, else scratch

/* "name radix=k segments=s" for Plan::algorithm. */
std::string describe(std::string_view name, const Request &req);

} // namespace ucg::algorithms::detail
