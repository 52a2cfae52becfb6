// SPDX-License-Identifier: BSD-3-Clause
// Order-preserving builders: scan and exscan (pipelined chain, recursive
// doubling) and a k-nomial reduce to any root. Every output combines the
// ranks' inputs in rank order, so they are right for non-commutative
// operators (Algorithm::preserves_order; the property suite proves it with
// the ordered symbolic mode).
//
// Idea: combine only contiguous rank intervals, the lower one on the left.
// A value received from lower ranks goes in front (src_first), one from
// higher ranks behind.
// Chain scan: rank r receives the prefix of ranks 0..r-1 from r-1, puts it
// in front of its input and passes the result on, chunk by chunk.
// Recursive doubling (Hillis and Steele): before the step of distance d
// rank r holds the combination of ranks [r-d+1, r] (clipped at 0); it
// sends it to r+d and puts what r-d sends in front. Exscan keeps that
// partial value in scratch and its output apart: the first value received
// (ranks [r-d, r-1] at d = 1) starts it, later ones go in front.
// Reduce: ranks [root, P) reduce over a k-nomial tree rooted at the root,
// ranks [0, root) over one rooted at 0, whose result the root puts in
// front. Children join a parent in ascending order, so each subtree is an
// interval combined left to right.
// Cost (P ranks, m bytes, C chunks): chain (P-1+C-1)(alpha + beta m/C);
// recursive doubling ceil(log2 P)(alpha + beta m) (exscan with one more
// local reduction per step); reduce ceil(log_k max(root, P-root)) rounds
// of up to k-1 messages, plus one message when root > 0.
#include "algorithms/flat.h"

namespace ucg::algorithms::detail {

namespace {

Range slot(Buffer b, int block, Span s)
{
    return plan::chunks(b, block, s.chunk, s.n);
}

} // namespace

Plan build_chain_scan(const Request &q, std::string_view name)
{
    const bool ex = q.collective == Collective::kExscan;
    const int p = q.nranks, nc = q.segments;
    PlanBuilder pb(q.collective, p, 0, nc, q.only_rank);
    const Span all{0, nc};
    // What a rank passes on: its output (scan) or, for exscan, its
    // input (rank 0) or its prefix with its input behind (scratch).
    auto carry = [ex, p](int r) {
        return !ex ? Buffer::kOutput
                   : (r == 0 || r + 1 == p ? Buffer::kInput : Buffer::kScratch);
    };
    for (int r = 0; r < p; ++r) {
        if (!ex) {
            pb.copy(r, {slot(Buffer::kInput, 0, all)},
                    {slot(Buffer::kOutput, 0, all)});
        } else if (carry(r) == Buffer::kScratch) {
            pb.scratch(r, 1);
            pb.copy(r, {slot(Buffer::kInput, 0, all)},
                    {slot(Buffer::kScratch, 0, all)});
        }
    }
    for (int c = 0; c < nc; ++c) {
        const Span one{c, 1};
        for (int r = 0; r + 1 < p; ++r) {
            pb.send(r, r + 1, 0, {slot(carry(r), 0, one)});
            // scan: out = prefix (+) out; exscan: out = prefix.
            pb.recv(r + 1, r, 0, {slot(Buffer::kOutput, 0, one)}, !ex, true);
            if (carry(r + 1) == Buffer::kScratch) {
                pb.copy(r + 1, {slot(Buffer::kOutput, 0, one)},
                        {slot(Buffer::kScratch, 0, one)}, true, true);
            }
        }
    }
    return pb.take(describe(name, q));
}

Plan build_rd_scan(const Request &q, std::string_view name)
{
    const bool ex = q.collective == Collective::kExscan;
    const int p = q.nranks, nc = q.segments;
    PlanBuilder pb(q.collective, p, 0, nc, q.only_rank);
    const Span all{0, nc};
    const Range in = slot(Buffer::kInput, 0, all);
    const Range out = slot(Buffer::kOutput, 0, all);
    // Exscan: scratch 0 holds the partial value, scratch 1 what arrives.
    const Range part = ex ? slot(Buffer::kScratch, 0, all) : out;
    const Range tmp = slot(Buffer::kScratch, 1, all);
    for (int r = 0; r < p; ++r) {
        pb.scratch(r, ex && p > 1 ? 2 : 0);
        if (!ex || r + 1 < p) {
            pb.copy(r, {in}, {part});
        }
    }
    int step = 0;
    for (int d = 1; d < p; d *= 2, ++step) {
        for (int r = 0; r + d < p; ++r) {
            pb.send(r, r + d, step, {part});
        }
        for (int r = d; r < p; ++r) {
            if (!ex) {
                pb.recv(r, r - d, step, {out}, true, true);
                continue;
            }
            // The first value received starts the output; later ones go
            // in front of it. The partial value is needed while r sends.
            const bool first = d == 1;
            pb.recv(r, r - d, step, {first ? out : tmp});
            if (!first) {
                pb.copy(r, {tmp}, {out}, true, true);
            }
            if (r + 2 * d < p) {
                pb.copy(r, {first ? out : tmp}, {part}, true, true);
            }
        }
    }
    return pb.take(describe(name, q));
}

namespace {

// Reduces ranks [lo, lo + n) into rank lo's place over a k-nomial tree,
// children in ascending order.
void interval_reduce(PlanBuilder &pb, int lo, int n, int radix,
                     const PlaceFn &place)
{
    const long long k = std::max(radix, 2);
    const Span all{0, pb.nchunks()};
    for (long long s = 1; s < n; s *= k) {
        for (long long v = 0; v < n; v += s * k) {
            for (long long j = 1; j < k && v + j * s < n; ++j) {
                const int from = lo + static_cast<int>(v + j * s);
                const int to = lo + static_cast<int>(v);
                pb.xfer(from, to, static_cast<int>(s), {at(place(from), all)},
                        {at(place(to), all)}, true);
            }
        }
    }
}

} // namespace

Plan build_ordered_reduce(const Request &q, std::string_view name)
{
    const int p = q.nranks, root = q.root, nc = q.segments;
    PlanBuilder pb(Collective::kReduce, p, root, nc, q.only_rank);
    const PlaceFn place = reduce_place(pb, root);
    const Span all{0, nc};
    for (int r = 0; r < p; ++r) {
        pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, nc)},
                {at(place(r), all)});
    }
    interval_reduce(pb, root, p - root, q.radix, place);
    interval_reduce(pb, 0, root, q.radix, place);
    if (root > 0) {
        pb.send(0, root, 0, {at(place(0), all)});
        pb.recv(root, 0, 0, {at(place(root), all)}, true, true);
    }
    return pb.take(describe(name, q));
}

} // namespace ucg::algorithms::detail
