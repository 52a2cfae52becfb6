// SPDX-License-Identifier: BSD-3-Clause
// The hierarchical decision: per level the shape and radix, and one
// segment count, by latency + (segments - 1) * slowest stage; for gather
// and scatter the k-nomial radix per level of the leader tree.
#include "select/decide.h"

#include "select/level_cost.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ucg::select::detail {

using algorithms::LevelChoice;
using algorithms::Shape;
using plan::Collective;
using topology::LevelKind;

constexpr int kMaxSegments = 64;
constexpr double kMinChunkBytes = 256;

/// A channel's cost where it names one, else the link's, per field.
cost::AlphaBeta channel_cost(const algorithms::ChannelLimits &ch,
                             const cost::AlphaBeta &link)
{
    cost::AlphaBeta ab = link;
    ab.alpha_ns =
        ch.alpha_ns > 0 ? ch.alpha_ns : link.alpha_ns * ch.alpha_scale;
    ab.beta_ns_per_byte =
        ch.ns_per_byte > 0 ? ch.ns_per_byte : link.beta_ns_per_byte;
    return ab;
}

std::vector<LevelInfo>
level_infos(const topology::Topology &topo,
            const std::vector<topology::Partition> &parts,
            const algorithms::ChannelLimits &bcast,
            const algorithms::ChannelLimits &incast, double reduce_ns_per_byte,
            double copy_ns_per_byte, const algorithms::ChannelLimits &mcast)
{
    std::vector<LevelInfo> out;
    for (const auto &p : parts) {
        const cost::AlphaBeta ab = cost::alpha_beta(p.link);
        LevelInfo li{p.kind,
                     int(p.groups.size()),
                     0,
                     p.participants,
                     ab,
                     channel_cost(bcast, ab),
                     channel_cost(incast, ab),
                     true,
                     true,
                     std::max(p.link.overhead_ns, p.link.gap_ns),
                     reduce_ns_per_byte,
                     copy_ns_per_byte,
                     channel_cost(mcast, ab)};
        for (const auto &g : p.groups) {
            li.max_group = std::max(li.max_group, int(g.ranks.size()));
            const int m0 = topo.mcast_domain_of(g.ranks[0]);
            for (int r : g.ranks) {
                li.one_host =
                    li.one_host && topo.host_of(r) == topo.host_of(g.ranks[0]);
                li.mcast = li.mcast && m0 >= 0 && topo.mcast_domain_of(r) == m0;
            }
        }
        out.push_back(li);
    }
    return out;
}

Result<Shape> shape_from_name(std::string_view name)
{
    for (Shape s : {Shape::kLinear, Shape::kKnomial, Shape::kChain,
                    Shape::kBinary, Shape::kShm, Shape::kMcast}) {
        if (name == shape_name(s)) {
            return s;
        }
    }
    return fail("unknown level shape '" + std::string(name) +
                "' (expected linear, knomial, chain, binary_tree, shm, mcast "
                "or auto)");
}

/// Shared memory reaches one host, multicast one multicast domain.
Result<void> check_reach(const LevelInfo &li, Shape s)
{
    const std::string level = topology::level_name(li.kind);
    if (s == Shape::kShm && !li.one_host) {
        return fail("shm at level " + level +
                    ", whose groups span hosts (shared memory reaches one "
                    "host)");
    }
    if (s == Shape::kMcast && !li.mcast) {
        return fail("mcast at level " + level +
                    ", which has no multicast between its groups' members");
    }
    return {};
}

std::string rule_reason(const RuleSet &set, const Rule &r)
{
    return set.origin + " rule '" + r.text + "'";
}

/// First matching rule of the user's set, then of the built-in set.
const Rule *find_rule(const RuleSet &user, Collective c,
                      std::optional<LevelKind> l, uint64_t bytes, int n,
                      std::string *reason)
{
    for (const RuleSet *set : {&user, &builtin_rules()}) {
        if (const Rule *r = set->find(c, l, bytes, n)) {
            *reason = rule_reason(*set, *r);
            return r;
        }
    }
    return nullptr;
}

/// Per-level shape candidates for one chunk size; picks the cheapest of
/// latency + (C-1) stage. Returns the cost pair of the pick.
struct Pick {
    LevelChoice how;
    std::string name;
    ShapeCost cost;
    std::string reason = "cost model";
};

