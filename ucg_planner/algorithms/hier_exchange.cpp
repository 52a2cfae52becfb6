// SPDX-License-Identifier: BSD-3-Clause
// Multi-level allgather, reduce_scatter and alltoall: the groups below the
// top feed their leaders, the top group's leaders exchange among
// themselves, and the leaders hand the result back down.
//
// Idea: a top leader i owns a piece: the blocks of the ranks below it
// (its holding, from collect_edges()). Allgather gathers every block to
// its top leader (straight into the leader's output), runs an allgather of
// the pieces among the leaders, then bcasts all P blocks down each level
// chunk by chunk. Reduce_scatter reduces all P blocks to the top leaders
// (level_reduce per level, chunk by chunk), runs a reduce_scatter of the
// pieces among the leaders, then scatters each rank's block down the
// gather edges. Alltoall gathers every rank's P input blocks to its top
// leader, the leaders send each other the blocks destined to the other's
// piece, and each leader scatters P blocks back to every rank below it.
// The exchange among leaders follows Request::top: "ring", "bruck", "shm"
// (allgather only; shm: each leader in turn bcasts its piece through the
// top group's shm ring), "linear" (direct) or, otherwise, recursive
// doubling for allgather and ring for reduce_scatter; alltoall always
// exchanges directly.
// Vocabulary: top leader, piece (a top leader's holding), edge.
// Cost (n top leaders, g ranks per leader, m bytes per block): allgather
// moves (g-1) m into each leader, the leaders' allgather of g m pieces
// (ring: (n-1)(alpha + g m beta)), then a bcast of P m per level;
// reduce_scatter moves P m per edge up, (n-1)(alpha + g m beta) among the
// leaders and g m per edge down; alltoall moves g P m per edge up and down
// and g^2 m per pair of leaders.
#include "algorithms/flat.h"

#include <algorithm>

