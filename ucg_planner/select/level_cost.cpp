// SPDX-License-Identifier: BSD-3-Clause
// Analytic costs of level shapes and flat algorithms (alpha-beta).
#include "select/level_cost.h"

#include <algorithm>

namespace ucg::select {

using algorithms::Shape;
using cost::AlphaBeta;
using plan::Collective;

ShapeCost shape_cost(Shape shape, int radix, int64_t n, double chunk_bytes,
                     const AlphaBeta &ab, bool reduce,
                     double combine_ns_per_byte)
{
    if (n <= 1) {
        return {};
    }
    const double b = chunk_bytes;
    const double m = ab.message_ns(b);
    const double peers = double(n - 1);
    const double gamma = std::max(combine_ns_per_byte, 0.0);
    // Up the tree a rank combines each chunk it takes (gamma per byte):
    // on the path after each arrival, and on its CPU beside its port.
    const double c = reduce ? b * gamma : 0;
    switch (shape) {
    case Shape::kLinear:
        return {ab.fan_ns(peers, b) + c, ab.stage_ns(b, int(n - 1), peers * c)};
    case Shape::kKnomial: {
        // The root sends (or takes) k-1 per round, every round, for each
        // chunk.
        const int rounds = cost::knomial_rounds(n, radix);
        const int fan = int(std::min<int64_t>(radix, n)) - 1;
        return {cost::knomial_bcast_ns(n, radix, b, ab) + rounds * c,
                ab.stage_ns(b, rounds * fan, rounds * fan * c)};
    }
    case Shape::kChain:
        return {peers * (m + c), ab.stage_ns(b, 1, c)};
    case Shape::kBinary: {
        int depth = cost::knomial_rounds(n + 1, 2) - 1;
        // Down, a rank sends each chunk twice; up, once, and takes two
        // (their bytes on its port's other direction).
        const double stage =
            reduce && ab.gap_ns >= 0
                ? std::max({ab.port_ns(b), 2 * ab.beta_ns_per_byte * b,
                            3 * ab.overhead_ns + 2 * c})
                : ab.stage_ns(b, 2, 2 * c);
        return {std::max(depth, 1) * (ab.fan_ns(2, b) + 2 * c), stage};
    }
    case Shape::kShm:
        if (reduce) {
            // The senders write their slots at once; the root takes the
            // n-1 slots (o each) and combines them (gamma per byte).
            // (Without LogGP parts, as oversubscribed: no per-slot cost.)
            const double slot_o = ab.gap_ns < 0 ? 0 : ab.overhead_ns;
            const double root = peers * (slot_o + b * gamma);
            const double t = m - slot_o + root;
            return {t, std::max(ab.stage_ns(b, 1, 0), root)};
        }
        return {m, ab.stage_ns(b, 1, 0)};
    case Shape::kMcast:
        break;
    }
    // One multicast; many-to-one lands n-1 messages on the root's port.
    double t =
        reduce ? ab.alpha_ns + peers * chunk_bytes * ab.beta_ns_per_byte : m;
    return {t, t};
}

algorithms::CostInput cost_input(Collective c, int64_t p, double s,
                                 const AlphaBeta &link, int ranks_per_nic,
                                 const AlphaBeta *neighbour,
                                 double reduce_ns_per_byte,
                                 double slowest_neighbour_beta,
                                 const AlphaBeta *local, int64_t local_ranks)
{
    algorithms::CostInput in;
    in.nranks = p;
    // A barrier moves no data, whatever the request's size.
    in.block_bytes = c == Collective::kBarrier ? 0 : s;
    in.link = link;
    in.ranks_per_nic = std::max(ranks_per_nic, 1);
    // Without the r -> r+1 links, a ring's ranks all talk at once over
    // the shared NIC.
    in.neighbour = neighbour ? *neighbour : link.shared_by(in.ranks_per_nic);
    in.neighbour_slowest_ns_per_byte = slowest_neighbour_beta;
    in.local = local ? *local : link;
    in.local_ranks = local ? std::max<int64_t>(local_ranks, 1) : 1;
    in.reduce_ns_per_byte = plan::has_operator(c) ? reduce_ns_per_byte : 0;
    return in;
}

std::vector<FlatCost> flat_costs(Collective c, int64_t p, double s,
                                 const AlphaBeta &link, int ranks_per_nic,
                                 const AlphaBeta *neighbour,
                                 double reduce_ns_per_byte,
                                 double slowest_neighbour_beta,
                                 const AlphaBeta *local, int64_t local_ranks)
{
    return flat_costs(c, cost_input(c, p, s, link, ranks_per_nic, neighbour,
                                    reduce_ns_per_byte, slowest_neighbour_beta,
                                    local, local_ranks));
}

std::vector<FlatCost> flat_costs(Collective c, const algorithms::CostInput &in)
{
    std::vector<FlatCost> out;
    for (const algorithms::Algorithm &a : algorithms::registry()) {
        if (a.collective != c || !a.cost) {
            continue;
        }
        const int segments = a.segments ? a.segments(in) : 1;
        for (int radix : a.radices) {
            out.push_back(
                {a.name, radix, segments, a.cost(in, {radix, segments})});
        }
    }
    return out;
}

} // namespace ucg::select
