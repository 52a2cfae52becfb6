// SPDX-License-Identifier: BSD-3-Clause
// Closed-form costs of the classic collective shapes in the alpha-beta and
// LogP models (seed 002), and the optimal pipeline segment size. Times in
// ns, sizes in bytes; s is the message size, P the group size.
#pragma once

#include "topology/topology.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace ucg::cost {

/// T(m) = alpha + beta * m for one message of m bytes, and where the link's
/// LogGP parts are known (alpha_beta(link): alpha = L + 2o) what a rank
/// pays to send or take one more message, as the simulator charges it.
/// Without them (gap_ns < 0) every message costs a whole alpha.
struct AlphaBeta {
    double alpha_ns = 0;
    double beta_ns_per_byte = 0;
    double overhead_ns = 0; ///< o: CPU per message at each end
    double gap_ns = -1;     ///< g: port time per message; < 0: unknown

    double message_ns(double bytes) const
    {
        return alpha_ns + beta_ns_per_byte * bytes;
    }
    /// One message of m bytes holds its port (or NIC) g + beta m (LogGP
    /// parts known: gap_ns >= 0).
    double port_ns(double bytes) const
    {
        return gap_ns + beta_ns_per_byte * bytes;
    }
    /// Between two back-to-back sends of one rank: max(o, g + beta m).
    double issue_ns(double bytes) const
    {
        return gap_ns < 0 ? message_ns(bytes)
                          : std::max(overhead_ns, port_ns(bytes));
    }
    /// j messages of m bytes from one rank (or into one): the last lands
    /// one message time after the first issue plus j-1 more issues.
    double fan_ns(double j, double bytes) const
    {
        return j <= 0 ? 0 : message_ns(bytes) + (j - 1) * issue_ns(bytes);
    }
    /// A pipeline's steady stage at a rank that takes one chunk of m bytes
    /// and passes `sends` copies on, spending `cpu_ns` on it besides the
    /// overheads (its combine): the busier of its port and its CPU.
    double stage_ns(double bytes, int sends, double cpu_ns) const
    {
        if (gap_ns < 0) {
            return sends * message_ns(bytes) + cpu_ns;
        }
        return std::max(sends * port_ns(bytes),
                        (sends + 1) * overhead_ns + cpu_ns);
    }
    /// The same link with another per-byte cost.
    AlphaBeta with_beta(double beta) const
    {
        AlphaBeta ab = *this;
        ab.beta_ns_per_byte = beta;
        return ab;
    }
    /// The link with its NIC shared by `n` ranks talking at once: each
    /// message holds it n times as long (gap and bytes).
    AlphaBeta shared_by(int n) const
    {
        const int k = std::max(n, 1);
        AlphaBeta ab = with_beta(beta_ns_per_byte * k);
        if (ab.gap_ns >= 0) {
            ab.gap_ns *= k;
        }
        return ab;
    }
};

/// The links of a machine whose hosts hold `block` consecutive ranks each:
/// a step among the ranks of an aligned span of `span` consecutive ranks
/// stays inside a host (`near`) when the span divides the block; else it
/// crosses hosts (`far`). An AlphaBeta converts to one link everywhere.
/// `spans`, where given, names the link of each span itself (a placement
/// that is not in blocks: algorithms/costs.cpp).
struct Links {
    AlphaBeta far;
    AlphaBeta near;
    std::int64_t block = 1;
    /// Where hosts sit in racks of `mid_block` consecutive ranks (> 0),
    /// a span that divides the rack crosses only its switch: `mid`.
    AlphaBeta mid;
    std::int64_t mid_block = 0;
    std::vector<std::pair<std::int64_t, AlphaBeta>> spans;

    Links(const AlphaBeta &one) : far(one), near(one) {} // NOLINT: implicit
    Links(const AlphaBeta &f, const AlphaBeta &n, std::int64_t b)
        : far(f), near(n), block(std::max<std::int64_t>(b, 1))
    {
    }
    const AlphaBeta &at(std::int64_t span) const
    {
        for (const auto &[s, ab] : spans) {
            if (s == span) {
                return ab;
            }
        }
        if (span <= block && block % span == 0) {
            return near;
        }
        return mid_block > 0 && span <= mid_block && mid_block % span == 0
                   ? mid
                   : far;
    }
};

/// LogGP: latency L, overhead o, gap g, per-byte gap G.
struct LogGP {
    double latency_ns = 0;
    double overhead_ns = 0;
    double gap_ns = 0;
    double ns_per_byte = 0;
};

AlphaBeta alpha_beta(const topology::LinkCost &link);

