// SPDX-License-Identifier: BSD-3-Clause
// Ring allreduce, allgather and reduce_scatter.
//
// Ring idea: the data is cut into P pieces (allreduce: P*S chunks, piece j
// = chunks [jS, (j+1)S); allgather/reduce_scatter: the P blocks). In
// reduce-scatter step t rank r passes one piece to r+1 and reduces the
// piece coming from r-1; after P-1 steps each rank owns one reduced piece.
// Allgather passes owned pieces around the ring for P-1 more steps.
// Cost (m bytes per rank): ring allreduce 2(P-1)(alpha + beta m/P), ring
// allgather and reduce_scatter (P-1)(alpha + beta m).
#include "algorithms/flat.h"

namespace ucg::algorithms::detail {

namespace {

int mod(int a, int p)
{
    return ((a % p) + p) % p;
}

Plan ring_allreduce(const Request &q, std::string_view name)
{
    const int p = q.nranks, s = q.segments;
    PlanBuilder pb(Collective::kAllreduce, p, 0, p * s, q.only_rank);
    auto piece = [s](int j) {
        return std::vector<Range>{plan::chunks(Buffer::kOutput, 0, j * s, s)};
    };
    // A one-rank build visits the rank and its predecessor: O(P) steps
    // of O(1), not O(P^2).
    const int me = pb.only_rank().value_or(0);
    const std::vector<int> who = visit(pb, p, {me, mod(me - 1, p)});
    for (int r : visit(pb, p, {me})) {
        pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, p * s)},
                {plan::chunks(Buffer::kOutput, 0, 0, p * s)});
    }
    for (int t = 0; t + 1 < p; ++t) {
        for (int r : who) {
            const int j = mod(r - t, p);
            pb.xfer(r, (r + 1) % p, t, piece(j), piece(j), true);
        }
    }
    for (int t = 0; t + 1 < p; ++t) {
        for (int r : who) {
            const int j = mod(r + 1 - t, p);
            pb.xfer(r, (r + 1) % p, p + t, piece(j), piece(j));
        }
    }
    return pb.take(describe(name, q));
}

Plan ring_allgather(const Request &q, std::string_view name)
{
    const int p = q.nranks, s = q.segments;
    PlanBuilder pb(Collective::kAllgather, p, 0, s, q.only_rank);
    auto block = [s](int b) {
        return std::vector<Range>{plan::chunks(Buffer::kOutput, b, 0, s)};
    };
    const int me = pb.only_rank().value_or(0);
    const std::vector<int> who = visit(pb, p, {me, mod(me - 1, p)});
    for (int r : visit(pb, p, {me})) {
        pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, s)}, block(r));
    }
    for (int t = 0; t + 1 < p; ++t) {
        for (int r : who) {
            pb.xfer(r, (r + 1) % p, t, block(mod(r - t, p)),
                    block(mod(r - t, p)));
        }
    }
    return pb.take(describe(name, q));
}

Plan ring_reduce_scatter(const Request &q, std::string_view name)
{
    const int p = q.nranks, s = q.segments;
    PlanBuilder pb(Collective::kReduceScatter, p, 0, s, q.only_rank);
    auto block = [s](int b) {
        return std::vector<Range>{plan::chunks(Buffer::kScratch, b, 0, s)};
    };
    const int me = pb.only_rank().value_or(0);
    const std::vector<int> who = visit(pb, p, {me, mod(me - 1, p)});
    const std::vector<int> self = visit(pb, p, {me});
    for (int r : self) {
        pb.scratch(r, p);
        pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, s, p)},
                {plan::chunks(Buffer::kScratch, 0, 0, s, p)});
    }
    for (int t = 0; t + 1 < p; ++t) {
        for (int r : who) {
            const int b = mod(r - t - 1, p);
            pb.xfer(r, (r + 1) % p, t, block(b), block(b), true);
        }
    }
    for (int r : self) {
        pb.copy(r, block(r), {plan::chunks(Buffer::kOutput, 0, 0, s)});
    }
    return pb.take(describe(name, q));
}

} // namespace

Plan build_ring(const Request &q, std::string_view name)
{
    switch (q.collective) {
    case Collective::kAllgather:
        return ring_allgather(q, name);
    case Collective::kReduceScatter:
        return ring_reduce_scatter(q, name);
    default:
        return ring_allreduce(q, name);
    }
}

} // namespace ucg::algorithms::detail
