// SPDX-License-Identifier: BSD-3-Clause
// The runtime behind ucg.h: context (UCP worker, one-to-many ifaces),
// group (members, endpoints, topology, host groups on the one-to-many
// transports, plan cache) and collective (a lowered plan bound to buffers,
// run by the engine). One thread at a time per context.
#pragma once

#include "api/host_probe.h"
#include "api/ucp_fabric.h"
#include "api/ucp_settings.h"
#include "api/wait_backoff.h"
#include "exec/engine.h"
#include "select/selector.h"
#include "topology/topology.h"
#include "ucg/ucg.h"

#include <uct_group.h>
#include <uct_mm_incast.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace ucg::rt {

class UcpFabric;

/// A one-to-many transport this context's worker opened.
struct OneToMany {
    uct_iface_h iface = nullptr;
    std::uint16_t tl_csum = 0; ///< UCP's checksum of the transport name
    std::size_t addr_len = 0;  ///< its iface address length
    uct_group_attr_t attr{};
    /// Each byte's time through it (algorithms::ChannelLimits), copied in
    /// by the sender and out by the receivers; 0: unknown. Its latency is
    /// the host link's (see context.cpp).
    double ns_per_byte = 0;
    /// One op's latency where the iface's own figure is used (ud_mcast);
    /// 0: the level link's times alpha_scale.
    double alpha_ns = 0;
    double alpha_scale = 1;
    bool loopback = false; ///< its device is `lo` (ud_mcast: one machine)
};

/// What every member tells the others at group creation (fixed size).
struct Hello {
    std::uint32_t magic;
    std::uint32_t size;
    std::uint32_t rank;
    std::uint32_t addr_len; ///< UCP worker address bytes
    std::int32_t pid;
    std::uint32_t flags;      ///< kHello*
    std::uint64_t start_time; ///< process start (pid reuse check)
    std::uint64_t key;        ///< random, from every member (rank 0's used)
    char host[64];            ///< host identity (UCG_TOPO_HOST or name)
    char real_host[64];       ///< gethostname(): whether pids can be probed
    std::uint64_t cpus[16];   ///< CPUs it may run on (sched_getaffinity)
    /// Its machine (machine_id()): hosts that share one kernel's cores
    /// (network namespaces, containers) share it; real_host does not.
    std::uint64_t machine;
    std::uint32_t shm_short[2]; ///< ucg_context::shm_short
    /// UCG_TOPO_FILE: 0 none, kPlanSettingBad unreadable, else a hash of the
    /// host -> switch map it gives (members must agree).
    std::uint64_t topo_file;
    /// UCG_LINKS: as topo_file (members must agree: the costs pick plans).
    std::uint64_t links;
    /// Where its host answers liveness probes (host_probe.h).
    ProbeAddr probe;
    /// UCG_CMA_THRESH (ucg_context::cma_thresh): members must agree, as a
    /// message's sender and receiver both choose its path by it.
    std::uint64_t cma_thresh;
    /// The most members its mm_bcast and mm_incast ifaces take in one
    /// group (the smaller; 0: it has neither). A host with more ranks
    /// than any member's limit makes the group point-to-point.
    std::uint64_t o2m_max_group;
};
/// A plan setting's hash (Hello::topo_file, links) where it could not be
/// read or parsed.
inline constexpr std::uint64_t kPlanSettingBad = ~std::uint64_t{0};
enum : std::uint32_t {
    kHelloBcast = 1,     ///< has an mm_bcast iface
    kHelloIncast = 2,    ///< has an mm_incast iface
    kHelloNoO2m = 4,     ///< asked for point-to-point only
    kHelloMcastLo = 8,   ///< has ud_mcast on lo (UCG_MCAST, context.cpp)
    kHelloMcastNet = 16, ///< has ud_mcast on another device
    kHelloCma = 32,      ///< may read its machine's processes (can_read_peers)
    kHelloNoRdma = 64,   ///< UCX found no RDMA device (rdma_device_found)
    /// its context sends over sockets by rendezvous from kSocketRndvBytes
    /// (ucg_context::socket_rndv)
    kHelloSocketRndv = 128,
};