namespace ucg::algorithms::detail {

namespace {

std::size_t ix(int i)
{
    return static_cast<std::size_t>(i);
}

int mod(int a, int p)
{
    return ((a % p) + p) % p;
}

// Chunks [chunk, chunk + n) of `blocks` (in sequence order), merged into
// runs of consecutive blocks.
std::vector<Range> runs(const std::vector<int> &blocks, Buffer buf, Span s)
{
    std::vector<Range> out;
    for (const Range &r : block_runs(blocks, buf, 1)) {
        out.push_back(plan::chunks(buf, r.block, s.chunk, s.n, r.nblocks));
    }
    return out;
}

struct Top {
    Collect collect;                      // edges below the top group
    Team team;                            // the top group
    std::vector<std::vector<int>> pieces; // per top leader, sorted
    int tag = 0; // first tag free above the gather edges
};

Top top_of(const Request &q, bool incast)
{
    Top t;
    t.collect = collect_edges(q, -1, true, incast);
    const auto teams = level_teams(q.levels, -1);
    t.team = teams.back()[0];
    for (int r : t.team.ranks) {
        t.pieces.push_back(t.collect.holding[ix(r)]);
        std::sort(t.pieces.back().begin(), t.pieces.back().end());
    }
    t.tag = static_cast<int>(teams.size());
    return t;
}

// The blocks of pieces i, i+1, ..., i+count-1 (mod n).
std::vector<int> pieces_from(const Top &t, int i, int count)
{
    std::vector<int> out;
    const int n = t.team.size();
    for (int j = 0; j < count; ++j) {
        const auto &p = t.pieces[ix(mod(i + j, n))];
        out.insert(out.end(), p.begin(), p.end());
    }
    return out;
}

// Moves pieces between top leaders (by index), output to output.
struct Mover {
    PlanBuilder &pb;
    const Top &t;
    Span s;
    void operator()(int from, int to, int tag,
                    const std::vector<int> &blocks) const
    {
        const auto r = runs(blocks, Buffer::kOutput, s);
        pb.xfer(t.team.ranks[ix(from)], t.team.ranks[ix(to)], tag, r, r);
    }
};

// Ring: step k passes piece i-k+1 to i+1; linear: step k sends the own
// piece to i+k.
void ring_or_linear(const Mover &move, const Top &t, bool ring)
{
    const int n = t.team.size();
    for (int k = 1; k < n; ++k) {
        for (int i = 0; i < n; ++i) {
            const int piece = ring ? mod(i - k + 1, n) : i;
            move(i, mod(i + (ring ? 1 : k), n), t.tag + k, t.pieces[ix(piece)]);
        }
    }
}

// Bruck: leader i holds pieces i .. i+d-1 before the step of distance d
// and sends the first min(d, n-d) of them to i-d.
void bruck(const Mover &move, const Top &t)
{
    const int n = t.team.size();
    for (int d = 1, step = 0; d < n; d *= 2, ++step) {
        for (int i = 0; i < n; ++i) {
            move(i, mod(i - d, n), t.tag + step,
                 pieces_from(t, i, std::min(d, n - d)));
        }
    }
}

// Recursive doubling over the largest power of two m <= n; leaders m..n-1
// fold their piece into leader i - m first and get all pieces last.
void recursive_doubling(const Mover &move, const Top &t)
{
    const int n = t.team.size();
    int m = 1;
    while (m * 2 <= n) {
        m *= 2;
    }
    for (int i = m; i < n; ++i) {
        move(i, i - m, t.tag, t.pieces[ix(i)]);
    }
    auto held = [&](int i, int d) { // pieces of [base, base + d), folded too
        std::vector<int> b;
        for (int j = i / d * d; j < i / d * d + d; ++j) {
            for (int f : {j, j + m}) {
                if (f < n) {
                    const auto one = pieces_from(t, f, 1);
                    b.insert(b.end(), one.begin(), one.end());
                }
            }
        }
        return b;
    };
    for (int d = 1, step = 1; d < m; d *= 2, ++step) {
        for (int i = 0; i < m; ++i) {
            move(i, i ^ d, t.tag + step, held(i, d));
        }
    }
    for (int i = m; i < n; ++i) {
        std::vector<int> rest;
        for (int j = 0; j < n; ++j) {
            if (j != i) {
                const auto one = pieces_from(t, j, 1);
                rest.insert(rest.end(), one.begin(), one.end());
            }
        }
        move(i - m, i, t.tag + n, rest);
    }
}

// "shm": the top group shares a host, and each leader in turn writes
// its piece once into the group's shm bcast ring, which every other
// leader reads (decision 0057). A piece of the leader's block alone goes
// from its input, beside the copy into its output.
void shm_bcasts(PlanBuilder &pb, const Top &t, Span s)
{
    if (t.team.size() < 2) {
        return; // a lone leader holds every piece
    }
    for (int i = 0; i < t.team.size(); ++i) {
        plan::GroupMsg m{t.team.ranks[ix(i)], {}, t.tag};
        for (int r : t.team.ranks) {
            if (r != m.root) {
                m.members.push_back(r);
            }
        }
        const auto &piece = t.pieces[ix(i)];
        const bool own = piece.size() == 1 && piece[0] == m.root;
        const auto dst = runs(piece, Buffer::kOutput, s);
        pb.bcast(m, plan::Channel::kShmBcast,
                 own ? std::vector<Range>{plan::chunks(Buffer::kInput, 0,
                                                       s.chunk, s.n)}
                     : dst,
                 dst);
    }
}

// Allgather of the pieces among the top leaders (Request::top).
void leaders_allgather(PlanBuilder &pb, const Request &q, const Top &t, Span s)
{
    const Mover move{pb, t, s};
    if (q.top == "shm") {
        shm_bcasts(pb, t, s);
    } else if (q.top == "ring" || q.top == "linear") {
        ring_or_linear(move, t, q.top == "ring");
    } else if (q.top == "bruck") {
        bruck(move, t);
    } else {
        recursive_doubling(move, t);
    }
}

} // namespace

Plan build_hier_allgather(const Request &q, std::string_view name)
{
    const Top t = top_of(q, true);
    const auto teams = level_teams(q.levels, -1);
    // The bcasts below the top carry all P blocks, the gathers holdings.
    std::size_t widest = 1; // the largest piece a shm top bcasts
    for (const auto &piece : t.pieces) {
        widest = std::max(widest, piece.size());
    }
    const int nc =
        std::max({level_chunks(q, teams.size() - 1, false, true, q.nranks),
                  gather_chunks(q, t.collect),
                  q.top == "shm" ? fit_chunks(q, plan::Channel::kShmBcast,
                                              static_cast<int>(widest))
                                 : 1});
    PlanBuilder pb(Collective::kAllgather, q.nranks, 0, nc, q.only_rank);
    std::vector<char> leader(ix(q.nranks), 0);
    for (int r : t.team.ranks) {
        leader[ix(r)] = 1;
    }
    // Gather below the top: leaders receive into their output.
    for (int r = 0; r < q.nranks; ++r) {
        if (leader[ix(r)]) {
            pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, nc)},
                    {plan::chunks(Buffer::kOutput, r, 0, nc)});
        } else if (!t.collect.leaf(r)) { // (a leaf sends from its input)
            pb.scratch(r, static_cast<int>(t.collect.holding[ix(r)].size()));
            pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, nc)},
                    {plan::chunks(Buffer::kScratch, 0, 0, nc)});
        }
    }
    emit_gather_edges(pb, t.collect, [&](const Edge &e, Span s) {
        if (leader[ix(e.parent)]) {
            return runs(e.blocks, Buffer::kOutput, s);
        }
        return std::vector<Range>{
            plan::chunks(Buffer::kScratch, e.offset, s.chunk, s.n,
                         static_cast<int>(e.blocks.size()))};
    });
    const PlaceFn all = [&q](int) {
        return Place{Buffer::kOutput, 0, q.nranks};
    };
    for (int k = 0; k < nc; ++k) {
        leaders_allgather(pb, q, t, Span{k, 1});
        for (std::size_t l = teams.size() - 1; l-- > 0;) {
            for (const Team &g : teams[l]) {
                level_bcast(pb, g, level_choice(q, l),
                            t.tag + 2 * q.nranks + static_cast<int>(l),
                            Span{k, 1}, all);
            }
        }
    }
    return pb.take(describe(name, q) + " top=" + q.top);
}

