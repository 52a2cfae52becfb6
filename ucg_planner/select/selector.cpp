// SPDX-License-Identifier: BSD-3-Clause
// The selector: rules first, then the analytic cost model over the flat
// algorithms and the per-level hierarchical composition (decide.cpp).
#include "select/selector.h"

#include "cost/simulator.h"
#include "select/compose.h"
#include "select/decide.h"
#include "select/level_cost.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

namespace ucg::select {

using algorithms::Shape;
using detail::decide_hierarchical;
using detail::find_rule;
using detail::level_infos;
using plan::Collective;

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
    for (const Rule &r : user_.rules) {
        if (!r.level || topo_.level(*r.level) != nullptr) {
            continue;
        }
        std::string have;
        for (const topology::Level &l : topo_.levels()) {
            have += have.empty() ? "" : ", ";
            have += topology::level_name(l.kind);
        }
        bad_rule_ = user_.origin + " rule '" + r.text + "' names level " +
                    topology::level_name(*r.level) +
                    ", which this topology does not have (levels: " + have +
                    ")";
        break;
    }
}

Result<void> Selector::rules_fit() const
{
    if (!bad_rule_.empty()) {
        return fail(bad_rule_);
    }
    return {};
}

Result<Decision> Selector::select(const SelectOptions &opts) const
{
    auto d = select_with(user_, opts);
    if (!d || !opts.simulate || d->chosen.reason != "cost model") {
        return d;
    }
    if (topo_.size() > opts.max_simulated_ranks) {
        d->chosen.reason = "cost model (too many ranks to simulate)";
        return d;
    }
    return refine(std::move(d).value(), opts);
}

Result<Decision> Selector::refine(Decision d, const SelectOptions &opts) const
{
    // Each candidate is the decision under a rule that forces it.
    const std::string coll(plan::to_string(opts.collective));
    std::vector<std::string> forced;
    std::vector<int> flat_of; // index into d.flat, -1: hierarchical
    if (algorithms::find_algorithm(opts.collective, "hierarchical") ||
        opts.collective == Collective::kGather ||
        opts.collective == Collective::kScatter) {
        forced.push_back(coll + ":0-inf:hierarchical");
        flat_of.push_back(-1);
    }
    for (size_t i = 0; i < d.flat.size() && int(i) < opts.candidates; ++i) {
        const Choice &f = d.flat[i];
        const algorithms::Algorithm *a =
            algorithms::find_algorithm(opts.collective, f.algorithm);
        const bool radix = a == nullptr || a->takes_radix;
        forced.push_back(
            coll + ":0-inf:" + f.algorithm + ":" +
            (radix ? "radix=" + std::to_string(f.radix) + "," : std::string()) +
            "segments=" + std::to_string(f.segments));
        flat_of.push_back(int(i));
    }
    cost::SimConfig cfg;
    cfg.count = opts.bytes;
    cfg.critical_path = false;
    std::optional<Decision> best;
    std::vector<Choice> flat = d.flat;
    Choice hier;
    for (size_t k = 0; k < forced.size(); ++k) {
        const std::string &text = forced[k];
        RuleSet rules = parse_rules(text, "simulation").value();
        rules.rules.insert(rules.rules.end(), user_.rules.begin(),
                           user_.rules.end());
        auto cand = select_with(rules, opts);
        if (!cand) {
            continue; // e.g. a user level rule that does not fit
        }
        if (auto need = simulation_bytes(*cand);
            need && *need > opts.max_simulation_bytes) {
            d.notes.push_back("not simulated: " + text + " needs about " +
                              std::to_string(*need >> 20) +
                              " MiB to build and simulate (limit " +
                              std::to_string(opts.max_simulation_bytes >> 20) +
                              " MiB)");
            continue;
        }
        auto p = build(*cand, std::nullopt);
        auto r = p ? cost::simulate(*p, {&topo_, {}}, cfg)
                   : Result<cost::SimResult>(p.error());
        if (!r) {
            return fail("simulating " + text + ": " + r.error().message);
        }
        cand->chosen.simulated_ns = r->makespan_ns;
        cand->chosen.reason = "simulated";
        if (flat_of[k] >= 0) {
            flat[size_t(flat_of[k])].simulated_ns = r->makespan_ns;
        } else {
            hier = cand->chosen;
        }
        if (!best || r->makespan_ns < best->chosen.simulated_ns) {
            best = std::move(cand).value();
        }
    }
    if (!best) {
        return d;
    }
    best->notes = d.notes;
    best->flat = flat;
    best->hierarchical = hier;
    return std::move(*best);
}

