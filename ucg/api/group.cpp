// SPDX-License-Identifier: BSD-3-Clause
// Groups: the out-of-band exchange (group id, Hello records, UCP worker
// addresses), endpoints, the topology the planner sees, and the host's
// one-to-many groups, whose members' iface addresses come out of their
// worker addresses (no second exchange).
#include "api/internal.h"

#include "api/ucp_fabric.h"
#include "topology/hwloc_probe.h"
#include "uct_mm_common/liveness.h"
#include "ucx/ucp_glue.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <random>
#include <sched.h>
#include <set>
#include <string>
#include <unistd.h>

namespace ucg::rt {

namespace {

constexpr std::uint32_t kHelloMagic = 0x55434735; // "UCG5"

struct Oob {
    ucg_oob_allgather_fn_t fn;
    void *arg;
    int size;

    template <class T>
    ucs_status_t allgather(const T &mine, std::vector<T> *all) const
    {
        all->resize(static_cast<std::size_t>(size));
        return fn(arg, &mine, all->data(), sizeof(T));
    }
};

void copy_name(char (&to)[64], const std::string &from)
{
    std::memset(to, 0, sizeof(to));
    std::memcpy(to, from.data(), std::min(from.size(), sizeof(to) - 1));
}

std::string real_host_name()
{
    char name[256] = {};
    gethostname(name, sizeof(name) - 1);
    return name;
}

// Whether member `h` runs on this rank's machine (the same gethostname):
// shared memory between us, and a pid that means something here.
bool on_my_machine(const ucg_group *g, const ucg::rt::Hello &h)
{
    const auto &me = g->hello[static_cast<std::size_t>(g->rank)];
    return std::strcmp(h.real_host, me.real_host) == 0;
}

// The group id: the largest proposal, where every member proposes its
// lowest free id from the last agreed one; repeated until all agree, so
// the id is free on every member (ids are unique per process while live).
ucs_status_t agree_id(ucg_context *ctx, const Oob &oob, std::uint32_t *id_p)
{
    auto in_use = [ctx](std::uint32_t id) {
        return std::any_of(ctx->groups.begin(), ctx->groups.end(),
                           [id](const ucg_group *g) { return g->id == id; });
    };
    std::uint32_t base = ctx->next_group_id;
    for (int round = 0; round < 64; ++round) {
        std::uint32_t mine = base % exec::kMaxGroupIds;
        for (std::uint32_t n = 0; n < exec::kMaxGroupIds && in_use(mine); ++n) {
            mine = (mine + 1) % exec::kMaxGroupIds;
        }
        std::vector<std::uint32_t> all;
        const ucs_status_t st = oob.allgather(mine, &all);
        if (st != UCS_OK) {
            return st;
        }
        const std::uint32_t top = *std::max_element(all.begin(), all.end());
        if (std::all_of(all.begin(), all.end(),
                        [top](std::uint32_t v) { return v == top; })) {
            *id_p = top;
            ctx->next_group_id = top + 1;
            return UCS_OK;
        }
        base = top;
    }
    log_error("ucg_group_create: members found no common free group id");
    return UCS_ERR_NO_RESOURCE;
}

// This member's ud_mcast iface on lo (loopback) or on another device, and
// the index of its address among the ud_mcast entries of the worker
// address `own` (peers' addresses are read at the same index: hosts
// configured alike list their devices alike). False where there is none.
bool find_mcast_iface(ucg_group *g, const ucp_address_t *own, bool loopback,
                      OneToMany *tl, unsigned *nth_p)
{
    const auto &ifs = g->ctx->mcast;
    const auto it =
        std::find_if(ifs.begin(), ifs.end(), [loopback](const OneToMany &o) {
            return o.loopback == loopback;
        });
    if (it == ifs.end()) {
        return false;
    }
    std::vector<char> mine(it->addr_len), entry(it->addr_len);
    if (uct_iface_get_address(it->iface, reinterpret_cast<uct_iface_addr_t *>(
                                             mine.data())) != UCS_OK) {
        return false;
    }
    for (unsigned nth = 0;
         ucg_ucp_peer_iface_addr(g->ctx->worker, own, it->tl_csum, nth,
                                 entry.data(), it->addr_len) == UCS_OK;
         ++nth) {
        if (entry == mine) {
            *tl = *it;
            *nth_p = nth;
            return true;
        }
    }
    return false;
}

// Settings that decide plans, which every member must read alike (members
// that see other racks or other link costs would choose other plans): the
// hello's hash of each (kPlanSettingBad: could not be read or parsed).
struct PlanSetting {
    std::uint64_t ucg::rt::Hello::*hash;
    const char *name;
    const char *differs;
};
constexpr PlanSetting kPlanSettings[] = {
    {&ucg::rt::Hello::topo_file, "UCG_TOPO_FILE",
     "has another (or no) switch map in its"},
    {&ucg::rt::Hello::links, "UCG_LINKS",
     "has other (or no) link costs in its"},
    {&ucg::rt::Hello::cma_thresh, "UCG_CMA_THRESH",
     "has another one-copy threshold in its"},
};

ucs_status_t make_hello(ucg_group *g, const ucg_group_params_t *p,
                        const ucp_address_t *own, std::size_t addr_len,
                        ucg::rt::Hello *h)
{
    std::memset(h, 0, sizeof(*h));
    h->magic = kHelloMagic;
    h->size = static_cast<std::uint32_t>(g->size);
    h->rank = static_cast<std::uint32_t>(g->rank);
    h->addr_len = static_cast<std::uint32_t>(addr_len);
    const auto self = uct_mm_common::self_process_id();
    h->pid = self.pid;
    h->start_time = self.start_time;
    h->shm_short[0] = g->ctx->shm_short[0];
    h->shm_short[1] = g->ctx->shm_short[1];
    h->key = std::random_device{}();
    h->key = h->key << 32 | std::random_device{}();
    h->topo_file = g->ctx->topo_file;
    h->links = g->ctx->links_hash;
    h->cma_thresh = g->ctx->cma_thresh;
    h->probe = g->ctx->probe_listener.addr();
    std::string host;
    if ((p->field_mask & UCG_GROUP_PARAM_FIELD_HOST) && p->host_id != nullptr) {
        host = p->host_id;
    } else {
        auto loc = topology::probe_locality();
        if (!loc) {
            log_error("ucg_group_create: %s", loc.error().message.c_str());
            return UCS_ERR_INVALID_PARAM;
        }
        host = loc->host;
    }
    copy_name(h->host, host);
    copy_name(h->real_host, real_host_name());
    h->machine = ucg::rt::machine_id();
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (std::size_t c = 0; c < 64 * std::size(h->cpus); ++c) {
            if (CPU_ISSET(c, &set)) {
                h->cpus[c / 64] |= std::uint64_t{1} << (c % 64);
            }
        }
    }
    if (g->flags & UCG_GROUP_FLAG_NO_ONE_TO_MANY) {
        h->flags |= kHelloNoO2m;
    }
    if (can_read_peers()) {
        h->flags |= kHelloCma;
    }
    if (!g->ctx->rdma) {
        h->flags |= kHelloNoRdma;
    }
    if (g->ctx->socket_rndv) {
        h->flags |= kHelloSocketRndv;
    }
    if (g->ctx->bcast.iface != nullptr) {
        h->flags |= kHelloBcast;
    }
    if (g->ctx->incast.iface != nullptr) {
        h->flags |= kHelloIncast;
    }
    if (g->ctx->bcast.iface != nullptr && g->ctx->incast.iface != nullptr) {
        h->o2m_max_group = std::min(g->ctx->bcast.attr.max_group_size,
                                    g->ctx->incast.attr.max_group_size);
    }
    for (int lo = 0; lo < 2; ++lo) {
        if (find_mcast_iface(g, own, lo == 0, &g->mcast_cand[lo],
                             &g->mcast_cand_nth[lo])) {
            h->flags |= lo == 0 ? kHelloMcastLo : kHelloMcastNet;
        }
    }
    return UCS_OK;
}

ucs_status_t exchange_addresses(ucg_group *g, const Oob &oob,
                                const ucp_address_t *mine, std::size_t len)
{
    std::size_t longest = 0;
    for (const auto &h : g->hello) {
        longest = std::max<std::size_t>(longest, h.addr_len);
    }
    std::vector<char> out(longest, 0), all(longest * g->hello.size());
    std::memcpy(out.data(), mine, len);
    const ucs_status_t st = oob.fn(oob.arg, out.data(), all.data(), longest);
    if (st != UCS_OK) {
        return st;
    }
    for (std::size_t r = 0; r < g->hello.size(); ++r) {
        g->addrs.emplace_back(all.data() + r * longest, g->hello[r].addr_len);
    }
    return UCS_OK;
}

// UCP found a transport error on an endpoint (a peer died, or left: over
// TCP a peer's exit closes its connections): remember it, so the members'
// liveness check reports the peer; without a callback UCP treats the
// error as fatal. Said only while a collective is in flight: between
// collectives it is most often a peer that finished first (every
// cross-host job's end), and a collective that needs the peer fails on
// it with its own line.
void ep_failed(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    auto *ctx = static_cast<ucg_context *>(arg);
    if (std::find(ctx->failed_eps.begin(), ctx->failed_eps.end(), ep) ==
        ctx->failed_eps.end()) {
        ctx->failed_eps.push_back(ep);
        if (!ctx->active.empty()) {
            log_warn("a peer's endpoint failed: %s", ucs_status_string(status));
        }
    }
}

ucs_status_t connect(ucg_group *g)
{
    ucg_context *ctx = g->ctx;
    for (const std::string &addr : g->addrs) {
        auto it = ctx->eps.find(addr);
        if (it == ctx->eps.end()) {
            ucp_ep_params_t ep{};
            ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                            UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                            UCP_EP_PARAM_FIELD_ERR_HANDLER;
            ep.err_handler.cb = ep_failed;
            ep.err_handler.arg = ctx;
            ep.address = reinterpret_cast<const ucp_address_t *>(addr.data());
            // Peer failures are found by the members' liveness, not by UCP
            // (its peer mode would leave out the shared-memory lanes).
            ep.err_mode = UCP_ERR_HANDLING_MODE_NONE;
            ucp_ep_h h;
            const ucs_status_t st = ucp_ep_create(ctx->worker, &ep, &h);
            if (st != UCS_OK) {
                log_error("ucg_group_create: no endpoint to a member: %s",
                          ucs_status_string(st));
                return UCS_ERR_UNREACHABLE;
            }
            it = ctx->eps.emplace(addr, h).first;
        }
        g->eps.push_back(it->second);
    }
    return UCS_OK;
}

ucs_status_t build_topology(ucg_group *g, const ucg_group_params_t *p)
{
    std::vector<topology::Locality> locs;
    for (const auto &h : g->hello) {
        topology::Locality l;
        l.host = h.host;
        locs.push_back(l); // one shared-memory level per host (host groups)
    }
    auto topo =
        topology::Topology::from_localities(locs, g->ctx->switches.get());
    if (!topo) {
        log_error("ucg_group_create: %s", topo.error().message.c_str());
        return UCS_ERR_INVALID_PARAM;
    }
    g->topo = std::make_unique<topology::Topology>(std::move(topo.value()));
    if (links_are_sockets(g->hello)) {
        for (auto kind :
             {topology::LevelKind::kSwitch, topology::LevelKind::kWorld}) {
            if (g->topo->level(kind) != nullptr) {
                g->topo->set_link_cost(kind, kSocketLink);
            }
        }
    }
    for (const topology::LinkOverride &l : g->ctx->links) {
        if (g->topo->level(l.kind) != nullptr) { // a level it lacks: unused
            g->topo->set_link_cost(l.kind, l.cost);
        }
    }
    const char *tune = (p->field_mask & UCG_GROUP_PARAM_FIELD_TUNE)
                           ? p->tune
                           : std::getenv("UCG_TUNE");
    if (tune != nullptr && *tune != '\0') {
        auto rules = select::parse_rules(tune, "UCG_TUNE");
        if (!rules) {
            log_error("ucg_group_create: %s", rules.error().message.c_str());
            return UCS_ERR_INVALID_PARAM;
        }
        for (const std::string &w : rules->warnings) {
            log_warn("ucg_group_create: %s", w.c_str());
        }
        // One UCG_TUNE serves every group of a job: a rule for a level this
        // group lacks (a switch on a one-host communicator) just never
        // matches here.
        if (auto fit = select::Selector(*g->topo, rules.value()).rules_fit();
            !fit) {
            log_warn("ucg_group_create: %s; ignored on this group",
                     fit.error().message.c_str());
        }
        g->rules = std::move(rules.value());
    }
    return UCS_OK;
}

ucs_status_t open_channel(ucg_group *g, const OneToMany &tl,
                          ucs_status_t (*create)(uct_iface_h,
                                                 const uct_group_params_t *,
                                                 uct_group_h *),
                          std::uint64_t salt, std::uint64_t flags,
                          uct_group_h *group_p, exec::GroupChannel *ch)
{
    const std::size_t n = g->host_ranks.size();
    std::vector<std::vector<char>> addr(n, std::vector<char>(tl.addr_len));
    std::vector<const uct_iface_addr_t *> ptrs;
    for (std::size_t i = 0; i < n; ++i) {
        const auto r = static_cast<std::size_t>(g->host_ranks[i]);
        const ucs_status_t st =
            ucg_ucp_peer_iface_addr(g->ctx->worker, g->addrs[r].data(),
                                    tl.tl_csum, 0, addr[i].data(), tl.addr_len);
        if (st != UCS_OK) {
            log_error("ucg_group_create: rank %zu's address has no %s iface", r,
                      salt == 1 ? "mm_bcast" : "mm_incast");
            return UCS_ERR_UNREACHABLE;
        }
        ptrs.push_back(
            reinterpret_cast<const uct_iface_addr_t *>(addr[i].data()));
    }
    ch->members = g->host_ranks;
    ch->my_index = static_cast<int>(
        std::find(ch->members.begin(), ch->members.end(), g->rank) -
        ch->members.begin());
    uct_group_params_t gp{};
    gp.field_mask =
        UCT_GROUP_PARAM_FIELD_KEY | UCT_GROUP_PARAM_FIELD_MEMBER_INDEX |
        UCT_GROUP_PARAM_FIELD_GROUP_SIZE | UCT_GROUP_PARAM_FIELD_MEMBER_ADDRS;
    // Rank 0's random key plus the id and the channel: unique per live
    // group, and not guessable by another user of the host.
    gp.group_key = g->hello[0].key ^ (std::uint64_t{g->id} << 8) ^ salt;
    gp.member_index = static_cast<unsigned>(ch->my_index);
    gp.group_size = static_cast<unsigned>(n);
    gp.member_addrs = ptrs.data();
    if (flags != 0) {
        gp.field_mask |= UCT_GROUP_PARAM_FIELD_FLAGS;
        gp.flags = flags;
    }
    const ucs_status_t st = create(tl.iface, &gp, group_p);
    if (st != UCS_OK) {
        log_error("ucg_group_create: host group: %s", ucs_status_string(st));
        return st;
    }
    ch->handle = *group_p;
    return UCS_OK;
}

// A zero-byte message on a host group, waited for: it completes only once
// every member attached, and the last to attach drops the segment's name,
// so nothing can stay in /dev/shm however the group is used later.
ucs_status_t connect_channel(ucg_group *g, uct_group_h group, bool bcast)
{
    struct Done {
        uct_completion_t comp;
        bool done;
    } d{};
    d.comp.func = [](uct_completion_t *self) {
        reinterpret_cast<Done *>(self)->done = true;
    };
    d.comp.count = 1;
    d.comp.status = UCS_OK;
    uct_group_msg_t m{};
    m.coll = bcast ? UCT_GROUP_COLL_BCAST : UCT_GROUP_COLL_REDUCE;
    m.root = 0;
    m.op = UCG_OP_SUM;
    m.dtype = UCG_DTYPE_UINT8;
    const bool root = g->host_ranks[0] == g->rank;
    const bool sends = bcast ? root : !root;
    ucs_status_t st = sends ? uct_group_send(group, &m, &d.comp)
                            : uct_group_recv(group, &m, &d.comp);
    for (unsigned spins = 0; st == UCS_INPROGRESS && !d.done; ++spins) {
        ucp_worker_progress(g->ctx->worker);
        if (spins > 64) {
            sched_yield();
        }
    }
    if (st == UCS_INPROGRESS) {
        st = d.comp.status;
    }
    if (st != UCS_OK) {
        log_error("ucg_group_create: the host's members did not all join: %s",
                  ucs_status_string(st));
    }
    return st;
}

ucs_status_t setup_one_to_many(ucg_group *g)
{
    const std::string mine = g->hello[static_cast<std::size_t>(g->rank)].host;
    for (int r = 0; r < g->size; ++r) {
        if (mine == g->hello[static_cast<std::size_t>(r)].host) {
            g->host_ranks.push_back(r);
        }
    }
    // Every member decides alike: plans use shm levels only when every
    // member has both transports and none asked for point-to-point only.
    g->one_to_many = std::all_of(
        g->hello.begin(), g->hello.end(), [](const ucg::rt::Hello &h) {
            return (h.flags & (kHelloBcast | kHelloIncast)) ==
                       (kHelloBcast | kHelloIncast) &&
                   !(h.flags & kHelloNoO2m);
        });
    // ... and when every host's ranks fit in one group of every member's
    // transports (a host of more ranks than UCX_MM_BCAST_MAX_GROUP_SIZE
    // could make no host group at all).
    if (g->one_to_many) {
        if (auto over = host_over_o2m_limit(g->hello)) {
            g->one_to_many = false;
            if (g->rank == 0) {
                log_warn("ucg_group_create: host %s has %zu ranks, more than "
                         "a one-to-many group takes (%zu: "
                         "UCX_MM_BCAST_MAX_GROUP_SIZE, "
                         "UCX_MM_INCAST_MAX_GROUP_SIZE): the group runs "
                         "point to point",
                         over->host.c_str(), over->ranks, over->limit);
            }
        }
    }
    // Multicast between hosts: every member has ud_mcast on lo where they
    // all share one machine (posed hosts), else on another device; none
    // asked for point-to-point only; more than one host. The world level
    // (the hosts' leaders) is then one multicast domain; the groups are
    // made per member set on first use (open_mcast).
    const bool one_machine = std::all_of(
        g->hello.begin(), g->hello.end(),
        [g](const ucg::rt::Hello &h) { return on_my_machine(g, h); });
    const std::uint32_t need = one_machine ? kHelloMcastLo : kHelloMcastNet;
    g->mcast =
        g->host_ranks.size() < static_cast<std::size_t>(g->size) &&
        std::all_of(g->hello.begin(), g->hello.end(),
                    [need](const ucg::rt::Hello &h) {
                        return (h.flags & need) && !(h.flags & kHelloNoO2m);
                    });
    if (g->mcast) {
        g->mcast_tl = g->mcast_cand[one_machine ? 0 : 1];
        g->mcast_nth = g->mcast_cand_nth[one_machine ? 0 : 1];
        g->topo->enable_mcast(topology::LevelKind::kWorld);
    }
    if (!g->one_to_many || g->host_ranks.size() < 2) {
        return UCS_OK;
    }
    // mm_bcast's receivers read the root's buffer (CMA) only where the
    // host has one receiver with a core of its own (host_bcast_reads).
    // Alike on every member of the host.
    const bool host_cma = host_bcast_reads(
        g->host_ranks.size(), g->oversubscribed, g->ctx->cma_thresh != 0,
        std::all_of(g->host_ranks.begin(), g->host_ranks.end(), [g](int r) {
            return g->hello[static_cast<std::size_t>(r)].flags & kHelloCma;
        }));
    ucs_status_t st = open_channel(g, g->ctx->bcast, uct_mm_bcast_group_create,
                                   1, host_cma ? 0 : UCT_GROUP_FLAG_NO_CMA,
                                   &g->bcast_group, &g->bcast_ch);
    if (st == UCS_OK) {
        st = open_channel(g, g->ctx->incast, uct_mm_incast_group_create, 2, 0,
                          &g->incast_group, &g->incast_ch);
    }
    if (st == UCS_OK) {
        st = connect_channel(g, g->bcast_group, true);
    }
    if (st == UCS_OK) {
        st = connect_channel(g, g->incast_group, false);
    }
    if (st == UCS_OK &&
        g->host_ranks.size() == static_cast<std::size_t>(g->size)) {
        // Member 0's configuration decides alike for all: none, or slots.
        st = uct_mm_incast_group_direct(g->incast_group, &g->direct,
                                        &g->direct_max);
        if (st == UCS_ERR_UNSUPPORTED) {
            g->direct = nullptr;
            st = UCS_OK;
        } else if (st != UCS_OK) {
            log_error("ucg_group_create: the host group's direct messages: %s",
                      ucs_status_string(st));
        }
    }
    return st;
}

} // namespace

