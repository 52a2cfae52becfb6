// SPDX-License-Identifier: BSD-3-Clause
// Rabenseifner allreduce and reduce; recursive halving reduce_scatter.
//
// Idea: the message is cut into P' pieces (P' the largest power of two up
// to P; P'*S chunks). Ranks beyond P' first fold their data into rank
// v - P'. Recursive halving reduce-scatter: at mask = P'/2, P'/4, ..., 1
// rank v exchanges half of its remaining range with v ^ mask and reduces
// the half it keeps; then every rank owns one reduced piece. Allreduce
// finishes with a recursive doubling allgather (and sends the result back
// to the folded ranks); reduce with a binomial gather of the pieces to the
// root (relative rank 0). Reduce_scatter runs the halving alone over
// virtual pieces j = blocks {j, j + P'}; rank v ends with piece v and
// hands block v + P' to the folded rank v + P'.
// Vocabulary: piece, range (lo, count) of pieces a rank is responsible for.
// Cost (m bytes): 2 log2 P' alpha + 2 (P'-1)/P' beta m, plus
// (alpha + beta m) per fold and unfold when P is not a power of two.
#include "algorithms/flat.h"

#include <algorithm>

namespace ucg::algorithms::detail {

namespace {

struct Halving {
    PlanBuilder &pb;
    Team team;
    PlaceFn place;
    int pk, s;
    int cnt;      // pieces per range
    int me = -1;  // one-rank builds: the rank's index in the team
    int step = 1; // the next step's tag, after tag0
    int c0 = 0;   // the first chunk of piece 0
    int tag0 = 0;

    std::vector<Range> pieces(int v, int first, int n) const
    {
        const Place p = place(team.at(v));
        return {plan::chunks(p.buf, p.block, c0 + first * s, n * s)};
    }
    // The virtual ranks a step with `mask` visits: all, or in a one-rank
    // build the rank and its partner (O(log P) steps, not O(P) each).
    std::vector<int> who(int mask) const
    {
        if (!pb.only_rank()) {
            return visit(pb, pk, {});
        }
        return me >= 0 && me < pk ? visit(pb, pk, {me, me ^ mask})
                                  : std::vector<int>{};
    }
    void fold(int n)
    {
        for (int v = pk; v < n; ++v) {
            if (pb.active(team.at(v)) || pb.active(team.at(v - pk))) {
                pb.xfer(team.at(v), team.at(v - pk), tag0, pieces(v, 0, pk),
                        pieces(v - pk, 0, pk), true);
            }
        }
    }
    // A range's first piece follows from the step: before the halving
    // step of `mask` (cnt = 2 mask pieces) and the doubling step of
    // `mask` (cnt = mask), v's range starts at v with the bits below cnt
    // cleared.
    void reduce_scatter()
    {
        for (int mask = pk / 2; mask >= 1; mask /= 2, ++step) {
            const int half = cnt / 2;
            for (int v : who(mask)) {
                const int l = v & ~(cnt - 1);
                // v keeps the half on its side of the mask bit.
                const int give = (v & mask) ? l : l + half;
                pb.xfer(team.at(v), team.at(v ^ mask), tag0 + step,
                        pieces(v, give, half), pieces(v ^ mask, give, half),
                        true);
            }
            cnt = half;
        }
    }
    // Doubling: every rank (allgather) or only toward 0 (gather).
    void double_up(bool to_all)
    {
        for (int mask = 1; mask < pk; mask *= 2, ++step) {
            for (int v : who(mask)) {
                const int u = v ^ mask;
                const bool sends = to_all || (v % (2 * mask) == mask);
                if (!sends) {
                    continue;
                }
                const int l = v & ~(cnt - 1);
                pb.xfer(team.at(v), team.at(u), tag0 + step, pieces(v, l, cnt),
                        pieces(u, l, cnt));
            }
            cnt *= 2;
        }
    }
    // The folded ranks take the result from their partners.
    void unfold(int n)
    {
        for (int v = pk; v < n; ++v) {
            pb.xfer(team.at(v - pk), team.at(v), tag0 + step,
                    pieces(v - pk, 0, pk), pieces(v, 0, pk));
        }
    }
};

} // namespace

void team_allreduce_halving(PlanBuilder &pb, const Team &team, int tag,
                            Span span, const PlaceFn &place)
{
    const int n = team.size();
    const int pk = largest_power(n, 2);
    Halving h{pb, team, place, pk, span.n / pk, pk};
    h.c0 = span.chunk;
    h.tag0 = tag;
    if (const auto me = pb.only_rank()) {
        for (int v = 0; v < n; ++v) {
            h.me = team.at(v) == *me ? v : h.me;
        }
    }
    h.fold(n);
    h.reduce_scatter();
    h.double_up(true);
    h.unfold(n);
}

Plan build_rabenseifner(const Request &q, std::string_view name)
{
    const bool all = q.collective != Collective::kReduce;
    const int n = q.nranks, s = q.segments, root = all ? 0 : q.root;
    const int pk = largest_power(n, 2);
    PlanBuilder pb(q.collective, n, root, pk * s, q.only_rank);
    const PlaceFn place = all ? PlaceFn(out0) : reduce_place(pb, root);
    for (int r = 0; r < n; ++r) {
        pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, pk * s)},
                {at(place(r), Span{0, pk * s})});
    }
    Halving h{pb, whole_team(n, root), place, pk, s, pk};
    if (const auto me = pb.only_rank()) {
        for (int v = 0; v < n; ++v) {
            h.me = h.team.at(v) == *me ? v : h.me;
        }
    }
    h.fold(n);
    h.reduce_scatter();
    h.double_up(all);
    if (all) {
        h.unfold(n);
    }
    return pb.take(describe(name, q));
}

