// SPDX-License-Identifier: BSD-3-Clause
// The cost function of every flat algorithm: the input's link (and, for
// ring and chain, its r -> r+1 links) in the closed forms of
// cost/formulas.h. Each file's header comment derives its form.
#include "algorithms/costs.h"

#include "algorithms/two_tree.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <queue>

namespace ucg::algorithms::detail::costs {

namespace {

constexpr int kMaxSegments = 256;

// The link with its NIC shared by the host's ranks, for the algorithms
// whose ranks all talk at once.
cost::AlphaBeta shared(const CostInput &in)
{
    return in.link.shared_by(in.ranks_per_nic);
}

// The rack's switch link (racks of consecutive ranks), shared as shared().
cost::AlphaBeta shared_mid(const CostInput &in)
{
    return in.mid.shared_by(in.ranks_per_nic);
}

// Where a host's ranks all send at once, the last waits once behind the
// others' gaps at the NIC; after that they stay staggered (the bytes of
// every round still queue: shared()).
double nic_queue(const CostInput &in)
{
    return in.link.gap_ns > 0 && in.ranks_per_nic > 1
               ? double(in.ranks_per_nic - 1) * in.link.gap_ns
               : 0;
}

// `far` between hosts, and the host's own link for the steps among the
// consecutive ranks of one host (CostInput::local_ranks; with 1 every
// step is far); in racks of consecutive ranks (CostInput::mid_ranks),
// the rack's link for the steps inside one, its NIC shared as `far`'s.
cost::Links links(const CostInput &in, bool shared_nic)
{
    cost::Links l(shared_nic ? shared(in) : in.link, in.local, in.local_ranks);
    if (in.mid_ranks > 0) {
        l.mid = shared_nic ? shared_mid(in) : in.mid;
        l.mid_block = in.mid_ranks;
    }
    return l;
}

// Hosts that share cores: the relays on a tree's longest path each wait
// for their core (cost::shared_cores_relays_ns).
double relays_wait(const CostInput &in, double relays)
{
    return in.nic_scale > 1 ? cost::shared_cores_relays_ns(relays, in.link) : 0;
}

double steps(const CostInput &in)
{
    return double(cost::knomial_rounds(in.nranks, 2));
}

// Combining `bytes` (gamma; 0 without an operator).
double combine(const CostInput &in, double bytes)
{
    return in.reduce_ns_per_byte * bytes;
}

double peers(const CostInput &in)
{
    return double(std::max<int64_t>(in.nranks - 1, 0));
}

// The same algorithm moving data only (the bcast half of an allreduce).
CostInput no_combine(CostInput in)
{
    in.reduce_ns_per_byte = 0;
    return in;
}

// The neighbour link at the slowest one's byte rate.
cost::AlphaBeta slowest_neighbour(const CostInput &in)
{
    return in.neighbour.with_beta(std::max(in.neighbour.beta_ns_per_byte,
                                           in.neighbour_slowest_ns_per_byte));
}

// A root taking blocks from distinct senders and combining them (c ns
// each): the senders' gaps do not queue at the root, so after the first
// each further block costs the busier of its port (the bytes) and its
// CPU (an overhead and the combine); the last one's combine follows it
// (added by the caller). Without LogGP parts a whole message each.
cost::AlphaBeta fan_in(cost::AlphaBeta ab, double c)
{
    if (ab.gap_ns >= 0) {
        ab.overhead_ns += c;
        ab.gap_ns = 0;
    }
    return ab;
}

cost::Links fan_in_links(const CostInput &in, double c)
{
    cost::Links l(fan_in(in.link, c), fan_in(in.local, c), in.local_ranks);
    if (in.mid_ranks > 0) {
        l.mid = fan_in(in.mid, c);
        l.mid_block = in.mid_ranks;
    }
    return l;
}

// Cyclic shifts (Bruck, dissemination) of radix k: round j talks at
// distance k^j. On hosts of local_ranks consecutive ranks a round at
// distance >= local_ranks crosses hosts for every rank; the rounds below
// cross for a few ranks each, and one rank's chain back through them
// crosses at most once (the host boundaries are local_ranks apart). The
// critical path: `far` for the wide rounds and one narrow round, `near`
// for the other narrow ones. In racks of mid_ranks consecutive ranks
// (`mid`: a round's cost over the rack's switch) the rounds at distances
// from a host up to a rack cross hosts inside racks, and the chain back
// through them and the narrow ones crosses a rack boundary at most once:
// one of them `far`, the others `mid`.
double shift_rounds(const CostInput &in, int radix, double far, double near,
                    double mid)
{
    const int k = std::max(radix, 2);
    const int rounds = cost::knomial_rounds(in.nranks, k);
    int narrow = 0, middle = 0;
    int64_t d = 1;
    for (; narrow < rounds && d < in.local_ranks; d *= k) {
        ++narrow;
    }
    for (; in.mid_ranks > 0 && narrow + middle < rounds && d < in.mid_ranks;
         d *= k) {
        ++middle;
    }
    const int between = middle + (narrow > 0 ? 1 : 0); // cross hosts
    return double(rounds - narrow - middle) * far +
           (between > 0 ? far + double(between - 1) * mid : 0) +
           double(std::max(narrow - 1, 0)) * near;
}

// Exact NIC loads where the placement is known (hosts of local_ranks
// (> 1) consecutive ranks, or CostInput::hosts) and the links' LogGP
// parts too: the most messages of one round that leave one host.
// `far_sends(r)` counts rank r's messages to other hosts among ranks
// [first, last). On consecutive hosts the pattern repeats every `period`
// ranks (a multiple of the host size), so hosts are scanned over one
// period; at most kScanHosts hosts or kScanRanks ranks are scanned
// (beyond that an estimate: the first hosts stand for the others).
constexpr int64_t kScanRanks = 1 << 12;
constexpr int64_t kScanHosts = 16;

bool placed(const CostInput &in)
{
    return (in.local_ranks > 1 || in.hosts != nullptr) && in.link.gap_ns >= 0 &&
           in.local.gap_ns >= 0;
}

// Rank v's host (v in the algorithm's order, rotated by the root).
int64_t host_of(const CostInput &in, int64_t v)
{
    if (in.hosts == nullptr) {
        return v / std::max<int64_t>(in.local_ranks, 1);
    }
    const int64_t p = std::max<int64_t>(in.nranks, 1);
    return (*in.hosts)[size_t((v + in.root) % p)];
}

// How many hosts the ranks fill (host_of's range).
size_t host_count(const CostInput &in)
{
    if (in.hosts != nullptr) {
        return size_t(std::max<int64_t>(in.num_hosts, 1));
    }
    const int64_t b = std::max<int64_t>(in.local_ranks, 1);
    return size_t(std::max<int64_t>((in.nranks + b - 1) / b, 1));
}

// Whether a message between ranks u and v leaves a host.
bool crosses(const CostInput &in, int64_t u, int64_t v)
{
    return host_of(in, u) != host_of(in, v);
}

// Hosts that do not hold consecutive ranks (CostInput::hosts), with the
// links' LogGP parts known: the counts run on the placement itself.
bool scattered(const CostInput &in)
{
    return in.hosts != nullptr && placed(in);
}

// Hosts in any order in racks (CostInput::host_rack): whether u and v
// sit in two racks.
bool crosses_racks(const CostInput &in, int64_t u, int64_t v)
{
    return in.host_rack != nullptr &&
           (*in.host_rack)[size_t(host_of(in, u))] !=
               (*in.host_rack)[size_t(host_of(in, v))];
}

// Trees on hosts in any order are walked message by message (tree_walk)
// up to this many ranks (a walk costs ~0.3 us a rank: ~0.3 ms here, and
// a selection walks up to six trees); beyond, the closed forms price
// every edge as if it left its host, and the binary tree's path its
// rounds' queues. (Hosts of consecutive ranks keep their closed forms:
// walking 4,096 ranks made a selection take 6.5 ms against its 1 ms
// goal.)
constexpr int64_t kWalkRanks = 1024;

bool walked(const CostInput &in)
{
    return scattered(in) && in.nranks <= kWalkRanks;
}

// The link between ranks u and v: their host's, their rack's (racks of
// consecutive ranks, or CostInput::host_rack) or `link` (`top`).
const cost::AlphaBeta &pair_link(const CostInput &in, int64_t u, int64_t v)
{
    if (!crosses(in, u, v)) {
        return in.local;
    }
    if (in.host_rack != nullptr) {
        return crosses_racks(in, u, v) ? in.top : in.mid;
    }
    return in.mid_ranks > 0 && u / in.mid_ranks == v / in.mid_ranks ? in.mid
                                                                    : in.link;
}

// The far link of a round between hosts in any order: `link`, or where
// they sit in racks the mean of the rack's and the top link, weighted by
// the round's messages between hosts that cross racks (n_top) and that
// do not (n_mid). `worst`: a round that crosses racks at all waits on
// the top link's latency (its ranks wait on each other; a ring's
// neighbours only on their own: the mean).
cost::AlphaBeta round_link(const CostInput &in, int64_t n_top, int64_t n_mid,
                           bool worst)
{
    if (in.host_rack == nullptr || n_top + n_mid == 0) {
        return in.link;
    }
    const double w = double(n_top) / double(n_top + n_mid);
    const auto mix = [&](double top, double mid) {
        return w * top + (1 - w) * mid;
    };
    cost::AlphaBeta l{mix(in.top.alpha_ns, in.mid.alpha_ns),
                      mix(in.top.beta_ns_per_byte, in.mid.beta_ns_per_byte),
                      mix(in.top.overhead_ns, in.mid.overhead_ns),
                      mix(in.top.gap_ns, in.mid.gap_ns)};
    if (worst && n_top > 0) {
        l.alpha_ns = in.top.alpha_ns;
    }
    return l;
}

template <typename FarSends>
int64_t busiest_nic(const CostInput &in, int64_t first, int64_t last,
                    int64_t period, FarSends &&far_sends)
{
    if (in.hosts != nullptr) {
        std::vector<int64_t> n(size_t(std::max<int64_t>(in.num_hosts, 1)), 0);
        for (int64_t r = first; r < std::min(last, first + kScanRanks); ++r) {
            n[size_t(host_of(in, r))] += far_sends(r);
        }
        return *std::max_element(n.begin(), n.end()) * in.nic_scale;
    }
    const int64_t b = in.local_ranks;
    const int64_t end =
        std::min({last, first / b * b + std::min(period, kScanHosts * b) + b,
                  first + kScanRanks});
    int64_t most = 0;
    for (int64_t h = first / b; h * b < end; ++h) {
        int64_t n = 0;
        for (int64_t r = std::max(h * b, first); r < std::min((h + 1) * b, end);
             ++r) {
            n += far_sends(r);
        }
        most = std::max(most, n);
    }
    return most * in.nic_scale;
}

// Hosts in any order (scattered): the busiest host of a round in which
// `each(r, visit)` visits rank r's peers, by the NIC time of its
// messages of m bytes to other hosts (those that cross racks over the
// top link): how many messages leave it, and the round's far link
// (round_link: that host's mix; `worst`: the top latency where any
// message of the round crosses racks).
struct Busiest {
    int64_t nic = 0;
    cost::AlphaBeta far;
};
template <typename Each>
Busiest busiest_mix(const CostInput &in, double m, bool worst, Each &&each)
{
    const size_t hosts = host_count(in);
    std::vector<int64_t> far(hosts, 0), top(hosts, 0);
    bool any_top = false;
    for (int64_t r = 0; r < std::min(in.nranks, kScanRanks); ++r) {
        const size_t h = size_t(host_of(in, r));
        each(r, [&](int64_t q) {
            if (crosses(in, r, q)) {
                ++far[h];
                top[h] += crosses_racks(in, r, q);
            }
        });
        any_top = any_top || top[h] > 0;
    }
    const auto load = [&](size_t h) {
        return double(far[h] - top[h]) * in.mid.issue_ns(m) +
               double(top[h]) * in.top.issue_ns(m);
    };
    size_t most = 0;
    for (size_t h = 1; h < hosts; ++h) {
        if (in.host_rack != nullptr ? load(h) > load(most)
                                    : far[h] > far[most]) {
            most = h;
        }
    }
    Busiest b{far[most] * in.nic_scale,
              round_link(in, top[most], far[most] - top[most], false)};
    if (worst && any_top) {
        b.far.alpha_ns = in.top.alpha_ns;
    }
    return b;
}

// A round in which each rank sends `sends` messages of m bytes, `nic` of
// its host's leaving it. All near: the host's link. Else the host's NIC
// sends one message per issue: ranks that reach the round `together`
// (after a round inside the host, or at the start) wait behind all the
// others' messages; ranks staggered by an earlier round's queue overlap
// it, and the round takes the longer of one rank's messages and the
// NIC's load. (The simulator's critical paths on nodes=8,ppn=8 at 8 B:
// recursive doubling's first round between hosts waits 7 issues, the
// next two none; radix 4's first 14 of its 16, the second takes 24
// issues.)
double round_ns(const CostInput &in, int sends, int64_t nic, double m,
                bool together, const cost::AlphaBeta *far = nullptr)
{
    if (nic == 0) {
        return in.local.fan_ns(sends, m);
    }
    const cost::AlphaBeta &l = far != nullptr ? *far : in.link;
    const double own = l.fan_ns(sends, m);
    return together ? l.message_ns(m) +
                          double(std::max<int64_t>(sends - 1, nic - 1)) *
                              l.issue_ns(m)
                    : std::max(own, double(nic) * l.issue_ns(m));
}

// Recursive k-ing's rounds and fold where the placement is known (placed):
// round j exchanges among aligned spans of k^(j+1) of the first P' ranks at
// distances of multiples of k^j; the others fold into v % P' first and
// get the result back last.
// `m` bytes fold in; round j sends messages of `round_bytes(j)` bytes;
// `back` bytes go back to each extra.
template <typename RoundBytes>
double recursive_k_hosts(const CostInput &in, int k, double m,
                         RoundBytes &&round_bytes, double back)
{
    const int64_t p = in.nranks, b = in.local_ranks;
    const bool blocks = in.hosts == nullptr;
    const int64_t pk = cost::largest_power(p, k);
    const int rounds = cost::knomial_rounds(pk, k);
    const int f = int((p - pk + pk - 1) / pk);
    // The fold's pattern repeats only every lcm(P', host) ranks: its
    // first hosts stand for the others (host 0's core takes the most).
    const int64_t fold_scan = kScanHosts * std::max<int64_t>(b, 1);
    double t = 0;
    bool together = true;
    if (pk < p) {
        const int64_t in_nic =
            busiest_nic(in, pk, p, fold_scan, [&](int64_t r) {
                return int64_t(crosses(in, r % pk, r));
            });
        t += round_ns(in, f, in_nic, m, true);
        together = in_nic == 0;
    }
    int64_t d = 1;
    for (int j = 0; j < rounds; ++j, d *= k) {
        int64_t nic = 0;
        if (blocks && d >= b) {
            // Every peer is on another host.
            nic = std::min(b, pk) * (k - 1);
        } else if (!blocks || b % (d * k) != 0) {
            const int64_t span = d * k;
            nic = busiest_nic(in, 0, pk, blocks ? std::lcm(b, span) : pk,
                              [&](int64_t r) {
                                  const int64_t base = r - (r / d) % k * d;
                                  int64_t n = 0;
                                  for (int i = 0; i < k; ++i) {
                                      const int64_t peer = base + i * d;
                                      n += peer != r && crosses(in, peer, r);
                                  }
                                  return n;
                              });
        }
        // Racks of consecutive ranks: a round whose exchanges all stay
        // inside racks crosses only their switches. Its groups tile
        // [0, P') in windows of d k; one crosses racks where a rack's edge
        // falls strictly inside a window (never where the spans fit the
        // racks; k = 3 among the first 27 ranks of racks of 32 neither).
        bool rack = blocks && in.mid_ranks > 0;
        for (int64_t edge = in.mid_ranks; rack && edge < pk;
             edge += in.mid_ranks) {
            rack = edge % (d * k) == 0;
        }
        t += round_ns(in, k - 1, nic, round_bytes(j), together,
                      rack ? &in.mid : nullptr);
        together = nic == 0;
    }
    if (pk < p) {
        // The results go back from the core: rank c answers the extras
        // c + w P' (w = 1..f), counted at c's host.
        const int64_t out = busiest_nic(in, 0, pk, fold_scan, [&](int64_t c) {
            int64_t n = 0;
            for (int64_t e = c + pk; e < p; e += pk) {
                n += crosses(in, e, c);
            }
            return n;
        });
        t += round_ns(in, f, out, back, together);
    }
    return t;
}

// `far` between hosts and the host's link inside one, as links() gives
// them; where hosts do not hold consecutive ranks (CostInput::hosts),
// each power-of-two span of the halving and doubling rounds its own:
// the host's link where every pair at distance span/2 shares a host,
// else `far` (`shared_nic`: with the NIC shared by the busiest host's
// pairs that cross). In racks, `far` is the busiest host's mix of the
// rack and top links (the top latency wherever a pair crossed racks
// made Rabenseifner's reduce at 8 B on random racks 1.28x its
// simulation).
cost::Links span_links(const CostInput &in, bool shared_nic)
{
    cost::Links l = links(in, shared_nic);
    if (!scattered(in)) {
        return l;
    }
    const int64_t pk = cost::largest_power(in.nranks, 2);
    for (int64_t span = 2; span <= pk; span *= 2) {
        CostInput core = in;
        core.nranks = pk;
        const Busiest b =
            busiest_mix(core, in.block_bytes / double(span), false,
                        [&](int64_t r, auto visit) { visit(r ^ (span / 2)); });
        const int64_t nic = b.nic;
        const cost::AlphaBeta &far = b.far;
        l.spans.emplace_back(span, nic == 0     ? in.local
                                   : shared_nic ? far.shared_by(int(nic))
                                                : far);
    }
    return l;
}

// Cyclic shifts (Bruck, dissemination) where hosts do not hold
// consecutive ranks (CostInput::hosts): round j sends `sends` messages
// of round_bytes(j) to r + i k^j; inside hosts the host's link, else the
// far one behind the busiest host's NIC's queue (round_ns).
template <typename RoundBytes>
double shift_placed(const CostInput &in, int radix, int sends,
                    RoundBytes &&round_bytes)
{
    const int64_t p = in.nranks, k = std::max(radix, 2);
    const int rounds = cost::knomial_rounds(p, int(k));
    double t = 0;
    int64_t d = 1;
    bool together = true;
    for (int j = 0; j < rounds; ++j, d *= k) {
        const Busiest b =
            busiest_mix(in, round_bytes(j), true, [&](int64_t r, auto visit) {
                for (int64_t i = 1; i <= sends; ++i) {
                    visit((r + i * d) % p);
                }
            });
        t += round_ns(in, sends, b.nic, round_bytes(j), together, &b.far);
        together = b.nic == 0;
    }
    return t;
}

// One ring step of b bytes: a message over the mean link (each step waits
// for the previous one's arrival), or the slowest link's sender's pace.
// Where hosts do not hold consecutive ranks (scattered): a message at the
// mean r -> r+1 latency and the far link's bytes (the host's, where no
// r -> r+1 leaves a host), or the busiest host's NIC passing the
// messages of all its ranks whose successor is elsewhere, whichever is
// longer (the NIC's queue overlaps the messages' flight; sharing the
// bytes alone added a whole alpha to them: 1.32x the simulation on round
// robin at 64 KiB).
double ring_step(const CostInput &in, double b, double cpu)
{
    if (!scattered(in)) {
        return std::max(in.neighbour.message_ns(b) + cpu,
                        slowest_neighbour(in).stage_ns(b, 1, cpu));
    }
    const int64_t p = in.nranks;
    const Busiest busiest = busiest_mix(
        in, b, false, [&](int64_t r, auto visit) { visit((r + 1) % p); });
    const int64_t nic = busiest.nic;
    const cost::AlphaBeta &far = busiest.far;
    cost::AlphaBeta l = nic > 0 ? far : in.local;
    l.alpha_ns = nic > 0 ? in.neighbour.alpha_ns : l.alpha_ns;
    return std::max({l.message_ns(b) + cpu, l.stage_ns(b, 1, cpu),
                     double(nic) * far.port_ns(b)});
}

} // namespace

double direct_exchange(const CostInput &in, Variant)
{
    // Every rank sends P-1 blocks and takes P-1: after the first message
    // each further one costs the busier of its port and its CPU (an
    // overhead at each end, and the combine of reduce_scatter).
    if (in.nranks <= 1) {
        return 0;
    }
    // The combine holds the CPU while the port could send: it adds.
    const double s = in.block_bytes;
    const cost::AlphaBeta ab = in.all_pairs ? *in.all_pairs : shared(in);
    return nic_queue(in) + ab.message_ns(s) + combine(in, s) +
           std::max(peers(in) - 1, 0.0) *
               (ab.stage_ns(s, 1, 0) + combine(in, s));
}

// A root's fan to or from its host's other ranks (over `local`, its own
// port) beside the others (over `link`, its host's NIC): the longer.
double root_fan(const CostInput &in, const cost::AlphaBeta &near,
                const cost::AlphaBeta &far, double c,
                const cost::AlphaBeta &mid)
{
    if (in.nranks <= 1) {
        return 0;
    }
    const double s = in.block_bytes;
    const int64_t n = std::clamp<int64_t>(in.host_peers, 0, in.nranks - 1),
                  f = in.nranks - 1 - n;
    const double local = n > 0 ? near.fan_ns(double(n), s) : 0;
    // Racks of consecutive ranks (or counted, in any order): the root's
    // rack-mates on other hosts cross only the rack's switch, through the
    // same NIC port as the rest: their issues first, the others' after,
    // the last one's whole message.
    const int64_t fm =
        in.root_rack_peers >= 0 ? std::clamp<int64_t>(in.root_rack_peers, 0, f)
        : in.mid_ranks > 0 ? std::clamp<int64_t>(in.mid_ranks - 1 - n, 0, f)
                           : 0;
    double remote = 0;
    if (f > fm) {
        remote = double(fm) * mid.issue_ns(s) +
                 double(f - fm - 1) * far.issue_ns(s) + far.message_ns(s);
    } else if (f > 0) {
        remote = mid.fan_ns(double(f), s);
    }
    return std::max(local, remote) + c;
}

double linear(const CostInput &in, Variant)
{
    return root_fan(in, in.local, in.link, 0, in.mid);
}

double linear_in(const CostInput &in, Variant)
{
    // The root combines every other rank's block as it lands.
    const double c = combine(in, in.block_bytes);
    return root_fan(in, fan_in(in.local, c), fan_in(in.link, c),
                    in.nranks > 1 ? c : 0, fan_in(in.mid, c));
}

namespace {

// A tree where hosts do not hold consecutive ranks (CostInput::hosts),
// its messages taken in time order as the simulator takes them. Down,
// rank v passes to child(v, 0), child(v, 1), ... (-1 ends) as soon as it
// has the data; up, each child sends its result to parent(w) once its
// own children's are in, each combined for `c` ns. The edge to or from
// child w carries bytes(w). An edge inside a host takes the host's link
// from the sender's own port; one between hosts queues its gap and
// bytes at the sender's host's NIC and its bytes at the receiver's; a
// rank's CPU spends an overhead per message at each end. Sums of each
// round's busiest host over-count here (the busiest host of one round
// is seldom the next one's). O(P log P).
template <typename Parent, typename Child, typename Bytes>
double tree_walk(const CostInput &in, bool up, Parent &&parent, Child &&child,
                 Bytes &&bytes, double c)
{
    const int64_t p = in.nranks;
    if (p <= 1) {
        return 0;
    }
    const size_t hosts = host_count(in);
    std::vector<double> cpu(size_t(p), 0), port(size_t(p), 0), tx(hosts, 0),
        rx(hosts, 0), done(size_t(p), 0);
    std::vector<int64_t> pending(size_t(p), 0);
    // Events in time order, as the simulator runs them, ties in the order
    // made (its first sends in rank order): a rank has its data (`to` <
    // 0: it sends, taking its port or its host's NIC in that order), or a
    // message lands at `to` (taking the receiving host's NIC, then its
    // CPU).
    struct Event {
        double t;
        int64_t seq, from, to;
        bool operator>(const Event &o) const
        {
            return t != o.t ? t > o.t : seq > o.seq;
        }
    };
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
    int64_t made = 0;
    const auto push = [&](double t, int64_t from, int64_t to) {
        events.push({t, made++, from, to});
    };
    const auto send = [&](double t, int64_t from, int64_t to) {
        const cost::AlphaBeta &l = pair_link(in, from, to);
        const double m = bytes(up ? from : to);
        double &q = crosses(in, from, to) ? tx[size_t(host_of(in, from))]
                                          : port[size_t(from)];
        const double start = std::max({t, cpu[size_t(from)], q});
        cpu[size_t(from)] = start + l.overhead_ns;
        q = start + l.port_ns(m);
        push(start + l.message_ns(m), from, to);
    };
    const auto land = [&](double t, int64_t from, int64_t to) {
        const cost::AlphaBeta &l = pair_link(in, from, to);
        if (crosses(in, from, to)) {
            double &r = rx[size_t(host_of(in, to))];
            t = std::max(t, r + l.beta_ns_per_byte * bytes(up ? from : to));
            r = t;
        }
        // The receive's overhead is in message_ns; a busy CPU takes it
        // (and the combine) after what it is doing.
        done[size_t(to)] = std::max(t, cpu[size_t(to)] + l.overhead_ns) + c;
        cpu[size_t(to)] = done[size_t(to)];
    };
    if (up) {
        // Each child sends to its parent once its own children's are in.
        for (int64_t w = 1; w < p; ++w) {
            ++pending[size_t(parent(w))];
        }
        for (int64_t w = 1; w < p; ++w) {
            if (pending[size_t(w)] == 0) {
                push(0, w, -1);
            }
        }
    } else {
        // A rank issues all its sends when the data is in (each one's
        // start waits on its CPU and port or NIC, as the simulator's
        // sends that depend on one receive).
        push(0, 0, -1);
    }
    while (!events.empty()) {
        const Event e = events.top();
        events.pop();
        if (e.to >= 0) {
            land(e.t, e.from, e.to);
            if (!up) {
                push(done[size_t(e.to)], e.to, -1);
            } else if (--pending[size_t(e.to)] == 0 && e.to != 0) {
                push(done[size_t(e.to)], e.to, -1);
            }
        } else if (up) {
            send(e.t, e.from, parent(e.from));
        } else {
            for (int64_t next = 0, w; (w = child(e.from, next)) >= 0; ++next) {
                send(e.t, e.from, w);
            }
        }
    }
    return up ? done[0] : *std::max_element(done.begin(), done.end());
}

// The k-nomial tree walked (tree_walk): at distance d the ranks
// v = 0 mod kd pass to v + i d, the farthest first. A gather's or
// scatter's message (`subtrees`) carries the child's subtree of up to d
// blocks.
double knomial_walk(const CostInput &in, int radix, bool up, bool subtrees,
                    double c)
{
    const int64_t p = in.nranks, k = std::max(radix, 2);
    // Rank w's distance to its parent: its lowest non-zero base-k digit.
    const auto distance = [&](int64_t w) {
        int64_t d = 1;
        while (w % (k * d) == 0) {
            d *= k;
        }
        return d;
    };
    const auto parent = [&](int64_t w) { return w - w % (k * distance(w)); };
    const auto child = [&](int64_t v, int64_t next) -> int64_t {
        for (int64_t d = v == 0 ? cost::largest_power(p - 1, int(k))
                                : distance(v) / k;
             d >= 1; d /= k) {
            for (int64_t i = k - 1; i >= 1; --i) {
                if (v + i * d < p && next-- == 0) {
                    return v + i * d;
                }
            }
        }
        return -1;
    };
    const auto bytes = [&](int64_t w) {
        return in.block_bytes *
               double(subtrees ? std::min(distance(w), p - w) : 1);
    };
    return tree_walk(in, up, parent, child, bytes, c);
}

} // namespace

double knomial(const CostInput &in, Variant v)
{
    const double waits =
        relays_wait(in, cost::knomial_relays(in.nranks, v.radix));
    if (walked(in)) {
        return knomial_walk(in, v.radix, false, false, 0) + waits;
    }
    return cost::knomial_bcast_ns(in.nranks, v.radix, in.block_bytes,
                                  links(in, false)) +
           waits;
}

double knomial_in(const CostInput &in, Variant v)
{
    const double c = combine(in, in.block_bytes);
    if (walked(in)) {
        return knomial_walk(in, v.radix, true, false, c);
    }
    return cost::knomial_bcast_ns(in.nranks, v.radix, in.block_bytes,
                                  fan_in_links(in, c)) +
           cost::knomial_rounds(in.nranks, v.radix) * c;
}

namespace {

// cost::shared_cores_stage_ns over the hosts the ranks fill.
double shared_cores_stage(const CostInput &in, double cross,
                          const cost::AlphaBeta &link, double z)
{
    return cost::shared_cores_stage_ns(cross, double(host_count(in)),
                                       double(in.nic_scale), link, z);
}

// A chain where hosts do not hold consecutive ranks (scattered): hop i
// (of P-1, in the order the segments travel) goes from rank i to i+1, or
// from P-1-i to P-2-i going `up` to the root. Its link: the host's or the
// far one. Every segment crosses the hops one after another (the fill),
// then the others follow at the slowest hop's pace; and a host's NIC
// carries each segment once for every hop that leaves it: where that
// queue is the bottleneck, the chain takes the hops up to the host's
// first sender, every segment through its NIC, and the last segment's
// hops from the host's last sender on (the simulator's chains on
// round-robin and random placements are NIC bound from 64 KiB).
double chain_placed(const CostInput &in, int segments, double z, double cpu,
                    bool up)
{
    const int64_t p = in.nranks;
    const auto sender = [&](int64_t i) { return up ? p - 1 - i : i; };
    const auto receiver = [&](int64_t i) { return up ? p - 2 - i : i + 1; };
    // Per host: its NIC's time per segment, its first and last sender and
    // the last one's issue (its message's flight is in the hops after).
    std::vector<double> load(host_count(in), 0), last_issue(load.size(), 0);
    std::vector<int64_t> first(load.size(), p), last(load.size(), -1);
    std::vector<double> at(size_t(p), 0); // when segment 1 reaches hop i
    double pace = 0;
    int64_t crossing = 0;
    for (int64_t i = 0; i + 1 < p; ++i) {
        const cost::AlphaBeta &l = pair_link(in, sender(i), receiver(i));
        at[size_t(i + 1)] = at[size_t(i)] + l.message_ns(z) + cpu;
        pace = std::max(pace, l.stage_ns(z, 1, cpu));
        if (crosses(in, sender(i), receiver(i))) {
            ++crossing;
            const size_t h = size_t(host_of(in, sender(i)));
            last_issue[h] = l.port_ns(z);
            load[h] += last_issue[h];
            first[h] = std::min(first[h], i);
            last[h] = i;
        }
    }
    // Hosts that share cores: every hop that leaves a host carries a
    // segment at once (decision 0044, as the binary tree's edges, 0039).
    if (in.nic_scale > 1) {
        pace = std::max(pace,
                        shared_cores_stage(in, double(crossing), in.link, z));
    }
    const double fill = at[size_t(p - 1)];
    double t = fill + double(segments - 1) * pace;
    for (size_t h = 0; h < load.size(); ++h) {
        if (last[h] >= 0) {
            t = std::max(t, at[size_t(first[h])] + double(segments) * load[h] -
                                last_issue[h] + fill - at[size_t(last[h])]);
        }
    }
    return t;
}

double chain_way(const CostInput &in, Variant v, bool up)
{
    // P-1 hops; each rank combines its segment before passing it on. The
    // first segment crosses every link (their mean); the others follow
    // at the pace of the slowest.
    const double z = in.block_bytes / v.segments;
    const double cpu = combine(in, z);
    if (scattered(in) && in.nranks > 1) {
        return chain_placed(in, v.segments, z, cpu, up);
    }
    // (Hosts that share cores: the neighbour links' beta counts them,
    // selector.cpp.)
    return cost::pipelined_ns(peers(in), 1, 1, z, cpu, in.neighbour) +
           double(v.segments - 1) * slowest_neighbour(in).stage_ns(z, 1, cpu);
}

} // namespace

double chain(const CostInput &in, Variant v)
{
    return chain_way(in, v, false) +
           relays_wait(in, cost::chain_relays(in.nranks));
}

double chain_in(const CostInput &in, Variant v)
{
    return chain_way(in, v, true);
}

namespace {

// The heap-ordered binary tree (children 2v+1 and 2v+2) of a bcast
// (`down`) or reduce (up) in chunks of z bytes, each rank spending `cpu`
// on one: the first chunk's path (`fill`) and what one more chunk holds
// each resource once every level forwards at once.
struct HeapTree {
    double fill = 0;
    double port_tx = 0; ///< a rank's own sends
    double port_rx = 0; ///< a rank's own receives
    double cpu = 0;     ///< a rank's overheads and combine
    double nic_tx = 0;  ///< the busiest host NIC's sends
    double nic_rx = 0;  ///< the busiest host NIC's receives