Plan build_hier_reduce_scatter(const Request &q, std::string_view name)
{
    const int p = q.nranks;
    const Top t = top_of(q, false);
    const auto teams = level_teams(q.levels, -1);
    // The reductions below the top carry all P blocks.
    const int nc = level_chunks(q, teams.size() - 1, true, false, p);
    PlanBuilder pb(Collective::kReduceScatter, p, 0, nc, q.only_rank);
    const PlaceFn all = [p](int) { return Place{Buffer::kScratch, 0, p}; };
    for (int r = 0; r < p; ++r) {
        pb.scratch(r, p);
        pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, nc, p)},
                {plan::chunks(Buffer::kScratch, 0, 0, nc, p)});
    }
    const int n = t.team.size();
    for (int k = 0; k < nc; ++k) {
        const Span one{k, 1};
        for (std::size_t l = 0; l + 1 < teams.size(); ++l) {
            for (const Team &g : teams[l]) {
                level_reduce(pb, g, level_choice(q, l), static_cast<int>(l),
                             one, all);
            }
        }
        // Ring: leader i ends with its own piece reduced; linear: every
        // leader sends piece j straight to leader j.
        for (int step = 1; step < n; ++step) {
            for (int i = 0; i < n; ++i) {
                const bool ring = q.top != "linear";
                const int piece = ring ? mod(i - step, n) : mod(i + step, n);
                const auto r = runs(t.pieces[ix(piece)], Buffer::kScratch, one);
                pb.xfer(t.team.ranks[ix(i)],
                        t.team.ranks[ix(ring ? mod(i + 1, n) : piece)],
                        t.tag + step, r, r, true);
            }
        }
        for (auto it = t.collect.edges.rbegin(); it != t.collect.edges.rend();
             ++it) {
            std::vector<int> b = it->blocks;
            std::sort(b.begin(), b.end());
            const auto r = runs(b, Buffer::kScratch, one);
            pb.xfer(it->parent, it->child, t.tag + n + it->tag, r, r);
        }
        for (int r = 0; r < p; ++r) {
            pb.copy(r, {plan::chunks(Buffer::kScratch, r, k, 1)},
                    {plan::chunks(Buffer::kOutput, 0, k, 1)});
        }
    }
    return pb.take(describe(name, q) + " top=" + q.top);
}

