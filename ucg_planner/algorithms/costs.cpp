// SPDX-License-Identifier: BSD-3-Clause
// The cost function of every flat algorithm: the input's link (and, for
// ring and chain, its r -> r+1 links) in the closed forms of
// cost/formulas.h. Each file's header comment derives its form.
#include "algorithms/costs.h"

#include <algorithm>
#include <bit>

namespace ucg::algorithms::detail::costs {

namespace {

constexpr int kMaxSegments = 256;

// The link with its NIC shared by the host's ranks, for the algorithms
// whose ranks all talk at once.
cost::AlphaBeta shared(const CostInput &in)
{
    return in.link.shared_by(in.ranks_per_nic);
}

// Where a host's ranks all send at once, the last waits once behind the
// others' gaps at the NIC; after that they stay staggered (the bytes of
// every round still queue: shared()).
double nic_queue(const CostInput &in)
{
    return in.link.gap_ns > 0 && in.ranks_per_nic > 1
               ? double(in.ranks_per_nic - 1) * in.link.gap_ns
               : 0;
}

// `far` between hosts, and the host's own link for the steps among the
// consecutive ranks of one host (CostInput::local_ranks; with 1 every
// step is far).
cost::Links links(const CostInput &in, const cost::AlphaBeta &far)
{
    return cost::Links(far, in.local, in.local_ranks);
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

// The neighbour link at the slowest one's byte rate.
cost::AlphaBeta slowest_neighbour(const CostInput &in)
{
    return in.neighbour.with_beta(std::max(in.neighbour.beta_ns_per_byte,
                                           in.neighbour_slowest_ns_per_byte));
}

// One ring step of b bytes: a message over the mean link (each step waits
// for the previous one's arrival), or the slowest link's sender's pace.
double ring_step(const CostInput &in, double b, double cpu)
{
    return std::max(in.neighbour.message_ns(b) + cpu,
                    slowest_neighbour(in).stage_ns(b, 1, cpu));
}

// A root taking blocks it combines (c ns each): they land one issue
// apart, or one overhead and combine apart where that is longer; the
// last one's combine follows it (added by the caller).
cost::AlphaBeta fan_in(cost::AlphaBeta ab, double c)
{
    if (ab.gap_ns >= 0) {
        ab.overhead_ns += c;
    }
    return ab;
}

cost::Links fan_in_links(const CostInput &in, double c)
{
    return cost::Links(fan_in(in.link, c), fan_in(in.local, c), in.local_ranks);
}

// Cyclic shifts (Bruck, dissemination) of radix k: round j talks at
// distance k^j. On hosts of local_ranks consecutive ranks a round at
// distance >= local_ranks crosses hosts for every rank; the rounds below
// cross for a few ranks each, and one rank's chain back through them
// crosses at most once (the host boundaries are local_ranks apart). The
// critical path: `far` for the wide rounds and one narrow round, `near`
// for the other narrow ones.
double shift_rounds(const CostInput &in, int radix, double far, double near)
{
    const int k = std::max(radix, 2);
    const int rounds = cost::knomial_rounds(in.nranks, k);
    int narrow = 0;
    for (int64_t d = 1; narrow < rounds && d < in.local_ranks; d *= k) {
        ++narrow;
    }
    return double(rounds - narrow + (narrow > 0 ? 1 : 0)) * far +
           double(std::max(narrow - 1, 0)) * near;
}

} // namespace

double direct_exchange(const CostInput &in, Variant)
{
    // Every rank sends P-1 blocks and takes P-1: after the first message
    // each further one costs the busier of its port and its CPU (an
    // overhead at each end, and the combine of reduce_scatter).
    if (in.nranks <= 1) {
        return 0;
    }
    // The combine holds the CPU while the port could send: it adds.
    const double s = in.block_bytes;
    const cost::AlphaBeta ab = shared(in);
    return nic_queue(in) + ab.message_ns(s) + combine(in, s) +
           std::max(peers(in) - 1, 0.0) *
               (ab.stage_ns(s, 1, 0) + combine(in, s));
}

double linear(const CostInput &in, Variant)
{
    // Reduce: the root combines every other rank's block as it lands.
    const double c = combine(in, in.block_bytes);
    return cost::flat_bcast_ns(in.nranks, in.block_bytes, fan_in(in.link, c)) +
           (in.nranks > 1 ? c : 0);
}

double knomial(const CostInput &in, Variant v)
{
    const double c = combine(in, in.block_bytes);
    return cost::knomial_bcast_ns(in.nranks, v.radix, in.block_bytes,
                                  fan_in_links(in, c)) +
           cost::knomial_rounds(in.nranks, v.radix) * c;
}

double chain(const CostInput &in, Variant v)
{
    // P-1 hops; each rank combines its segment before passing it on. The
    // first segment crosses every link (their mean); the others follow
    // at the pace of the slowest.
    const double z = in.block_bytes / v.segments;
    const double cpu = combine(in, z);
    return cost::pipelined_ns(peers(in), 1, 1, z, cpu, in.neighbour) +
           double(v.segments - 1) * slowest_neighbour(in).stage_ns(z, 1, cpu);
}

double binary_tree(const CostInput &in, Variant v)
{
    // floor(log2 P) hops of two children's segments each.
    const double z = in.block_bytes / v.segments;
    const double hops = std::max(steps(in) - 1, 1.0);
    // Once the pipeline is full every rank forwards at once: the host's
    // ranks share its NIC.
    return in.nranks <= 1
               ? 0
               : cost::pipelined_ns(hops, 2, v.segments, z, combine(in, 2 * z),
                                    v.segments > 1 ? shared(in) : in.link);
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
    // A binomial scatter of the P pieces, then a ring allgather of them
    // (its steps wait on each other around the ring: ring_step).
    const double p = double(in.nranks), s = in.block_bytes;
    return cost::binomial_gather_ns(in.nranks, s / p, links(in, in.link)) +
           (p - 1) * ring_step(in, s / p, 0);
}

double two_tree(const CostInput &in, Variant v)
{
    // Two in-order trees over consecutive ranks: the first chunk crosses
    // the trees' 2 log2 P levels (the top ones between hosts: the far
    // link); the others follow at the pace of the links most edges use,
    // between neighbours (a ring's r -> r+1 links).
    if (in.nranks <= 1) {
        return 0;
    }
    const int chunks = std::max(v.segments, 1);
    const double z = in.block_bytes / chunks;
    const int depth = int(std::bit_width(uint64_t(in.nranks - 1))) - 1;
    const int near =
        in.local_ranks > 1
            ? std::min(depth, int(std::bit_width(uint64_t(in.local_ranks))) - 1)
            : 0;
    const double fill = depth < 1
                            ? in.link.message_ns(z)
                            : 2 * ((depth - near) * in.link.message_ns(z) +
                                   near * in.local.message_ns(z));
    // Per chunk a host's NIC carries the trees' edges into and out of its
    // block of ranks: about three (simulated on nodes=8,ppn=8: 2.5-3 far
    // chunks a step); one where each rank is its own host.
    const int edges = in.local_ranks > 1 ? 3 : 1;
    return fill + double(chunks - 1) *
                      std::max(slowest_neighbour(in).stage_ns(z, 1, 0),
                               edges * in.link.stage_ns(z, 1, 0));
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
    // Two trees of half the ranks at most, side by side, then one message.
    CostInput half = in;
    half.nranks = (in.nranks + 1) / 2;
    return knomial(half, v) + (in.nranks > 1
                                   ? in.link.message_ns(in.block_bytes) +
                                         combine(in, in.block_bytes)
                                   : 0);
}

double rabenseifner_reduce(const CostInput &in, Variant)
{
    // Halving (every rank talks: the shared NIC) combines (P-1)/P of a
    // block at each rank; the binomial gather of the pieces to the root
    // runs the same steps back, one talker per pair. The fold's bytes
    // queue at the receiver's port ahead of the first step's.
    if (in.nranks <= 1) {
        return 0;
    }
    const int64_t pk = cost::largest_power(in.nranks, 2);
    const double p = double(pk), s = in.block_bytes;
    const cost::AlphaBeta far = shared(in);
    return nic_queue(in) + cost::halving_ns(pk, s, links(in, far)) +
           cost::halving_ns(pk, s, links(in, in.link)) +
           (pk < in.nranks ? far.alpha_ns + 2 * s * far.beta_ns_per_byte : 0) +
           combine(in, (p - 1) / p * s);
}

double binomial_gather(const CostInput &in, Variant)
{
    return cost::binomial_gather_ns(in.nranks, in.block_bytes,
                                    links(in, in.link));
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
    return nic_queue(in) +
           cost::recursive_k_allreduce_ns(in.nranks, v.radix, in.block_bytes,
                                          links(in, shared(in))) +
           combine(in, (rounds * (v.radix - 1) + 1) * in.block_bytes);
}

double ring_allreduce(const CostInput &in, Variant)
{
    // P-1 reduce-scatter steps, then P-1 allgather steps, of s/P each.
    const double b = in.block_bytes / double(std::max<int64_t>(in.nranks, 1));
    return peers(in) * (ring_step(in, b, combine(in, b)) + ring_step(in, b, 0));
}

double rabenseifner_allreduce(const CostInput &in, Variant)
{
    const double p = double(std::max<int64_t>(in.nranks, 1));
    return nic_queue(in) +
           cost::rabenseifner_allreduce_ns(in.nranks, in.block_bytes,
                                           links(in, shared(in))) +
           combine(in, (p - 1) / p * in.block_bytes);
}

double dissemination(const CostInput &in, Variant v)
{
    // Every rank sends k-1 messages each round, to ranks r + i k^j.
    const int fan = std::max(v.radix, 2) - 1;
    return nic_queue(in) + shift_rounds(in, v.radix, shared(in).fan_ns(fan, 0),
                                        in.local.fan_ns(fan, 0));
}

double pairwise_exchange(const CostInput &in, Variant)
{
    // P-1 steps, each waiting for the previous step's exchange.
    return nic_queue(in) + peers(in) * shared(in).message_ns(in.block_bytes);
}

double ring_exchange(const CostInput &in, Variant)
{
    // Reduce-scatter: each step combines one block.
    return peers(in) *
           ring_step(in, in.block_bytes, combine(in, in.block_bytes));
}

double bruck_allgather(const CostInput &in, Variant)
{
    const cost::AlphaBeta ab = shared(in);
    return nic_queue(in) + shift_rounds(in, 2, ab.alpha_ns, in.local.alpha_ns) +
           double(std::max<int64_t>(in.nranks - 1, 0)) * in.block_bytes *
               ab.beta_ns_per_byte;
}

double recursive_k_allgather(const CostInput &in, Variant v)
{
    return nic_queue(in) +
           cost::recursive_k_allgather_ns(in.nranks, v.radix, in.block_bytes,
                                          links(in, shared(in)));
}

double bruck_alltoall(const CostInput &in, Variant)
{
    const double half = in.block_bytes * double(in.nranks) / 2;
    return nic_queue(in) + shift_rounds(in, 2, shared(in).message_ns(half),
                                        in.local.message_ns(half));
}

double halving_reduce_scatter(const CostInput &in, Variant)
{
    return nic_queue(in) +
           cost::halving_reduce_scatter_ns(in.nranks, in.block_bytes,
                                           links(in, shared(in))) +
           combine(in, peers(in) * in.block_bytes);
}

double recursive_doubling_scan(const CostInput &in, Variant)
{
    return steps(in) *
           (in.link.message_ns(in.block_bytes) + combine(in, in.block_bytes));
}

} // namespace ucg::algorithms::detail::costs
