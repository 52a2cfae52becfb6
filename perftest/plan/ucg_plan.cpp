// SPDX-License-Identifier: BSD-3-Clause
// ucg_plan: print, check, simulate or select the plan of a collective for
// a size, root and topology, e.g.
//   ucg_plan select --coll allreduce --bytes 1m --topo racks=4,nodes=8,ppn=16
#include "cli.h"
#include "tool_cli.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <new>
#include <optional>
#include <sstream>
#include <string_view>

using namespace ucg;

namespace {

int die(const std::string &msg)
{
    std::cerr << "ucg_plan: " << msg << "\n";
    return 1;
}

cost::SimConfig sim_config(const tools::Options &o, bool path)
{
    cost::SimConfig cfg;
    cfg.count = o.bytes;
    cfg.uplink_ns_per_byte = o.uplink_ns_per_byte;
    cfg.critical_path = path;
    return cfg;
}

void print_sim(const char *label, const cost::SimResult &r)
{
    double lo = r.finish_ns.empty() ? 0 : r.finish_ns[0], hi = lo;
    for (double f : r.finish_ns) {
        lo = std::min(lo, f);
        hi = std::max(hi, f);
    }
    std::printf("%s: makespan %.3f us, rank finish %.3f..%.3f us, %zu ops, "
                "%zu messages\n",
                label, r.makespan_ns / 1000, lo / 1000, hi / 1000, r.ops,
                r.messages);
}

int run(CLI::App &app, const tools::Options &o);
int check(const plan::Plan &p, const plan::Placement &placement,
          const tools::Options &o);
int simulate(const plan::Plan &p, const topology::Topology &topo,
             const tools::Options &o);
int run_file(CLI::App &app, const tools::Options &o);

} // namespace

static int tool_main(int argc, char **argv)
{
    tools::Options o;
    CLI::App app{"", "ucg_plan"};
    tools::add_options(app, o);
    // A first word that is neither an option nor a command: say so (CLI11
    // would only say that a command is missing).
    if (argc > 1 && argv[1][0] != '-') {
        const std::string_view cmd = argv[1];
        if (cmd != "print" && cmd != "check" && cmd != "simulate" &&
            cmd != "select") {
            return tools::usage_error(
                app, "unknown command '" + std::string(cmd) +
                         "' (expected print, check, simulate or select)");
        }
    }
    if (const auto rc = tools::parse(app, argc, argv)) {
        return *rc;
    }
    return run(app, o); // allocation failures: guarded_main
}