/// The switch and world links' cost where the members reach each other
/// over sockets (links_are_sockets; decision 0030): UCP over tcp between
/// the emulated cluster's hosts, `ucg_perftest --calibrate-links`, stop
/// 39: a send's overhead o (and gap g) 3.5-4.3 us, mostly system calls; L
/// 0 on veth, where a real network adds its wire (1 us here); 0.54-0.57
/// ns per byte. The built-in costs are an InfiniBand fabric's (o 150 ns),
/// which over tcp made a bcast's root send once per remote rank.
inline constexpr topology::LinkCost kSocketLink{1000, 3500, 3500, 0.55};

/// Whether every member `hello` describes carries `flag` and they sit on
/// more than one machine (real_host). Alike on every member.
inline bool all_flagged_across_machines(const std::vector<Hello> &hello,
                                        std::uint32_t flag) noexcept
{
    bool machines = false;
    for (const Hello &h : hello) {
        if (!(h.flags & flag)) {
            return false;
        }
        machines =
            machines || std::strcmp(h.real_host, hello[0].real_host) != 0;
    }
    return machines;
}

/// Whether the members `hello` describe reach each other over sockets:
/// more than one machine (real_host) and no RDMA device on any. Then the
/// group's switch and world links cost kSocketLink unless UCG_LINKS gives
/// them. Alike on every member.
inline bool links_are_sockets(const std::vector<Hello> &hello) noexcept
{
    return all_flagged_across_machines(hello, kHelloNoRdma);
}

/// Where the members `hello` describe sit on more than one machine
/// (real_host) and every one's context sends over sockets by rendezvous
/// from kSocketRndvBytes (kHelloSocketRndv): that size, which the flat
/// gather's messages stay below (SelectOptions::eager_bytes, decision
/// 0065); else 0. Alike on every member.
inline std::uint64_t
socket_eager_bytes(const std::vector<Hello> &hello) noexcept
{
    return all_flagged_across_machines(hello, kHelloSocketRndv)
               ? kSocketRndvBytes
               : 0;
}

/// This process's machine: a hash of the kernel's boot id, which every
/// namespace and container of one kernel reads alike (else of the host
/// name).
std::uint64_t machine_id();

/// One machine's members and the CPUs they may run on together (the
/// union of their affinity masks), per `key_of(hello)`: the machines of
/// hosts_oversubscribed (by host name and by machine) and of ranks_per_core (by
/// Hello::machine), in one pass over the records.
struct CpuLoad {
    long ranks = 0;
    long cpus = 0;
};
template <typename Key, typename KeyOf>
std::map<Key, CpuLoad> cpu_loads(const std::vector<Hello> &hello, KeyOf key_of)
{
    std::map<Key, std::array<std::uint64_t, std::size(Hello{}.cpus)>> masks;
    std::map<Key, CpuLoad> loads;
    for (const Hello &h : hello) {
        const Key key = key_of(h);
        ++loads[key].ranks;
        auto &mask = masks[key];
        for (std::size_t w = 0; w < mask.size(); ++w) {
            mask[w] |= h.cpus[w];
        }
    }
    for (auto &[key, load] : loads) {
        for (std::uint64_t w : masks[key]) {
            load.cpus += std::popcount(w);
        }
    }
    return loads;
}

/// The most members of one machine (Hello::machine) per CPU they may run
/// on together, rounded up (at least 1); alike on every member. Hosts
/// emulated on one machine count together: their ranks share its cores,
/// and between them a message's bytes are those cores' work (the
/// selector's SelectOptions::ranks_per_core, decision 0034).
inline int ranks_per_core(const std::vector<Hello> &hello)
{
    long most = 1;
    for (const auto &[machine, l] : cpu_loads<std::uint64_t>(
             hello, [](const Hello &h) { return h.machine; })) {
        if (l.cpus > 0) {
            most = std::max(most, (l.ranks + l.cpus - 1) / l.cpus);
        }
    }
    return static_cast<int>(most);
}

