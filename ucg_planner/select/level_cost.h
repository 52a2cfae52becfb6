// SPDX-License-Identifier: BSD-3-Clause
// Analytic costs the selector compares: flat algorithms over the whole
// group and one level's shape per chunk (latency and pipeline stage).
#pragma once

#include "algorithms/registry.h"
#include "cost/formulas.h"

#include <string>
#include <vector>

namespace ucg::select {

/// A shape on one level for one chunk: `latency_ns` until the last member
/// has it, `stage_ns` between chunks once the pipeline is full.
struct ShapeCost {
    double latency_ns = 0;
    double stage_ns = 0;
};

/// One-to-many (bcast) or many-to-one (reduce) over a group of n; a shm
/// reduce's root combines n-1 chunks at `combine_ns_per_byte` (gamma).
ShapeCost shape_cost(algorithms::Shape shape, int radix, int64_t n,
                     double chunk_bytes, const cost::AlphaBeta &ab, bool reduce,
                     double combine_ns_per_byte = 0);

/// A flat algorithm of the registry: name, radix, segments, predicted time.
struct FlatCost {
    std::string algorithm;
    int radix = 2;
    int segments = 1;
    double ns = 0;
};

/// What the registry's cost functions get for `c` over P ranks of `bytes`
/// each (see flat_costs()).
algorithms::CostInput
cost_input(plan::Collective c, int64_t nranks, double bytes,
           const cost::AlphaBeta &ab, int ranks_per_nic,
           const cost::AlphaBeta *neighbour, double reduce_ns_per_byte = 0,
           double slowest_neighbour_beta = 0,
           const cost::AlphaBeta *local = nullptr, int64_t local_ranks = 1);

/// The registry's flat algorithms for `c` over P ranks: each entry with a
/// cost function (Algorithm::cost), at each radix it lists, costed with
/// `ab` (block bytes per rank). In the algorithms where every rank talks
/// at once the `ranks_per_nic` ranks of a host share its NIC (gap and
/// beta multiplied by it). `neighbour`, when given, costs the algorithms that
/// only talk to rank r+1 (ring, chain): mean alpha and beta of those links;
/// `slowest_neighbour_beta` the slowest one's beta (a chain's pace).
/// `reduce_ns_per_byte` (gamma) prices what the collectives with an
/// operator combine. `local`, when given, is the link inside a host of
/// `local_ranks` consecutive ranks (CostInput::local).
std::vector<FlatCost>
flat_costs(plan::Collective c, int64_t nranks, double bytes,
           const cost::AlphaBeta &ab, int ranks_per_nic = 1,
           const cost::AlphaBeta *neighbour = nullptr,
           double reduce_ns_per_byte = 0, double slowest_neighbour_beta = 0,
           const cost::AlphaBeta *local = nullptr, int64_t local_ranks = 1);

/// The same for a cost input the caller completed (its root, placement,
/// all-pairs link: CostInput).
std::vector<FlatCost> flat_costs(plan::Collective c,
                                 const algorithms::CostInput &in);

} // namespace ucg::select