bool is_top_exchange(std::string_view name)
{
    return name == "recursive_doubling" || name == "rabenseifner";
}

/// The top group of a hierarchical allreduce exchanging a chunk of b
/// bytes instead of reducing and bcasting it: recursive doubling (every
/// leader sends and combines the whole chunk each round) and Rabenseifner
/// (recursive halving then doubling: each round half the bytes of the
/// one before, so (P'-1)/P' of the chunk sent and combined each way).
std::vector<Pick> top_exchanges(const LevelInfo &li, double b, bool every_rank,
                                bool halving_asked)
{
    const int64_t n = li.max_group;
    const int64_t pk = cost::largest_power(n, 2);
    const int rounds = cost::knomial_rounds(pk, 2);
    const int fold = pk < n ? 1 : 0; // non-powers of two fold in first
    const double combine = b * li.reduce_ns_per_byte;
    // Where this level holds every rank (one per host), the plan is
    // the flat recursive doubling: where those hosts share cores,
    // its bytes cost them nic_scale times, as the flat one's do
    // (decision 0044). Priced without them its segments looked like
    // a pipeline the cores cannot run: on the 4x1 cluster, chosen at
    // 1-4 MiB (4 MiB: 3.0 ms predicted, 8.4 ms measured), it ran
    // 1.26-1.59x Open MPI's time where Rabenseifner runs 0.97-1.09x.
    // (Leaders above a host's level keep the link's price: so priced,
    // the 4x2 cluster's plan gave way to Rabenseifner from 512 KiB,
    // which ran 0.76-1.04x Open MPI where it had run 0.56-0.86x.)
    cost::AlphaBeta ab = li.ab;
    if (li.shares_cores && every_rank) {
        ab.beta_ns_per_byte *= li.nic_scale;
    }
    // The next segment's rounds follow each round's port time (or its
    // overheads and combine) behind.
    auto round = [&ab](double bytes, double cpu) {
        return std::max(ab.port_ns(bytes), 2 * ab.overhead_ns + cpu);
    };
    std::vector<Pick> out;
    {
        const double t = cost::recursive_k_allreduce_ns(n, 2, b, ab) +
                         (rounds + fold) * combine;
        const double stage =
            ab.gap_ns < 0 ? t : (rounds + fold) * round(b, combine);
        out.push_back({{Shape::kKnomial, 2}, "recursive_doubling", {t, stage}});
    }
    // Where the top holds every rank, a halving top would be the flat
    // Rabenseifner, which the flat costs price (on the 4x1 cluster, two
    // hosts a core, this price took it at 64 KiB: 109 us against
    // recursive doubling's 87, decision 0066); there and for no bytes
    // (a barrier) only a rule asks for it.
    if (halving_asked || (!every_rank && b > 0)) {
        const double part = double(pk - 1) / double(pk);
        const double t =
            cost::rabenseifner_allreduce_ns(n, b, ab) + (part + fold) * combine;
        double stage = fold * 2 * round(b, combine);
        double piece = b;
        for (int64_t k = 1; k < pk; k *= 2) {
            piece /= 2;
            stage +=
                round(piece, piece * li.reduce_ns_per_byte) + round(piece, 0);
        }
        out.push_back({{Shape::kKnomial, 2},
                       "rabenseifner",
                       {t, ab.gap_ns < 0 ? t : stage}});
    }
    return out;
}