    double stage() const
    {
        return std::max({port_tx, port_rx, cpu, nic_tx, nic_rx});
    }
    HeapTree operator+(const HeapTree &o) const
    {
        return {fill + o.fill, port_tx + o.port_tx, port_rx + o.port_rx,
                cpu + o.cpu,   nic_tx + o.nic_tx,   nic_rx + o.nic_rx};
    }
};

HeapTree heap_tree(const CostInput &in, double z, double cpu, bool down)
{
    const int64_t p = in.nranks;
    const int64_t b = std::max<int64_t>(in.local_ranks, 1);
    const bool known = in.hosts != nullptr;
    const cost::AlphaBeta &far = in.link;
    auto edge = [&](int64_t child) -> const cost::AlphaBeta & {
        return pair_link(in, child, (child - 1) / 2);
    };
    // The edges leaving host h (down: from its ranks to children
    // elsewhere; up: from its ranks to parents elsewhere). On hosts of
    // consecutive ranks, beyond host 0 every edge into or out of a host
    // crosses: a host h >= 1 holds [hb, hb + b), its children start at
    // 2hb + 1 >= (h + 1) b and its parents end below hb. Else counted.
    std::vector<int64_t> outs, ups;
    if (known) {
        outs.assign(size_t(std::max<int64_t>(in.num_hosts, 1)), 0);
        ups = outs;
        for (int64_t v = 1; v < p; ++v) {
            if (&edge(v) != &in.local) {
                ++outs[size_t(host_of(in, (v - 1) / 2))];
                ++ups[size_t(host_of(in, v))];
            }
        }
    }
    auto children_out = [&](int64_t h) -> int64_t {
        if (known) {
            return outs[size_t(h)];
        }
        return h == 0 ? std::max<int64_t>(std::min(2 * b, p - 1) - (b - 1), 0)
                      : std::clamp<int64_t>(p - (2 * h * b + 1), 0, 2 * b);
    };
    auto parents_out = [&](int64_t h) -> int64_t {
        if (known) {
            return ups[size_t(h)];
        }
        return h == 0 ? 0 : std::clamp<int64_t>(p - h * b, 0, b);
    };
    auto leaving = [&](int64_t h) {
        return down ? children_out(h) : parents_out(h);
    };
    const bool queues = (b > 1 || known) && far.gap_ns >= 0;
    HeapTree t;
    // Down, a second child (even v) waits for its sibling's send; up, the
    // sibling's chunk has landed by then (its subtree is no deeper). Where
    // hosts hold several ranks, an edge between them also queues behind
    // the sending host's others (round_ns): all of them where the leaves
    // start a reduce together, else as many as the NIC's load outlasts
    // the rank's own message.
    // (Where the hosts hold ranks in any order, the first chunk's path is
    // walked below instead.)
    for (int64_t v = p - 1; !walked(in) && v > 0; v = (v - 1) / 2) {
        const int64_t from = host_of(in, down ? (v - 1) / 2 : v);
        const int sends = down && v % 2 == 0 ? 2 : 1;
        t.fill += (!queues || &edge(v) == &in.local
                       ? edge(v).fan_ns(sends, z)
                       : round_ns(in, sends, leaving(from), z,
                                  !down && v == p - 1, &edge(v))) +
                  cpu;
    }
    if (walked(in)) {
        // tree_walk; each receive of a reduce combines half `cpu`.
        t.fill = tree_walk(
            in, !down, [](int64_t w) { return (w - 1) / 2; },
            [&](int64_t v, int64_t next) {
                return next < 2 && 2 * v + 1 + next < p ? 2 * v + 1 + next
                                                        : int64_t{-1};
            },
            [&](int64_t) { return z; }, down ? cpu : cpu / 2);
    }
    const cost::AlphaBeta &own = b > 1 || known ? in.local : far;
    if (far.gap_ns < 0 || (!queues && in.ranks_per_nic > 1)) {
        // Without LogGP parts, or where the placement is unknown: every
        // rank forwards at once through its host's shared NIC.
        t.port_tx = shared(in).stage_ns(z, 2, cpu);
        return t;
    }
    // A rank sends two chunks and takes one down, the reverse up.
    const double tx = own.port_ns(z);
    const double rx = own.beta_ns_per_byte * z;
    t.port_tx = (down ? 2 : 1) * tx;
    t.port_rx = (down ? 1 : 2) * rx;
    t.cpu = 3 * own.overhead_ns + cpu;
    // The busiest NICs: a bcast's sends the edges out of a host (on
    // consecutive hosts host 0's or host 1's, the first with a full set
    // of children), takes those into one (any host but 0, each rank's
    // parent elsewhere); a reduce's the reverse.
    const int64_t most_out =
        known ? *std::max_element(outs.begin(), outs.end())
              : std::max(children_out(0), p > b ? children_out(1) : 0);
    const int64_t most_in = known   ? *std::max_element(ups.begin(), ups.end())
                            : p > b ? parents_out(1)
                                    : 0;
    const double nic_tx = far.port_ns(z);
    const double nic_rx = far.beta_ns_per_byte * z;
    t.nic_tx = double(down ? most_out : most_in) * nic_tx;
    t.nic_rx = double(down ? most_in : most_out) * nic_rx;
    if (in.nic_scale > 1) {
        // Pipelined, every edge of the tree carries a chunk at once.
        int64_t cross = 0;
        for (int64_t v = 1; v < p; ++v) {
            cross += crosses(in, v, (v - 1) / 2) ? 1 : 0;
        }
        t.nic_tx =
            std::max(t.nic_tx, shared_cores_stage(in, double(cross), far, z));
    }
    return t;
}

double pipelined(const HeapTree &t, int chunks)
{
    return t.fill + double(std::max(chunks, 1) - 1) * t.stage();
}

} // namespace

double binary_tree(const CostInput &in, Variant v)
{
    const double z = in.block_bytes / v.segments;
    return in.nranks <= 1 ? 0
                          : pipelined(heap_tree(in, z, 0, true), v.segments) +
                                relays_wait(in, cost::binary_relays(in.nranks));
}

double binary_tree_reduce(const CostInput &in, Variant v)
{
    const double z = in.block_bytes / v.segments;
    return in.nranks <= 1
               ? 0
               : pipelined(heap_tree(in, z, combine(in, 2 * z), false),
                           v.segments);
}

int chain_segments(const CostInput &in)
{
    return cost::pipeline_segments(in.nranks, in.block_bytes, in.neighbour,
                                   kMaxSegments);
}

int binary_segments(const CostInput &in)
{
    return std::max(1, cost::pipeline_segments(in.nranks, in.block_bytes,
                                               in.link, kMaxSegments) /
                           2);
}

int eager_segments(const CostInput &in)
{
    if (in.eager_bytes <= 0 || in.block_bytes <= 0) {
        return 1;
    }
    // A plan serves the sizes of its class, below the next power of two
    // after the block (the runtime caches one per bit width): that bound
    // below the limit goes whole; above it, chunks of half the limit.
    const double bound = std::exp2(std::floor(std::log2(in.block_bytes)) + 1);
    if (bound <= in.eager_bytes) {
        return 1;
    }
    const double chunks = std::ceil(bound / (in.eager_bytes / 2));
    return int(std::min<double>(chunks, kMaxSegments));
}

double scatter_allgather(const CostInput &in, Variant)
{
    if (in.nranks <= 1) {
        return 0;
    }
    // A binomial scatter of the P pieces, then a ring allgather of them
    // (its steps wait on each other around the ring: ring_step).
    const double p = double(in.nranks), s = in.block_bytes;
    return cost::binomial_gather_ns(in.nranks, s / p, links(in, false)) +
           (p - 1) * ring_step(in, s / p, 0);
}

namespace {

// The two-tree bcast's first chunk's way down tree 0 walked (tree_walk),
// each rank passing it on in its edges' order (wherever the placement is
// known: on 2 hosts of 4 the closed form took 0.39-0.50x the simulation
// at 8 B-4 KiB).
double two_tree_fill(const CostInput &in, const TwoTrees &tt, double z)
{
    std::vector<std::array<int64_t, 2>> kids(size_t(in.nranks), {-1, -1});
    kids[0][0] = tt.root[0] + 1;
    for (int i = 0; i < tt.n; ++i) {
        const int up = tt.parent[0][size_t(i)];
        if (up >= 0) {
            auto &k = kids[size_t(up + 1)];
            k[k[0] < 0 ? 0 : 1] = i + 1;
        }
    }
    for (auto &k : kids) {
        if (k[1] >= 0 &&
            tt.delay[0][size_t(k[1] - 1)] < tt.delay[0][size_t(k[0] - 1)]) {
            std::swap(k[0], k[1]);
        }
    }
    return tree_walk(
        in, false, [](int64_t) { return int64_t{0}; },
        [&](int64_t r, int64_t next) {
            return next < 2 ? kids[size_t(r)][size_t(next)] : int64_t{-1};
        },
        [&](int64_t) { return z; }, 0);
}

} // namespace

double two_tree(const CostInput &in, Variant v)
{
    // Two in-order trees over consecutive ranks: the first chunk crosses
    // the trees' 2 log2 P levels (the top ones between hosts: the far
    // link); the others follow at the pace of the links most edges use,
    // between neighbours (a ring's r -> r+1 links).
    if (in.nranks <= 1) {
        return 0;
    }
    const int chunks = std::max(v.segments, 1);
    const double z = in.block_bytes / chunks;
    const int depth = int(std::bit_width(uint64_t(in.nranks - 1))) - 1;
    const int near =
        in.local_ranks > 1
            ? std::min(depth, int(std::bit_width(uint64_t(in.local_ranks))) - 1)
            : 0;
    // Racks of consecutive ranks: the levels whose spans fit a rack cross
    // only its switch; at least the top one crosses racks.
    const int mid =
        in.mid_ranks > 0
            ? std::clamp(int(std::bit_width(uint64_t(in.mid_ranks))) - 1 - near,
                         0, std::max(depth - near - 1, 0))
            : 0;
    double fill =
        depth < 1
            ? in.link.message_ns(z)
            : 2 * ((depth - near - mid) * in.link.message_ns(z) +
                   mid * in.mid.message_ns(z) + near * in.local.message_ns(z));
    // Below the root, a chunk's path passes 2 depth - 1 relays.
    const double waits = relays_wait(in, 2.0 * std::max(depth, 1) - 1);
    fill += waits;
    if (placed(in) && in.nranks <= kWalkRanks) {
        const TwoTrees tt = make_two_trees(int(in.nranks - 1));
        fill = two_tree_fill(in, tt, z) + waits;
        // Then per chunk (one tree's) the busiest host's NIC sends half
        // of both trees' edges that leave it, at each edge's own link,
        // beside each rank's one send a step (counted wherever the
        // placement is known: on hosts of 2 consecutive ranks the
        // estimate below took 1.38-1.46x the simulation).
        std::vector<double> load(host_count(in));
        for (int t = 0; t < 2; ++t) {
            for (int i = 0; i < tt.n; ++i) {
                const int64_t from = tt.parent[t][size_t(i)] + 1, to = i + 1;
                if (crosses(in, from, to)) {
                    const cost::AlphaBeta &l = pair_link(in, from, to);
                    load[size_t(host_of(in, from))] += l.port_ns(z) / 2;
                }
            }
        }
        double step =
            std::max({in.link.stage_ns(z, 1, 0), in.local.stage_ns(z, 1, 0),
                      *std::max_element(load.begin(), load.end())});
        if (in.nic_scale > 1) {
            // A chunk goes down one tree: half of both trees' crossing
            // edges (heap_tree's binary tree, decision 0039).
            int64_t cross = 0;
            for (int t = 0; t < 2; ++t) {
                for (int i = 0; i < tt.n; ++i) {
                    cross += crosses(in, tt.parent[t][size_t(i)] + 1, i + 1);
                }
            }
            step = std::max(
                step, shared_cores_stage(in, double(cross) / 2, in.link, z));
        }
        return fill + double(chunks - 1) * step;
    }
    // Per chunk a host's NIC carries the trees' edges into and out of its
    // block of ranks: about three (simulated on nodes=8,ppn=8: 2.5-3 far
    // chunks a step); one where each rank is its own host. In racks, the
    // busiest host's edges stay inside its rack but one.
    const int edges = in.local_ranks > 1 ? 3 : 1;
    const double nic =
        in.mid_ranks > 0
            ? (edges - 1) * in.mid.stage_ns(z, 1, 0) + in.link.stage_ns(z, 1, 0)
            : edges * in.link.stage_ns(z, 1, 0);
    return fill + double(chunks - 1) *
                      std::max(slowest_neighbour(in).stage_ns(z, 1, 0), nic);
}

int two_tree_segments(const CostInput &in)
{
    // A chain of 2 floor(log2(P-1)) + 2 stages has the trees' fill.
    const int64_t depth = cost::knomial_rounds(in.nranks, 2);
    return cost::pipeline_segments(2 * depth + 2, in.block_bytes, in.link,
                                   kMaxSegments);
}

double ordered_reduce(const CostInput &in, Variant v)
{
    // Ranks [root, P) reduce over one tree, [0, root) over another beside
    // it, whose result the root takes in one more message.
    if (in.nranks <= 1) {
        return 0;
    }
    const int64_t root = std::clamp<int64_t>(in.root, 0, in.nranks - 1);
    CostInput bigger = in;
    bigger.nranks = std::max(root, in.nranks - root);
    return knomial_in(bigger, v) + (root > 0
                                        ? in.link.message_ns(in.block_bytes) +
                                              combine(in, in.block_bytes)
                                        : 0);
}

double rabenseifner_reduce(const CostInput &in, Variant)
{
    // Halving (every rank talks: the shared NIC) combines (P-1)/P of a
    // block at each rank; the binomial gather of the pieces to the root
    // runs the same steps back, one talker per pair. The fold's bytes
    // queue at the receiver's port ahead of the first step's.
    if (in.nranks <= 1) {
        return 0;
    }
    const int64_t pk = cost::largest_power(in.nranks, 2);
    const double p = double(pk), s = in.block_bytes;
    const cost::AlphaBeta far = shared(in);
    // Hosts in any order: the gather walked, a binomial tree whose child
    // at distance d sends its subtree's d pieces (its senders on one host
    // seldom send at once).
    CostInput pieces = in;
    pieces.nranks = pk;
    pieces.block_bytes = s / p;
    const double gather = walked(in)
                              ? knomial_walk(pieces, 2, true, true, 0)
                              : cost::halving_ns(pk, s, span_links(in, false));
    return nic_queue(in) + cost::halving_ns(pk, s, span_links(in, true)) +
           gather +
           (pk < in.nranks ? far.alpha_ns + 2 * s * far.beta_ns_per_byte : 0) +
           combine(in, (p - 1) / p * s);
}

double binomial_gather(const CostInput &in, Variant)
{
    if (walked(in)) {
        return knomial_walk(in, 2, true, true, 0);
    }
    return cost::binomial_gather_ns(in.nranks, in.block_bytes,
                                    links(in, false));
}

double binomial_scatter(const CostInput &in, Variant v)
{
    if (walked(in)) {
        return knomial_walk(in, 2, false, true, 0);
    }
    return binomial_gather(in, v);
}

double twice_linear(const CostInput &in, Variant v)
{
    return linear_in(in, v) + linear(no_combine(in), v);
}

double twice_knomial(const CostInput &in, Variant v)
{
    return knomial_in(in, v) + knomial(no_combine(in), v);
}

double twice_chain(const CostInput &in, Variant v)
{
    // Each rank sends a chunk of each pipeline per segment: their stages
    // add. In racks of consecutive ranks the ranks beside the top
    // switch send one chunk across it and the other to a rack-mate (the
    // slowest link's pace for both counted it twice: 1.30x at 16 MiB).
    const double both = chain_in(in, v) + chain(no_combine(in), v);
    if (scattered(in) || in.mid_ranks <= 0) {
        return both;
    }
    const double z = in.block_bytes / v.segments;
    return both - double(v.segments - 1) *
                      std::max(slowest_neighbour(in).stage_ns(z, 1, 0) -
                                   in.mid.stage_ns(z, 1, 0),
                               0.0);
}

double twice_binary_tree(const CostInput &in, Variant v)
{
    // The root passes each chunk down as soon as it is reduced: the two
    // trees' fills add, and their stages share each rank's resources
    // (the reduce mostly takes, the bcast mostly sends).
    const double z = in.block_bytes / v.segments;
    return in.nranks <= 1
               ? 0
               : pipelined(heap_tree(in, z, combine(in, 2 * z), false) +
                               heap_tree(in, z, 0, true),
                           v.segments);
}

double recursive_k(const CostInput &in, Variant v)
{
    // k-1 blocks per round, and the fold's one.
    const double rounds = cost::knomial_rounds(in.nranks, v.radix);
    const double exchange =
        placed(in)
            ? recursive_k_hosts(
                  in, std::max(v.radix, 2), in.block_bytes,
                  [&](int) { return in.block_bytes; }, in.block_bytes)
            : nic_queue(in) + cost::recursive_k_allreduce_ns(in.nranks, v.radix,
                                                             in.block_bytes,
                                                             links(in, true));
    return exchange +
           combine(in, (rounds * (v.radix - 1) + 1) * in.block_bytes);
}

double ring_allreduce(const CostInput &in, Variant)
{
    // P-1 reduce-scatter steps, then P-1 allgather steps, of s/P each.
    const double b = in.block_bytes / double(std::max<int64_t>(in.nranks, 1));
    return peers(in) * (ring_step(in, b, combine(in, b)) + ring_step(in, b, 0));
}

double rabenseifner_allreduce(const CostInput &in, Variant)
{
    const double p = double(std::max<int64_t>(in.nranks, 1));
    return nic_queue(in) +
           cost::rabenseifner_allreduce_ns(in.nranks, in.block_bytes,
                                           span_links(in, true)) +
           combine(in, (p - 1) / p * in.block_bytes);
}

double dissemination(const CostInput &in, Variant v)
{
    // Every rank sends k-1 messages each round, to ranks r + i k^j.
    const int fan = std::max(v.radix, 2) - 1;
    if (scattered(in)) {
        return shift_placed(in, v.radix, fan, [](int) { return 0.0; });
    }
    return nic_queue(in) + shift_rounds(in, v.radix, shared(in).fan_ns(fan, 0),
                                        in.local.fan_ns(fan, 0),
                                        shared_mid(in).fan_ns(fan, 0));
}

double pairwise_exchange(const CostInput &in, Variant)
{
    // P-1 steps, each waiting for the previous step's exchange.
    const cost::AlphaBeta ab = in.all_pairs ? *in.all_pairs : shared(in);
    return nic_queue(in) + peers(in) * ab.message_ns(in.block_bytes);
}

double ring_exchange(const CostInput &in, Variant)
{
    // Reduce-scatter: each step combines one block.
    return peers(in) *
           ring_step(in, in.block_bytes, combine(in, in.block_bytes));
}

double bruck_allgather(const CostInput &in, Variant)
{
    // The blocks land rotated in scratch: a final copy of all P puts them
    // in place (recursive doubling receives them in place; at a power of
    // two the two otherwise tie, and on the emulated 2x2 cluster Bruck
    // ran 1.1-1.4x recursive doubling from 512 KiB, decision 0035).
    const double rotate =
        in.nranks > 1 ? double(in.nranks) * in.block_bytes * in.copy_ns_per_byte
                      : 0;
    if (scattered(in)) {
        // Round j sends 2^j blocks, the last what is left.
        return rotate + shift_placed(in, 2, 1, [&](int j) {
                   const double have = std::pow(2.0, j);
                   return std::min(have, double(in.nranks) - have) *
                          in.block_bytes;
               });
    }
    const cost::AlphaBeta ab = shared(in);
    return rotate + nic_queue(in) +
           shift_rounds(in, 2, ab.alpha_ns, in.local.alpha_ns,
                        shared_mid(in).alpha_ns) +
           double(std::max<int64_t>(in.nranks - 1, 0)) * in.block_bytes *
               ab.beta_ns_per_byte;
}

double recursive_k_allgather(const CostInput &in, Variant v)
{
    if (placed(in) && in.nranks > 1) {
        // Round j sends k^j of the P' ranks' shares of the P-1 other
        // blocks; each extra gets every other block back.
        const int k = std::max(v.radix, 2);
        const int64_t pk = cost::largest_power(in.nranks, k);
        const double share =
            pk > 1 ? double(in.nranks - 1) / double(pk - 1) * in.block_bytes
                   : 0;
        return recursive_k_hosts(
            in, k, in.block_bytes,
            [&](int j) { return share * std::pow(double(k), j); },
            double(in.nranks - 1) * in.block_bytes);
    }
    return nic_queue(in) + cost::recursive_k_allgather_ns(in.nranks, v.radix,
                                                          in.block_bytes,
                                                          links(in, true));
}

double bruck_alltoall(const CostInput &in, Variant)
{
    const double half = in.block_bytes * double(in.nranks) / 2;
    if (scattered(in)) {
        return shift_placed(in, 2, 1, [&](int) { return half; });
    }
    return nic_queue(in) + shift_rounds(in, 2, shared(in).message_ns(half),
                                        in.local.message_ns(half),
                                        shared_mid(in).message_ns(half));
}

double halving_reduce_scatter(const CostInput &in, Variant)
{
    return nic_queue(in) +
           cost::halving_reduce_scatter_ns(in.nranks, in.block_bytes,
                                           span_links(in, true)) +
           combine(in, peers(in) * in.block_bytes);
}

double recursive_doubling_scan(const CostInput &in, Variant)
{
    return steps(in) *
           (in.link.message_ns(in.block_bytes) + combine(in, in.block_bytes));
}

} // namespace ucg::algorithms::detail::costs
