// SPDX-License-Identifier: BSD-3-Clause
// Closed-form alpha-beta and LogP costs.
#include "cost/formulas.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <queue>
#include <unordered_map>

namespace ucg::cost {

AlphaBeta alpha_beta(const topology::LinkCost &link)
{
    return {link.alpha_ns(), link.ns_per_byte, link.overhead_ns, link.gap_ns};
}

int knomial_rounds(int64_t nranks, int radix)
{
    int rounds = 0;
    for (int64_t reach = 1; reach < nranks; reach *= std::max(radix, 2)) {
        ++rounds;
    }
    return rounds;
}

int64_t largest_power(int64_t nranks, int radix)
{
    const int64_t k = std::max(radix, 2);
    int64_t p = 1;
    while (p * k <= nranks) {
        p *= k;
    }
    return p;
}

double flat_bcast_ns(int64_t nranks, double bytes, const AlphaBeta &ab)
{
    return ab.fan_ns(double(std::max<int64_t>(nranks - 1, 0)), bytes);
}

double knomial_bcast_ns(int64_t nranks, int radix, double bytes,
                        const Links &ab)
{
    // The root's rounds, widest subtree first: at distance d it has
    // min(k-1, ceil(P/d)-1) children; its last child of each round is the
    // start of the next round's longest path.
    // Where a round's children straddle the root's host (or rack): those
    // on it take the host's link from the root's own port while the
    // others queue at its NIC, farthest first (the simulator's order).
    const int64_t k = std::max(radix, 2);
    double t = 0;
    for (int64_t d = largest_power(std::max<int64_t>(nranks - 1, 1), k);
         nranks > 1 && d >= 1; d /= k) {
        const int64_t children = std::min(k - 1, (nranks + d - 1) / d - 1);
        const auto inside = [&](int64_t span) {
            return span > d && span < (children + 1) * d && span % d == 0
                       ? std::min(children, span / d - 1)
                       : int64_t{0};
        };
        const int64_t near = ab.spans.empty() ? inside(ab.block) : 0;
        const int64_t mid = ab.spans.empty() && ab.mid_block > 0
                                ? inside(ab.mid_block) - near
                                : 0;
        if (near == 0 && mid <= 0) {
            t += ab.at((children + 1) * d).fan_ns(double(children), bytes);
            continue;
        }
        const int64_t far = children - near - std::max<int64_t>(mid, 0);
        double nic = 0;
        if (far > 0) {
            nic = mid > 0 ? double(far) * ab.far.issue_ns(bytes) +
                                ab.mid.fan_ns(double(mid), bytes)
                          : ab.far.fan_ns(double(far), bytes);
        } else if (mid > 0) {
            nic = ab.mid.fan_ns(double(mid), bytes);
        }
        const double own =
            double(far + std::max<int64_t>(mid, 0)) * ab.far.overhead_ns +
            ab.near.fan_ns(double(near), bytes);
        t += std::max(nic, own);
    }
    return t;
}

double chain_pipeline_ns(int64_t nranks, double bytes, double segment_bytes,
                         const AlphaBeta &ab)
{
    if (nranks <= 1) {
        return 0;
    }
    double steps = double(nranks - 2) + bytes / segment_bytes;
    return steps * ab.message_ns(segment_bytes);
}

double chain_pipeline_segments_ns(int64_t nranks, double bytes,
                                  double segment_bytes, const AlphaBeta &ab)
{
    if (nranks <= 1) {
        return 0;
    }
    double z = std::min(segment_bytes, std::max(bytes, 1.0));
    double segments = std::max(1.0, std::ceil(bytes / z));
    return (double(nranks - 2) + segments) * ab.message_ns(z);
}

double optimal_segment_bytes(int64_t nranks, double bytes, const AlphaBeta &ab)
{
    if (nranks <= 2 || ab.beta_ns_per_byte <= 0) {
        return bytes;
    }
    double z = std::sqrt(bytes * ab.alpha_ns /
                         (double(nranks - 2) * ab.beta_ns_per_byte));
    return std::clamp(z, std::min(1.0, bytes), bytes);
}

double chain_pipeline_optimal_ns(int64_t nranks, double bytes,
                                 const AlphaBeta &ab)
{
    if (nranks <= 2) {
        return nranks <= 1 ? 0 : ab.message_ns(bytes);
    }
    double p2 = double(nranks - 2);
    return p2 * ab.alpha_ns + bytes * ab.beta_ns_per_byte +
           2 * std::sqrt(p2 * ab.alpha_ns * ab.beta_ns_per_byte * bytes);
}

int pipeline_segments(int64_t nranks, double bytes, const AlphaBeta &ab,
                      int max_segments)
{
    double z = optimal_segment_bytes(std::max<int64_t>(nranks, 3), bytes, ab);
    double c = z > 0 ? std::ceil(bytes / z) : 1;
    return int(std::clamp(c, 1.0, double(max_segments)));
}

double pipelined_ns(double hops, int sends, int chunks, double chunk_bytes,
                    double cpu_ns, const AlphaBeta &ab)
{
    if (hops <= 0) {
        return 0;
    }
    return hops * (ab.fan_ns(sends, chunk_bytes) + cpu_ns) +
           double(std::max(chunks, 1) - 1) *
               ab.stage_ns(chunk_bytes, sends, cpu_ns);
}

double shared_cores_stage_ns(double cross, double hosts, double nic_scale,
                             const AlphaBeta &link, double chunk_bytes)
{
    return cross * nic_scale / hosts * link.port_ns(chunk_bytes);
}

double shared_cores_relays_ns(double relays, const AlphaBeta &link)
{
    return 2 * std::max(relays, 0.0) * link.alpha_ns;
}

int knomial_relays(int64_t nranks, int radix)
{
    return std::max(knomial_rounds(nranks, radix) - 1, 0);
}

int binary_relays(int64_t nranks)
{
    return std::max(knomial_rounds(nranks + 1, 2) - 2, 0);
}

int chain_relays(int64_t nranks)
{
    return int(std::max<int64_t>(nranks - 2, 0));
}

double binary_pipeline_ns(int64_t nranks, double bytes, double segment_bytes,
                          const AlphaBeta &ab)
{
    if (nranks <= 1) {
        return 0;
    }
    double steps = bytes / segment_bytes + knomial_rounds(nranks, 2) - 2;
    return std::max(steps, 1.0) * 2 * ab.message_ns(segment_bytes);
}

double binomial_gather_ns(int64_t nranks, double block_bytes, const Links &ab)
{
    // Round j moves 2^j blocks (of the P-1 in all) over distance 2^j.
    const int rounds = knomial_rounds(nranks, 2);
    const double per = double(std::max<int64_t>(nranks - 1, 0)) /
                       double((int64_t{1} << rounds) - 1 + (rounds == 0));
    double t = 0;
    for (int j = 0; j < rounds; ++j) {
        const AlphaBeta &l = ab.at(int64_t{2} << j);
        t += l.alpha_ns +
             double(int64_t{1} << j) * per * block_bytes * l.beta_ns_per_byte;
    }
    return t;
}

namespace {

// Into one of the P' ranks: f messages (their bytes queue at its port).
int64_t folds_per_rank(int64_t nranks, int64_t pk)
{
    return (nranks - pk + pk - 1) / pk;
}

} // namespace

double recursive_k_allreduce_ns(int64_t nranks, int radix, double bytes,
                                const Links &links)
{
    const int k = std::max(radix, 2);
    const int64_t pk = largest_power(nranks, k);
    const int rounds = knomial_rounds(pk, k);
    // A round's k-1 messages into one rank queue at its port: the last
    // lands (k-2) beta s after the sender's k-1 sends. Round j runs among
    // k^(j+1) consecutive ranks.
    double t = 0;
    int64_t span = k;
    for (int j = 0; j < rounds; ++j, span *= k) {
        // With LogGP parts the k-1 senders' messages arrive as staggered
        // as they were sent: no extra queue.
        const AlphaBeta &l = links.at(span);
        t += l.fan_ns(k - 1, bytes) +
             (l.gap_ns < 0 ? double(k - 2) * bytes * l.beta_ns_per_byte : 0);
    }
    if (pk < nranks) {
        const AlphaBeta &ab = links.far;
        const double sb = bytes * ab.beta_ns_per_byte;
        const double f = double(folds_per_rank(nranks, pk));
        if (ab.gap_ns >= 0) {
            // f blocks fold into a rank one issue apart, and f results go
            // back out the same way.
            return t + 2 * ab.fan_ns(f, bytes);
        }
        // The folded bytes queue at the receiver's port ahead of the
        // first round's.
        t += ab.alpha_ns + (f + (rounds > 0 ? 1 : 0)) * sb +
             f * ab.message_ns(bytes);
    }
    return t;
}

double ring_allreduce_ns(int64_t nranks, double bytes, const AlphaBeta &ab)
{
    if (nranks <= 1) {
        return 0;
    }
    return 2 * double(nranks - 1) * ab.message_ns(bytes / double(nranks));
}

double rabenseifner_allreduce_ns(int64_t nranks, double bytes, const Links &ab)
{
    if (nranks <= 1) {
        return 0;
    }
    const int64_t pk = largest_power(nranks, 2);
    return rabenseifner_reduce_ns(pk, bytes, ab) +
           (pk < nranks ? 2 * ab.far.message_ns(bytes) : 0);
}

double halving_ns(int64_t pk, double n, const Links &links)
{
    double t = 0;
    double piece = n / 2;
    for (int64_t span = pk; span >= 2; span /= 2, piece /= 2) {
        const AlphaBeta &l = links.at(span);
        t += l.alpha_ns + piece * l.beta_ns_per_byte;
    }
    return t;
}

double rabenseifner_reduce_ns(int64_t nranks, double bytes, const Links &ab)
{
    if (nranks <= 1) {
        return 0;
    }
    const int64_t pk = largest_power(nranks, 2);
    const AlphaBeta &far = ab.far;
    // Halving, then the binomial gather of the pieces (the same steps
    // back). The folded bytes queue at the receiver's port ahead of the
    // first step's: alpha + 2 beta s.
    return 2 * halving_ns(pk, bytes, ab) +
           (pk < nranks ? far.alpha_ns + 2 * bytes * far.beta_ns_per_byte : 0);
}

double halving_reduce_scatter_ns(int64_t nranks, double block_bytes,
                                 const Links &ab)
{
    if (nranks <= 1) {
        return 0;
    }
    const int64_t pk = largest_power(nranks, 2);
    const double n = double(nranks) * block_bytes;
    double t = halving_ns(pk, n, ab);
    if (pk < nranks) {
        t += ab.far.message_ns(n) + ab.far.message_ns(block_bytes);
    }
    return t;
}

double recursive_k_allgather_ns(int64_t nranks, int radix, double block_bytes,
                                const Links &links)
{
    if (nranks <= 1) {
        return 0;
    }
    const int k = std::max(radix, 2);
    const int64_t pk = largest_power(nranks, k);
    const double s = block_bytes;
    // Round j sends k-1 messages of k^j of the P' ranks' shares of the
    // P-1 other blocks, among k^(j+1) consecutive ranks.
    const double share = pk > 1 ? double(nranks - 1) / double(pk - 1) * s : 0;
    double t = 0;
    double held = share;
    for (int64_t span = k; span <= pk; span *= k, held *= k) {
        t += links.at(span).fan_ns(k - 1, held);
    }
    const AlphaBeta &ab = links.far;
    if (pk < nranks) {
        const double f = double(folds_per_rank(nranks, pk));
        t += ab.alpha_ns + f * s * ab.beta_ns_per_byte +
             f * ab.message_ns(double(nranks - 1) * s);
    }
    return t;
}

double two_tree_bcast_ns(int64_t nranks, double bytes, int segments,
                         const AlphaBeta &ab)
{
    if (nranks <= 1) {
        return 0;
    }
    const int chunks = std::max(segments, 1);
    const int depth = int(std::bit_width(uint64_t(nranks - 1))) - 1;
    // The first chunk's 2 depth hops (at least one), then a step per
    // further chunk at the pace of a rank's port or CPU.
    const double z = bytes / chunks;
    return double(std::max(2 * depth, 1)) * ab.message_ns(z) +
           double(chunks - 1) * ab.stage_ns(z, 1, 0);
}

double logp_message_ns(const LogGP &p)
{
    return 2 * p.overhead_ns + p.latency_ns;
}

double logp_linear_bcast_ns(int64_t nranks, const LogGP &p)
{
    if (nranks <= 1) {
        return 0;
    }
    return p.latency_ns +
           double(nranks - 2) * std::max(p.overhead_ns, p.gap_ns) +
           2 * p.overhead_ns;
}

LogpBcastSchedule logp_optimal_bcast(int nranks, const LogGP &p)
{
    LogpBcastSchedule s;
    const size_t n = size_t(std::max(nranks, 1));
    s.parent.assign(n, -1);
    s.informed_ns.assign(n, 0);
    s.children.resize(n);
    using Next = std::pair<double, int>; // next send start, rank
    std::priority_queue<Next, std::vector<Next>, std::greater<>> senders;
    senders.push({0.0, 0});
    const double every = std::max(p.overhead_ns, p.gap_ns);
    for (int next = 1; next < nranks; ++next) {
        auto [t, r] = senders.top();
        senders.pop();
        s.parent[size_t(next)] = r;
        s.children[size_t(r)].push_back(next);
        s.informed_ns[size_t(next)] = t + logp_message_ns(p);
        senders.push({t + every, r});
        senders.push({s.informed_ns[size_t(next)], next});
    }
    return s;
}

double logp_optimal_bcast_ns(int64_t nranks, const LogGP &p)
{
    auto s = logp_optimal_bcast(static_cast<int>(nranks), p);
    return *std::max_element(s.informed_ns.begin(), s.informed_ns.end());
}

int64_t logp_reach(int64_t t, const LogGP &p)
{
    const int64_t every =
        std::max<int64_t>(1, std::llround(std::max(p.overhead_ns, p.gap_ns)));
    const int64_t msg = std::llround(logp_message_ns(p));
    std::unordered_map<int64_t, int64_t> memo;
    std::function<int64_t(int64_t)> reach = [&](int64_t u) -> int64_t {
        if (u < msg) {
            return 1;
        }
        if (auto it = memo.find(u); it != memo.end()) {
            return it->second;
        }
        int64_t v = reach(u - every) + reach(u - msg);
        memo[u] = v;
        return v;
    };
    return reach(t);
}

} // namespace ucg::cost