std::uint64_t machine_id()
{
    std::string id;
    if (std::FILE *f = std::fopen("/proc/sys/kernel/random/boot_id", "r")) {
        char line[64] = {};
        if (std::fgets(line, sizeof(line), f) != nullptr) {
            id = line;
        }
        std::fclose(f);
    }
    return std::hash<std::string>{}(id.empty() ? real_host_name() : id);
}

namespace {

// Per rank, below which size UCP should complete sends to it fast (eager
// up to RNDV_SEND_NBR_THRESH, decision 0021): every size to the ranks of
// this machine, where the other choice is a CMA rendezvous (a system call
// that costs here what 16-256 KiB take to copy through the FIFO). Where
// the machine has fewer cores than ranks, only below `cma_thresh` where
// machine_cma_thresh raised it (decision 0059; a receiver that waits for
// its turn drains a large message's fragments late, while a read pulls
// it whole when it runs: np=4 on two cores, 256 KiB alltoall 2x slower
// eager), else none.
std::vector<std::uint64_t> fast_sends(const ucg_group *g,
                                      std::uint64_t cma_thresh)
{
    std::uint64_t below = UINT64_MAX;
    if (g->oversubscribed) {
        below = cma_thresh != g->ctx->cma_thresh ? cma_thresh : 0;
    }
    std::vector<std::uint64_t> fast(static_cast<std::size_t>(g->size), 0);
    for (std::size_t r = 0; r < fast.size(); ++r) {
        fast[r] = on_my_machine(g, g->hello[r]) ? below : 0;
    }
    return fast;
}

// UCX's sysv and posix senders index a peer's FIFO with their own
// element size, so processes of one machine that disagree on it would
// write each other's FIFOs out of place (say, a caller's UCP context at
// UCX's 128 B and UCG's own at 512, decision 0019). Every member checks
// every host alike, so all refuse together.
ucs_status_t check_shm_fifos(const std::vector<ucg::rt::Hello> &hello)
{
    std::map<std::string, const ucg::rt::Hello *> first;
    for (const auto &h : hello) {
        const std::string host(h.real_host,
                               strnlen(h.real_host, sizeof(h.real_host)));
        const auto [it, added] = first.emplace(host, &h);
        const ucg::rt::Hello &f = *it->second;
        for (int i = 0; i < 2 && !added; ++i) {
            if (h.shm_short[i] != 0 && f.shm_short[i] != 0 &&
                h.shm_short[i] != f.shm_short[i]) {
                log_error("ucg_group_create: ranks %u and %u of host %s send "
                          "%u and %u B inline over UCX's %s: their UCP "
                          "contexts disagree on the shared-memory FIFO "
                          "element (UCX_MM_FIFO_ELEM_SIZE), which UCX "
                          "needs alike in every process of a host",
                          f.rank, h.rank, host.c_str(), f.shm_short[i],
                          h.shm_short[i], i == 0 ? "sysv" : "posix");
                return UCS_ERR_UNSUPPORTED;
            }
        }
    }
    return UCS_OK;
}

// The members' own steps after the address exchange (endpoints, topology,
// one-to-many groups, plan files), agreed: a group is made on every member
// or on none, and no member returns before every other holds its
// endpoints. A member that returned at once could run its collectives and
// exit (a reduce's leaf waits for no one) before a member that lost its
// core after the exchange made its endpoints, and UCP's shared-memory
// endpoint to a process gone fails ("Endpoint timeout", seen in CI).
ucs_status_t agree_created(const Oob &oob, ucs_status_t mine)
{
    std::vector<std::int32_t> all;
    const ucs_status_t st = oob.allgather(std::int32_t{mine}, &all);
    if (st != UCS_OK) {
        return st;
    }
    for (std::size_t r = 0; r < all.size() && mine == UCS_OK; ++r) {
        if (all[r] != UCS_OK) {
            const auto theirs = static_cast<ucs_status_t>(all[r]);
            log_error("ucg_group_create: rank %zu could not make its part of "
                      "the group: %s",
                      r, ucs_status_string(theirs));
            return theirs;
        }
    }
    return mine;
}

ucs_status_t create_impl(ucg_group *g, const ucg_group_params_t *p)
{
    const Oob oob{p->oob_allgather, p->oob_arg, g->size};
    ucs_status_t st = agree_id(g->ctx, oob, &g->id);
    if (st != UCS_OK) {
        return st;
    }
    ucp_address_t *addr;
    std::size_t len;
    st = ucp_worker_get_address(g->ctx->worker, &addr, &len);
    if (st != UCS_OK) {
        return st;
    }
    ucg::rt::Hello mine;
    st = make_hello(g, p, addr, len, &mine);
    if (st == UCS_OK) {
        st = oob.allgather(mine, &g->hello);
    }
    if (st == UCS_OK) {
        for (const auto &h : g->hello) {
            if (h.magic != kHelloMagic || h.size != mine.size) {
                log_error("ucg_group_create: the members disagree on the "
                          "group size (or one is not UCG)");
                st = UCS_ERR_INVALID_PARAM;
                break;
            }
            for (const PlanSetting &s : kPlanSettings) {
                if (h.*s.hash != mine.*s.hash || h.*s.hash == kPlanSettingBad) {
                    log_error("ucg_group_create: rank %u %s %s", h.rank,
                              h.*s.hash == kPlanSettingBad ? "cannot use its"
                                                           : s.differs,
                              s.name);
                    st = UCS_ERR_INVALID_PARAM;
                    break;
                }
            }
            if (st != UCS_OK) {
                break;
            }
        }
    }
    if (st == UCS_OK) {
        st = check_shm_fifos(g->hello);
    }
    if (st == UCS_OK) {
        st = exchange_addresses(g, oob, addr, len);
    }
    ucp_worker_release_address(g->ctx->worker, addr);
    if (st != UCS_OK) {
        return st; // alike on every member: failed on shared data
    }
    st = connect(g);
    if (st == UCS_OK) {
        st = build_topology(g, p);
    }
    if (st == UCS_OK) {
        // This machine's state serves its waits; plan selection reads
        // whether any machine is oversubscribed, alike on every member (a
        // member's own machine may differ from its peers': three hosts
        // with one rank each and one with two on a single core chose
        // chain segments=2 and segments=3 for one scan, and the messages
        // no longer matched).
        const auto over = ucg::rt::hosts_oversubscribed(g->hello);
        const auto &me = g->hello[static_cast<std::size_t>(g->rank)];
        g->oversubscribed = over.at(me.real_host);
        for (const ucg::rt::Hello &h : g->hello) {
            g->far.push_back(std::strcmp(h.host, me.host) != 0);
        }
        g->any_oversubscribed = std::any_of(
            over.begin(), over.end(), [](const auto &m) { return m.second; });
        g->ranks_per_core = ucg::rt::ranks_per_core(g->hello);
        g->eager_bytes = ucg::rt::socket_eager_bytes(g->hello);
        g->cpu_groups = ucg::rt::cpu_groups(g->hello);
        g->cpu_groups.turn_ns = g->ctx->poll_turn_ns;
        st = setup_one_to_many(g);
    }
    if (st == UCS_OK) {
        st = load_plan_files(g,
                             (p->field_mask & UCG_GROUP_PARAM_FIELD_PLAN_FILES)
                                 ? p->plan_files
                                 : std::getenv("UCG_PLAN_FILES"));
    }
    return agree_created(oob, st);
}

// Whether a member of `m` other than this rank may still need our
// packets: its process lives, or it is on another machine (no probe).
bool others_may_wait(const ucg_group *g, const McastChannel &m)
{
    for (int r : m.ch.members) {
        const auto &h = g->hello[static_cast<std::size_t>(r)];
        if (r == g->rank) {
            continue;
        }
        if (!on_my_machine(g, h) ||
            uct_mm_common::process_alive({h.pid, 0, h.start_time})) {
            return true;
        }
    }
    return false;
}

// Before leaving the multicast groups: a bcast completed at its root once
// the data was in the send window, so a member that lost packets may still
// need them resent, and the others' last ACKs may still be due. Progress
// for a few ACK delays, then while this member's own packets are not all
// acknowledged and a member that may need them is still there (a member
// gone before acknowledging keeps them unacknowledged), for at most
// UCG_TIMEOUT: a live member is waited for as in a collective (a 5 s cap
// left a lossy member of a loaded host without its resends).
void linger_mcast(ucg_group *g)
{
    if (g->mcast_chs.empty()) {
        return;
    }
    const auto flush = g->ctx->mcast_api.flush;
    const double start = now_sec();
    const double cap = g->ctx->timeout_sec;
    double next_probe = start;
    bool busy = true;
    for (unsigned spins = 0;; ++spins) {
        const double now = now_sec();
        if (now >= next_probe) { // the others' processes: every ms
            next_probe = now + 0.001;
            busy = false;
            for (const auto &[members, m] : g->mcast_chs) {
                busy = busy || (flush != nullptr && m->group != nullptr &&
                                flush(m->group) == UCS_INPROGRESS &&
                                others_may_wait(g, *m));
            }
        }
        if ((!busy && now - start >= 0.002) || now - start >= cap) {
            return;
        }
        ucp_worker_progress(g->ctx->worker);
        if (spins > 64) {
            sched_yield();
        }
    }
}

} // namespace

