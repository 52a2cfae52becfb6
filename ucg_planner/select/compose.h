// SPDX-License-Identifier: BSD-3-Clause
// From the topology to plans: the per-level groups as the algorithm
// registry's Levels, and seed 000's topology-aware gather and scatter
// (leaders per level) that the registry's hierarchical builder lacks.
#pragma once

#include "algorithms/registry.h"
#include "topology/topology.h"

#include <optional>

namespace ucg::select {

/// The hierarchy's groups, innermost first, each with its leader first
/// (the root leads every group holding it).
algorithms::Levels levels_from_topology(const topology::Topology &topo,
                                        int root);
/// The same from an already computed Topology::hierarchy().
algorithms::Levels
levels_from_partitions(const std::vector<topology::Partition> &parts,
                       int nranks, int root);

/// Only the groups holding `rank` (or, above, its leader): what a
/// one-rank build of a hierarchical plan reads. The rank's program is the
/// same as with the full Levels, at O(levels * group) instead of O(P).
algorithms::Levels prune_levels(const algorithms::Levels &levels, int rank);

/// Seed 000's topology-aware gather (or scatter, its mirror image): level
/// by level, innermost first, each group gathers its members' blocks at
/// its leader over a k-nomial tree of that level's radix (2: binomial, at
/// least the group size: linear); the leaders carry them up. One level
/// holding all ranks with radix 2 is the flat binomial gather.
/*
 * Cost: per level ceil(log_k n_l) rounds of k-1 messages into each parent;
 * the inter-switch link carries each rank's block once (R-1 leader
 * messages at the top) instead of on every binomial step crossing racks.
 */
plan::Plan build_leader_gather(plan::Collective collective, int nranks,
                               int root, const algorithms::Levels &levels,
                               const std::vector<int> &radix_per_level = {},
                               std::optional<int> only_rank = std::nullopt);

} // namespace ucg::select
