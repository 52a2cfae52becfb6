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

/// The registry's "leader" gather or scatter (algorithms/leader.cpp) with
/// a k-nomial radix per level (none: binomial; at least the group size:
/// linear).
plan::Plan build_leader_gather(plan::Collective collective, int nranks,
                               int root, const algorithms::Levels &levels,
                               const std::vector<int> &radix_per_level = {},
                               std::optional<int> only_rank = std::nullopt);

} // namespace ucg::select