namespace {

/// Ranks sampled for size estimates: after the root, one past it, half
/// way round and the last (distinct, not the root).
std::vector<int> sampled_ranks(int n, int root)
{
    std::vector<int> others;
    for (int k : {1, n / 2, n - 1}) {
        const int r = (root + k) % n;
        if (r != root &&
            std::find(others.begin(), others.end(), r) == others.end()) {
            others.push_back(r);
        }
    }
    return others;
}

// Whether every aligned span of `block` consecutive ranks lies in one
// domain (`domain_of`: rank -> domain).
bool in_blocks(const std::vector<int> &domain_of, int block)
{
    const size_t p = domain_of.size();
    if (block < 1 || p % size_t(block) != 0) {
        return false;
    }
    for (size_t r = 0; r < p; ++r) {
        if (domain_of[r] != domain_of[r - r % size_t(block)]) {
            return false;
        }
    }
    return true;
}

std::int64_t saturate(double bytes)
{
    return bytes > 0x1p62 ? std::int64_t{1} << 62 : std::int64_t(bytes);
}

// The mean of host 0's links to the other hosts (through the first rank
// of each).
cost::AlphaBeta mean_host_link(const topology::Topology &t)
{
    std::vector<int> first(size_t(t.num_hosts()), -1);
    for (int r = 0; r < t.size(); ++r) {
        int &f = first[size_t(t.host_of(r))];
        f = f < 0 ? r : f;
    }
    cost::AlphaBeta mean{0, 0, 0, 0};
    const double others = double(std::max(t.num_hosts() - 1, 1));
    for (size_t h = 1; h < first.size(); ++h) {
        const cost::AlphaBeta l = cost::alpha_beta(t.link(first[0], first[h]));
        mean.alpha_ns += l.alpha_ns / others;
        mean.beta_ns_per_byte += l.beta_ns_per_byte / others;
        mean.overhead_ns += l.overhead_ns / others;
        mean.gap_ns += l.gap_ns / others;
    }
    return mean;
}

} // namespace

Result<Selector::PlanBytes> Selector::plan_bytes(const Decision &d) const
{
    const int n = topo_.size();
    const int root = d.root >= 0 && d.root < n ? d.root : 0;
    double plan_sum = 0, shared_sum = 0, plan_root = 0, shared_root = 0;
    std::int64_t own = 0;
    const std::vector<int> others = sampled_ranks(n, root);
    for (int r : others) {
        auto one = build(d, r);
        if (!one) {
            return one.error();
        }
        const plan::CheckBytes c = plan::rank_check_bytes(*one, r);
        own = std::max(own, c.own);
        plan_sum += double(cost::program_bytes(one->ranks[size_t(r)]));
        shared_sum += double(c.shared);
    }
    auto one = build(d, root);
    if (!one) {
        return one.error();
    }
    const plan::CheckBytes c = plan::rank_check_bytes(*one, root);
    own = std::max(own, c.own);
    plan_root = double(cost::program_bytes(one->ranks[size_t(root)]));
    shared_root = double(c.shared);
    const double rest = others.empty() ? 0 : double(n - 1) / others.size();
    PlanBytes out;
    out.plan = saturate(plan_root + plan_sum * rest);
    out.check = std::max(own, saturate(shared_root + shared_sum * rest));
    return out;
}

Result<std::int64_t> Selector::simulation_bytes(const Decision &d) const
{
    const int n = topo_.size();
    const int root = d.root >= 0 && d.root < n ? d.root : 0;
    const std::vector<int> others = sampled_ranks(n, root);
    auto rank_bytes = [&](int r) -> Result<std::int64_t> {
        auto one = build(d, r);
        if (!one) {
            return one.error();
        }
        const plan::RankProgram &prog = one->ranks[size_t(r)];
        return cost::sim_bytes(prog) + cost::program_bytes(prog);
    };
    auto total = rank_bytes(root);
    if (!total || others.empty()) {
        return total;
    }
    std::int64_t sum = 0;
    for (int r : others) {
        auto b = rank_bytes(r);
        if (!b) {
            return b.error();
        }
        sum += *b;
    }
    const double rest =
        double(sum) / double(others.size()) * double(n - 1) + double(*total);
    return rest > 0x1p62 ? std::int64_t{1} << 62 : std::int64_t(rest);
}