/// ceil(log_k(P)): rounds of a k-nomial tree (0 for P <= 1).
int knomial_rounds(int64_t nranks, int radix);

/// The largest power of k (k >= 2) at most P (1 for P <= 1): the ranks
/// recursive k-ing and halving run over after the others fold in.
int64_t largest_power(int64_t nranks, int radix);

/// Root sends to everyone in turn: (P-1)(alpha + beta s).
double flat_bcast_ns(int64_t nranks, double bytes, const AlphaBeta &ab);

/// ceil(log_k P) (k-1) (alpha + beta s); k = 2 is the binomial tree,
/// ceil(log2 P)(alpha + beta s).
double knomial_bcast_ns(int64_t nranks, int radix, double bytes,
                        const Links &ab);

/// Pipelined chain, textbook form: (P - 2 + s/z)(alpha + beta z), with s/z
/// real-valued. seed 002: P=4, s=1e6, z=1e5, alpha=10, beta=1: 1,200,120.
double chain_pipeline_ns(int64_t nranks, double bytes, double segment_bytes,
                         const AlphaBeta &ab);

/// The same with whole segments, as a plan runs it: n = ceil(s/z) segments
/// of at most z bytes, (P - 2 + n)(alpha + beta min(z, s)).
double chain_pipeline_segments_ns(int64_t nranks, double bytes,
                                  double segment_bytes, const AlphaBeta &ab);

/// z_opt = sqrt(s alpha / ((P - 2) beta)), the zero of d/dz of
/// chain_pipeline_ns; s for P <= 2 or beta = 0 (no pipelining helps).
double optimal_segment_bytes(int64_t nranks, double bytes, const AlphaBeta &ab);

/// chain_pipeline_ns at z_opt, closed form:
/// (P-2) alpha + s beta + 2 sqrt((P-2) alpha beta s).
/// seed 002's 1,008,964 is this, 1,008,964.27 ns, to the nearest unit.
double chain_pipeline_optimal_ns(int64_t nranks, double bytes,
                                 const AlphaBeta &ab);

/// A pipeline of `chunks` chunks of z bytes through `hops` hops, each rank
/// passing every chunk on to `sends` others and spending `cpu_ns` on it
/// (its combine): the first chunk's fill, hops (fan(sends) + cpu), then
/// a steady stage per further chunk (AlphaBeta::stage_ns). Without LogGP
/// parts this is (hops + chunks - 1) (sends (alpha + beta z) + cpu).
double pipelined_ns(double hops, int sends, int chunks, double chunk_bytes,
                    double cpu_ns, const AlphaBeta &ab);

/// Pipelined binary tree: (s/z + ceil(log2 P) - 2) 2 (alpha + beta z).
/// Hosts that share one machine's cores, nic_scale of them a core: a
/// message between hosts is a core's work at both ends, and in a pipeline
/// every edge between hosts carries a chunk at once. A stage whose chunks
/// cross `cross` such edges among `hosts` hosts holds a core for its
/// hosts' ends of them, nic_scale times a host's mean (the link's beta
/// counts a message's two ends on one core already, decision 0018;
/// decisions 0039 and 0044).
double shared_cores_stage_ns(double cross, double hosts, double nic_scale,
                             const AlphaBeta &link, double chunk_bytes);

/// Hosts that share one machine's cores (nic_scale > 1): a tree's rank
/// that takes a message and passes it on waits for its core twice, to
/// take it and to pass it on, while the core's other hosts' ranks run
/// their own steps: two messages' fixed time (alpha) more for each of the
/// `relays` ranks on the first chunk's longest path, whatever its size
/// (measured 14-30 us more than priced from 4 KiB to 128 KiB, 4 hosts x
/// 1 rank on 2 cores, alpha 11.6 us; decision 0046).
double shared_cores_relays_ns(double relays, const AlphaBeta &link);

/// The ranks on a bcast tree's longest path over `nranks` ranks that take
/// a message and pass it on (neither the root nor the last leaf): a
/// k-nomial tree's rounds less one, a heap-ordered binary tree's depth
/// less one, a chain's nranks - 2. Zero for 2 ranks or fewer.
int knomial_relays(int64_t nranks, int radix);
int binary_relays(int64_t nranks);
int chain_relays(int64_t nranks);

double binary_pipeline_ns(int64_t nranks, double bytes, double segment_bytes,
                          const AlphaBeta &ab);

/// Binomial gather or scatter of `block_bytes` per rank:
/// ceil(log2 P) alpha + (P-1) block beta (seed 000's
/// log p L + (p-1)/p n/B with n = P block).
double binomial_gather_ns(int64_t nranks, double block_bytes, const Links &ab);

