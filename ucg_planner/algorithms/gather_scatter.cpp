// SPDX-License-Identifier: BSD-3-Clause
// K-nomial gather and scatter (radix >= P: linear).
//
// Idea: relative rank v (0 = root) owns the k-nomial subtree [v, v + n_v);
// in gather it collects its subtree's blocks in scratch, ordered by
// relative rank, and sends them to its parent in one message; scatter is
// the mirror image. The root's blocks are in real rank order, so a subtree
// that wraps past rank P-1 is two ranges there.
// Vocabulary: subtree, relative rank, block (one rank's message).
// Cost (m bytes per block): ceil(log_k P) rounds; the root receives (or
// sends) (P-1) m bytes in (k-1) ceil(log_k P) messages; linear: P-1
// messages of m bytes at the root. A gather with segments sends each
// edge's blocks chunk by chunk, one message per chunk (decision 0065).
#include "algorithms/flat.h"

#include <algorithm>

namespace ucg::algorithms::detail {

namespace {

// Real blocks of relative ranks [a, a + len) in a buffer ordered by rank.
std::vector<Range> real_blocks(Buffer buf, int root, int p, int a, int len,
                               int nc)
{
    const int start = (a + root) % p;
    if (start + len <= p) {
        return {plan::chunks(buf, start, 0, nc, len)};
    }
    return {plan::chunks(buf, start, 0, nc, p - start),
            plan::chunks(buf, 0, 0, nc, start + len - p)};
}

struct Knomial {
    int p, root, radix, nc;
    Tree tree;
    int size(int v) const { return knomial_subtree(p, radix, v); }
    int rank(int v) const { return (v + root) % p; }
    // Where relative rank v keeps relative blocks [a, a + len) of its
    // subtree: the root in its buffer, others in scratch.
    std::vector<Range> hold(int v, Buffer root_buf, int a, int len) const
    {
        if (v == 0) {
            return real_blocks(root_buf, root, p, a, len, nc);
        }
        return {plan::chunks(Buffer::kScratch, a - v, 0, nc, len)};
    }
};

// Chunk c of every block of `ranges`.
std::vector<Range> chunk_of(std::vector<Range> ranges, int c)
{
    for (Range &r : ranges) {
        r.chunk = c;
        r.nchunks = 1;
    }
    return ranges;
}

} // namespace

Plan build_knomial_gather(const Request &q, int radix, std::string_view name)
{
    const int p = q.nranks, nc = q.segments;
    PlanBuilder pb(Collective::kGather, p, q.root, nc, q.only_rank);
    const Knomial k{p, q.root, radix, nc, knomial_tree(p, radix)};
    const Range mine = plan::chunks(Buffer::kInput, 0, 0, nc);
    for (int v = 0; v < p; ++v) {
        if (v == 0 || k.size(v) > 1) {
            if (v) {
                pb.scratch(k.rank(v), k.size(v));
            }
            pb.copy(k.rank(v), {mine}, k.hold(v, Buffer::kOutput, v, 1));
        }
    }
    for (auto it = k.tree.order.rbegin(); it != k.tree.order.rend(); ++it) {
        const int v = *it;
        if (v == 0) {
            continue;
        }
        const int parent = k.tree.parent[static_cast<std::size_t>(v)];
        const auto src = k.size(v) > 1
                             ? k.hold(v, Buffer::kOutput, v, k.size(v))
                             : std::vector<Range>{mine};
        const auto dst = k.hold(parent, Buffer::kOutput, v, k.size(v));
        // With segments, one message per chunk (of every block it
        // carries), in chunk order on one tag.
        for (int c = 0; c < nc; ++c) {
            pb.xfer(k.rank(v), k.rank(parent), 0, chunk_of(src, c),
                    chunk_of(dst, c));
        }
    }
    return pb.take(describe(name, q));
}

Plan build_knomial_scatter(const Request &q, int radix, std::string_view name)
{
    const int p = q.nranks, nc = q.segments;
    PlanBuilder pb(Collective::kScatter, p, q.root, nc, q.only_rank);
    const Knomial k{p, q.root, radix, nc, knomial_tree(p, radix)};
    const Range out = plan::chunks(Buffer::kOutput, 0, 0, nc);
    auto dst = [&](int v) {
        return k.size(v) > 1 ? k.hold(v, Buffer::kInput, v, k.size(v))
                             : std::vector<Range>{out};
    };
    for (int v = 1; v < p; ++v) {
        if (k.size(v) > 1) {
            pb.scratch(k.rank(v), k.size(v));
        }
    }
    for (int v : k.tree.order) {
        for (int c : k.tree.children[static_cast<std::size_t>(v)]) {
            pb.xfer(k.rank(v), k.rank(c), 0,
                    k.hold(v, Buffer::kInput, c, k.size(c)), dst(c));
        }
        if (v == 0 || k.size(v) > 1) {
            pb.copy(k.rank(v), k.hold(v, Buffer::kInput, v, 1), {out});
        }
    }
    return pb.take(describe(name, q));
}

} // namespace ucg::algorithms::detail