namespace {

// Gather and scatter: the flat plan to run instead of `best`, the one
// predicted fastest: linear, which moves each block once, where it is
// predicted within kDirectBlocksTie of it. A tree moves each block once
// per level it crosses: bytes its makespan (the root's port or NIC, the
// same for both) hides and its forwarding ranks' CPUs and memory pay.
// 4 emulated hosts x 2 ranks, scatter 256 KiB-2 MiB (knomial predicted
// 0.05% below linear): linear 0.39-0.79x Open MPI's OSU Avg where
// knomial read 0.70-1.41x, its slowest rank 0.74-0.83x knomial's.
const Choice &direct_blocks(Collective coll, const std::vector<Choice> &flat,
                            const Choice &best)
{
    if (coll != Collective::kGather && coll != Collective::kScatter) {
        return best;
    }
    const auto lin =
        std::find_if(flat.begin(), flat.end(),
                     [](const Choice &c) { return c.algorithm == "linear"; });
    return lin != flat.end() &&
                   lin->predicted_ns <= best.predicted_ns * kDirectBlocksTie
               ? *lin
               : best;
}

// The partitions with every level between the hosts and the top merged
// into the top: one group of the hosts' leaders (decision 0066). None
// where fewer than two levels sit above the hosts. A rack's leaders sit
// P'/2 apart in the group (the racks' members dealt in turn), so the
// first and largest step of a recursive halving pairs rack mates; the
// group's link is the rack's and the top's, as the halving's steps from
// its first leader cross them (steps by count, bytes by share).
std::optional<std::vector<topology::Partition>>
host_leaders_top(const std::vector<topology::Partition> &parts)
{
    std::size_t above = 0; // the first level above the hosts
    while (above < parts.size() &&
           parts[above].kind <= topology::LevelKind::kHost) {
        ++above;
    }
    if (parts.size() < above + 2) {
        return std::nullopt;
    }
    const auto &racks = parts[above].groups;
    std::size_t widest = 1; // the most leaders a rack has
    for (const topology::Group &g : racks) {
        widest = std::max(widest, g.ranks.size());
    }
    std::vector<int> order, rack; // the group, each member's rack
    for (std::size_t i = 0; i < widest; ++i) {
        for (std::size_t g = 0; g < racks.size(); ++g) {
            if (i < racks[g].ranks.size()) {
                order.push_back(racks[g].ranks[i]);
                rack.push_back(int(g));
            }
        }
    }
    const auto pk = int(cost::largest_power(int64_t(order.size()), 2));
    double in_steps = 0, steps = 0, in_bytes = 0, bytes = 0;
    for (int mask = pk / 2; mask >= 1; mask /= 2) {
        const bool in = rack[0] == rack[std::size_t(mask)];
        steps += 1;
        bytes += mask; // (the halving's step sends mask of P' pieces)
        in_steps += in ? 1 : 0;
        in_bytes += in ? mask : 0;
    }
    const topology::LinkCost &r = parts[above].link;
    const topology::LinkCost &w = parts.back().link;
    const double fs = steps > 0 ? in_steps / steps : 0;
    const double fb = bytes > 0 ? in_bytes / bytes : 0;
    auto mix = [](double a, double b, double f) { return f * a + (1 - f) * b; };
    // A step between racks sends from every leader of a rack at once,
    // through the rack's one uplink.
    const topology::LinkCost link{
        mix(r.latency_ns, w.latency_ns, fs),
        mix(r.overhead_ns, w.overhead_ns, fs), mix(r.gap_ns, w.gap_ns, fs),
        mix(r.ns_per_byte, w.ns_per_byte * double(widest), fb)};
    std::vector<topology::Partition> out(parts.begin(),
                                         parts.begin() + long(above));
    out.push_back(
        {parts.back().kind, link, {{order, order[0]}}, int(order.size())});
    return out;
}

// Whether a rule of the user's picks a level the merged partitions skip.
bool names_skipped_level(const RuleSet &user, const SelectOptions &opts,
                         const std::vector<topology::Partition> &parts,
                         const std::vector<topology::Partition> &merged)
{
    for (std::size_t l = merged.size() - 1; l < parts.size(); ++l) {
        const int n = int(
            parts[l].groups.empty() ? 0 : parts[l].groups.front().ranks.size());
        if (user.find(opts.collective, parts[l].kind, opts.bytes, n) !=
            nullptr) {
            return true;
        }
    }
    return false;
}

} // namespace

