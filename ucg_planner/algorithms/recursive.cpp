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

int largest_power(int n, int k)
{
    long long p = 1;
    while (p * k <= n) {
        p *= k;
    }
    return static_cast<int>(p);
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
    int step = 1;
    for (long long s = 1; s < pk; s *= k, ++step) {
        for (int pass = 0; pass < 2; ++pass) { // sends, then receives
            for (int v = 0; v < pk; ++v) {
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
    std::vector<std::vector<int>> held(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
        pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, nc)},
                {plan::chunks(Buffer::kOutput, r, 0, nc)});
        held[static_cast<std::size_t>(r % pk)].push_back(r);
    }
    for (int v = pk; v < n; ++v) {
        pb.xfer(v, v % pk, 0, {plan::chunks(Buffer::kOutput, v, 0, nc)},
                {plan::chunks(Buffer::kOutput, v, 0, nc)});
    }
    for (auto &h : held) {
        std::sort(h.begin(), h.end());
    }
    int step = 1;
    for (long long s = 1; s < pk; s *= k, ++step) {
        auto next = held;
        for (int v = 0; v < pk; ++v) {
            const int d = static_cast<int>((v / s) % k);
            for (int j = 0; j < k; ++j) {
                const int u = static_cast<int>(v + (j - d) * s);
                if (j == d) {
                    continue;
                }
                const auto &hu = held[static_cast<std::size_t>(u)];
                const auto msg = block_runs(hu, Buffer::kOutput, nc);
                pb.xfer(u, v, step, msg, msg);
                auto &nv = next[static_cast<std::size_t>(v)];
                nv.insert(nv.end(), hu.begin(), hu.end());
            }
        }
        for (auto &h : next) {
            std::sort(h.begin(), h.end());
        }
        held = std::move(next);
    }
    for (int v = pk; v < n; ++v) {
        std::vector<int> rest;
        for (int b = 0; b < n; ++b) {
            if (b != v) {
                rest.push_back(b);
            }
        }
        const auto msg = block_runs(rest, Buffer::kOutput, nc);
        pb.xfer(v % pk, v, step, msg, msg);
    }
    return pb.take(describe(name, q));
}

Plan build_dissemination_barrier(const Request &q, std::string_view name)
{
    const int n = q.nranks;
    const long long k = std::max(q.radix, 2);
    PlanBuilder pb(Collective::kBarrier, n, 0, 1, q.only_rank);
    const Range tok = plan::chunks(Buffer::kOutput, 0, 0, 1);
    for (int r = 0; r < n; ++r) {
        pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, 1)}, {tok});
    }
    int step = 0;
    for (long long s = 1; s < n; s *= k, ++step) {
        for (int pass = 0; pass < 2; ++pass) {
            for (int r = 0; r < n; ++r) {
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
