// SPDX-License-Identifier: BSD-3-Clause
// Shared option parsing for ucg_plan and ucg_plan_bench: topology from a
// synthetic string or from locality + switch files, collective, size, root.
#pragma once

#include "cost/simulator.h"
#include "plan/plan.h"
#include "select/selector.h"
#include "topology/topology.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ucg::tools {

struct Options {
    std::string command;
    plan::Collective collective = plan::Collective::kBcast;
    uint64_t bytes = 8;
    int root = 0;
    std::string topo = "nodes=2,ppn=4";
    std::string topo_file;       ///< switch file or ibnetdiscover output
    std::string localities_file; ///< "host socket numa" per rank
    std::string tune;            ///< user rules (default: UCG_TUNE)
    std::string algorithm;       ///< force one (a rule in front)
    int radix = 0;
    int segments = 0;
    std::optional<int> rank;       ///< print one rank's program
    double uplink_ns_per_byte = 0; ///< simulate: shared uplinks
    bool critical_path = false;
    bool simulate = false; ///< select: also simulate the choices
    std::vector<std::pair<std::string, std::string>> links; ///< LEVEL=L,o,g,G
};

/// Parses argv; errors name the option.
Result<Options> parse_options(int argc, char **argv);

/// The topology the options describe (link overrides applied).
Result<topology::Topology> make_topology(const Options &o);

/// User rules: --tune, else UCG_TUNE; --alg/--radix/--segments become a
/// first rule in the same grammar.
Result<select::RuleSet> make_rules(const Options &o);

std::string usage();

} // namespace ucg::tools
