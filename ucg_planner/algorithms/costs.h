// SPDX-License-Identifier: BSD-3-Clause
// Internal to algorithms/: the cost function of every flat algorithm the
// registry lists (alpha-beta closed forms from cost/formulas.h).
#pragma once

#include "algorithms/registry.h"

namespace ucg::algorithms::detail::costs {

using Fn = double (*)(const CostInput &, Variant);

// Bcast and reduce trees (reduce runs the same tree backwards).
double linear(const CostInput &in, Variant v);
// The same trees into the root (reduce, gather): no sender's gap queues.
double linear_in(const CostInput &in, Variant v);
double knomial_in(const CostInput &in, Variant v);
double direct_exchange(const CostInput &in, Variant v);
double pairwise_exchange(const CostInput &in, Variant v);
double knomial(const CostInput &in, Variant v);
double chain(const CostInput &in, Variant v);
// The chain into the root (reduce): hop i leaves rank P-1-i.
double chain_in(const CostInput &in, Variant v);
double binary_tree(const CostInput &in, Variant v);
double binary_tree_reduce(const CostInput &in, Variant v);
int chain_segments(const CostInput &in);
int binary_segments(const CostInput &in);
// Chunks that keep every message of a linear gather's block below
// CostInput::eager_bytes, for every size the block's plan serves: the
// root's many rendezvous over sockets cost up to twice its eager
// messages (decision 0065). 1 without such a limit.
int eager_segments(const CostInput &in);
double scatter_allgather(const CostInput &in, Variant v);
double two_tree(const CostInput &in, Variant v);
int two_tree_segments(const CostInput &in);
double ordered_reduce(const CostInput &in, Variant v);
double rabenseifner_reduce(const CostInput &in, Variant v);
double binomial_gather(const CostInput &in, Variant v);
// The same tree from the root (scatter).
double binomial_scatter(const CostInput &in, Variant v);

// Allreduce and barrier (barrier: block_bytes 0).
double twice_linear(const CostInput &in, Variant v);
double twice_knomial(const CostInput &in, Variant v);
double twice_chain(const CostInput &in, Variant v);
double twice_binary_tree(const CostInput &in, Variant v);
double recursive_k(const CostInput &in, Variant v);
double ring_allreduce(const CostInput &in, Variant v);
double rabenseifner_allreduce(const CostInput &in, Variant v);
double dissemination(const CostInput &in, Variant v);

// Exchanges and scans (s bytes per rank's block).
double ring_exchange(const CostInput &in, Variant v);
double bruck_allgather(const CostInput &in, Variant v);
double recursive_k_allgather(const CostInput &in, Variant v);
double bruck_alltoall(const CostInput &in, Variant v);
double halving_reduce_scatter(const CostInput &in, Variant v);
double recursive_doubling_scan(const CostInput &in, Variant v);

} // namespace ucg::algorithms::detail::costs