/// Segments for a pipeline of `nranks` stages: ceil(s / z_opt), within
/// [1, max].
int pipeline_segments(int64_t nranks, double bytes, const AlphaBeta &ab,
                      int max_segments);

/// Allreduce shapes (reduction compute left out). P' = largest_power(P, k)
/// ranks run the exchange; the other P - P' fold into them first (f =
/// ceil((P-P')/P') messages into one rank) and get the result back.
/// recursive k-ing      log_k P' ((k-1) alpha + (2k-3) beta s): the k-1
///                      messages into a rank queue at its port
///                      + (alpha + (f+1) beta s) + f (alpha + beta s) folding
/// (recursive doubling is k = 2: log2 P' steps, +2 messages)
/// ring                 2(P-1)(alpha + beta s/P)
/// Rabenseifner         2 log2 P' alpha + 2 (P'-1)/P' s beta
///                      + 2 (alpha + beta s) when P' < P
/// k-nomial reduce + bcast: twice knomial_bcast_ns.
double recursive_k_allreduce_ns(int64_t nranks, int radix, double bytes,
                                const Links &ab);
double ring_allreduce_ns(int64_t nranks, double bytes, const AlphaBeta &ab);
double rabenseifner_allreduce_ns(int64_t nranks, double bytes, const Links &ab);

/// Recursive halving over P' = 2^R ranks of n bytes: step j exchanges
/// n / 2^(j+1) bytes among spans of P' / 2^j ranks (the widest first);
/// log2 P' alpha + (P'-1)/P' n beta on one link.
double halving_ns(int64_t pk, double n, const Links &links);

/// Rabenseifner reduce: recursive halving reduce-scatter over P' ranks
/// (log2 P' alpha + (P'-1)/P' s beta) and a binomial gather of the pieces
/// (the same again), 2 log2 P' alpha + 2 (P'-1)/P' s beta,
/// + (alpha + 2 beta s) for the fold when P' < P (its bytes queue at the
/// receiver's port ahead of the first step's).
double rabenseifner_reduce_ns(int64_t nranks, double bytes, const Links &ab);

/// Recursive halving reduce_scatter of P blocks of s bytes (n = P s):
/// log2 P' alpha + (P'-1)/P' n beta; when P' < P the extras first send
/// their n bytes and get their block back: + (alpha + beta n) +
/// (alpha + beta s).
double halving_reduce_scatter_ns(int64_t nranks, double block_bytes,
                                 const Links &ab);

/// Recursive k-ing allgather of s bytes per rank: log_k P' steps of k-1
/// messages, (P-1) s bytes in, and when P' < P the fold (alpha + f beta
/// s) and the others' blocks sent back, f (alpha + beta (P-1) s).
double recursive_k_allgather_ns(int64_t nranks, int radix, double block_bytes,
                                const Links &ab);

/// Two-tree bcast (Sanders-Speck-Traeff) of s bytes in S chunks: S + 2
/// floor(log2(P-1)) - 1 steps (at least S) of alpha + beta s/S, each rank
/// sending and receiving at most one chunk per step.
double two_tree_bcast_ns(int64_t nranks, double bytes, int segments,
                         const AlphaBeta &ab);

/// LogP, one small message: 2o + L end to end; a sender repeats every
/// max(o, g).
double logp_message_ns(const LogGP &p);

/// Linear broadcast: L + (P-2) max(o,g) + 2o.
double logp_linear_bcast_ns(int64_t nranks, const LogGP &p);

/// The optimal (greedy) LogP broadcast: every informed rank sends to a new
/// rank every max(o,g) until all P know; a message informs its receiver
/// 2o+L after its send starts. Returns the time the last rank is informed.
/// seed 002: P=8, L=6, g=4, o=2 gives 24.
double logp_optimal_bcast_ns(int64_t nranks, const LogGP &p);

/// The greedy schedule itself: parent[r] (-1 for the root 0), informed
/// times, and each rank's children in send order.
struct LogpBcastSchedule {
    std::vector<int> parent;
    std::vector<double> informed_ns;
    std::vector<std::vector<int>> children;
};
LogpBcastSchedule logp_optimal_bcast(int nranks, const LogGP &p);

/// Karp et al.'s reach P(t): ranks informed by time t, P(t) = 1 for
/// t < 2o+L, else P(t-o) + P(t-L-2o); o is read as max(o,g) so the
/// recurrence also holds for g > o. Integral times.
int64_t logp_reach(int64_t t, const LogGP &p);

} // namespace ucg::cost