Pick pick_level(const LevelInfo &li, double b, int c, bool up, bool down,
                bool top_rk, const Rule *forced, const std::string &why,
                bool bcast = false, bool every_rank = false)
{
    // Up the tree every message a combining rank receives is then reduced
    // by that rank (gamma per byte, shape_cost).
    auto eval = [&](Shape s, int k) {
        const bool shm = s == Shape::kShm;
        ShapeCost u =
            up ? shape_cost(s, k, li.max_group, b, shm ? li.shm_up : li.ab,
                            true, li.reduce_ns_per_byte)
               : ShapeCost{};
        const bool mc = s == Shape::kMcast;
        ShapeCost d = down ? shape_cost(s, k, li.max_group, b,
                                        shm  ? li.shm_down
                                        : mc ? li.mcast_down
                                             : li.ab,
                                        false)
                           : ShapeCost{};
        // Where the same ranks send both up and down (chain, binary and
        // k-nomial trees: an inner rank sends its partial result up and
        // the result down) both stages hold that rank's send port: a
        // pipelined chunk costs their sum. A linear or shm level's root
        // only receives on the way up and only sends on the way down
        // (the simulator's separate send and receive ports, cost/
        // simulator.h), so the two stages overlap, unless the ranks share
        // their cores (oversubscribed): both ports' work is the cores'.
        const bool overlap = (s == Shape::kLinear || shm) && !li.shares_cores;
        if (li.shares_cores && !li.one_host && s != Shape::kLinear &&
            s != Shape::kMcast) {
            // Pipelined, each of the tree's n-1 edges between the
            // members' n hosts carries a chunk at once (decision 0044, as
            // the flat trees, 0039).
            const double n = double(std::max(li.max_group, 1));
            const double held = cost::shared_cores_stage_ns(
                n - 1, n, double(li.nic_scale), li.ab, b);
            u.stage_ns = up ? std::max(u.stage_ns, held) : u.stage_ns;
            d.stage_ns = down ? std::max(d.stage_ns, held) : d.stage_ns;
            // Down a tree, each relay on the longest path waits for its
            // core (decision 0046, as the flat trees).
            if (down) {
                const int relays =
                    s == Shape::kKnomial ? cost::knomial_relays(li.max_group, k)
                    : s == Shape::kBinary ? cost::binary_relays(li.max_group)
                    : s == Shape::kChain  ? cost::chain_relays(li.max_group)
                                          : 0;
                d.latency_ns += cost::shared_cores_relays_ns(relays, li.ab);
            }
        }
        return ShapeCost{u.latency_ns + d.latency_ns,
                         overlap ? std::max(u.stage_ns, d.stage_ns)
                                 : u.stage_ns + d.stage_ns};
    };
    auto total = [c](const ShapeCost &s) {
        return s.latency_ns + (c - 1) * s.stage_ns;
    };
    std::vector<Pick> cands;
    if (top_rk) {
        cands = top_exchanges(li, b, every_rank,
                              forced != nullptr &&
                                  forced->algorithm == "rabenseifner");
        if (forced != nullptr && is_top_exchange(forced->algorithm)) {
            for (const Pick &p : cands) {
                if (p.name == forced->algorithm) {
                    return {p.how, p.name, p.cost, why};
                }
            }
        }
    }
    if (forced != nullptr && forced->algorithm != "auto") {
        Shape s = shape_from_name(forced->algorithm).value();
        int k = forced->radix > 0 ? forced->radix : 2;
        return {{s, k}, shape_name(s), eval(s, k), why};
    }
    for (auto [s, k] :
         std::vector<std::pair<Shape, int>>{{Shape::kLinear, 2},
                                            {Shape::kKnomial, 2},
                                            {Shape::kKnomial, 4},
                                            {Shape::kKnomial, 8},
                                            {Shape::kChain, 2},
                                            {Shape::kBinary, 2}}) {
        cands.push_back({{s, k}, shape_name(s), eval(s, k)});
    }
    if (li.one_host) {
        cands.push_back({{Shape::kShm, 2}, "shm", eval(Shape::kShm, 2)});
    }
    if (li.mcast && bcast) { // one-to-many only: no incast across hosts
        cands.push_back({{Shape::kMcast, 2}, "mcast", eval(Shape::kMcast, 2)});
    }
    return *std::min_element(cands.begin(), cands.end(),
                             [&](const Pick &a, const Pick &z) {
                                 return total(a.cost) < total(z.cost);
                             });
}

/// k-nomial gather of `held` bytes per member over a group of n: rounds
/// of alpha, k-1 messages per round at the parent, every byte into the
/// leader once.
double gather_level_ns(const LevelInfo &li, int k, double held)
{
    const int rounds = cost::knomial_rounds(li.max_group, k);
    const int extra = std::min(k, li.max_group) - 2;
    return rounds * (li.ab.alpha_ns + extra * li.per_msg_ns) +
           double(li.max_group - 1) * held * li.ab.beta_ns_per_byte;
}

