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
    const double m = ab.message_ns(chunk_bytes);
    const double peers = double(n - 1);
    switch (shape) {
    case Shape::kLinear:
        return {peers * m, peers * m};
    case Shape::kKnomial: {
        double t = cost::knomial_bcast_ns(n, radix, chunk_bytes, ab);
        return {t, t};
    }
    case Shape::kChain:
        return {peers * m, m};
    case Shape::kBinary: {
        int depth = cost::knomial_rounds(n + 1, 2) - 1;
        return {std::max(depth, 1) * 2 * m, 2 * m};
    }
    case Shape::kShm:
        if (reduce) {
            // The senders copy into their slots at once; the root
            // combines the n-1 slots (gamma each) as they fill.
            const double t =
                m + peers * chunk_bytes * std::max(combine_ns_per_byte, 0.0);
            return {t, t};
        }
        return {m, m};
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
                                 double reduce_ns_per_byte)
{
    const bool all_talk =
        c == Collective::kAllreduce || c == Collective::kAllgather ||
        c == Collective::kAlltoall || c == Collective::kReduceScatter;
    algorithms::CostInput in;
    in.nranks = p;
    // A barrier moves no data, whatever the request's size.
    in.block_bytes = c == Collective::kBarrier ? 0 : s;
    in.link = {link.alpha_ns, link.beta_ns_per_byte *
                                  (all_talk ? std::max(ranks_per_nic, 1) : 1)};
    in.neighbour = neighbour ? *neighbour : in.link;
    in.ranks_per_nic = all_talk ? 1 : std::max(ranks_per_nic, 1);
    in.reduce_ns_per_byte = plan::has_operator(c) ? reduce_ns_per_byte : 0;
    return in;
}

std::vector<FlatCost> flat_costs(Collective c, int64_t p, double s,
                                 const AlphaBeta &link, int ranks_per_nic,
                                 const AlphaBeta *neighbour,
                                 double reduce_ns_per_byte)
{
    const algorithms::CostInput in =
        cost_input(c, p, s, link, ranks_per_nic, neighbour, reduce_ns_per_byte);
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
