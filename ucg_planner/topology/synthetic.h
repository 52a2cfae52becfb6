// SPDX-License-Identifier: BSD-3-Clause
// Synthetic topologies from a string such as
// "racks=4,nodes=8,ppn=16,sockets=2,order=roundrobin": they drive the
// simulator and let one machine act as many nodes in tests.
#pragma once

#include "topology/topology.h"

#include <string_view>

namespace ucg::topology {

/// How ranks are numbered over the slots.
enum class RankOrder : uint8_t {
    kBlock,      ///< host by host (rank r on host r / ppn)
    kRoundRobin, ///< one per host in turn (rank r on host r % hosts)
    kRandom,     ///< a seeded shuffle of the slots (scattered allocation)
};

/// Keys: racks (or switches), nodes (or hosts; per rack), ppn (ranks per
/// node), sockets (per node), numa (per socket), order
/// (block|roundrobin|random), seed (for order=random).
struct SyntheticSpec {
    int racks = 1;
    int nodes = 1;
    int ppn = 1;
    int sockets = 1;
    int numa = 1;
    RankOrder order = RankOrder::kBlock;
    uint64_t seed = 1;

    int64_t ranks() const { return int64_t(racks) * nodes * ppn; }
};

/// Errors name the column and key and say what was expected.
Result<SyntheticSpec> parse_synthetic(std::string_view text);

/// Host "r<rack>n<node>", switch "sw<rack>"; sockets and NUMA nodes fill
/// a host's slots in order.
std::vector<Locality> synthetic_localities(const SyntheticSpec &spec);

/// parse_synthetic + synthetic_localities + Topology::from_localities.
Result<Topology> make_synthetic(std::string_view text);

} // namespace ucg::topology