/// Per host (Hello::real_host, whatever host its ranks pose as): whether
/// its ranks take turns on their cores. They do where the host's members
/// outnumber the CPUs they may run on together (mpirun binds each rank to
/// its own core, which is no oversubscription; four unbound ranks on two
/// cores are), and where the members of the host's machine
/// (Hello::machine) outnumber the machine's: hosts emulated on one
/// machine, each with a core per rank of its own but two hosts a core
/// (decision 0040).
inline std::map<std::string, bool>
hosts_oversubscribed(const std::vector<Hello> &hello)
{
    const auto host_of = [](const Hello &h) {
        return std::string(h.real_host,
                           strnlen(h.real_host, sizeof(h.real_host)));
    };
    const auto over = [](const CpuLoad &l) {
        return l.cpus > 0 && l.ranks > l.cpus;
    };
    std::map<std::string, bool> hosts;
    for (const auto &[host, l] : cpu_loads<std::string>(hello, host_of)) {
        hosts[host] = over(l);
    }
    const auto machines = cpu_loads<std::uint64_t>(
        hello, [](const Hello &h) { return h.machine; });
    for (const Hello &h : hello) {
        if (over(machines.at(h.machine))) {
            hosts[host_of(h)] = true;
        }
    }
    return hosts;
}

/// Where hosts share one machine's CPUs (members of one Hello::machine
/// on more than one real_host, as the emulated cluster's hosts): each
/// member's CPU group, the members of one machine and affinity mask, and
/// each group's CPUs, for the simulator that prices the plan a group runs
/// (cost::Fabric::cpu_group, decision 0060). Empty where every machine
/// holds one host. Alike on every member.
struct CpuGroups {
    std::vector<int> group; ///< per member
    std::vector<int> cpus;  ///< per group
    /// One poll turn on a shared CPU, ns (UCG_POLL_TURN, cost::Fabric::
    /// turn_ns; 0: none).
    double turn_ns = 0;
};
inline CpuGroups cpu_groups(const std::vector<Hello> &hello)
{
    CpuGroups out;
    std::map<std::uint64_t, std::string> host_of_machine;
    bool shared = false;
    for (const Hello &h : hello) {
        const std::string host(h.real_host,
                               strnlen(h.real_host, sizeof(h.real_host)));
        const auto [it, fresh] = host_of_machine.emplace(h.machine, host);
        shared = shared || (!fresh && it->second != host);
    }
    if (!shared) {
        return out;
    }
    using Mask = std::array<std::uint64_t, std::size(Hello{}.cpus)>;
    std::map<std::pair<std::uint64_t, Mask>, int> index;
    for (const Hello &h : hello) {
        Mask mask;
        std::copy(std::begin(h.cpus), std::end(h.cpus), mask.begin());
        const auto [it, fresh] = index.emplace(
            std::pair{h.machine, mask}, static_cast<int>(out.cpus.size()));
        if (fresh) {
            int n = 0;
            for (std::uint64_t w : mask) {
                n += std::popcount(w);
            }
            out.cpus.push_back(std::max(n, 1));
        }
        out.group.push_back(it->second);
    }
    return out;
}

/// UCG_POLL_TURN's value: a time in ns from 0 to 1e9 (CpuGroups::
/// turn_ns), else none.
inline std::optional<double> parse_poll_turn(const char *text)
{
    char *end = nullptr;
    const double ns = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(ns >= 0 && ns <= 1e9)) {
        return std::nullopt;
    }
    return ns;
}

/// Simulator state a plan's prediction may take (model_ns).
inline constexpr std::int64_t kPredictionSimBytes = std::int64_t{64} << 20;

