// SPDX-License-Identifier: BSD-3-Clause
// Option parsing and topology construction for the plan tools.
#include "cli.h"

#include "tool_cli.h"

#include "topology/synthetic.h"
#include "topology/topo_file.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ucg::tools {

namespace {

Result<std::string> read_file(const std::string &path)
{
    std::ifstream in(path);
    if (!in) {
        return fail("cannot open '" + path + "'");
    }
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

/// "host socket numa" per line, one line per rank.
Result<std::vector<topology::Locality>> parse_localities(const std::string &t)
{
    std::vector<topology::Locality> out;
    std::istringstream in(t);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        std::istringstream ls(line.substr(0, line.find('#')));
        topology::Locality loc;
        if (!(ls >> loc.host)) {
            continue;
        }
        std::string extra;
        if (!(ls >> loc.socket >> loc.numa) || (ls >> extra)) {
            return fail("line " + std::to_string(n) +
                        ": expected 'host socket numa'");
        }
        if (loc.socket < 0 || loc.numa < 0) {
            return fail("line " + std::to_string(n) +
                        ": socket and numa must be >= 0");
        }
        out.push_back(loc);
    }
    return out;
}

/// CLI11 validator over a Result-returning parser: the error is the text.
template <class F> CLI::Validator validator(F parse, const char *name)
{
    return CLI::Validator(
        [parse](std::string &text) -> std::string {
            auto r = parse(text);
            return r ? std::string() : r.error().message;
        },
        name);
}

Result<plan::Collective> parse_collective(const std::string &text)
{
    auto c = plan::collective_from_string(text);
    if (!c) {
        return fail("unknown collective '" + text + "'");
    }
    return *c;
}

Result<uint64_t> parse_bytes(const std::string &text)
{
    auto b = select::parse_size(text);
    if (!b || *b == select::kInfinity) {
        return fail("expected a size (8, 64k, 1m), got '" + text + "'");
    }
    return *b;
}

} // namespace

void add_options(CLI::App &app, Options &o)
{
    app.description("ucg_plan: print, check, simulate or select the plan of "
                    "a collective for a size, root and topology. Exit status: "
                    "0 done, 1 the work failed (e.g. check found an error), " +
                    std::to_string(kUsageError) + " bad command line.");
    add_version(app);
    app.require_subcommand(1);
    // Options of the tool come after the command, as in
    // `ucg_plan select --coll bcast`.
    app.fallthrough();
    CLI::App *print = app.add_subcommand("print", "print the plan");
    CLI::App *check = app.add_subcommand(
        "check", "validate the plan and check it symbolically");
    CLI::App *simulate =
        app.add_subcommand("simulate", "simulate the plan (LogGP)");
    CLI::App *select = app.add_subcommand(
        "select", "the selector's decision per level and the alternatives");
    for (CLI::App *sub : {print, check, simulate, select}) {
        sub->callback([&o, sub] { o.command = sub->get_name(); });
        sub->footer("and the options of ucg_plan --help (--coll, --bytes, "
                    "--topo...), after the command");
    }

    auto *coll =
        app.add_option_function<std::string>(
               "--coll",
               [&o](const std::string &v) {
                   o.collective = parse_collective(v).value();
               },
               "bcast reduce allreduce gather scatter allgather alltoall "
               "reduce_scatter barrier scan exscan")
            ->check(validator(parse_collective, "NAME"))
            ->default_str("bcast");
    app.add_option_function<std::string>(
           "--bytes",
           [&o](const std::string &v) { o.bytes = parse_bytes(v).value(); },
           "bytes per rank's block (8, 64k, 1m)")
        ->check(validator(parse_bytes, "SIZE"))
        ->default_str("8");
    auto *root = app.add_option("--root", o.root, "root rank")
                     ->check(at_least(0))
                     ->capture_default_str();
    auto *topo = app.add_option("--topo", o.topo,
                                "synthetic: racks=4,nodes=8,ppn=16,sockets=2,"
                                "numa=1,order=block|roundrobin|random,seed=1")
                     ->capture_default_str();
    auto *loc = app.add_option("--localities", o.localities_file,
                               "'host socket numa' per rank (instead of "
                               "--topo)")
                    ->check(CLI::ExistingFile)
                    ->excludes(topo);
    app.add_option("--topo-file", o.topo_file,
                   "with --localities: 'switch <name> <host>...' lines or "
                   "ibnetdiscover output")
        ->check(CLI::ExistingFile)
        ->needs(loc);
    auto *tune =
        app.add_option("--tune", o.tune, "selection rules (default $UCG_TUNE)");
    auto *alg = app.add_option("--alg", o.algorithm, "force an algorithm");
    auto *radix = app.add_option("--radix", o.radix, "with --alg: the radix")
                      ->check(at_least(2))
                      ->needs(alg);
    auto *segments = app.add_option("--segments", o.segments,
                                    "with --alg: segments (at most --bytes)")
                         ->check(at_least(1))
                         ->needs(alg);
    app.add_option_function<std::vector<std::string>>(
           "--link",
           [&o](const std::vector<std::string> &v) {
               for (const std::string &text : v) {
                   o.links.push_back(parse_link(text).value());
               }
           },
           "LEVEL=L,o,g,G: a level's link cost in ns (and ns/byte)")
        ->check(validator(parse_link, "LEVEL=L,o,g,G"))
        ->allow_extra_args(false);

    app.add_flag("--oversubscribed", o.oversubscribed,
                 "select for ranks that share CPUs (as the runtime does when "
                 "a host has more ranks than cores): each step waits a "
                 "scheduling turn, bytes cost twice");
    app.add_option("--ranks-per-core", o.ranks_per_core,
                   "ranks of one machine per core (hosts emulated on one "
                   "machine count together): the ranks that all talk at "
                   "once between hosts share the cores as a NIC")
        ->check(CLI::PositiveNumber);

    print
        ->add_option_function<int>(
            "--rank", [&o](const int &r) { o.rank = r; }, "one rank's program")
        ->check(at_least(0));
    simulate
        ->add_option("--uplink", o.uplink_ns_per_byte,
                     "switch uplinks, ns per byte")
        ->check(non_negative_finite());
    simulate->add_option(
        "--cpu-groups", o.cpu_groups,
        "hosts that share CPUs, as hosts emulated on one machine "
        "do: 'HOST,HOST[:CPUS]/...' by host number (0 first; "
        "CPUS 1 unless given), every host in one group; a "
        "message's bytes are then CPU work at both ends");
    simulate
        ->add_option("--poll-turn", o.poll_turn_ns,
                     "with --cpu-groups: one poll turn, ns (ucg_perftest "
                     "--calibrate-turn): a rank that waited for a message "
                     "gets its CPU back after a turn of each other rank")
        ->check(non_negative_finite())
        ->needs("--cpu-groups");
    simulate->add_flag("--path", o.critical_path, "print the critical path");
    // A plan file says its collective, algorithm and root.
    for (CLI::App *sub : {check, simulate}) {
        auto *file = sub->add_option("--plan", o.plan_file,
                                     "a plan file (ucg_plan print's text "
                                     "form) instead of building one")
                         ->check(CLI::ExistingFile);
        for (CLI::Option *given : {coll, alg, radix, segments, root, tune}) {
            file->excludes(given);
        }
    }
    check->add_flag("--ordered", o.ordered,
                    "check as for a non-commutative operator (every output "
                    "combined in rank order)");
    select->add_flag("--simulate", o.simulate,
                     "decide by simulating the hierarchical and the 3 best "
                     "flat plans (<= 4096 ranks)");
}