Result<Decision> Selector::select_with(const RuleSet &user,
                                       const SelectOptions &opts) const
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
    std::vector<int> per_host(size_t(topo_.num_hosts()), 0);
    int ppn = 1;
    for (int r = 0; r < p; ++r) {
        ppn = std::max(ppn, ++per_host[size_t(topo_.host_of(r))]);
    }
    // On one host no message leaves it: there is no NIC to share.
    if (topo_.num_hosts() == 1) {
        ppn = 1;
    }
    // Hosts on one machine (emulated hosts, containers) with more of its
    // ranks per core than a host has ranks: each message between hosts is
    // the work of cores that other hosts' ranks talk through at once, as
    // a NIC that many times more ranks share (decision 0034).
    const int nic_scale =
        topo_.num_hosts() > 1
            ? std::max(1, (opts.ranks_per_core + ppn - 1) / ppn)
            : 1;
    // Oversubscribed (decision 0018), a rank that waits yields its core:
    // each dependent step waits for the peers' turns on the cores (a
    // scheduling turn more per alpha), while the messages of one step
    // still overlap; two or more ranks share each core's copies (twice
    // the time per byte). One one-to-many op wakes the whole group at
    // once: one message's fixed cost, and its root reads every member's
    // slot in the one turn (no overhead per slot).
    algorithms::ChannelLimits shm_bcast = opts.shm_bcast;
    algorithms::ChannelLimits shm_incast = opts.shm_incast;
    if (opts.oversubscribed) {
        shm_bcast.alpha_scale = shm_incast.alpha_scale = 1;
    }
    cost::AlphaBeta world = cost::alpha_beta(topo_.levels().back().link);
    auto take_turns = [&](cost::AlphaBeta &ab) {
        if (opts.oversubscribed) {
            ab.alpha_ns += kSchedulingTurnNs;
            ab.beta_ns_per_byte *= 2;
        }
    };
    auto infos_of = [&](const std::vector<topology::Partition> &ps) {
        auto out = level_infos(topo_, ps, shm_bcast, shm_incast,
                               opts.reduce_ns_per_byte, opts.copy_ns_per_byte,
                               opts.mcast);
        for (detail::LevelInfo &li : out) {
            for (cost::AlphaBeta *ab :
                 {&li.ab, &li.shm_up, &li.shm_down, &li.mcast_down}) {
                take_turns(*ab);
            }
            if (opts.oversubscribed) {
                li.takes_turns = true;
                li.shm_up.overhead_ns = 0;
                // Only where hosts share cores with other hosts: on the
                // 2x2 cluster (a core per host) the reduce tree that
                // adding chose ran 1.25-2.1x the hierarchical plan
                // (decision 0034).
                li.shares_cores = topo_.num_hosts() > 1 && nic_scale > 1;
                li.nic_scale = li.shares_cores ? nic_scale : 1;
            }
        }
        return out;
    };
    const auto infos = infos_of(parts);
    // Hosts of ppn consecutive ranks each: the algorithms' first rounds
    // (among aligned spans of ranks that divide ppn) stay inside a host.
    const bool blocked =
        topo_.num_hosts() > 1 && in_blocks(topo_.host_of_rank(), ppn);
    // Hosts that are not blocks of ranks, under racks: a message between
    // two hosts crosses only their rack's switch or the top one as the
    // placement has it. Price it at the mean over the other hosts' links
    // from host 0 (the rack link for as many as share host 0's rack).
    if (!blocked && topo_.num_hosts() > 1 && topo_.levels().size() > 2) {
        world = mean_host_link(topo_);
    }
    // The root's host: its other ranks, over the host's link.
    const int root_host = topo_.host_of(opts.root);
    const int64_t host_peers =
        topo_.num_hosts() > 1 ? per_host[size_t(root_host)] - 1 : 0;
    cost::AlphaBeta host_link = world;
    for (int q = 0; host_peers > 0 && q < p; ++q) {
        if (q != opts.root && topo_.host_of(q) == root_host) {
            host_link = cost::alpha_beta(topo_.link(opts.root, q));
            break;
        }
    }
    cost::AlphaBeta local =
        blocked ? cost::alpha_beta(topo_.link(0, ppn - 1)) : host_link;
    const int nic_share = ppn * nic_scale;
    // (Once each: `local` may be a copy of `world`.)
    take_turns(world);
    take_turns(local);
    // Ring and chain only use the links r -> r+1, shared by the host's
    // ranks whose successor is remote. A ring's steps wait on each other
    // all around the ring: the links' means; a chain's segments follow at
    // the slowest link's pace.
    std::vector<int> remote_next(size_t(topo_.num_hosts()), 0);
    double alpha_sum = 0, beta_sum = 0, beta_max = 0, o_sum = 0, g_sum = 0;
    for (int r = 0; r < p; ++r) {
        remote_next[size_t(topo_.host_of(r))] +=
            topo_.host_of(r) != topo_.host_of((r + 1) % p);
    }
    for (int r = 0; r < p; ++r) {
        const int q = (r + 1) % p;
        const topology::LinkCost &l = topo_.link(r, q);
        alpha_sum += l.alpha_ns();
        o_sum += l.overhead_ns;
        g_sum += l.gap_ns;
        const int share =
            topo_.host_of(r) != topo_.host_of(q)
                ? remote_next[size_t(topo_.host_of(r))] * nic_scale
                : 1;
        beta_max = std::max(beta_max, l.ns_per_byte * share);
        beta_sum += l.ns_per_byte * share;
    }
    cost::AlphaBeta neighbour{alpha_sum / p, beta_sum / p, o_sum / p,
                              g_sum / p};
    take_turns(neighbour);
    // The exchanges that talk to every peer: rank 0's links to all the
    // others, a remote one's gap shared by its host's ranks, its bytes by
    // the ranks that share its cores (nic_share; with the gap shared so
    // too, pairwise's P-1 rounds priced below the direct exchange, and
    // on the emulated cluster ran 1.07-1.33x coll han against its
    // 0.90-1.18x, decision 0034).
    cost::AlphaBeta all_pairs{0, 0, 0, 0};
    for (int q = 1; q < p; ++q) {
        const cost::AlphaBeta l = cost::alpha_beta(topo_.link(0, q));
        const bool remote = topo_.host_of(0) != topo_.host_of(q);
        const double share = remote ? double(ppn) : 1.0;
        all_pairs.alpha_ns += l.alpha_ns / (p - 1);
        all_pairs.beta_ns_per_byte +=
            l.beta_ns_per_byte * (remote ? double(nic_share) : 1.0) / (p - 1);
        all_pairs.overhead_ns += l.overhead_ns / (p - 1);
        all_pairs.gap_ns += l.gap_ns * share / (p - 1);
    }
    take_turns(all_pairs);
    algorithms::CostInput in = cost_input(
        opts.collective, p, double(opts.bytes), world, nic_share, &neighbour,
        opts.reduce_ns_per_byte, beta_max, &local, blocked ? ppn : 1);
    in.root = opts.root;
    in.host_peers = host_peers;
    in.nic_scale = nic_scale;
    in.copy_ns_per_byte = opts.copy_ns_per_byte;
    in.eager_bytes = double(opts.eager_bytes);
    if (p > 1) {
        in.all_pairs = all_pairs;
    }
    // Hosts that do not hold consecutive ranks: each rank's host.
    if (!blocked && ppn > 1) {
        in.hosts = &topo_.host_of_rank();
        in.num_hosts = topo_.num_hosts();
    }
    // The level above hosts where it has more than one domain: racks.
    const auto &levels = topo_.levels();
    size_t host_level = levels.size();
    for (size_t i = 0; i < levels.size(); ++i) {
        if (levels[i].kind == topology::LevelKind::kHost) {
            host_level = i;
            break;
        }
    }
    const topology::Level *racks =
        host_level + 1 < levels.size() &&
                levels[host_level + 1].domains.size() >= 2
            ? &levels[host_level + 1]
            : nullptr;
    // Hosts of consecutive ranks in racks of consecutive ranks: the link
    // between two hosts of one rack.
    if (blocked && racks != nullptr) {
        const int rack = p / int(racks->domains.size());
        if (rack > ppn && in_blocks(racks->domain_of_rank, rack)) {
            in.mid = cost::alpha_beta(topo_.link(0, ppn));
            take_turns(in.mid);
            in.mid_ranks = rack;
        } else {
            // Racks in any other order (a scheduler's placement): the
            // root's rack-mates on other hosts, counted.
            in.mid = cost::alpha_beta(racks->link);
            take_turns(in.mid);
            const int root_rack = racks->domain_of_rank[size_t(opts.root)];
            in.root_rack_peers = 0;
            for (int q = 0; q < p; ++q) {
                in.root_rack_peers +=
                    topo_.host_of(q) != root_host &&
                    racks->domain_of_rank[size_t(q)] == root_rack;
            }
        }
    }
    // Hosts in any order under racks (below the top level): each host's
    // rack, the link inside a rack and the top one, for the costs that
    // follow each message.
    std::vector<int> host_rack;
    if (in.hosts != nullptr && racks != nullptr &&
        host_level + 2 < levels.size()) {
        host_rack.assign(size_t(topo_.num_hosts()), 0);
        for (int r = 0; r < p; ++r) {
            host_rack[size_t(topo_.host_of(r))] =
                racks->domain_of_rank[size_t(r)];
        }
        in.host_rack = &host_rack;
        in.mid = cost::alpha_beta(racks->link);
        in.top = cost::alpha_beta(levels.back().link);
        take_turns(in.mid);
        take_turns(in.top);
    }
    for (const FlatCost &f : flat_costs(opts.collective, in)) {
        d.flat.push_back({f.algorithm, f.radix, f.segments, f.ns, "flat"});
    }
    std::stable_sort(d.flat.begin(), d.flat.end(),
                     [](const Choice &a, const Choice &b) {
                         return a.predicted_ns < b.predicted_ns;
                     });
    std::string why = "cost model";
    const Rule *rule =
        find_rule(user, opts.collective, std::nullopt, opts.bytes, p, &why);
    const std::string alg = rule ? rule->algorithm : "auto";
    d.request.collective = opts.collective;
    d.request.nranks = p;
    d.request.root = opts.root;
    d.request.placement = cost::placement_of(topo_);
    d.request.block_bytes = opts.bytes;
    d.request.shm_bcast = opts.shm_bcast;
    d.request.shm_incast = opts.shm_incast;
    d.request.mcast = opts.mcast;
    const bool has_hier =
        algorithms::find_algorithm(opts.collective, "hierarchical") ||
        opts.collective == Collective::kGather ||
        opts.collective == Collective::kScatter;
    if (alg == "auto" || alg == "hierarchical") {
        if (alg == "hierarchical" && !has_hier) {
            return fail(why + ": no hierarchical algorithm for " +
                        std::string(plan::to_string(opts.collective)));
        }
        // Oversubscribed, a barrier releases every rank from rank 0
        // (decision 0018, stop 22): after an exchange each rank leaves at
        // its own scheduling turn, and the root of the rooted collective
        // that follows (bcast, scatter) keeps the others waiting for its
        // turn there; released by rank 0, the ranks find its data ready.
        // Four ranks on two cores, per iteration (barrier, then an 8 B
        // bcast): 5.3-8.1 us rooted, 6.1-9.7 after radix-4 recursive
        // k-ing, which the model prices lower alone.
        const bool rooted_only =
            opts.oversubscribed && opts.collective == Collective::kBarrier;
        // Across hosts the hierarchical barrier releases from rank 0 too
        // where its top level is a tree, not an exchange (decision 0036):
        // on the 4x2 cluster 74-89 us against the flat tree's 108-113.
        // (On one host the shm levels' barrier releases from rank 0 as
        // well, but the collectives after it measured slower: allreduce
        // 8-256 B 0.85-1.03x Open MPI against 0.74-0.88x after the linear
        // one.)
        const bool hier_from_root = rooted_only && topo_.num_hosts() > 1;
        const bool hier_fits = has_hier && (!rooted_only || hier_from_root);
        Decision flat_d = d;
        if (has_hier) {
            if (auto h =
                    decide_hierarchical(infos, user, rule, d, hier_from_root);
                !h) {
                return h.error();
            }
            d.request.levels = levels_from_partitions(parts, p, opts.root);
            // An allreduce's host leaders may halve and double as one top
            // group, the rack level skipped (decision 0066), where no
            // rule of the user's names a level it skips.
            const auto merged = opts.collective == Collective::kAllreduce
                                    ? host_leaders_top(parts)
                                    : std::nullopt;
            if (merged && !names_skipped_level(user, opts, parts, *merged)) {
                Decision m = flat_d;
                const auto minfos = infos_of(*merged);
                if (decide_hierarchical(minfos, user, rule, m, false) &&
                    m.request.top == "rabenseifner" &&
                    m.chosen.predicted_ns < d.chosen.predicted_ns) {
                    d = std::move(m);
                    d.request.levels =
                        levels_from_partitions(*merged, p, opts.root);
                }
            }
            d.chosen.algorithm = "hierarchical";
            d.chosen.reason = alg != "auto"    ? why
                              : hier_from_root ? "cost model, released from "
                                                 "rank 0"
                                               : "cost model";
        }
        const auto fits = [&](const Choice &f) {
            const algorithms::Algorithm *a =
                algorithms::find_algorithm(opts.collective, f.algorithm);
            return !rooted_only || (a != nullptr && a->releases_from_root);
        };
        const auto flat_it = std::find_if(d.flat.begin(), d.flat.end(), fits);
        if (alg == "hierarchical" || flat_it == d.flat.end() ||
            (hier_fits && d.chosen.predicted_ns <= flat_it->predicted_ns)) {
            return d;
        }
        const Choice pick = direct_blocks(opts.collective, d.flat, *flat_it);
        d = flat_d;
        d.chosen = pick;
        d.chosen.reason =
            rooted_only ? "cost model, released from rank 0" : "cost model";
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
        // The prediction of the variant that runs, not of the cheapest.
        const algorithms::Algorithm *a =
            algorithms::find_algorithm(opts.collective, alg);
        if (a->cost && (rule->radix > 0 || rule->segments > 0 ||
                        rule->segment_bytes > 0)) {
            d.chosen.predicted_ns =
                a->cost(in, {d.chosen.radix, d.chosen.segments});
        }
    }
    d.request.radix = d.chosen.radix;
    d.request.segments = d.chosen.segments;
    if (d.chosen.algorithm != "hierarchical") {
        // A forced algorithm must fit the machine (shm within a host):
        // the root's program names every group it takes part in.
        if (auto one = build(d, opts.root); !one) {
            return fail(why + ": " + one.error().message);
        }
    }
    return d;
}

