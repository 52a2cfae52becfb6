// SPDX-License-Identifier: BSD-3-Clause
// Analytic costs of level shapes and flat algorithms (alpha-beta).
#include "select/level_cost.h"

#include <algorithm>
#include <cmath>

namespace ucg::select {

using algorithms::Shape;
using cost::AlphaBeta;
using plan::Collective;

ShapeCost shape_cost(Shape shape, int radix, int64_t n, double chunk_bytes,
                     const AlphaBeta &ab, bool reduce)
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
    case Shape::kMcast:
        break;
    }
    // One one-to-many op; many-to-one lands n-1 messages on one port.
    double t =
        reduce ? ab.alpha_ns + peers * chunk_bytes * ab.beta_ns_per_byte : m;
    return {t, t};
}

int pipeline_segments(int64_t nranks, double bytes, const AlphaBeta &ab,
                      int max_segments)
{
    double z =
        cost::optimal_segment_bytes(std::max<int64_t>(nranks, 3), bytes, ab);
    double c = z > 0 ? std::ceil(bytes / z) : 1;
    return int(std::clamp(c, 1.0, double(max_segments)));
}

namespace {

void rooted(std::vector<FlatCost> &out, int64_t p, double s,
            const AlphaBeta &ab, const AlphaBeta &nb, bool bcast)
{
    out.push_back({"linear", 2, 1, cost::flat_bcast_ns(p, s, ab)});
    for (int k : {2, 4, 8}) {
        out.push_back({"knomial", k, 1, cost::knomial_bcast_ns(p, k, s, ab)});
    }
    int c = pipeline_segments(p, s, nb, 256);
    out.push_back(
        {"chain", 2, c, cost::chain_pipeline_segments_ns(p, s, s / c, nb)});
    int cb = std::max(1, pipeline_segments(p, s, ab, 256) / 2);
    out.push_back(
        {"binary_tree", 2, cb, cost::binary_pipeline_ns(p, s, s / cb, ab)});
    if (bcast && p > 1) {
        double pp = double(p);
        double scatter = cost::knomial_rounds(p, 2) * ab.alpha_ns +
                         (pp - 1) / pp * s * ab.beta_ns_per_byte;
        double ring = (pp - 1) * ab.message_ns(s / pp);
        out.push_back({"scatter_allgather", 2, 1, scatter + ring});
    }
}

} // namespace

std::vector<FlatCost> flat_costs(Collective c, int64_t p, double s,
                                 const AlphaBeta &link, int ranks_per_nic,
                                 const AlphaBeta *neighbour)
{
    const bool all_talk =
        c == Collective::kAllreduce || c == Collective::kAllgather ||
        c == Collective::kAlltoall || c == Collective::kReduceScatter;
    const AlphaBeta ab{link.alpha_ns,
                       link.beta_ns_per_byte *
                           (all_talk ? std::max(ranks_per_nic, 1) : 1)};
    const AlphaBeta nb = neighbour ? *neighbour : ab;
    std::vector<FlatCost> out;
    const double pp = double(p);
    const int lg = cost::knomial_rounds(p, 2);
    switch (c) {
    case Collective::kBcast:
    case Collective::kReduce:
        rooted(out, p, s, ab, nb, c == Collective::kBcast);
        if (c == Collective::kReduce) {
            // Two trees of half the ranks at most, then one message.
            for (int k : {2, 4}) {
                out.push_back(
                    {"ordered_knomial", k, 1,
                     cost::knomial_bcast_ns(p, k, s, ab) + ab.message_ns(s)});
            }
        }
        break;
    case Collective::kScan:
    case Collective::kExscan: {
        const int seg = pipeline_segments(p, s, nb, 256);
        out.push_back({"chain", 2, seg,
                       cost::chain_pipeline_segments_ns(p, s, s / seg, nb)});
        out.push_back({"recursive_doubling", 2, 1, lg * ab.message_ns(s)});
        break;
    }
    case Collective::kAllreduce:
        out.push_back({"recursive_doubling", 2, 1,
                       cost::recursive_doubling_allreduce_ns(p, s, ab)});
        out.push_back({"ring", 2, 1, cost::ring_allreduce_ns(p, s, nb)});
        out.push_back(
            {"rabenseifner", 2, 1, cost::rabenseifner_allreduce_ns(p, s, ab)});
        for (int k : {2, 4}) {
            out.push_back(
                {"knomial", k, 1, 2 * cost::knomial_bcast_ns(p, k, s, ab)});
        }
        break;
    case Collective::kBarrier:
        out.push_back({"dissemination", 2, 1, lg * ab.alpha_ns});
        out.push_back({"recursive_doubling", 2, 1, lg * ab.alpha_ns});
        out.push_back(
            {"knomial", 4, 1, 2 * cost::knomial_bcast_ns(p, 4, 0, ab)});
        break;
    case Collective::kGather:
    case Collective::kScatter:
        out.push_back({"linear", 2, 1, (pp - 1) * ab.message_ns(s)});
        out.push_back({"knomial", 2, 1, cost::binomial_gather_ns(p, s, ab)});
        break;
    case Collective::kAllgather:
        out.push_back({"linear", 2, 1, (pp - 1) * ab.message_ns(s)});
        out.push_back({"ring", 2, 1, (pp - 1) * nb.message_ns(s)});
        out.push_back({"bruck", 2, 1,
                       lg * ab.alpha_ns + (pp - 1) * s * ab.beta_ns_per_byte});
        out.push_back({"recursive_doubling", 2, 1,
                       lg * ab.alpha_ns + (pp - 1) * s * ab.beta_ns_per_byte});
        break;
    case Collective::kAlltoall:
        out.push_back({"linear", 2, 1, (pp - 1) * ab.message_ns(s)});
        out.push_back({"pairwise", 2, 1, (pp - 1) * ab.message_ns(s)});
        out.push_back({"bruck", 2, 1, lg * ab.message_ns(s * pp / 2)});
        break;
    case Collective::kReduceScatter:
        out.push_back({"linear", 2, 1, (pp - 1) * ab.message_ns(s)});
        out.push_back({"ring", 2, 1, (pp - 1) * nb.message_ns(s)});
        break;
    }
    return out;
}

} // namespace ucg::select
