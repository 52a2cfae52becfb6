// SPDX-License-Identifier: BSD-3-Clause
// This process's locality (host, socket, NUMA node) from hwloc and the
// host name; the record each rank contributes at group creation.
#pragma once

#include "topology/topology.h"

namespace ucg::topology {

/// Host from UCG_TOPO_HOST or gethostname(); socket and NUMA node from the
/// process's CPU binding (-1 when it spans several). UCG_TOPO_SOCKET and
/// UCG_TOPO_NUMA override the ids (handy for faking nodes in tests).
Result<Locality> probe_locality();

} // namespace ucg::topology