/// The model's time for decision d, the Pred(us) of ucg_perftest. Where
/// hosts share a machine's CPUs (cpu_groups() not empty), the whole plan
/// simulated on those CPUs (cost::Fabric::cpu_group): the selector's
/// formulas price a host's CPU by its own ranks and read the emulated
/// cluster's exchanges at 0.3-0.8 of their times and its rooted plans at
/// 1.4-1.8 (decision 0060). Else, or where the simulation would hold more
/// than kPredictionSimBytes, the formulas' figure (Choice::predicted_ns).
inline double model_ns(const select::Selector &sel,
                       const select::SelectOptions &o,
                       const select::Decision &d,
                       const topology::Topology &topo, const CpuGroups &cpus)
{
    const double formula = d.chosen.predicted_ns;
    if (cpus.group.empty()) {
        return formula;
    }
    const auto need = sel.simulation_bytes(d);
    if (!need || *need > kPredictionSimBytes) {
        return formula;
    }
    const auto p = sel.build(d, std::nullopt);
    if (!p) {
        return formula;
    }
    cost::SimConfig cfg;
    cfg.count = o.bytes;
    cfg.copy_ns_per_byte = o.copy_ns_per_byte;
    cfg.reduce_ns_per_byte = o.reduce_ns_per_byte;
    cfg.critical_path = false;
    const cost::Fabric fabric{
        &topo, {}, cpus.group, cpus.cpus, cost::kCpuShareOfBytes, cpus.turn_ns};
    const auto r = cost::simulate(*p, fabric, cfg);
    return r ? r->makespan_ns : formula;
}

/// A host (Hello::host) with more ranks than some member's one-to-many
/// transports take in one group (Hello::o2m_max_group): the first by
/// name, its ranks and the smallest limit; none where every host fits.
/// Alike on every member.
struct HostOverLimit {
    std::string host;
    std::size_t ranks = 0;
    std::size_t limit = 0;
};
inline std::optional<HostOverLimit>
host_over_o2m_limit(const std::vector<Hello> &hello)
{
    std::uint64_t limit = UINT64_MAX;
    for (const Hello &h : hello) {
        limit = std::min(limit, h.o2m_max_group);
    }
    for (const auto &[host, l] :
         cpu_loads<std::string>(hello, [](const Hello &h) {
             return std::string(h.host, strnlen(h.host, sizeof(h.host)));
         })) {
        if (static_cast<std::uint64_t>(l.ranks) > limit) {
            return HostOverLimit{host, static_cast<std::size_t>(l.ranks),
                                 static_cast<std::size_t>(limit)};
        }
    }
    return std::nullopt;
}

/// The ud_mcast entry points (uct_ud_mcast.h), looked up when the plugin
/// was loaded for UCG_MCAST; null without it.
struct McastApi {
    ucs_status_t (*query)(uct_iface_h, uct_group_attr_t *) = nullptr;
    ucs_status_t (*create)(uct_iface_h, const uct_group_params_t *,
                           uct_group_h *) = nullptr;
    ucs_status_t (*flush)(uct_group_h) = nullptr; ///< optional
};

/// One ud_mcast group of a UCG group: its members are the ranks of the
/// plans' mcast groups (the hosts' leaders, which depend on the root), so
/// it is created at the first collective init that needs it (coll.cpp).
struct McastChannel {
    uct_group_h group = nullptr;
    exec::GroupChannel ch;
};

/// A plan file for one collective (UCG_PLAN_FILES), checked at group
/// creation and used where a call fits it (plan_files.cpp).
struct FilePlan {
    std::string name;         ///< "file:<path>"
    int root = 0;             ///< rooted collectives: calls with this root
    int nchunks = 1;          ///< calls need this many elements per block
    bool ordered = false;     ///< right for a non-commutative operator
    bool one_to_many = false; ///< has one-to-many ops (no user operators)
    std::shared_ptr<const plan::Plan> plan; ///< projected to this rank
};

} // namespace ucg::rt

