// SPDX-License-Identifier: BSD-3-Clause
// ucg_plan: print, check, simulate or select the plan of a collective for
// a size, root and topology, e.g.
//   ucg_plan select --coll allreduce --bytes 1m --topo racks=4,nodes=8,ppn=16
#include "cli.h"
#include "tool_cli.h"

#include <cstdio>
#include <iostream>
#include <new>
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

} // namespace

int main(int argc, char **argv)
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
    try {
        return run(app, o);
    } catch (const std::bad_alloc &) {
        return die("out of memory (try fewer ranks or a smaller message)");
    }
}

namespace {

int run(CLI::App &app, const tools::Options &o)
{
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
    select::Selector sel(*topo, std::move(rules).value());
    select::SelectOptions so;
    so.collective = o.collective;
    so.bytes = o.bytes;
    so.root = o.root;
    so.simulate = o.simulate && o.command == "select";
    auto d = sel.select(so);
    if (!d) {
        return die(d.error().message);
    }
    if (o.command == "select") {
        std::cout << topo->describe() << select::format_decision(*d);
        return 0;
    }
    const bool one = o.command == "print" && o.rank;
    auto p = sel.build(*d, one ? o.rank : std::nullopt);
    if (!p) {
        return die(p.error().message);
    }
    if (o.command == "print") {
        std::cout << plan::print(one ? plan::project(*p, *o.rank) : *p);
        return 0;
    }
    if (o.command == "check") {
        auto errors = plan::validate(*p, cost::placement_of(*topo));
        if (errors.empty()) {
            errors = plan::check_symbolic(*p);
        }
        for (const std::string &e : errors) {
            std::cout << e << "\n";
        }
        std::cout << p->algorithm << ": "
                  << (errors.empty() ? "valid, symbolically correct" : "FAILED")
                  << "\n";
        return errors.empty() ? 0 : 1;
    }
    auto r = cost::simulate(*p, {&*topo, {}}, sim_config(o, o.critical_path));
    if (!r) {
        return die(r.error().message);
    }
    std::cout << p->algorithm << "\n";
    print_sim("simulated", *r);
    if (o.critical_path) {
        std::cout << "critical path:\n" << cost::format_critical_path(*r);
    }
    return 0;
}

} // namespace
