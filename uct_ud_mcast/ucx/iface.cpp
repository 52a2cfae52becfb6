// SPDX-License-Identifier: BSD-3-Clause
// ud_mcast iface: devices, open/close, query, addresses, progress, flush.
#include "ud_mcast.h"

#include "iface_glue.h"
#include "uct_mm_common/backoff.h"
#include "uct_ud_mcast.h"
#include "ucx_glue.h"
#include "udp_wire.h"
#ifdef UCG_UD_MCAST_VERBS
#include "verbs_wire.h"
#endif

extern "C" {
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/string.h>
#include <ucs/sys/sys.h>
#include <ucs/sys/uid.h>
}

#include <cstring>
#include <ifaddrs.h>
#include <net/if.h>
#include <string>

namespace uct_ud_mcast {
namespace {

using uct_mm_common::now_ns;

Iface *to_iface(uct_iface_h tl_iface)
{
    return reinterpret_cast<Iface *>(tl_iface);
}

ucs_status_t iface_query(uct_iface_h tl_iface, uct_iface_attr_t *attr) noexcept
{
    Iface *iface = to_iface(tl_iface);
    uct_base_iface_query(&iface->super, attr);
    attr->iface_addr_len = sizeof(IfaceAddr);
    attr->device_addr_len = 0;
    attr->ep_addr_len = 0;
    attr->max_conn_priv = 0;
    attr->cap.flags = UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                      UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
                      UCT_IFACE_FLAG_PENDING | UCT_IFACE_FLAG_CB_SYNC;
    attr->cap.event_flags = UCT_IFACE_FLAG_EVENT_RECV | UCT_IFACE_FLAG_EVENT_FD;
    attr->cap.am.max_short = iface->base.max_payload;
    attr->cap.am.max_bcopy = iface->base.max_payload;
    attr->cap.am.align_mtu = 1;
    attr->cap.am.opt_zcopy_align = 1;
    attr->latency = ucs_linear_func_make(20e-6, 0);
    attr->bandwidth.dedicated = 0;
    attr->bandwidth.shared = 1000.0 * 1024 * 1024;
    attr->overhead = 2e-6;
    attr->priority = 0;
    return UCS_OK;
}

ucs_status_t iface_get_address(uct_iface_h tl_iface,
                               uct_iface_addr_t *addr) noexcept
{
    IfaceAddr a;
    local_iface_addr(to_iface(tl_iface), &a);
    std::memcpy(addr, &a, sizeof(a));
    return UCS_OK;
}

ucs_status_t iface_get_device_address(uct_iface_h, uct_device_addr_t *) noexcept
{
    return UCS_OK;
}

int iface_is_reachable(uct_iface_h tl_iface, const uct_device_addr_t *,
                       const uct_iface_addr_t *iface_addr) noexcept
{
    if (iface_addr == nullptr) {
        return 0;
    }
    IfaceAddr a;
    std::memcpy(&a, iface_addr, sizeof(a));
    return a.peer.wire_kind == to_iface(tl_iface)->wire_kind;
}

unsigned iface_progress(uct_iface_h tl_iface) noexcept
{
    Iface *iface = to_iface(tl_iface);
    const uint64_t now = now_ns();
    unsigned count = iface->wire->poll(&iface->engine, now);
    iface->engine.progress(now);
    // Indexes: a handler may create endpoints (UCP wireup).
    for (size_t i = 0; i < iface->eps.size(); ++i) {
        count += ep_progress(iface->eps[i]);
    }
    return count;
}

ucs_status_t iface_flush(uct_iface_h tl_iface, unsigned,
                         uct_completion_t *comp) noexcept
{
    if (comp != nullptr) {
        return UCS_ERR_UNSUPPORTED;
    }
    for (const auto &kv : to_iface(tl_iface)->peers) {
        if (kv.second->session->unacked()) {
            return UCS_INPROGRESS;
        }
    }
    return UCS_OK;
}

// The wire's fd (UDP: the epoll set; verbs: the completion channel)
// becomes readable when packets arrive. Timers run in progress, so a
// waiter must wake up at least every ACK_DELAY or so (a poll timeout).
ucs_status_t iface_event_fd(uct_iface_h tl_iface, int *fd_p) noexcept
{
    const int fd = to_iface(tl_iface)->wire->event_fd();
    if (fd < 0) {
        return UCS_ERR_UNSUPPORTED;
    }
    *fd_p = fd;
    return UCS_OK;
}

ucs_status_t iface_event_arm(uct_iface_h tl_iface, unsigned) noexcept
{
    Iface *iface = to_iface(tl_iface);
    for (const auto &kv : iface->peers) {
        if (kv.second->session->unacked()) {
            return UCS_ERR_BUSY; // resends and ACKs need progress
        }
    }
    return iface->wire->readable() ? UCS_ERR_BUSY : UCS_OK;
}

ucs_status_t iface_fence(uct_iface_h, unsigned) noexcept
{
    return UCS_OK;
}

ucs_status_t ep_fence(uct_ep_h, unsigned) noexcept
{
    return UCS_OK;
}

void iface_close(uct_iface_h tl_iface) noexcept
{
    Iface *iface = to_iface(tl_iface);
    while (!iface->eps.empty()) {
        ep_destroy(&iface->eps.back()->super.super);
    }
    group_destroy_all(iface);
    uct_base_iface_progress_disable(tl_iface,
                                    UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    uct_mm_common::base_iface_cleanup(&iface->super);
    delete iface;
}

// "<ibv device>:<port>" is a verbs port, anything else an interface.
ucs_status_t open_wire(Iface *iface, const IfaceConfig *cfg,
                       const char *dev_name)
{
    const std::string dev = dev_name;
    Status st;
    if (dev.find(':') != std::string::npos) {
#ifdef UCG_UD_MCAST_VERBS
        VerbsConfig vcfg;
        vcfg.device = dev;
        vcfg.gid_index = static_cast<int>(cfg->gid_index);
        vcfg.bind_addr = cfg->bind_addr != nullptr ? cfg->bind_addr : "";
        vcfg.port_base = static_cast<uint16_t>(cfg->port_base);
        std::unique_ptr<VerbsWire> verbs;
        st = VerbsWire::open(vcfg, &verbs);
        iface->wire = std::move(verbs);
        iface->wire_kind = 2;
#else
        ucs_error("ud_mcast: built without verbs; %s is not available",
                  dev_name);
        return UCS_ERR_UNSUPPORTED;
#endif
    } else {
        UdpConfig ucfg;
        ucfg.ifname = dev;
        ucfg.max_packet = static_cast<uint32_t>(cfg->max_packet);
        ucfg.port_base = static_cast<uint16_t>(cfg->port_base);
        ucfg.rcvbuf = static_cast<uint32_t>(cfg->rcvbuf);
        ucfg.ttl = static_cast<int>(cfg->ttl);
        std::unique_ptr<UdpWire> udp;
        st = UdpWire::open(ucfg, &udp);
        iface->wire = std::move(udp);
        iface->wire_kind = 1;
    }
    return uct_mm_common::to_ucs_status(st); // open() logged why
}

ucs_status_t configure(Iface *iface, const IfaceConfig *cfg,
                       const char *dev_name)
{
    const auto pow2 = [](unsigned w) {
        return w >= 2 && (w & (w - 1)) == 0 && w <= 32768;
    };
    if (!pow2(cfg->window) || !pow2(cfg->group_window) ||
        cfg->max_group_size < 1 || cfg->max_group_size > kMaxMembers ||
        cfg->max_outstanding < 1 || cfg->max_peers < 1 || cfg->ack_fanin < 1 ||
        cfg->rx_loss < 0 || cfg->rx_loss >= 1) {
        ucs_error("ud_mcast: UCX_UD_MCAST_WINDOW and GROUP_WINDOW must be "
                  "powers of two up to 32768, MAX_GROUP_SIZE 1..%u, "
                  "MAX_OUTSTANDING, MAX_PEERS and ACK_FANIN >= 1, RX_LOSS in "
                  "[0, 1)",
                  kMaxMembers);
        return UCS_ERR_INVALID_PARAM;
    }
    const ucs_status_t status = open_wire(iface, cfg, dev_name);
    if (status != UCS_OK) {
        return status;
    }
    if (iface->wire->max_packet() <= kDataHeaderBytes + kMacBytes + 8) {
        ucs_error("ud_mcast: packets of %u bytes are too small",
                  iface->wire->max_packet());
        return UCS_ERR_INVALID_PARAM;
    }
    SessionConfig &b = iface->base;
    b.window = cfg->window;
    b.max_payload = iface->wire->max_packet() -
                    static_cast<uint32_t>(kDataHeaderBytes + kMacBytes);
    b.ack_fanin = cfg->ack_fanin;
    b.ack_every = std::max(1u, cfg->window / 4);
    b.ack_delay_ns = static_cast<uint64_t>(cfg->ack_delay * 1e9);
    b.nack_delay_ns = static_cast<uint64_t>(cfg->nack_delay * 1e9);
    b.rto_min_ns = static_cast<uint64_t>(cfg->rto_min * 1e9);
    b.rto_max_ns = static_cast<uint64_t>(cfg->rto_max * 1e9);
    b.nack_holdoff_ns = std::min<uint64_t>(1'000'000, b.rto_min_ns);
    b.timeout_ns = static_cast<uint64_t>(cfg->timeout * 1e9);
    b.probe_ns = b.timeout_ns / 5;
    b.attach_timeout_ns = static_cast<uint64_t>(cfg->attach_timeout * 1e9);
    iface->group = b;
    iface->group.window = cfg->group_window;
    iface->group.ack_every = std::max(1u, cfg->group_window / 4);
    iface->max_outstanding = cfg->max_outstanding;
    iface->max_group_size = cfg->max_group_size;
    iface->max_peers = cfg->max_peers;
    iface->engine.set_rx_loss(cfg->rx_loss, iface->id);
    return UCS_OK;
}

ucs_status_t iface_open_impl(uct_md_h md, uct_worker_h worker,
                             const uct_iface_params_t *params,
                             const uct_iface_config_t *tl_config,
                             uct_iface_h *iface_p)
{
    const auto *cfg = reinterpret_cast<const IfaceConfig *>(tl_config);
    auto *iface = new Iface();
    ucs_status_t status = uct_mm_common::base_iface_init(
        "ud_mcast", &iface->super, &g_iface_ops, md, worker, params, tl_config);
    if (status != UCS_OK) {
        delete iface;
        return status;
    }
    iface->id = ucs_generate_uuid(reinterpret_cast<uintptr_t>(iface));
    if (!random_secret(&iface->secret)) {
        ucs_error("ud_mcast: libsodium cannot be initialised (no secret)");
        uct_mm_common::base_iface_cleanup(&iface->super);
        delete iface;
        return UCS_ERR_NO_RESOURCE;
    }
    status = configure(iface, cfg, params->mode.device.dev_name);
    if (status != UCS_OK) {
        uct_mm_common::base_iface_cleanup(&iface->super);
        delete iface;
        return status;
    }
    iface->maker.iface = iface;
    iface->engine.set_p2p_factory(&iface->maker);
    *iface_p = &iface->super.super;
    return UCS_OK;
}

} // namespace

void local_peer_addr(const Iface *iface, PeerAddr *addr) noexcept
{
    std::memset(addr, 0, sizeof(*addr));
    addr->id = iface->id;
    addr->wire_kind = iface->wire_kind;
    iface->wire->local_addr(addr->wire);
}

void local_iface_addr(const Iface *iface, IfaceAddr *addr) noexcept
{
    local_peer_addr(iface, &addr->peer);
    std::memcpy(addr->secret, iface->secret.data(), sizeof(addr->secret));
}

ucs_status_t query_devices(uct_md_h, uct_tl_device_resource_t **devices_p,
                           unsigned *num_p) noexcept
{
    // Every interface that is up, has IPv4 and can multicast (or is lo).
    std::vector<std::string> names;
    ifaddrs *list = nullptr;
    if (getifaddrs(&list) == 0) {
        for (ifaddrs *a = list; a != nullptr; a = a->ifa_next) {
            const unsigned fl = a->ifa_flags;
            if (a->ifa_addr != nullptr && a->ifa_addr->sa_family == AF_INET &&
                (fl & IFF_UP) != 0 &&
                (fl & (IFF_MULTICAST | IFF_LOOPBACK)) != 0) {
                names.emplace_back(a->ifa_name);
            }
        }
        freeifaddrs(list);
    }
#ifdef UCG_UD_MCAST_VERBS
    for (const std::string &port : verbs_devices()) {
        names.push_back(port);
    }
#endif
    auto *devs = static_cast<uct_tl_device_resource_t *>(
        ucs_calloc(names.empty() ? 1 : names.size(),
                   sizeof(uct_tl_device_resource_t), "ud_mcast devices"));
    if (devs == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < names.size(); ++i) {
        ucs_strncpy_zero(devs[i].name, names[i].c_str(), sizeof(devs[i].name));
        devs[i].type = UCT_DEVICE_TYPE_NET;
        devs[i].sys_device = UCS_SYS_DEVICE_ID_UNKNOWN;
    }
    *devices_p = devs;
    *num_p = static_cast<unsigned>(names.size());
    return UCS_OK;
}

ucs_status_t iface_open(uct_md_h md, uct_worker_h worker,
                        const uct_iface_params_t *params,
                        const uct_iface_config_t *config,
                        uct_iface_h *iface_p) noexcept
{
    UCT_MM_GUARD("ud_mcast iface_open",
                 iface_open_impl(md, worker, params, config, iface_p));
}

bool is_ud_mcast_iface(uct_iface_h iface) noexcept
{
    return iface != nullptr && iface->ops.iface_query == iface_query;
}

uct_iface_ops_t g_iface_ops = [] {
    uct_iface_ops_t ops{};
    ops.ep_am_short = ep_am_short;
    ops.ep_am_bcopy = ep_am_bcopy;
    ops.ep_pending_add = ep_pending_add;
    ops.ep_pending_purge = ep_pending_purge;
    ops.ep_flush = ep_flush;
    ops.ep_fence = ep_fence;
    ops.ep_create = ep_create;
    ops.ep_destroy = ep_destroy;
    ops.iface_flush = iface_flush;
    ops.iface_fence = iface_fence;
    ops.iface_progress_enable = uct_base_iface_progress_enable;
    ops.iface_progress_disable = uct_base_iface_progress_disable;
    ops.iface_progress = iface_progress;
    ops.iface_close = iface_close;
    ops.iface_query = iface_query;
    ops.iface_get_device_address = iface_get_device_address;
    ops.iface_get_address = iface_get_address;
    ops.iface_is_reachable = iface_is_reachable;
    ops.iface_event_fd_get = iface_event_fd;
    ops.iface_event_arm = iface_event_arm;
    return ops;
}();

} // namespace uct_ud_mcast

extern "C" __attribute__((visibility("default"))) ucs_status_t
uct_ud_mcast_iface_counters(uct_iface_h iface, uct_ud_mcast_counters_t *out)
{
    using namespace uct_ud_mcast;
    if (!is_ud_mcast_iface(iface) || out == nullptr) {
        return UCS_ERR_INVALID_PARAM;
    }
    static_assert(sizeof(Counters) == sizeof(uct_ud_mcast_counters_t));
    std::memcpy(out, &reinterpret_cast<Iface *>(iface)->engine.counters(),
                sizeof(*out));
    return UCS_OK;
}