Plan build_halving_reduce_scatter(const Request &q, std::string_view name)
{
    const int n = q.nranks, s = q.segments;
    const int pk = largest_power(n, 2);
    PlanBuilder pb(Collective::kReduceScatter, n, 0, s, q.only_rank);
    // Blocks of virtual pieces [first, first + cnt) in a P-block buffer.
    auto pieces = [n, pk, s](Buffer b, int first, int cnt) {
        std::vector<Range> v{plan::chunks(b, first, 0, s, cnt)};
        const int hi = std::min(first + cnt + pk, n);
        if (first + pk < hi) {
            v.push_back(plan::chunks(b, first + pk, 0, s, hi - first - pk));
        }
        return v;
    };
    const auto scr = Buffer::kScratch;
    for (int r = 0; r < pk; ++r) {
        pb.scratch(r, n);
        pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, s, n)},
                {plan::chunks(scr, 0, 0, s, n)});
    }
    for (int v = pk; v < n; ++v) {
        pb.xfer(v, v - pk, 0, {plan::chunks(Buffer::kInput, 0, 0, s, n)},
                {plan::chunks(scr, 0, 0, s, n)}, true);
    }
    int step = 1;
    const int me = pb.only_rank().value_or(0);
    for (int mask = pk / 2, cnt = pk; mask >= 1; mask /= 2, ++step) {
        cnt /= 2;
        // One rank: itself and its partner (O(log P) steps of O(1)).
        for (int v : visit(pb, pk, {me, me ^ mask})) {
            // Before this step v's range starts at v with the bits below
            // 2 * mask cleared; it keeps the half holding piece v.
            const int l = v & ~(2 * mask - 1);
            const int give = (v & mask) ? l : l + cnt;
            pb.xfer(v, v ^ mask, step, pieces(scr, give, cnt),
                    pieces(scr, give, cnt), true);
        }
    }
    for (int v = 0; v < pk; ++v) {
        pb.copy(v, {plan::chunks(scr, v, 0, s)},
                {plan::chunks(Buffer::kOutput, 0, 0, s)});
        if (v + pk < n) {
            pb.xfer(v, v + pk, step, {plan::chunks(scr, v + pk, 0, s)},
                    {plan::chunks(Buffer::kOutput, 0, 0, s)});
        }
    }
    return pb.take(describe(name, q));
}

} // namespace ucg::algorithms::detail