Result<plan::Plan> Selector::build(const Decision &d,
                                   std::optional<int> only_rank) const
{
    algorithms::Request q = d.request;
    q.only_rank = only_rank;
    if (d.custom_builder) { // per_level holds each level's radix
        return algorithms::build("leader", q);
    }
    // Hierarchical bcast, reduce, allreduce and barrier build one rank
    // from the levels that hold it; the other collectives need them all
    // (registry.h, levels_for_rank()).
    const Collective c = d.collective;
    if (only_rank && d.chosen.algorithm == "hierarchical" &&
        (c == Collective::kBcast || c == Collective::kReduce ||
         c == Collective::kAllreduce || c == Collective::kBarrier)) {
        q.levels = prune_levels(q.levels, *only_rank);
    }
    return algorithms::build(d.chosen.algorithm, q);
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
    os << "  predicted " << d.chosen.predicted_ns / 1000 << " us";
    if (d.chosen.simulated_ns >= 0) {
        os << ", simulated " << d.chosen.simulated_ns / 1000 << " us";
    }
    os << " (" << d.chosen.reason << ")\n";
    for (const LevelDecision &l : d.levels) {
        os << "  level " << topology::level_name(l.kind) << ": " << l.groups
           << " groups of <= " << l.max_group << ": " << l.choice.algorithm;
        if (l.choice.algorithm == "knomial") {
            os << " radix=" << l.choice.radix;
        }
        os << " segments=" << l.choice.segments << " (" << l.choice.reason
           << ")\n";
    }
    if (d.chosen.algorithm != "hierarchical" &&
        d.hierarchical.simulated_ns >= 0) {
        os << "  hierarchical alternative: predicted "
           << d.hierarchical.predicted_ns / 1000 << " us, simulated "
           << d.hierarchical.simulated_ns / 1000 << " us\n";
    }
    for (const std::string &n : d.notes) {
        os << "  " << n << "\n";
    }
    os << "  flat alternatives:\n";
    for (const Choice &f : d.flat) {
        os << "    " << f.algorithm << " radix=" << f.radix
           << " segments=" << f.segments << "  " << f.predicted_ns / 1000
           << " us";
        if (f.simulated_ns >= 0) {
            os << ", simulated " << f.simulated_ns / 1000 << " us";
        }
        os << "\n";
    }
    return os.str();
}

} // namespace ucg::select