ucs_status_t group_create(ucg_context_h ctx, const ucg_group_params_t *p,
                          ucg_group_h *group_p)
{
    const std::uint64_t need = UCG_GROUP_PARAM_FIELD_SIZE |
                               UCG_GROUP_PARAM_FIELD_RANK |
                               UCG_GROUP_PARAM_FIELD_OOB;
    if (ctx == nullptr || p == nullptr || group_p == nullptr ||
        (p->field_mask & need) != need || p->oob_allgather == nullptr) {
        log_error("ucg_group_create: needs a context, size, rank, an "
                  "out-of-band allgather and an output pointer");
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->size == 0 || p->rank >= p->size || p->size > exec::kMaxWireRanks) {
        log_error("ucg_group_create: rank %u of a group of %u (at most %u)",
                  p->rank, p->size, exec::kMaxWireRanks);
        return UCS_ERR_INVALID_PARAM;
    }
    auto g = std::make_unique<ucg_group>();
    g->ctx = ctx;
    g->size = static_cast<int>(p->size);
    g->rank = static_cast<int>(p->rank);
    g->flags = (p->field_mask & UCG_GROUP_PARAM_FIELD_FLAGS) ? p->flags : 0;
    g->dead.assign(p->size, 0);
    const ucs_status_t st = create_impl(g.get(), p);
    if (st != UCS_OK) {
        group_destroy(g.release());
        return st;
    }
    // One copy between members of this machine that both may read peers
    // (alike on both sides of every message).
    // Members of other machines over sockets where UCG's own context set
    // the rendezvous threshold: messages in pieces go from one copy.
    std::vector<bool> near(static_cast<std::size_t>(g->size));
    std::vector<bool> socket(near.size());
    const bool me_cma =
        g->hello[static_cast<std::size_t>(g->rank)].flags & kHelloCma;
    for (std::size_t r = 0; r < near.size(); ++r) {
        const bool mine = on_my_machine(g.get(), g->hello[r]);
        near[r] = me_cma && (g->hello[r].flags & kHelloCma) && mine;
        socket[r] = ctx->socket_rndv && !mine;
    }
    const std::uint64_t cma_thresh = ucg::rt::machine_cma_thresh(
        ctx->cma_thresh, ctx->cma_thresh_set, g->oversubscribed,
        static_cast<std::size_t>(std::count_if(
            g->hello.begin(), g->hello.end(), [&](const ucg::rt::Hello &h) {
                return on_my_machine(g.get(), h);
            })));
    g->fabric = std::make_unique<UcpFabric>(
        ctx->worker, g->rank, &g->eps, fast_sends(g.get(), cma_thresh), near,
        cma_thresh, &g->cma, socket, &g->stage);
    ctx->groups.push_back(g.get());
    *group_p = g.release();
    return UCS_OK;
}

