// SPDX-License-Identifier: BSD-3-Clause
// Exchanges: direct (linear) allgather/alltoall/reduce_scatter, pairwise
// alltoall, Bruck allgather and alltoall.
//
// Direct: every rank posts all its sends at once (to r+1, r+2, ... so that
// no rank is hit by everybody first). Pairwise: step t = 1..P-1 sends to
// r+t and receives from r-t, one step at a time. Bruck: rank r keeps its
// data rotated by r in scratch; step i (d = 2^i) moves the blocks whose
// index has bit i set (alltoall) or the first min(d, P-d) blocks
// (allgather) by distance d; a final local rotation puts them in place.
// Cost (m bytes per block): direct and pairwise P-1 messages of m bytes;
// Bruck ceil(log2 P) messages, alltoall about (P/2) m bytes each, allgather
// (P-1) m bytes in total.
#include "algorithms/flat.h"

namespace ucg::algorithms::detail {

namespace {

int mod(int a, int p)
{
    return ((a % p) + p) % p;
}

Range blk(Buffer b, int block, int nc, int nblocks = 1)
{
    return plan::chunks(b, block, 0, nc, nblocks);
}

void rotate_out(PlanBuilder &pb, int r, int p, int nc)
{
    // out[(r + j) % p] = scr[j]: two contiguous copies.
    pb.copy(r, {blk(Buffer::kScratch, 0, nc, p - r)},
            {blk(Buffer::kOutput, r, nc, p - r)});
    if (r > 0) {
        pb.copy(r, {blk(Buffer::kScratch, p - r, nc, r)},
                {blk(Buffer::kOutput, 0, nc, r)});
    }
}

Plan bruck_allgather(const Request &q, std::string_view name)
{
    const int p = q.nranks, nc = q.segments;
    PlanBuilder pb(Collective::kAllgather, p, 0, nc, q.only_rank);
    const int me = pb.only_rank().value_or(0);
    const std::vector<int> self = visit(pb, p, {me});
    for (int r : self) {
        pb.scratch(r, p);
        pb.copy(r, {blk(Buffer::kInput, 0, nc)},
                {blk(Buffer::kScratch, 0, nc)});
    }
    int step = 0;
    for (int s = 1; s < p; s *= 2, ++step) {
        const int cnt = std::min(s, p - s);
        // One rank: it sends to me - s and hears from me + s.
        for (int r : visit(pb, p, {me, (me + s) % p})) {
            pb.xfer(r, mod(r - s, p), step, {blk(Buffer::kScratch, 0, nc, cnt)},
                    {blk(Buffer::kScratch, s, nc, cnt)});
        }
    }
    for (int r : self) {
        rotate_out(pb, r, p, nc);
    }
    return pb.take(describe(name, q));
}

Plan bruck_alltoall(const Request &q, std::string_view name)
{
    const int p = q.nranks, nc = q.segments;
    PlanBuilder pb(Collective::kAlltoall, p, 0, nc, q.only_rank);
    // Every op of a step is on its own rank's side: one rank visits itself.
    const std::vector<int> self = visit(pb, p, {pb.only_rank().value_or(0)});
    for (int r : self) {
        pb.scratch(r, p);
        // scr[j] = in[(r + j) % p]
        pb.copy(r, {blk(Buffer::kInput, r, nc, p - r)},
                {blk(Buffer::kScratch, 0, nc, p - r)});
        if (r > 0) {
            pb.copy(r, {blk(Buffer::kInput, 0, nc, r)},
                    {blk(Buffer::kScratch, p - r, nc, r)});
        }
    }
    int step = 0;
    for (int s = 1; s < p; s *= 2, ++step) {
        std::vector<int> moved;
        for (int j = 0; j < p; ++j) {
            if (j & s) {
                moved.push_back(j);
            }
        }
        const auto msg = block_runs(moved, Buffer::kScratch, nc);
        // Sends first: each rank overwrites the slots it sends.
        for (int r : self) {
            pb.send(r, (r + s) % p, step, msg);
        }
        for (int r : self) {
            pb.recv(r, mod(r - s, p), step, msg);
        }
    }
    for (int r : self) {
        for (int j = 0; j < p; ++j) {
            pb.copy(r, {blk(Buffer::kScratch, j, nc)},
                    {blk(Buffer::kOutput, mod(r - j, p), nc)});
        }
    }
    return pb.take(describe(name, q));
}

} // namespace

std::vector<Range> block_runs(const std::vector<int> &blocks, Buffer buf,
                              int nchunks)
{
    std::vector<Range> out;
    for (std::size_t i = 0; i < blocks.size();) {
        std::size_t j = i + 1;
        while (j < blocks.size() && blocks[j] == blocks[j - 1] + 1) {
            ++j;
        }
        out.push_back(blk(buf, blocks[i], nchunks, static_cast<int>(j - i)));
        i = j;
    }
    return out;
}

Plan build_direct(const Request &q, std::string_view name)
{
    const int p = q.nranks, nc = q.segments;
    const Collective c = q.collective;
    PlanBuilder pb(c, p, 0, nc, q.only_rank);
    const bool ag = c == Collective::kAllgather;
    const bool rs = c == Collective::kReduceScatter;
    for (int r = 0; r < p; ++r) {
        pb.copy(r, {blk(Buffer::kInput, ag ? 0 : r, nc)},
                {blk(Buffer::kOutput, rs ? 0 : r, nc)});
    }
    // A one-rank build visits only its rank's P-1 peers (O(P), not P^2).
    for (int r = 0; r < p; ++r) {
        if (!pb.active(r)) {
            continue;
        }
        for (int t = 1; t < p; ++t) {
            const int d = (r + t) % p;
            pb.send(r, d, 0, {blk(Buffer::kInput, ag ? 0 : d, nc)});
        }
    }
    for (int r = 0; r < p; ++r) {
        if (!pb.active(r)) {
            continue;
        }
        for (int t = 1; t < p; ++t) {
            const int from = mod(r - t, p);
            pb.recv(r, from, 0, {blk(Buffer::kOutput, rs ? 0 : from, nc)}, rs);
        }
    }
    return pb.take(describe(name, q));
}

Plan build_pairwise_alltoall(const Request &q, std::string_view name)
{
    const int p = q.nranks, nc = q.segments;
    PlanBuilder pb(Collective::kAlltoall, p, 0, nc, q.only_rank);
    std::vector<int> last_recv(static_cast<std::size_t>(p), -1);
    // One rank's ops are all its own: a one-rank build visits only it
    // (O(P) in all, not O(P^2)).
    const std::vector<int> self = visit(pb, p, {pb.only_rank().value_or(0)});
    for (int r : self) {
        pb.copy(r, {blk(Buffer::kInput, r, nc)}, {blk(Buffer::kOutput, r, nc)});
    }
    for (int t = 1; t < p; ++t) {
        for (int r : self) {
            const int d = (r + t) % p;
            const int i = pb.send(r, d, t, {blk(Buffer::kInput, d, nc)});
            pb.depend(r, i, last_recv[static_cast<std::size_t>(r)]);
        }
        for (int r : self) {
            const int from = mod(r - t, p);
            last_recv[static_cast<std::size_t>(r)] =
                pb.recv(r, from, t, {blk(Buffer::kOutput, from, nc)});
        }
    }
    return pb.take(describe(name, q));
}

Plan build_bruck(const Request &q, std::string_view name)
{
    return q.collective == Collective::kAlltoall ? bruck_alltoall(q, name)
                                                 : bruck_allgather(q, name);
}

} // namespace ucg::algorithms::detail