namespace {

// Alltoall scratch of a rank holding h ranks: [0, hP) the inputs of its
// holding (source-major), [hP, 2hP) the outputs of its holding
// (destination-major, block s from source s).
void leaders_alltoall(PlanBuilder &pb, const Request &q, const Top &t)
{
    const int p = q.nranks, n = t.team.size(), nc = q.segments;
    const auto &hold = t.collect.holding;
    for (int k = 0; k < n; ++k) {
        for (int i = 0; i < n; ++i) {
            const int from = t.team.ranks[ix(i)];
            const int to = t.team.ranks[ix(mod(i + k, n))];
            const auto &hf = hold[ix(from)], &ht = hold[ix(to)];
            const int out = static_cast<int>(ht.size()) * p;
            std::vector<int> src, dst;
            for (std::size_t a = 0; a < hf.size(); ++a) {
                for (std::size_t e = 0; e < ht.size(); ++e) {
                    src.push_back(static_cast<int>(a) * p + ht[e]);
                    dst.push_back(out + static_cast<int>(e) * p + hf[a]);
                }
            }
            const auto s = block_runs(src, Buffer::kScratch, nc);
            const auto d = block_runs(dst, Buffer::kScratch, nc);
            if (k == 0) {
                pb.copy(from, s, d);
            } else {
                pb.xfer(from, to, t.tag, s, d);
            }
        }
    }
}

} // namespace

Plan build_hier_alltoall(const Request &q, std::string_view name)
{
    const int p = q.nranks, nc = q.segments;
    PlanBuilder pb(Collective::kAlltoall, p, 0, nc, q.only_rank);
    const Top t = top_of(q, false);
    const auto &hold = t.collect.holding;
    auto size = [&](int r) { return static_cast<int>(hold[ix(r)].size()); };
    for (int r = 0; r < p; ++r) {
        pb.scratch(r, 2 * size(r) * p);
        pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, nc, p)},
                {plan::chunks(Buffer::kScratch, 0, 0, nc, p)});
    }
    for (const Edge &e : t.collect.edges) {
        const auto n = static_cast<int>(e.blocks.size()) * p;
        pb.xfer(e.child, e.parent, e.tag,
                {plan::chunks(Buffer::kScratch, 0, 0, nc, n)},
                {plan::chunks(Buffer::kScratch, e.offset * p, 0, nc, n)});
    }
    leaders_alltoall(pb, q, t);
    for (auto it = t.collect.edges.rbegin(); it != t.collect.edges.rend();
         ++it) {
        const auto n = static_cast<int>(it->blocks.size()) * p;
        const int from = (size(it->parent) + it->offset) * p;
        pb.xfer(it->parent, it->child, t.tag + 1 + it->tag,
                {plan::chunks(Buffer::kScratch, from, 0, nc, n)},
                {plan::chunks(Buffer::kScratch, n, 0, nc, n)});
    }
    for (int r = 0; r < p; ++r) {
        pb.copy(r, {plan::chunks(Buffer::kScratch, size(r) * p, 0, nc, p)},
                {plan::chunks(Buffer::kOutput, 0, 0, nc, p)});
    }
    return pb.take(describe(name, q));
}

} // namespace ucg::algorithms::detail