Result<topology::Topology> make_topology(const Options &o)
{
    Result<topology::Topology> topo = fail("no topology");
    if (!o.localities_file.empty()) {
        auto text = read_file(o.localities_file);
        if (!text) {
            return fail("--localities: " + text.error().message);
        }
        auto locs = parse_localities(*text);
        if (!locs) {
            return fail("--localities " + o.localities_file + ": " +
                        locs.error().message);
        }
        topology::SwitchMap sw;
        if (!o.topo_file.empty()) {
            auto m = topology::read_topology_file(o.topo_file);
            if (!m) {
                return fail("--topo-file " + m.error().message);
            }
            sw = std::move(m).value();
        }
        topo = topology::Topology::from_localities(
            *locs, o.topo_file.empty() ? nullptr : &sw);
        if (!topo) {
            return fail(
                (o.topo_file.empty() ? "--localities: " : "--topo-file: ") +
                topo.error().message);
        }
    } else {
        topo = topology::make_synthetic(o.topo);
        if (!topo) {
            return fail("--topo: " + topo.error().message);
        }
    }
    for (const LinkOverride &l : o.links) {
        if (topo->level(l.kind) == nullptr) {
            std::string have;
            for (const topology::Level &lv : topo->levels()) {
                have += std::string(have.empty() ? "" : ", ") +
                        topology::level_name(lv.kind);
            }
            return fail("--link " + l.text + ": the topology has no " +
                        topology::level_name(l.kind) + " level (it has " +
                        have + ")");
        }
        topo->set_link_cost(l.kind, l.cost);
    }
    return topo;
}

Result<void> check_options(const Options &o, const topology::Topology &t)
{
    const auto in_range = [&t](const char *flag, int r) -> Result<void> {
        if (r >= t.size()) {
            return fail(std::string(flag) + ": rank " + std::to_string(r) +
                        " out of range (the topology has " +
                        std::to_string(t.size()) + " ranks)");
        }
        return {};
    };
    if (auto ok = in_range("--root", o.root); !ok) {
        return ok;
    }
    if (o.rank) {
        if (auto ok = in_range("--rank", *o.rank); !ok) {
            return ok;
        }
    }
    if (o.segments > 0 && uint64_t(o.segments) > o.bytes) {
        return fail("--segments: " + std::to_string(o.segments) +
                    " segments of a " + std::to_string(o.bytes) +
                    "-byte message (at most one per byte)");
    }
    return {};
}

Result<plan::Plan> read_plan(const Options &o)
{
    auto text = read_file(o.plan_file);
    if (!text) {
        return fail("--plan: " + text.error().message);
    }
    auto p = plan::parse(*text);
    if (!p) {
        // "line N: why" becomes "FILE:N: why", as compilers say it.
        std::string msg = p.error().message;
        if (msg.rfind("line ", 0) == 0) {
            msg = o.plan_file + ":" + msg.substr(5);
        } else {
            msg = o.plan_file + ": " + msg;
        }
        return fail(msg);
    }
    return p;
}

Result<select::RuleSet> make_rules(const Options &o)
{
    std::string text = o.tune;
    std::string origin = "--tune";
    if (text.empty()) {
        if (const char *env = std::getenv("UCG_TUNE")) {
            text = env;
            origin = "UCG_TUNE";
        }
    }
    if (!o.algorithm.empty()) {
        std::string rule = std::string(plan::to_string(o.collective)) +
                           ":0-inf:" + o.algorithm;
        std::string params;
        if (o.radix > 0) {
            params += "radix=" + std::to_string(o.radix);
        }
        if (o.segments > 0) {
            params += (params.empty() ? "" : ",") + std::string("segments=") +
                      std::to_string(o.segments);
        }
        text = rule + (params.empty() ? "" : ":" + params) +
               (text.empty() ? "" : ";" + text);
        origin = "--alg/" + origin;
    }
    return select::parse_rules(text, origin);
}

} // namespace ucg::tools
