// SPDX-License-Identifier: BSD-3-Clause
// Recursive k-ing (allreduce, allgather, barrier) and dissemination
// (barrier).
//
// Idea: with P' = k^d ranks, step i pairs each rank with the k-1 ranks
// that differ from it only in base-k digit i; they exchange everything they
// hold, so after d steps every rank holds everything. Ranks beyond the
// largest power of k (P - P' "extras") first fold into rank v % P' and get
// the result from it at the end. k = 2 is recursive doubling.
// Dissemination: at step i rank r sends to r + j k^i (j = 1..k-1) and hears
// from r - j k^i; after ceil(log_k P) steps each rank heard from all.
// Cost (m bytes per rank): allreduce d steps of (k-1)(alpha + beta m) plus
// 2(alpha + beta m) when P is not a power of k; allgather d steps with
// messages of m k^i bytes, (P-1) m bytes received in total.
#include "algorithms/flat.h"

#include <algorithm>

namespace ucg::algorithms::detail {

namespace {

/* Virtual rank v's peers at the step of stride s: the k-1 ranks that
 * differ from it only in the base-k digit of s. */
std::vector<int> rk_peers(int v, long long s, int k)
{
    std::vector<int> out;
    const int d = static_cast<int>((v / s) % k);
    for (int j = 0; j < k; ++j) {
        if (j != d) {
            out.push_back(static_cast<int>(v + (j - d) * s));
        }
    }
    return out;
}

/* The blocks virtual rank u holds before the step of stride s, as runs:
 * those of ranks r whose r % pk shares u's digits from s up, i.e. in
 * [b, b + s) for b = u - u % s, and the folded extras b + m pk. */
std::vector<Range> rk_held(int u, long long s, int pk, int n, int nc)
{
    std::vector<Range> out;
    const long long b = u - u % s;
    for (long long o = 0; b + o < n; o += pk) {
        const long long hi = std::min<long long>(b + o + s, n);
        out.push_back(plan::chunks(Buffer::kOutput, static_cast<int>(b + o), 0,
                                   nc, static_cast<int>(hi - b - o)));
    }
    return out;
}

} // namespace

void team_allreduce_rk(PlanBuilder &pb, const Team &team, int radix, int tag,
                       Span span, const PlaceFn &place)
{
    const int n = team.size();
    const int k = std::max(radix, 2);
    const int pk = largest_power(n, k);
    auto work = [&](int v) {
        return std::vector<Range>{at(place(team.at(v)), span)};
    };
    for (int v = pk; v < n; ++v) {
        pb.xfer(team.at(v), team.at(v % pk), tag, work(v), work(v % pk), true);
    }
    // A step's ops are on their own rank: a one-rank build visits only
    // its virtual rank (O(log P) steps of k, not O(P) each).
    std::vector<int> mine;
    if (const auto me = pb.only_rank()) {
        for (int v = 0; v < pk; ++v) {
            if (team.at(v) == *me) {
                mine.push_back(v);
            }
        }
    } else {
        mine = visit(pb, pk, {});
    }
    int step = 1;
    for (long long s = 1; s < pk; s *= k, ++step) {
        for (int pass = 0; pass < 2; ++pass) { // sends, then receives
            for (int v : mine) {
                const int d = static_cast<int>((v / s) % k);
                for (int j = 0; j < k; ++j) {
                    const int u = static_cast<int>(v + (j - d) * s);
                    if (j == d) {
                        continue;
                    }
                    if (pass == 0) {
                        pb.send(team.at(v), team.at(u), tag + step, work(v));
                    } else {
                        pb.recv(team.at(v), team.at(u), tag + step, work(v),
                                true);
                    }
                }
            }
        }
    }
    for (int v = pk; v < n; ++v) {
        pb.xfer(team.at(v % pk), team.at(v), tag + step, work(v % pk), work(v));
    }
}

Plan build_rk_allgather(const Request &q, int radix, std::string_view name)
{
    const int n = q.nranks;
    const int k = std::max(radix, 2);
    const int pk = largest_power(n, k);
    const int nc = q.segments;
    PlanBuilder pb(Collective::kAllgather, n, 0, nc, q.only_rank);
    const int me = pb.only_rank().value_or(0);
    for (int r : visit(pb, n, {me})) {
        pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, nc)},
                {plan::chunks(Buffer::kOutput, r, 0, nc)});
    }
    for (int v = pk; v < n; ++v) { // extras fold into v % pk
        if (pb.active(v) || pb.active(v % pk)) {
            pb.xfer(v, v % pk, 0, {plan::chunks(Buffer::kOutput, v, 0, nc)},
                    {plan::chunks(Buffer::kOutput, v, 0, nc)});
        }
    }
    // Held blocks follow from the digits (rk_held), so a one-rank build
    // visits only its rank and its k-1 peers per step.
    int step = 1;
    for (long long s = 1; s < pk; s *= k, ++step) {
        std::vector<int> who;
        if (pb.only_rank() && me < pk) {
            who = rk_peers(me, s, k);
            who.push_back(me);
            std::sort(who.begin(), who.end());
        } else if (!pb.only_rank()) {
            who = visit(pb, pk, {});
        }
        for (int v : who) {
            for (int u : rk_peers(v, s, k)) {
                if (!pb.active(u) && !pb.active(v)) {
                    continue;
                }
                const auto msg = rk_held(u, s, pk, n, nc);
                pb.xfer(u, v, step, msg, msg);
            }
        }
    }
    for (int v = pk; v < n; ++v) {
        if (!pb.active(v) && !pb.active(v % pk)) {
            continue;
        }
        std::vector<Range> rest; // every block but v's
        rest.push_back(plan::chunks(Buffer::kOutput, 0, 0, nc, v));
        if (v + 1 < n) {
            rest.push_back(
                plan::chunks(Buffer::kOutput, v + 1, 0, nc, n - v - 1));
        }
        pb.xfer(v % pk, v, step, rest, rest);
    }
    return pb.take(describe(name, q));
}

Plan build_dissemination_barrier(const Request &q, std::string_view name)
{
    const int n = q.nranks;
    const long long k = std::max(q.radix, 2);
    PlanBuilder pb(Collective::kBarrier, n, 0, 1, q.only_rank);
    const Range tok = plan::chunks(Buffer::kOutput, 0, 0, 1);
    // Every op is on its own rank: a one-rank build visits only it.
    const std::vector<int> self = visit(pb, n, {pb.only_rank().value_or(0)});
    for (int r : self) {
        pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, 1)}, {tok});
    }
    int step = 0;
    for (long long s = 1; s < n; s *= k, ++step) {
        for (int pass = 0; pass < 2; ++pass) {
            for (int r : self) {
                for (long long j = 1; j < k && j * s < n; ++j) {
                    const auto d = static_cast<int>(j * s);
                    if (pass == 0) {
                        pb.send(r, (r + d) % n, step, {tok});
                    } else {
                        pb.recv(r, (r - d % n + n) % n, step, {tok}, true);
                    }
                }
            }
        }
    }
    return pb.take(describe(name, q));
}

} // namespace ucg::algorithms::detail