/// One incast gather of `held` bytes per member through shared memory:
/// one message's latency, every byte into the leader once.
double incast_level_ns(const LevelInfo &li, double held)
{
    // The leader takes each member's slot: an overhead per further one.
    return li.shm_up.alpha_ns +
           double(li.max_group - 1) * held * li.shm_up.beta_ns_per_byte +
           (li.shm_up.gap_ns < 0 ? 0
                                 : double(std::max(li.max_group - 2, 0)) *
                                       li.shm_up.overhead_ns);
}

/// A gather/scatter level's choice: radix (>= n: linear), or shm.
struct GatherPick {
    int radix = 2;
    bool shm = false;
    double ns = 0;
};

Result<GatherPick> pick_gather_level(const LevelInfo &li, const Rule *r,
                                     bool gather, double held,
                                     const std::string &why)
{
    const int n = std::max(li.max_group, 2);
    std::vector<int> radixes = {2, 4, 8, n};
    bool shm = gather && li.one_host && li.max_group > 1;
    if (r != nullptr && r->algorithm != "auto") {
        if (r->algorithm == "shm" && gather) {
            if (auto reach = check_reach(li, Shape::kShm); !reach) {
                return fail(why + ": " + reach.error().message);
            }
            return GatherPick{2, true, incast_level_ns(li, held)};
        }
        if (r->algorithm != "knomial" && r->algorithm != "linear") {
            return fail(why + ": expected knomial, linear" +
                        std::string(gather ? ", shm" : "") + " or auto for a " +
                        (gather ? "gather" : "scatter") + " level");
        }
        radixes = {r->algorithm == "linear" ? n : std::max(r->radix, 2)};
        shm = false;
    }
    GatherPick best{radixes[0], false, gather_level_ns(li, radixes[0], held)};
    for (int k : radixes) {
        if (gather_level_ns(li, k, held) < best.ns) {
            best = {k, false, gather_level_ns(li, k, held)};
        }
    }
    // On a tie the incast: one op per member, no tree of messages.
    if (shm && incast_level_ns(li, held) <= best.ns) {
        best = {2, true, incast_level_ns(li, held)};
    }
    return best;
}

/// Leader gather/scatter: per level the radix (2, 4, 8 or linear) by
/// gather_level_ns, or for gather at a one-host level the shm incast,
/// unless a level rule names knomial[:radix=k], linear or shm. Where a
/// level takes the shm incast, the registry's hierarchical gather builds
/// the plan (per-level shapes), else the leader gather (compose.h).
Result<void> decide_leader_gather(const std::vector<LevelInfo> &infos,
                                  const RuleSet &user, Decision &d)
{
    const double p = double(infos.empty() ? 1 : infos[0].participants);
    const bool gather = d.collective == Collective::kGather;
    double t = 0;
    bool any_shm = false;
    d.request.per_level.clear();
    for (const LevelInfo &li : infos) {
        const double held = p / li.participants * double(d.bytes);
        const int n = std::max(li.max_group, 2);
        std::string why;
        const Rule *r =
            find_rule(user, d.collective, li.kind, d.bytes, li.max_group, &why);
        if (r == nullptr || r->algorithm == "auto") {
            why = "cost model";
        }
        auto pick = pick_gather_level(li, r, gather, held, why);
        if (!pick) {
            return pick.error();
        }
        t += pick->ns;
        any_shm = any_shm || pick->shm;
        const bool linear = !pick->shm && pick->radix >= n;
        d.levels.push_back({li.kind,
                            li.groups,
                            li.max_group,
                            {pick->shm ? "shm"
                             : linear  ? "linear"
                                       : "knomial",
                             std::min(pick->radix, n), 1, pick->ns, why}});
        d.request.per_level.push_back({pick->shm ? Shape::kShm
                                       : linear  ? Shape::kLinear
                                                 : Shape::kKnomial,
                                       std::min(pick->radix, n)});
    }
    d.chosen.predicted_ns = t;
    d.custom_builder = !any_shm;
    return {};
}

/// The exchange among the top leaders of hierarchical allgather and
/// reduce_scatter (algorithms/hier_exchange.cpp). With n leaders and
/// pieces of b bytes, ring costs (n-1)(alpha + b beta), Bruck and recursive
/// doubling ceil(log2 n) alpha + (n-1) b beta, and recursive doubling two
/// more steps when n is not a power of two: recursive doubling for powers
/// of two, else Bruck; reduce_scatter has only ring and linear.
std::string exchange_top(Collective c, const std::vector<LevelInfo> &infos,
                         std::string top)
{
    if (c == Collective::kReduceScatter) {
        return "ring";
    }
    if (c != Collective::kAllgather || infos.empty()) {
        return top;
    }
    const int n = infos.back().max_group;
    return (n & (n - 1)) == 0 ? "recursive_doubling" : "bruck";
}

