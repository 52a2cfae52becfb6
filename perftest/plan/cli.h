// SPDX-License-Identifier: BSD-3-Clause
// Shared option parsing for ucg_plan: topology from a synthetic string or
// from locality + switch files, collective, size, root. CLI11 parses and
// checks each value alone; check_options() checks what depends on the
// topology. Every refusal names the flag.
#pragma once

#include "cost/simulator.h"
#include "plan/plan.h"
#include "select/selector.h"
#include "topology/topology.h"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace ucg::tools {

/// One --link LEVEL=L,o,g,G (topology.h).
using topology::LinkOverride;

struct Options {
    std::string command; ///< print, check, simulate or select
    plan::Collective collective = plan::Collective::kBcast;
    uint64_t bytes = 8;
    int root = 0;
    std::string topo = "nodes=2,ppn=4";
    std::string topo_file;         ///< switch file or ibnetdiscover output
    std::string localities_file;   ///< "host socket numa" per rank
    std::string tune;              ///< user rules (default: UCG_TUNE)
    std::string algorithm;         ///< force one (a rule in front)
    int radix = 0;                 ///< 0: choose
    int segments = 0;              ///< 0: choose
    std::optional<int> rank;       ///< print one rank's program
    double uplink_ns_per_byte = 0; ///< simulate: shared uplinks
    std::string cpu_groups;        ///< simulate: hosts that share CPUs
    double poll_turn_ns = 0;       ///< simulate: with cpu_groups
    bool critical_path = false;
    bool simulate = false; ///< select: also simulate the choices
    std::vector<LinkOverride> links;
    std::string plan_file; ///< check, simulate: a plan file, not built
    bool ordered = false;  ///< check: rank order (non-commutative operator)
    bool oversubscribed = false; ///< more ranks than CPUs: no overlap
    int ranks_per_core = 1;      ///< SelectOptions::ranks_per_core
};

using topology::parse_link;

/// ucg_plan's subcommands (print, check, simulate, select) and options on
/// app, writing into o when app parses.
void add_options(CLI::App &app, Options &o);

/// The topology the options describe (link overrides applied). Errors
/// name the flag (--topo, --localities, --topo-file, --link).
Result<topology::Topology> make_topology(const Options &o);

/// What depends on the topology or on other values: --root and --rank in
/// range, --segments no more than --bytes.
Result<void> check_options(const Options &o, const topology::Topology &t);

/// The plan in o.plan_file. Errors name the file and its line
/// ("FILE:N: ...").
Result<plan::Plan> read_plan(const Options &o);

/// User rules: --tune, else UCG_TUNE; --alg/--radix/--segments become a
/// first rule in the same grammar.
Result<select::RuleSet> make_rules(const Options &o);

} // namespace ucg::tools
