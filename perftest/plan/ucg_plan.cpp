// SPDX-License-Identifier: BSD-3-Clause
// ucg_plan: print, check, simulate or select the plan of a collective for
// a size, root and topology, e.g.
//   ucg_plan select --coll allreduce --bytes 1m --topo racks=4,nodes=8,ppn=16
#include "cli.h"

#include <cstdio>
#include <iostream>

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

/// select --simulate: the chosen plan and the best flat one, simulated.
int simulate_choices(const tools::Options &o, const topology::Topology &t,
                     const select::Decision &d)
{
    select::Selector plain(t, {});
    auto chosen = plain.build(d, std::nullopt);
    if (!chosen) {
        return die(chosen.error().message);
    }
    auto sc = cost::simulate(*chosen, {&t, {}}, sim_config(o, false));
    if (!sc) {
        return die(sc.error().message);
    }
    print_sim("simulated chosen", *sc);
    if (d.flat.empty()) {
        return 0;
    }
    select::Decision flat = d;
    flat.chosen = d.flat[0];
    flat.custom_builder = false;
    flat.request.radix = flat.chosen.radix;
    flat.request.segments = flat.chosen.segments;
    auto fp = plain.build(flat, std::nullopt);
    if (!fp) {
        return die(fp.error().message);
    }
    auto sf = cost::simulate(*fp, {&t, {}}, sim_config(o, false));
    if (!sf) {
        return die(sf.error().message);
    }
    print_sim(("simulated flat " + flat.chosen.algorithm).c_str(), *sf);
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    auto opts = tools::parse_options(argc, argv);
    if (!opts) {
        std::cerr << "ucg_plan: " << opts.error().message << "\n"
                  << tools::usage();
        return 2;
    }
    const tools::Options &o = *opts;
    auto topo = tools::make_topology(o);
    if (!topo) {
        return die(topo.error().message);
    }
    auto rules = tools::make_rules(o);
    if (!rules) {
        return die(rules.error().message);
    }
    select::Selector sel(*topo, std::move(rules).value());
    auto d = sel.select({o.collective, o.bytes, o.root});
    if (!d) {
        return die(d.error().message);
    }
    if (o.command == "select") {
        std::cout << topo->describe() << select::format_decision(*d);
        return o.simulate ? simulate_choices(o, *topo, *d) : 0;
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
        auto errors = plan::validate(*p);
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