/// What the hierarchical exchanges (algorithms/hier_exchange.cpp) move
/// besides the per-level bcast (allgather) or reduction (reduce_scatter)
/// of all P blocks that pick_level prices: with n top leaders holding
/// g = P/n blocks of m bytes each, allgather gathers each rank's block to
/// its leader and the leaders exchange pieces of g m (ring: n-1 steps;
/// Bruck and recursive doubling ceil(log2 n) steps, (n-1) g m bytes);
/// reduce_scatter reduce-scatters pieces of g m in a ring among the
/// leaders and scatters each rank's block down; alltoall gathers every
/// rank's P blocks up, the leaders send each other g^2 m, and scatter P
/// blocks down to every rank.
double exchange_extra_ns(Collective c, const std::vector<LevelInfo> &infos,
                         const std::vector<algorithms::LevelChoice> &per_level,
                         double m, const std::string &top)
{
    if (infos.empty()) {
        return 0;
    }
    const double p = double(infos[0].participants);
    const LevelInfo &t = infos.back();
    const double n = double(std::max(t.max_group, 1));
    const double g = p / n;
    double edges = 0; // one pass of the gather edges below the top
    for (size_t l = 0; l + 1 < infos.size(); ++l) {
        const double held = p / infos[l].participants * m;
        const double moved = c == Collective::kAlltoall ? held * p : held;
        // The edges follow the level's shape (algorithms/hier_gather.cpp):
        // a star where linear, a k-nomial tree, else radix 2; allgather's
        // shm levels gather by incast.
        const algorithms::LevelChoice how =
            per_level.empty() ? algorithms::LevelChoice{Shape::kKnomial, 2}
                              : per_level[std::min(l, per_level.size() - 1)];
        if (how.shape == Shape::kShm && c == Collective::kAllgather) {
            edges += incast_level_ns(infos[l], moved);
            continue;
        }
        const int k = how.shape == Shape::kLinear    ? infos[l].max_group
                      : how.shape == Shape::kKnomial ? how.radix
                                                     : 2;
        edges += gather_level_ns(infos[l], std::max(k, 2), moved);
    }
    const double ab_top = t.ab.alpha_ns;
    const double beta = t.ab.beta_ns_per_byte;
    switch (c) {
    case Collective::kAllgather: {
        if (top == "shm") {
            // Each leader writes its piece into the ring once and reads
            // the others' out: every byte one copy at the channel's
            // price on each leader, the pieces one op each.
            return edges + n * t.shm_down.alpha_ns +
                   n * g * m * t.shm_down.beta_ns_per_byte +
                   m * t.copy_ns_per_byte;
        }
        const double steps =
            top == "ring" ? n - 1 : std::ceil(std::log2(std::max(n, 1.0)));
        // The rank's own block is copied into place before it is sent
        // on (a flat exchange sends it from the input beside the copy).
        return edges + steps * ab_top + (n - 1) * g * m * beta +
               m * t.copy_ns_per_byte;
    }
    case Collective::kReduceScatter:
        // The leaders' ring, (n-1)(alpha + g m (beta + gamma)), runs
        // beside the reduction below it: decide_hierarchical overlaps it.
        return edges;
    case Collective::kAlltoall: {
        // Every rank also stages its P blocks through scratch, in and out
        // (hier_exchange.cpp), which a flat exchange does not.
        // The leaders' direct exchange of g^2 m each way: one message,
        // then one more per port or CPU turn (as a flat direct exchange).
        // They all exchange whole blocks at once: where their hosts share
        // cores, the bytes cost those cores nic_scale times, as the flat
        // direct exchange's do (decision 0041). (The allgather's leaders,
        // so priced, gave up their plan at 2-4 KiB on the 4x2 cluster,
        // where it ran 0.49-0.66x Open MPI against 0.59-0.68x.)
        cost::AlphaBeta top_ab = t.ab;
        top_ab.beta_ns_per_byte *= t.nic_scale;
        return 2 * edges +
               (n > 1 ? top_ab.message_ns(g * g * m) +
                            (n - 2) * top_ab.stage_ns(g * g * m, 1, 0)
                      : 0) +
               2 * p * m * t.copy_ns_per_byte;
    }
    default:
        return 0;
    }
}