namespace {

int run(CLI::App &app, const tools::Options &o)
{
    if (!o.plan_file.empty()) {
        return run_file(app, o);
    }
    auto topo = tools::make_topology(o);
    if (!topo) {
        return tools::usage_error(app, topo.error().message);
    }
    if (auto ok = tools::check_options(o, *topo); !ok) {
        return tools::usage_error(app, ok.error().message);
    }
    auto rules = tools::make_rules(o);
    if (!rules) {
        return tools::usage_error(app, rules.error().message);
    }
    for (const std::string &w : rules->warnings) {
        std::cerr << "ucg_plan: warning: " << w << "\n";
    }
    select::Selector sel(*topo, std::move(rules).value());
    if (auto fit = sel.rules_fit(); !fit) {
        return tools::usage_error(app, fit.error().message);
    }
    select::SelectOptions so;
    so.collective = o.collective;
    so.bytes = o.bytes;
    so.root = o.root;
    so.simulate = o.simulate && o.command == "select";
    so.oversubscribed = o.oversubscribed;
    so.ranks_per_core = o.ranks_per_core;
    auto d = sel.select(so);
    if (!d) {
        return die(d.error().message);
    }
    if (o.command == "select") {
        std::cout << topo->describe() << select::format_decision(*d);
        return 0;
    }
    const bool one = o.command == "print" && o.rank;
    if (o.command == "simulate") {
        // Refuse before building: the plan alone can outgrow memory.
        auto need = sel.simulation_bytes(*d);
        if (!need) {
            return die(need.error().message);
        }
        if (*need > cost::kMaxSimBytes) {
            return die("plan too large to simulate: building and simulating " +
                       d->chosen.algorithm + " at " +
                       std::to_string(topo->size()) + " ranks needs about " +
                       std::to_string(*need >> 20) + " MiB (limit " +
                       std::to_string(cost::kMaxSimBytes >> 20) +
                       " MiB; O(P^2) ops for allgather, alltoall and "
                       "reduce_scatter)");
        }
    }
    if (o.command == "check" || (o.command == "print" && !one)) {
        // The whole plan and the checkers' state: estimated from a few
        // one-rank builds, refused before the plan exists.
        auto need = sel.plan_bytes(*d);
        if (!need) {
            return die(need.error().message);
        }
        const bool check = o.command == "check";
        const std::int64_t bytes =
            check ? std::max(need->plan, need->check) : need->plan;
        if (bytes > plan::kMaxCheckBytes) {
            return die(std::string("plan too large to ") +
                       (check ? "check: building and checking " : "print: ") +
                       d->chosen.algorithm + " at " +
                       std::to_string(topo->size()) + " ranks needs about " +
                       std::to_string(bytes >> 20) + " MiB (limit " +
                       std::to_string(plan::kMaxCheckBytes >> 20) +
                       " MiB; print --rank R prints one rank's plan)");
        }
    }
    auto p = sel.build(*d, one ? o.rank : std::nullopt);
    if (!p) {
        return die(p.error().message);
    }
    if (o.command == "print") {
        std::cout << plan::print(one ? plan::project(*p, *o.rank) : *p);
        return 0;
    }
    if (o.command == "check") {
        return check(*p, cost::placement_of(*topo), o);
    }
    return simulate(*p, *topo, o);
}

// A plan given as a file: parsed (errors name the file and line), checked
// against the topology when one is given (always for simulate), then
// checked or simulated as a built one.
int run_file(CLI::App &app, const tools::Options &o)
{
    auto p = tools::read_plan(o);
    if (!p) {
        return die(p.error().message);
    }
    const bool topo_given = app.count("--topo") + app.count("--localities") > 0;
    std::optional<topology::Topology> topo;
    if (topo_given || o.command == "simulate") {
        auto t = tools::make_topology(o);
        if (!t) {
            return tools::usage_error(app, t.error().message);
        }
        if (t->size() != p->nranks) {
            const char *flag =
                o.localities_file.empty() ? "--topo" : "--localities";
            return tools::usage_error(
                app, std::string(flag) + ": the topology has " +
                         std::to_string(t->size()) + " ranks, the plan in " +
                         o.plan_file + " " + std::to_string(p->nranks));
        }
        topo = std::move(t).value();
    }
    if (o.command == "check") {
        return check(*p, topo ? cost::placement_of(*topo) : plan::Placement{},
                     o);
    }
    // The simulator assumes a valid plan.
    auto errors = plan::validate(*p, cost::placement_of(*topo));
    if (!errors.empty()) {
        return die(o.plan_file + ": " + errors.front());
    }
    return simulate(*p, *topo, o);
}

int check(const plan::Plan &p, const plan::Placement &placement,
          const tools::Options &o)
{
    auto errors = plan::validate(p, placement);
    if (errors.empty()) {
        errors =
            plan::check_symbolic(p, o.ordered ? plan::Combine::kOrdered
                                              : plan::Combine::kCommutative);
    }
    for (const std::string &e : errors) {
        std::cout << e << "\n";
    }
    std::cout << p.algorithm << ": "
              << (errors.empty() ? "valid, symbolically correct" : "FAILED")
              << "\n";
    return errors.empty() ? 0 : 1;
}

/// A whole decimal number, nothing around it.
std::optional<uint64_t> parse_count(const std::string &text)
{
    uint64_t v = 0;
    const char *end = text.data() + text.size();
    const auto [at, ec] = std::from_chars(text.data(), end, v);
    if (text.empty() || ec != std::errc() || at != end) {
        return std::nullopt;
    }
    return v;
}

/// --cpu-groups "HOST,HOST[:CPUS]/..." into fabric's CPU groups: every
/// host of topo in exactly one group.
Result<void> parse_cpu_groups(const std::string &spec,
                              const topology::Topology &topo,
                              cost::Fabric *fabric)
{
    const int hosts = topo.num_hosts();
    std::vector<int> group_of_host(size_t(hosts), -1);
    std::istringstream groups(spec);
    for (std::string item; std::getline(groups, item, '/');) {
        const int g = int(fabric->group_cpus.size());
        int cpus = 1;
        if (const size_t colon = item.find(':'); colon != std::string::npos) {
            const auto n = parse_count(item.substr(colon + 1));
            if (!n || *n < 1) {
                return fail("--cpu-groups: bad CPU count in '" + item + "'");
            }
            cpus = int(*n);
            item.resize(colon);
        }
        std::istringstream list(item);
        for (std::string h; std::getline(list, h, ',');) {
            const auto host = parse_count(h);
            if (!host || *host >= uint64_t(hosts)) {
                return fail("--cpu-groups: '" + h +
                            "' is not a host number "
                            "(0 to " +
                            std::to_string(hosts - 1) + ")");
            }
            if (group_of_host[size_t(*host)] >= 0) {
                return fail("--cpu-groups: host " + h + " in two groups");
            }
            group_of_host[size_t(*host)] = g;
        }
        fabric->group_cpus.push_back(cpus);
    }
    for (int h = 0; h < hosts; ++h) {
        if (group_of_host[size_t(h)] < 0) {
            return fail("--cpu-groups: host " + std::to_string(h) +
                        " in no group");
        }
    }
    for (int r = 0; r < topo.size(); ++r) {
        fabric->cpu_group.push_back(group_of_host[size_t(topo.host_of(r))]);
    }
    return {};
}

int simulate(const plan::Plan &p, const topology::Topology &topo,
             const tools::Options &o)
{
    cost::Fabric fabric{&topo, {}};
    if (!o.cpu_groups.empty()) {
        if (auto g = parse_cpu_groups(o.cpu_groups, topo, &fabric); !g) {
            die(g.error().message);
            return 2; // a bad command line
        }
    }
    fabric.turn_ns = o.poll_turn_ns;
    auto r = cost::simulate(p, fabric, sim_config(o, o.critical_path));
    if (!r) {
        return die(r.error().message);
    }
    std::cout << p.algorithm << "\n";
    print_sim("simulated", *r);
    if (o.critical_path) {
        std::cout << "critical path:\n" << cost::format_critical_path(*r);
    }
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    return ucg::tools::guarded_main("ucg_plan",
                                    [&] { return tool_main(argc, argv); });
}
