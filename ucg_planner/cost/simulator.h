// SPDX-License-Identifier: BSD-3-Clause
// Discrete-event simulator: runs a plan as a schedule under LogGP with
// per-rank CPU overhead, per-rank ports, shared host NICs and optional
// switch uplinks, and reports makespan, finish times and critical path.
//
// Where its cost grows: memory and time are linear in the plan's ops and
// messages (one event per op and per message, O(log) heap each), so they
// follow the plan: O(P log P) for trees and recursive doubling, but
// O(P^2) for allgather, alltoall and reduce_scatter (every rank sends to
// or receives from every other, directly or in P-1 ring steps). Those
// plans, and the plans themselves, outgrow memory at a few thousand ranks:
// simulate() refuses a plan whose state (sim_bytes) exceeds
// SimConfig::max_bytes by name before sizing anything, and
// estimate_plan_bytes() lets a caller refuse before building the plan.
#pragma once

#include "plan/plan.h"
#include "topology/topology.h"
#include "ucg/result.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ucg::cost {

/*
 * Semantics (times in ns; m = bytes of the message; link = link class of
 * the sender/receiver pair):
 *   send       starts when its deps are done and the sender's CPU and port
 *              are free; the CPU is busy o, the port (the host NIC when the
 *              peer is on another host, else the rank's own shm port) g+mG;
 *              the send is done at start+o+mG, the last byte lands at
 *              start+o+mG+L. A sender thus repeats every max(o, g+mG).
 *   receive    the receiver's port (NIC or shm) takes the bytes at G each:
 *              delivered = max(landed, port free + mG); once the receive's
 *              deps are done and all its messages delivered, the CPU is busy
 *              o per message (+ reduce_ns_per_byte * m for reductions).
 *   bcast-send one injection for all peers (shm write or mcast); incast
 *              sends are sends; incast receives receive each peer, but an
 *              incast reduce takes no port time: the senders wrote their
 *              slots, the root reads them while it combines (its o per
 *              peer and reduce_ns_per_byte per byte).
 *   copy/reduce CPU busy m * copy_ns_per_byte (or reduce_ns_per_byte).
 *   CPU groups with Fabric::cpu_group, ranks share their group's CPUs,
 *              and a message's bytes hold a CPU at each end as well
 *              (cpu_share m G each, within the bytes' time at the port);
 *              a receive whose message came after it was ready starts
 *              turn_ns (ranks per CPU of the group - 1) later.
 *   uplinks    when uplink_ns_per_byte > 0, a message between switches also
 *              holds the sender's switch uplink and the receiver's switch
 *              downlink for m * uplink_ns_per_byte, and its bytes move at
 *              the slower of G and uplink_ns_per_byte.
 * The alpha-beta model is L = alpha, o = 0, g = alpha, G = beta.
 */
/// Default limit of the simulator's own state (sim_bytes), 4 GiB.
inline constexpr std::int64_t kMaxSimBytes = std::int64_t{4} << 30;

struct SimConfig {
    size_t count = 1;              ///< elements per block
    size_t elem_bytes = 1;         ///< bytes per element
    double copy_ns_per_byte = 0;   ///< local copies
    double reduce_ns_per_byte = 0; ///< reductions (gamma)
    double uplink_ns_per_byte = 0; ///< 0: non-blocking fabric
    bool critical_path = true;
    /// simulate() refuses plans whose sim_bytes() exceed this.
    std::int64_t max_bytes = kMaxSimBytes;
};

/// Where ranks share CPUs (Fabric::cpu_group), the share of a message's
/// bytes time (m G, G measured between two CPUs) each end's CPU holds: a
/// message between two emulated hosts on one CPU took 1.15 times what it
/// took between hosts on two CPUs (`ucg_perftest --calibrate-links`, 2
/// to 4 MiB: 0.1445 ns/B against 0.1258), 2 x 0.575 (decision 0060).
inline constexpr double kCpuShareOfBytes = 0.575;

/// Who is where and what links cost. Without a topology every rank is its
/// own host and every pair uses `uniform`.
struct Fabric {
    const topology::Topology *topo = nullptr;
    topology::LinkCost uniform;
    /// Where ranks share CPUs (hosts emulated on one machine, decision
    /// 0060): each rank's CPU group (`cpu_group[rank]`) and each group's
    /// CPUs (`group_cpus[group]`, at least 1). A rank's work runs on the
    /// first free CPU of its group, and a message's bytes are CPU work at
    /// both ends: the sender's CPU holds cpu_share m G as it sends, the
    /// receiver's as it takes them (the kernel's TCP, a copy in and out of
    /// shared memory), so two ends on one CPU take 2 cpu_share m G. Empty:
    /// every rank has a CPU of its own, and bytes hold ports only.
    std::vector<int> cpu_group{};
    std::vector<int> group_cpus{};
    /// With CPU groups: the share of a message's m G each end's CPU holds.
    double cpu_share = kCpuShareOfBytes;
    /// With CPU groups: one poll turn, ns (decision 0062). Ranks that wait
    /// poll and yield their CPU in turn, so a rank whose message arrives
    /// after its receive was ready gets its CPU back once the group's
    /// other ranks have had a turn each: turn_ns (ranks of the group per
    /// CPU - 1) before the receive's work. 0: no turns.
    double turn_ns = 0;
};

struct PathStep {
    int rank = -1;
    int op = -1;
    plan::OpKind kind = plan::OpKind::kSend;
    double start_ns = 0;
    double end_ns = 0;
    bool waited = false; ///< started later than its inputs (contention)
};

struct SimResult {
    double makespan_ns = 0;
    std::vector<double> finish_ns;       ///< per rank: last op done
    std::vector<PathStep> critical_path; ///< first to last
    size_t ops = 0;
    size_t messages = 0;
};

/// Where the topology puts each rank, for the one-to-many channels: its
/// host (shm) and multicast domain.
plan::Placement placement_of(const topology::Topology &topo);

/// What simulate() would hold at once for `plan`, in bytes, from its op,
/// dependency and peer counts (flat ops, reversed deps, message matching,
/// events); saturates instead of overflowing.
std::int64_t sim_bytes(const plan::Plan &plan);
/// One rank program's share of sim_bytes() (without the per-rank arrays).
std::int64_t sim_bytes(const plan::RankProgram &program);
/// The heap a rank program holds in a plan (ops and their vectors).
std::int64_t program_bytes(const plan::RankProgram &program);

/// Fails on unmatched messages, unbuilt ranks, deadlock (naming a stuck
/// op), a plan above config.max_bytes (naming the limit) and, with a topology,
/// shm groups across hosts and mcast groups outside a multicast domain.
Result<SimResult> simulate(const plan::Plan &plan, const Fabric &fabric,
                           const SimConfig &config);

/// The critical path, one line per step.
std::string format_critical_path(const SimResult &result);

} // namespace ucg::cost
