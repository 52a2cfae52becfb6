// SPDX-License-Identifier: BSD-3-Clause
// Switch topology files: which leaf switch each host hangs off. Two
// formats: UCG's simple one and a subset of `ibnetdiscover` output.
#pragma once

#include "topology/topology.h"

#include <string>
#include <string_view>

namespace ucg::topology {

/// Simple format, one switch per line, '#' starts a comment:
///
///     switch <name> <host> [<host>...]
///
/// A host may appear under one switch only.
Result<SwitchMap> parse_switch_file(std::string_view text);

/// ibnetdiscover subset: `Switch <ports> "S-<guid>" # "<desc>" ...` blocks
/// whose port lines `[<p>] "H-<guid>"[<p>] ... # "<host> <hca>" ...` name
/// the attached hosts, and `Ca <ports> "H-<guid>" # "<host> <hca>"` blocks
/// whose port lines name the switch GUID. The switch name is its
/// description, the host name the first word of the CA description.
Result<SwitchMap> parse_ibnetdiscover(std::string_view text);

/// Picks the parser: ibnetdiscover output when a line starts with
/// "Switch", "Ca" or "vendid=", else the simple format.
Result<SwitchMap> parse_topology_file(std::string_view text);

/// The file at `path`, read and parsed (parse_topology_file). Errors name
/// it: "PATH cannot be read", "PATH: <the parser's reason>".
Result<SwitchMap> read_topology_file(const std::string &path);

} // namespace ucg::topology