/// A hierarchical reduce_scatter's leaders reduce-scatter in a ring,
/// (n-1)(alpha + g m (beta + gamma)) with g = P/n blocks of m bytes per
/// piece, while the levels below still reduce the later segments (the
/// simulator's critical path: the ring's first steps wait on the first
/// reduced chunks only): the longer of the two, and a segment of the
/// shorter to fill. Where levels below the top cross hosts too (racks),
/// a top leader takes their chunks and the ring's pieces through one NIC
/// (`nic_ns`: those levels' NIC time): the two add there. Where the hosts
/// have more ranks than cores (`takes_turns`), the leader's ring and its
/// reductions below run on the same cores: they add (on the 2x2 and 4x2
/// clusters the plan so overlapped ran 2.6-3.3x its prediction, 1.3-1.8x
/// recursive halving; decision 0054). Other collectives: the levels' time
/// as it is.
double reduction_beside_ring(Collective c, const std::vector<LevelInfo> &infos,
                             double m, double levels_ns, int segments,
                             double nic_ns)
{
    if (c != Collective::kReduceScatter || infos.empty()) {
        return levels_ns;
    }
    const LevelInfo &t = infos.back();
    const double n = double(std::max(t.max_group, 1));
    const double g = double(infos[0].participants) / n;
    const double ring =
        (n - 1) * (t.ab.alpha_ns +
                   g * m * (t.ab.beta_ns_per_byte + t.reduce_ns_per_byte));
    const double ring_nic =
        t.one_host ? 0 : (n - 1) * g * m * t.ab.beta_ns_per_byte;
    if (t.takes_turns) {
        return std::max(levels_ns + ring, nic_ns + ring_nic + t.ab.alpha_ns);
    }
    return std::max(std::max(levels_ns, ring) +
                        std::min(levels_ns, ring) /
                            double(std::max(segments, 1)),
                    nic_ns + ring_nic + t.ab.alpha_ns);
}