struct ucg_context {
    using OneToMany = ucg::rt::OneToMany;
    ucp_context_h ucp = nullptr;
    ucp_worker_h worker = nullptr;
    bool own_ucp = false;
    double timeout_sec = 30;
    void (*idle)(void *) = nullptr; ///< the caller's progress, in waits
    void *idle_arg = nullptr;
    OneToMany bcast, incast;
    /// The inline limit (am.max_short) of UCP's sysv and posix ifaces, 0
    /// where UCP opened none: it follows UCX's FIFO element, which every
    /// process of a host must share (group creation checks it).
    std::uint32_t shm_short[2] = {0, 0};
    /// ud_mcast (UCG_MCAST=1 and UCX_TLS allowing it), between hosts: an
    /// iface per device UCP opened it on, in UCP's order (lo among them).
    std::vector<OneToMany> mcast;
    ucg::rt::McastApi mcast_api;
    /// UCG_TOPO_FILE, read once: its hosts -> switches (racks), or null,
    /// and what each group's hello carries (Hello::topo_file).
    std::unique_ptr<ucg::topology::SwitchMap> switches;
    std::uint64_t topo_file = 0;
    /// UCG_LINKS, read once: link costs by level (ucg_perftest
    /// --calibrate-links prints them), and what each hello carries
    /// (Hello::links: 0 none, kPlanSettingBad unparsable, else a hash).
    std::vector<ucg::topology::LinkOverride> links;
    std::uint64_t links_hash = 0;
    /// UCG_CMA_THRESH, read once: messages between ranks of one machine
    /// from this size are read from the sender's memory (ucp_fabric.h);
    /// 0 never, kPlanSettingBad where the setting did not parse.
    std::uint64_t cma_thresh = ucg::rt::kCmaThresh;
    bool cma_thresh_set = false; ///< UCG_CMA_THRESH was set
    std::vector<ucg_group *> groups;
    std::uint32_t next_group_id = 1;
    std::map<std::string, ucp_ep_h> eps; ///< by worker address bytes
    std::vector<ucp_ep_h> failed_eps;    ///< UCP reported an error on them
    /// The port other machines probe (port 0 where it could not listen),
    /// and this process's probes of other machines, by real host name.
    ucg::rt::ProbeListener probe_listener;
    std::map<std::string, ucg::rt::HostProbe> host_probes;
    /// UCX found a device of an RDMA network (ucp_settings.h), once.
    bool rdma = true;
    /// UCG's own context asked UCP for kSocketRndvBytes over sockets
    /// (no RDMA device, no threshold of the user's): a socket peer's
    /// messages in pieces go out from one copy (stage_contiguous).
    bool socket_rndv = false;
    /// UCP's event fd (UCP_FEATURE_WAKEUP, our own context only; -1
    /// none): oversubscribed, a wait whose collectives wait only for
    /// point-to-point messages, one from another host, sleeps on it after
    /// `sleep_after` polls in a row that found nothing (UCG_WAIT_SLEEP, 0
    /// never; decision 0029), counted in `wait_sleeps`.
    int efd = -1;
    unsigned sleep_after = ucg::rt::kWaitSleepAfter;
    /// UCG_POLL_TURN, read once: one poll turn on a shared CPU, ns, what
    /// each group's CpuGroups::turn_ns takes (0: none).
    double poll_turn_ns = 0;
    std::uint64_t wait_sleeps = 0;
    /// Whether waits found this core shared (late yields; decision 0031).
    ucg::rt::CoreShare core_share;
    std::vector<ucg_coll *> active;  ///< collectives in flight
    std::vector<ucg_coll *> zombies; ///< freed, posts still held
};

/// Key of a cached plan: collective, root, size class, flags.
using ucg_plan_key = std::tuple<int, int, int, int>;

