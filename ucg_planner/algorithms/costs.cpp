// SPDX-License-Identifier: BSD-3-Clause
// The cost function of every flat algorithm: the input's link (and, for
// ring and chain, its r -> r+1 links) in the closed forms of
// cost/formulas.h. Each file's header comment derives its form.
#include "algorithms/costs.h"

#include <algorithm>

namespace ucg::algorithms::detail::costs {

namespace {

constexpr int kMaxSegments = 256;

// The link with its NIC shared by the host's ranks (rooted collectives
// whose ranks all talk at once).
cost::AlphaBeta shared(const CostInput &in)
{
    return {in.link.alpha_ns,
            in.link.beta_ns_per_byte * std::max(in.ranks_per_nic, 1)};
}

double steps(const CostInput &in)
{
    return double(cost::knomial_rounds(in.nranks, 2));
}

// Combining `bytes` (gamma; 0 without an operator).
double combine(const CostInput &in, double bytes)
{
    return in.reduce_ns_per_byte * bytes;
}

double peers(const CostInput &in)
{
    return double(std::max<int64_t>(in.nranks - 1, 0));
}

// The same algorithm moving data only (the bcast half of an allreduce).
CostInput no_combine(CostInput in)
{
    in.reduce_ns_per_byte = 0;
    return in;
}

} // namespace

double linear(const CostInput &in, Variant)
{
    // Reduce: the root combines every other rank's block.
    return cost::flat_bcast_ns(in.nranks, in.block_bytes, in.link) +
           combine(in, peers(in) * in.block_bytes);
}

double knomial(const CostInput &in, Variant v)
{
    const double children =
        cost::knomial_rounds(in.nranks, v.radix) * double(v.radix - 1);
    return cost::knomial_bcast_ns(in.nranks, v.radix, in.block_bytes, in.link) +
           combine(in, children * in.block_bytes);
}

double chain(const CostInput &in, Variant v)
{
    const double s = in.block_bytes;
    // Each stage combines its segment before passing it on.
    const double stages = std::max(peers(in) - 1, 0.0) + v.segments;
    return cost::chain_pipeline_segments_ns(in.nranks, s, s / v.segments,
                                            in.neighbour) +
           combine(in, stages * s / v.segments);
}

double binary_tree(const CostInput &in, Variant v)
{
    const double s = in.block_bytes;
    // Two children's segments per stage.
    const double stages = v.segments + steps(in);
    return cost::binary_pipeline_ns(in.nranks, s, s / v.segments, in.link) +
           combine(in, 2 * stages * s / v.segments);
}

int chain_segments(const CostInput &in)
{
    return cost::pipeline_segments(in.nranks, in.block_bytes, in.neighbour,
                                   kMaxSegments);
}

int binary_segments(const CostInput &in)
{
    return std::max(1, cost::pipeline_segments(in.nranks, in.block_bytes,
                                               in.link, kMaxSegments) /
                           2);
}

double scatter_allgather(const CostInput &in, Variant)
{
    if (in.nranks <= 1) {
        return 0;
    }
    const double p = double(in.nranks), s = in.block_bytes;
    const double scatter = steps(in) * in.link.alpha_ns +
                           (p - 1) / p * s * in.link.beta_ns_per_byte;
    return scatter + (p - 1) * in.link.message_ns(s / p);
}

double two_tree(const CostInput &in, Variant v)
{
    return cost::two_tree_bcast_ns(in.nranks, in.block_bytes, v.segments,
                                   shared(in));
}

int two_tree_segments(const CostInput &in)
{
    // A chain of 2 floor(log2(P-1)) + 2 stages has the trees' fill.
    const int64_t depth = cost::knomial_rounds(in.nranks, 2);
    return cost::pipeline_segments(2 * depth + 2, in.block_bytes, in.link,
                                   kMaxSegments);
}

double ordered_reduce(const CostInput &in, Variant v)
{
    // Two trees of half the ranks at most, then one message.
    return knomial(in, v) + in.link.message_ns(in.block_bytes) +
           combine(in, in.block_bytes);
}

double rabenseifner_reduce(const CostInput &in, Variant)
{
    // Halving combines (P-1)/P of a block at each rank.
    const double p = double(std::max<int64_t>(in.nranks, 1));
    return cost::rabenseifner_reduce_ns(in.nranks, in.block_bytes, shared(in)) +
           combine(in, (p - 1) / p * in.block_bytes);
}

double binomial_gather(const CostInput &in, Variant)
{
    return cost::binomial_gather_ns(in.nranks, in.block_bytes, in.link);
}

double twice_linear(const CostInput &in, Variant v)
{
    return linear(in, v) + linear(no_combine(in), v);
}

double twice_knomial(const CostInput &in, Variant v)
{
    return knomial(in, v) + knomial(no_combine(in), v);
}

double twice_chain(const CostInput &in, Variant v)
{
    return chain(in, v) + chain(no_combine(in), v);
}

double twice_binary_tree(const CostInput &in, Variant v)
{
    return binary_tree(in, v) + binary_tree(no_combine(in), v);
}

double recursive_k(const CostInput &in, Variant v)
{
    // k-1 blocks per round, and the fold's one.
    const double rounds = cost::knomial_rounds(in.nranks, v.radix);
    return cost::recursive_k_allreduce_ns(in.nranks, v.radix, in.block_bytes,
                                          in.link) +
           combine(in, (rounds * (v.radix - 1) + 1) * in.block_bytes);
}

double ring_allreduce(const CostInput &in, Variant)
{
    const double p = double(std::max<int64_t>(in.nranks, 1));
    return cost::ring_allreduce_ns(in.nranks, in.block_bytes, in.neighbour) +
           combine(in, (p - 1) / p * in.block_bytes);
}

double rabenseifner_allreduce(const CostInput &in, Variant)
{
    const double p = double(std::max<int64_t>(in.nranks, 1));
    return cost::rabenseifner_allreduce_ns(in.nranks, in.block_bytes, in.link) +
           combine(in, (p - 1) / p * in.block_bytes);
}

double dissemination(const CostInput &in, Variant v)
{
    return cost::knomial_bcast_ns(in.nranks, v.radix, 0, in.link);
}

double ring_exchange(const CostInput &in, Variant)
{
    // Reduce-scatter: each step combines one block.
    return peers(in) * (in.neighbour.message_ns(in.block_bytes) +
                        combine(in, in.block_bytes));
}

double bruck_allgather(const CostInput &in, Variant)
{
    return steps(in) * in.link.alpha_ns +
           double(std::max<int64_t>(in.nranks - 1, 0)) * in.block_bytes *
               in.link.beta_ns_per_byte;
}

double recursive_k_allgather(const CostInput &in, Variant v)
{
    return cost::recursive_k_allgather_ns(in.nranks, v.radix, in.block_bytes,
                                          in.link);
}

double bruck_alltoall(const CostInput &in, Variant)
{
    return steps(in) *
           in.link.message_ns(in.block_bytes * double(in.nranks) / 2);
}

double halving_reduce_scatter(const CostInput &in, Variant)
{
    return cost::halving_reduce_scatter_ns(in.nranks, in.block_bytes, in.link) +
           combine(in, peers(in) * in.block_bytes);
}

double recursive_doubling_scan(const CostInput &in, Variant)
{
    return steps(in) *
           (in.link.message_ns(in.block_bytes) + combine(in, in.block_bytes));
}

} // namespace ucg::algorithms::detail::costs