/// The hierarchical plan: per-level shapes and a segment count for
/// bcast/reduce/allreduce/barrier; leader gather/scatter otherwise.
Result<void> decide_hierarchical(const std::vector<LevelInfo> &infos,
                                 const RuleSet &user, const Rule *whole,
                                 Decision &d, bool from_root)
{
    const Collective c = d.collective;
    const double s = c == Collective::kBarrier ? 0 : double(d.bytes);
    if (c == Collective::kGather || c == Collective::kScatter) {
        return decide_leader_gather(infos, user, d);
    }
    for (const LevelInfo &li : infos) { // validate level rules up front
        std::string why;
        const Rule *r =
            find_rule(user, c, li.kind, d.bytes, li.max_group, &why);
        if (r != nullptr && is_top_exchange(r->algorithm)) {
            if (c != Collective::kAllreduce || from_root ||
                &li != &infos.back()) {
                return fail(why + ": " + r->algorithm +
                            " is an exchange among the top leaders of an "
                            "allreduce, and level " +
                            topology::level_name(li.kind) +
                            " is not the top of one");
            }
        } else if (r != nullptr && r->algorithm != "auto") {
            auto sh = shape_from_name(r->algorithm);
            if (!sh) {
                return fail(why + ": " + sh.error().message);
            }
            if (auto reach = check_reach(li, *sh); !reach) {
                return fail(why + ": " + reach.error().message);
            }
        }
    }
    // The exchanges bcast (allgather) or reduce (reduce_scatter) all P
    // blocks through the levels; alltoall moves them by gather edges
    // only (exchange_extra_ns).
    // The top level's leaders run the exchange itself, which
    // exchange_extra_ns prices: only the levels below move all P blocks.
    const bool exchange = c == Collective::kAllgather ||
                          c == Collective::kAlltoall ||
                          c == Collective::kReduceScatter;
    const double level_bytes =
        exchange && !infos.empty() ? s * infos[0].participants : s;
    const bool up =
        exchange ? c == Collective::kReduceScatter : c != Collective::kBcast;
    const bool down =
        exchange ? c == Collective::kAllgather : c != Collective::kReduce;
    const bool rk_top = up && down && !from_root;
    int max_c = int(
        std::clamp(std::floor(s / kMinChunkBytes), 1.0, double(kMaxSegments)));
    int fixed_c = 0;
    if (whole != nullptr && whole->segments > 0) {
        fixed_c = whole->segments;
    } else if (whole != nullptr && whole->segment_bytes > 0) {
        fixed_c =
            int(std::max(1.0, std::ceil(s / double(whole->segment_bytes))));
    }
    double best = std::numeric_limits<double>::infinity();
    double best_nic = 0; // the levels' NIC time below the top, at best
    for (int nc = fixed_c ? fixed_c : 1; nc <= (fixed_c ? fixed_c : max_c);
         nc *= 2) {
        const double b = level_bytes / nc;
        std::vector<Pick> picks;
        // A leader of several levels between hosts sends each chunk on at
        // every one of them through its host's one NIC: their stages add
        // there (the simulator's root of a bcast across racks sends a
        // chunk every chain + linear stage, not every slower one).
        double lat = 0, stage = 0, nic = 0;
        // Levels whose ranks share their cores across hosts: their stages
        // run on those cores one after another (decision 0034).
        double shared_stages = 0;
        for (size_t l = 0; l < infos.size(); ++l) {
            std::string why;
            const Rule *r = find_rule(user, c, infos[l].kind, d.bytes,
                                      infos[l].max_group, &why);
            bool top = l + 1 == infos.size();
            picks.push_back(pick_level(infos[l], b, nc, up, down, top && rk_top,
                                       r, why, c == Collective::kBcast,
                                       infos.size() == 1));
            if (exchange && top) {
                continue; // the top leaders exchange (exchange_extra_ns)
            }
            lat += picks.back().cost.latency_ns;
            if (infos[l].shares_cores) {
                shared_stages += picks.back().cost.stage_ns;
            }
            stage =
                std::max({stage, picks.back().cost.stage_ns, shared_stages});
            if (!infos[l].one_host) {
                // The level's root takes on the way up and sends on the
                // way down, on the NIC's two directions: where the
                // level's stage adds both (pick_level), one of them. (A
                // recursive doubling's stage is one exchange already.)
                const Pick &pk = picks.back();
                const bool both = up && down &&
                                  pk.how.shape != Shape::kLinear &&
                                  !is_top_exchange(pk.name);
                nic += both ? pk.cost.stage_ns / 2 : pk.cost.stage_ns;
            }
        }
        double t = lat + (nc - 1) * std::max(stage, nic);
        if (t < best) {
            best = t;
            best_nic = nc * nic;
            d.levels.clear();
            d.request.per_level.clear();
            d.request.top = "knomial";
            for (size_t l = 0; l < infos.size(); ++l) {
                const Pick &pk = picks[l];
                d.levels.push_back({infos[l].kind,
                                    infos[l].groups,
                                    infos[l].max_group,
                                    {pk.name, pk.how.radix, nc,
                                     pk.cost.latency_ns, pk.reason}});
                d.request.per_level.push_back(pk.how);
                if (is_top_exchange(pk.name)) {
                    d.request.top = pk.name;
                }
            }
            d.request.segments = nc;
        }
    }
    d.chosen.segments = d.request.segments;
    d.request.top = exchange_top(c, infos, d.request.top);
    double extra =
        exchange_extra_ns(c, infos, d.request.per_level, s, d.request.top);
    // Top leaders on one host may allgather through their shm bcast ring
    // instead of messages (decision 0057): where priced lower, or where
    // the top level's rule names shm (another shape there: messages).
    if (c == Collective::kAllgather && !infos.empty() &&
        infos.back().one_host && infos.back().max_group > 1) {
        const double ring =
            exchange_extra_ns(c, infos, d.request.per_level, s, "shm");
        std::string why;
        const Rule *r = find_rule(user, c, infos.back().kind, d.bytes,
                                  infos.back().max_group, &why);
        const std::string named = r != nullptr ? r->algorithm : "auto";
        if (named == "shm" || (named == "auto" && ring < extra)) {
            d.request.top = "shm";
            extra = ring;
        }
    }
    d.chosen.predicted_ns =
        reduction_beside_ring(c, infos, s, best, d.request.segments, best_nic) +
        extra;
    return {};
}

} // namespace ucg::select::detail
