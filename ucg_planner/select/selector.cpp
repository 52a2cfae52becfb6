// SPDX-License-Identifier: BSD-3-Clause
// The selector: rules first, then the analytic cost model over the flat
// algorithms and the per-level hierarchical composition.
#include "select/selector.h"

#include "select/compose.h"
#include "select/level_cost.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace ucg::select {

namespace {

using algorithms::LevelChoice;
using algorithms::Shape;
using plan::Collective;
using topology::LevelKind;

constexpr int kMaxSegments = 64;
constexpr double kMinChunkBytes = 256;

struct LevelInfo {
    LevelKind kind;
    int groups;
    int max_group;
    int participants;
    cost::AlphaBeta ab;
    bool one_host;
    double per_msg_ns; ///< max(o, g): a receiver's cost per extra message
};

std::vector<LevelInfo>
level_infos(const topology::Topology &topo,
            const std::vector<topology::Partition> &parts)
{
    std::vector<LevelInfo> out;
    for (const auto &p : parts) {
        LevelInfo li{p.kind,
                     int(p.groups.size()),
                     0,
                     p.participants,
                     cost::alpha_beta(p.link),
                     true,
                     std::max(p.link.overhead_ns, p.link.gap_ns)};
        for (const auto &g : p.groups) {
            li.max_group = std::max(li.max_group, int(g.ranks.size()));
            for (int r : g.ranks) {
                li.one_host =
                    li.one_host && topo.host_of(r) == topo.host_of(g.ranks[0]);
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

Pick pick_level(const LevelInfo &li, double b, int c, bool up, bool down,
                bool top_rk, const Rule *forced, const std::string &why)
{
    auto eval = [&](Shape s, int k) {
        ShapeCost u =
            up ? shape_cost(s, k, li.max_group, b, li.ab, true) : ShapeCost{};
        ShapeCost d = down ? shape_cost(s, k, li.max_group, b, li.ab, false)
                           : ShapeCost{};
        return ShapeCost{u.latency_ns + d.latency_ns,
                         std::max(u.stage_ns, d.stage_ns)};
    };
    auto total = [c](const ShapeCost &s) {
        return s.latency_ns + (c - 1) * s.stage_ns;
    };
    std::vector<Pick> cands;
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
    if (top_rk) {
        double t = cost::knomial_rounds(li.max_group, 2) * li.ab.message_ns(b);
        cands.push_back({{Shape::kKnomial, 2}, "recursive_doubling", {t, t}});
    }
    return *std::min_element(cands.begin(), cands.end(),
                             [&](const Pick &a, const Pick &z) {
                                 return total(a.cost) < total(z.cost);
                             });
}

} // namespace

const char *shape_name(Shape shape)
{
    switch (shape) {
    case Shape::kLinear:
        return "linear";
    case Shape::kKnomial:
        return "knomial";
    case Shape::kChain:
        return "chain";
    case Shape::kBinary:
        return "binary_tree";
    case Shape::kShm:
        return "shm";
    case Shape::kMcast:
        break;
    }
    return "mcast";
}

Selector::Selector(const topology::Topology &topo, RuleSet user)
    : topo_(topo), user_(std::move(user))
{
}

namespace {

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

/// Leader gather/scatter: per level the radix (2, 4, 8 or linear) by
/// gather_level_ns, unless a level rule names knomial[:radix=k] or linear.
Result<void> decide_leader_gather(const std::vector<LevelInfo> &infos,
                                  const RuleSet &user, Decision &d)
{
    const double p = double(infos.empty() ? 1 : infos[0].participants);
    double t = 0;
    for (const LevelInfo &li : infos) {
        const double held = p / li.participants * double(d.bytes);
        const int n = std::max(li.max_group, 2);
        std::string why;
        const Rule *r =
            find_rule(user, d.collective, li.kind, d.bytes, li.max_group, &why);
        std::vector<int> radixes = {2, 4, 8, n};
        if (r != nullptr && r->algorithm != "auto") {
            if (r->algorithm != "knomial" && r->algorithm != "linear") {
                return fail(why + ": expected knomial, linear or auto for a "
                                  "gather/scatter level");
            }
            radixes = {r->algorithm == "linear" ? n : std::max(r->radix, 2)};
        } else {
            why = "cost model";
        }
        int best_k = radixes[0];
        for (int k : radixes) {
            if (gather_level_ns(li, k, held) <
                gather_level_ns(li, best_k, held)) {
                best_k = k;
            }
        }
        const double lt = gather_level_ns(li, best_k, held);
        t += lt;
        d.levels.push_back({li.kind,
                            li.groups,
                            li.max_group,
                            {best_k >= n ? "linear" : "knomial",
                             std::min(best_k, n), 1, lt, why}});
    }
    d.chosen.predicted_ns = t;
    d.custom_builder = true;
    return {};
}

/// The hierarchical plan: per-level shapes and a segment count for
/// bcast/reduce/allreduce/barrier; leader gather/scatter otherwise.
Result<void> decide_hierarchical(const std::vector<LevelInfo> &infos,
                                 const RuleSet &user, const Rule *whole,
                                 Decision &d)
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
        if (r != nullptr && r->algorithm != "auto") {
            if (auto sh = shape_from_name(r->algorithm); !sh) {
                return fail(why + ": " + sh.error().message);
            }
        }
    }
    const bool up = c != Collective::kBcast;
    const bool down = c != Collective::kReduce;
    const bool rk_top = up && down;
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
    for (int nc = fixed_c ? fixed_c : 1; nc <= (fixed_c ? fixed_c : max_c);
         nc *= 2) {
        const double b = s / nc;
        std::vector<Pick> picks;
        double lat = 0, stage = 0;
        for (size_t l = 0; l < infos.size(); ++l) {
            std::string why;
            const Rule *r = find_rule(user, c, infos[l].kind, d.bytes,
                                      infos[l].max_group, &why);
            bool top = l + 1 == infos.size();
            picks.push_back(
                pick_level(infos[l], b, nc, up, down, top && rk_top, r, why));
            lat += picks.back().cost.latency_ns;
            stage = std::max(stage, picks.back().cost.stage_ns);
        }
        double t = lat + (nc - 1) * stage;
        if (t < best) {
            best = t;
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
                if (pk.name == "recursive_doubling") {
                    d.request.top = "recursive_doubling";
                }
            }
            d.request.segments = nc;
        }
    }
    d.chosen.segments = d.request.segments;
    d.chosen.predicted_ns = best;
    return {};
}

} // namespace

Result<Decision> Selector::select(const SelectOptions &opts) const
{
    Decision d;
    d.collective = opts.collective;
    d.bytes = opts.bytes;
    d.root = opts.root;
    const int p = topo_.size();
    if (opts.root < 0 || opts.root >= p) {
        return fail("root " + std::to_string(opts.root) + " outside 0.." +
                    std::to_string(p - 1));
    }
    const auto parts = topo_.hierarchy({opts.root, false});
    const auto infos = level_infos(topo_, parts);
    const cost::AlphaBeta world = cost::alpha_beta(topo_.levels().back().link);
    std::vector<int> per_host(size_t(topo_.num_hosts()), 0);
    int ppn = 1;
    for (int r = 0; r < p; ++r) {
        ppn = std::max(ppn, ++per_host[size_t(topo_.host_of(r))]);
    }
    for (const FlatCost &f :
         flat_costs(opts.collective, p, double(opts.bytes), world, ppn)) {
        d.flat.push_back({f.algorithm, f.radix, f.segments, f.ns, "flat"});
    }
    std::stable_sort(d.flat.begin(), d.flat.end(),
                     [](const Choice &a, const Choice &b) {
                         return a.predicted_ns < b.predicted_ns;
                     });
    std::string why = "cost model";
    const Rule *rule =
        find_rule(user_, opts.collective, std::nullopt, opts.bytes, p, &why);
    const std::string alg = rule ? rule->algorithm : "auto";
    d.request.collective = opts.collective;
    d.request.nranks = p;
    d.request.root = opts.root;
    const bool has_hier =
        algorithms::find_algorithm(opts.collective, "hierarchical") ||
        opts.collective == Collective::kGather ||
        opts.collective == Collective::kScatter;
    if (alg == "auto" || alg == "hierarchical") {
        if (alg == "hierarchical" && !has_hier) {
            return fail(why + ": no hierarchical algorithm for " +
                        std::string(plan::to_string(opts.collective)));
        }
        Decision flat_d = d;
        if (has_hier) {
            if (auto h = decide_hierarchical(infos, user_, rule, d); !h) {
                return h.error();
            }
            d.chosen.algorithm = "hierarchical";
            d.chosen.reason = alg == "auto" ? "cost model" : why;
            d.request.levels = levels_from_partitions(parts, p, opts.root);
        }
        if (alg == "hierarchical" || d.flat.empty() ||
            (has_hier && d.chosen.predicted_ns <= d.flat[0].predicted_ns)) {
            return d;
        }
        d = flat_d;
        d.chosen = d.flat[0];
        d.chosen.reason = "cost model";
    } else {
        if (!algorithms::find_algorithm(opts.collective, alg)) {
            return fail(why + ": no algorithm '" + alg + "' for " +
                        std::string(plan::to_string(opts.collective)));
        }
        d.chosen = {alg, 2, 1, std::numeric_limits<double>::quiet_NaN(), why};
        for (const Choice &f : d.flat) { // cheapest costed variant
            if (f.algorithm == alg) {
                d.chosen = f;
                d.chosen.reason = why;
                break;
            }
        }
        if (rule->radix > 0) {
            d.chosen.radix = rule->radix;
        }
        if (rule->segments > 0) {
            d.chosen.segments = rule->segments;
        } else if (rule->segment_bytes > 0) {
            d.chosen.segments = int(
                std::max<uint64_t>(1, (opts.bytes + rule->segment_bytes - 1) /
                                          rule->segment_bytes));
        }
    }
    d.request.radix = d.chosen.radix;
    d.request.segments = d.chosen.segments;
    return d;
}

Result<plan::Plan> Selector::build(const Decision &d,
                                   std::optional<int> only_rank) const
{
    if (d.custom_builder) {
        std::vector<int> radix;
        for (const LevelDecision &l : d.levels) {
            radix.push_back(l.choice.radix);
        }
        return build_leader_gather(d.collective, d.request.nranks, d.root,
                                   d.request.levels, radix, only_rank);
    }
    algorithms::Request q = d.request;
    q.only_rank = only_rank;
    if (only_rank && d.chosen.algorithm == "hierarchical") {
        q.levels = prune_levels(q.levels, *only_rank);
    }
    auto p = algorithms::build(d.chosen.algorithm, q);
    if (!p) {
        return fail(p.error());
    }
    return std::move(p.value());
}

std::string format_decision(const Decision &d)
{
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(1);
    os << plan::to_string(d.collective) << " " << format_size(d.bytes)
       << " root " << d.root << ": " << d.chosen.algorithm;
    if (d.chosen.algorithm != "hierarchical") {
        os << " radix=" << d.chosen.radix << " segments=" << d.chosen.segments;
    }
    os << "  predicted " << d.chosen.predicted_ns / 1000 << " us ("
       << d.chosen.reason << ")\n";
    for (const LevelDecision &l : d.levels) {
        os << "  level " << topology::level_name(l.kind) << ": " << l.groups
           << " groups of <= " << l.max_group << ": " << l.choice.algorithm;
        if (l.choice.algorithm == "knomial") {
            os << " radix=" << l.choice.radix;
        }
        os << " segments=" << l.choice.segments << " (" << l.choice.reason
           << ")\n";
    }
    os << "  flat alternatives:\n";
    for (const Choice &f : d.flat) {
        os << "    " << f.algorithm << " radix=" << f.radix
           << " segments=" << f.segments << "  " << f.predicted_ns / 1000
           << " us\n";
    }
    return os.str();
}

} // namespace ucg::select