struct ucg_group {
    using Hello = ucg::rt::Hello;
    ucg_context *ctx = nullptr;
    int size = 0;
    int rank = 0;
    std::uint32_t id = 0;
    std::uint64_t flags = 0;
    std::vector<Hello> hello;
    std::vector<std::string> addrs; ///< worker addresses
    std::vector<ucp_ep_h> eps;      ///< per rank (own rank: loopback ep)
    std::vector<int> host_ranks;    ///< ranks on this host, ascending
    std::vector<bool> far;          ///< per rank: on another host
    std::unique_ptr<ucg::topology::Topology> topo;
    ucg::select::RuleSet rules;
    bool one_to_many = false; ///< every host's members share the groups
    /// Every member has ud_mcast and the group spans hosts: the topology's
    /// world level has multicast (plans may use the mcast channel).
    bool mcast = false;
    /// More members on this machine than CPUs they may run on: waits yield
    /// at once (a local matter: never read by plan selection).
    bool oversubscribed = false;
    /// Some machine of the group is oversubscribed: what plan selection
    /// reads (alike on every member).
    bool any_oversubscribed = false;
    /// ranks_per_core(hello): what plan selection reads.
    int ranks_per_core = 1;
    /// socket_eager_bytes(hello): what plan selection reads.
    std::uint64_t eager_bytes = 0;
    /// cpu_groups(hello): what the plans' predictions read.
    ucg::rt::CpuGroups cpu_groups;
    uct_group_h bcast_group = nullptr, incast_group = nullptr;
    ucg::exec::GroupChannel bcast_ch, incast_ch;
    /// The incast group's direct messages where every member shares this
    /// host (member index = rank) and member 0 configured them: small
    /// collectives run on them (coll.cpp, decision 0022). Up to direct_max
    /// bytes per member.
    uct_mm_incast_direct_h direct = nullptr;
    std::size_t direct_max = 0;
    /// The ud_mcast iface the group's mcast groups use (`lo` when every
    /// member shares a machine, else another device) and the index of its
    /// address among the worker address's ud_mcast entries; [0] on lo,
    /// [1] elsewhere, until group creation picks one.
    ucg::rt::OneToMany mcast_tl, mcast_cand[2];
    unsigned mcast_nth = 0, mcast_cand_nth[2] = {};
    /// ud_mcast groups by members (ranks, ascending), made on first use.
    std::map<std::vector<int>, std::unique_ptr<ucg::rt::McastChannel>>
        mcast_chs;
    std::unique_ptr<ucg::rt::UcpFabric> fabric;
    ucg::rt::CmaState cma;     ///< the fabric's one-copy counters and reader
    ucg::rt::StageState stage; ///< the fabric's contiguous copies
    /// Plans by key, with what to call them (the levels' shapes shown)
    /// and the cost model's prediction of their time (ns).
    struct PlanEntry {
        std::shared_ptr<const ucg::plan::Plan> plan;
        std::string name;
        double predicted_ns = -1;
    };
    std::map<ucg_plan_key, PlanEntry> plans;
    /// Plan files by collective (plan::Collective), from UCG_PLAN_FILES.
    std::map<int, ucg::rt::FilePlan> file_plans;
    std::uint32_t started = 0; ///< collectives started (wire sequence)
    ucs_status_t failed = UCS_OK;
    std::vector<char> dead; ///< per rank, once seen dead
};

/// A collective run as one direct message of the group (no plan).
struct ucg_direct_call {
    uct_mm_incast_direct_msg_t msg{};
    std::uint64_t id = 0;   ///< of the post in flight
    bool in_flight = false; ///< posted and not seen complete
};

/// A collective (the C handle's type).
struct ucg_coll {
    ucg_group *group = nullptr;
    ucg_coll_args_t args{};
    ucg_user_op_t user_op{};
    std::unique_ptr<ucg::exec::Instance> inst;
    std::unique_ptr<ucg_direct_call> direct; ///< instead of inst
    std::string plan_name;
    double predicted_us = -1; ///< the selector's, for its plans (tools)
    std::vector<std::uint8_t> input_copy; ///< in-place inputs the plan reads
    const void *input = nullptr;
    void *output = nullptr;
    std::size_t copy_bytes = 0; ///< bytes of `output` copied to input_copy
    bool trivial = false;       ///< nothing to move: complete at start
    bool active = false;
    ucs_status_t failure = UCS_OK; ///< what the caller was told
    std::uint64_t last_events = 0; ///< engine events at the last test
    std::uint64_t idle_tests = 0;  ///< tests since the last event
    double next_check = 0;         ///< when to look for dead members
};
