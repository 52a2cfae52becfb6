// SPDX-License-Identifier: BSD-3-Clause
// Internal to algorithms/: the builders the registry lists.
#pragma once

#include "algorithms/common.h"

namespace ucg::algorithms::detail {

// flat.cpp: one tree over all ranks.
Plan build_tree_bcast(const Request &q, Shape shape, std::string_view name);
Plan build_tree_reduce(const Request &q, Shape shape, std::string_view name);
// Allreduce or barrier: reduce to rank 0, bcast back.
Plan build_tree_allreduce(const Request &q, Shape shape, std::string_view name);
// Allreduce or barrier by recursive k-ing.
Plan build_rk_allreduce(const Request &q, int radix, std::string_view name);

// recursive.cpp
Plan build_rk_allgather(const Request &q, int radix, std::string_view name);
Plan build_dissemination_barrier(const Request &q, std::string_view name);

// gather_scatter.cpp: k-nomial (radix >= P: linear) gather and scatter.
Plan build_knomial_gather(const Request &q, int radix, std::string_view name);
Plan build_knomial_scatter(const Request &q, int radix, std::string_view name);

// large_bcast.cpp
Plan build_scatter_allgather_bcast(const Request &q, std::string_view name);
Plan build_two_tree_bcast(const Request &q, std::string_view name);

// ring.cpp
Plan build_ring(const Request &q, std::string_view name);
// rabenseifner.cpp: allreduce and reduce.
Plan build_rabenseifner(const Request &q, std::string_view name);
Plan build_halving_reduce_scatter(const Request &q, std::string_view name);

// exchange.cpp: linear (direct), pairwise and Bruck exchanges.
Plan build_direct(const Request &q, std::string_view name);
Plan build_pairwise_alltoall(const Request &q, std::string_view name);
Plan build_bruck(const Request &q, std::string_view name);

// ordered.cpp: order-preserving scan, exscan and reduce.
Plan build_chain_scan(const Request &q, std::string_view name);
Plan build_rd_scan(const Request &q, std::string_view name);
Plan build_ordered_reduce(const Request &q, std::string_view name);

// hierarchical.cpp
Plan build_hierarchical(const Request &q, std::string_view name);
// `levels` with the implicit top group (the last level's leaders, when
// there are several) made explicit.
Levels with_top(Levels levels);
// hier_gather.cpp: the leader edges of a multi-level gather. A child's
// holding (the blocks it collected, own first) lands at `offset` in its
// parent's holding.
struct Edge {
    int child, parent, tag;
    int offset;              // in the parent's holding
    std::vector<int> blocks; // the child's holding, in its scratch order
    bool incast = false;     // part of one incast gather of its team
};
struct Collect {
    std::vector<Edge> edges;               // bottom up
    std::vector<std::vector<int>> holding; // per rank, after the gather
    /* A rank that holds only its own block: as a child it sends from its
     * input (gather) or receives into its output (scatter), with no
     * scratch and no copy. */
    bool leaf(int r) const
    {
        return holding[static_cast<std::size_t>(r)].size() == 1;
    }
};
/* Edges of every level (below_top: all but the top group), with `root`
 * (-1: none) leading every group holding it. With `incast`, a shm level's
 * team whose members hold as many blocks each gathers through one incast
 * gather: its edges, members ascending, are marked `incast`. */
Collect collect_edges(const Request &q, int root, bool below_top, bool incast);
/* Chunks for the incast gathers of `c` (fit_chunks() of the largest
 * holding sent), at least q.segments. */
int gather_chunks(const Request &q, const Collect &c);
/* Where a parent keeps an edge's blocks, chunks `s`. */
using ParentAt = std::function<std::vector<Range>(const Edge &, Span)>;
/* Emits the edges bottom up: a point-to-point edge sends the child's
 * holding (scratch [0, n); a leaf's input) at once, the incast edges of a
 * team one incast gather per chunk. */
void emit_gather_edges(PlanBuilder &pb, const Collect &c,
                       const ParentAt &parent_at);
Plan build_hier_gather(const Request &q, std::string_view name);
// leader.cpp: point-to-point k-nomial gather/scatter per level
// (Request::per_level radices).
Plan build_leader_gather(const Request &q, std::string_view name);
Plan build_hier_scatter(const Request &q, std::string_view name);
// hier_exchange.cpp: gather to the top group's leaders, an exchange among
// them, and back down.
Plan build_hier_allgather(const Request &q, std::string_view name);
Plan build_hier_reduce_scatter(const Request &q, std::string_view name);
Plan build_hier_alltoall(const Request &q, std::string_view name);

} // namespace ucg::algorithms::detail