void group_destroy(ucg_group_h g)
{
    if (g == nullptr) {
        return;
    }
    ucg_context *ctx = g->ctx;
    ctx->groups.erase(std::remove(ctx->groups.begin(), ctx->groups.end(), g),
                      ctx->groups.end());
    if (g->bcast_group != nullptr) {
        uct_group_destroy(g->bcast_group);
    }
    if (g->incast_group != nullptr) {
        uct_group_destroy(g->incast_group);
    }
    linger_mcast(g);
    for (auto &[members, m] : g->mcast_chs) {
        if (m->group != nullptr) {
            uct_group_destroy(m->group);
        }
    }
    delete g;
}

ucs_status_t open_mcast(ucg_group *g, const std::vector<int> &members,
                        exec::GroupChannel **ch_p)
{
    auto it = g->mcast_chs.find(members);
    if (it != g->mcast_chs.end()) {
        *ch_p = &it->second->ch;
        return UCS_OK;
    }
    const OneToMany &tl = g->mcast_tl;
    const auto me = std::find(members.begin(), members.end(), g->rank);
    if (!g->mcast || me == members.end() || members.size() < 2) {
        log_error("ucg_collective_init: an mcast group of %zu ranks this "
                  "group cannot make",
                  members.size());
        return UCS_ERR_UNSUPPORTED;
    }
    if (members.size() > tl.attr.max_group_size) {
        log_error("ucg_collective_init: an mcast group of %zu ranks, over "
                  "ud_mcast's %u",
                  members.size(), tl.attr.max_group_size);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    auto m = std::make_unique<McastChannel>();
    std::vector<std::vector<char>> addr(members.size(),
                                        std::vector<char>(tl.addr_len));
    std::vector<const uct_iface_addr_t *> ptrs;
    // FNV-1a of the members: groups of other member sets get other keys.
    std::uint64_t hash = 0xcbf29ce484222325ULL;
    for (std::size_t i = 0; i < members.size(); ++i) {
        const auto r = static_cast<std::size_t>(members[i]);
        const ucs_status_t st = ucg_ucp_peer_iface_addr(
            g->ctx->worker, g->addrs[r].data(), tl.tl_csum, g->mcast_nth,
            addr[i].data(), tl.addr_len);
        if (st != UCS_OK) {
            log_error("ucg_collective_init: rank %zu's address has no "
                      "ud_mcast iface",
                      r);
            return UCS_ERR_UNREACHABLE;
        }
        ptrs.push_back(
            reinterpret_cast<const uct_iface_addr_t *>(addr[i].data()));
        hash = (hash ^ r) * 0x100000001b3ULL;
    }
    m->ch.members = members;
    m->ch.my_index = static_cast<int>(me - members.begin());
    uct_group_params_t gp{};
    gp.field_mask =
        UCT_GROUP_PARAM_FIELD_KEY | UCT_GROUP_PARAM_FIELD_MEMBER_INDEX |
        UCT_GROUP_PARAM_FIELD_GROUP_SIZE | UCT_GROUP_PARAM_FIELD_MEMBER_ADDRS;
    gp.group_key =
        g->hello[0].key ^ (std::uint64_t{g->id} << 8) ^ 3 ^ (hash << 16);
    gp.member_index = static_cast<unsigned>(m->ch.my_index);
    gp.group_size = static_cast<unsigned>(members.size());
    gp.member_addrs = ptrs.data();
    const ucs_status_t st = g->ctx->mcast_api.create(tl.iface, &gp, &m->group);
    if (st != UCS_OK) {
        log_error("ucg_collective_init: ud_mcast group: %s",
                  ucs_status_string(st));
        return st;
    }
    // Its timers and receives run in every worker progress from now on.
    uct_iface_progress_enable(tl.iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    m->ch.handle = m->group;
    *ch_p = &m->ch;
    g->mcast_chs.emplace(members, std::move(m));
    return UCS_OK;
}

void close_ep(ucg_context *ctx, ucp_ep_h ep)
{
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_EP_CLOSE_FLAG_FORCE;
    void *req = ucp_ep_close_nbx(ep, &p);
    if (req == nullptr || UCS_PTR_IS_ERR(req)) {
        return;
    }
    while (ucp_request_check_status(req) == UCS_INPROGRESS) {
        ucp_worker_progress(ctx->worker);
    }
    ucp_request_free(req);
}

int find_dead_member(ucg_group *g)
{
    for (int r = 0; r < g->size; ++r) {
        const auto &h = g->hello[static_cast<std::size_t>(r)];
        const auto &failed = g->ctx->failed_eps;
        if (g->dead[static_cast<std::size_t>(r)] ||
            std::find(failed.begin(), failed.end(),
                      g->eps[static_cast<std::size_t>(r)]) != failed.end()) {
            g->dead[static_cast<std::size_t>(r)] = 1;
            return r;
        }
        if (r == g->rank || !on_my_machine(g, h)) {
            continue; // another machine: its pid means nothing here
        }
        const uct_mm_common::ProcessId id{h.pid, 0, h.start_time};
        if (!uct_mm_common::process_alive(id)) {
            g->dead[static_cast<std::size_t>(r)] = 1;
            return r;
        }
    }
    return -1;
}

int find_unreachable_member(ucg_group *g, double now)
{
    const double deadline = g->ctx->timeout_sec / 2;
    std::set<std::string> asked;
    for (int r = 0; r < g->size; ++r) {
        const auto &h = g->hello[static_cast<std::size_t>(r)];
        if (on_my_machine(g, h) || h.probe.port == 0 || h.probe.ip[0] == 0 ||
            !asked.insert(h.real_host).second) {
            continue; // one member's listener answers for its host
        }
        if (g->ctx->host_probes[h.real_host].check(h.probe, now, deadline) ==
            HostProbe::Verdict::kUnreachable) {
            return r;
        }
    }
    return -1;
}

} // namespace ucg::rt
