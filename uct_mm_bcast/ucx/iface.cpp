// SPDX-License-Identifier: BSD-3-Clause
// mm_bcast iface: open/close, query (caps), addresses, progress, flush.
#include "mm_bcast.h"

#include "iface_glue.h"
#include "ucx_glue.h"

#include <new>
#include <unistd.h>

namespace uct_mm_bcast {
namespace {

constexpr unsigned kMaxPoll = 16;

Iface *to_iface(uct_iface_h tl_iface)
{
    return reinterpret_cast<Iface *>(tl_iface);
}

void deliver(void *arg, uint8_t am_id, void *data, size_t length)
{
    auto *iface = static_cast<Iface *>(arg);
    if (am_id >= UCT_AM_ID_MAX) { // the producer's byte: index checked
        ucs_error("mm_bcast: dropped a message with AM id %u", am_id);
        return;
    }
    // No UCT_CB_PARAM_FLAG_DESC: the handler may not keep the data (it
    // lives in the ring slot, or in the CMA bounce buffer).
    uct_iface_invoke_am(&iface->super, am_id, data,
                        static_cast<unsigned>(length), 0);
}

ucs_status_t iface_query(uct_iface_h tl_iface, uct_iface_attr_t *attr) noexcept
{
    Iface *iface = to_iface(tl_iface);
    uct_base_iface_query(&iface->super, attr);
    const size_t capacity = iface->rx.max_inline();
    attr->iface_addr_len = sizeof(IfaceAddr);
    attr->device_addr_len = uct_sm_iface_get_device_addr_len();
    attr->ep_addr_len = 0;
    attr->max_conn_priv = 0;
    attr->cap.flags =
        UCT_IFACE_FLAG_CONNECT_TO_IFACE | UCT_IFACE_FLAG_AM_SHORT |
        UCT_IFACE_FLAG_AM_BCOPY | UCT_IFACE_FLAG_AM_ZCOPY |
        UCT_IFACE_FLAG_PENDING | UCT_IFACE_FLAG_CB_SYNC |
        UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE | UCT_IFACE_FLAG_EP_CHECK;
    attr->cap.event_flags = iface->bell.fd() >= 0
                                ? UCT_IFACE_FLAG_EVENT_RECV |
                                      UCT_IFACE_FLAG_EVENT_SEND_COMP |
                                      UCT_IFACE_FLAG_EVENT_FD
                                : 0;
    attr->cap.am.max_short = iface->max_short;
    attr->cap.am.max_bcopy = capacity;
    attr->cap.am.min_zcopy = iface->min_zcopy;
    attr->cap.am.max_zcopy = iface->chan_cfg.max_zcopy;
    attr->cap.am.opt_zcopy_align = 1;
    attr->cap.am.align_mtu = 1;
    attr->cap.am.max_hdr = iface->rx.max_cma_header();
    attr->cap.am.max_iov = iface->chan_cfg.max_iov;
    attr->latency = ucs_linear_func_make(80e-9, 0);
    attr->bandwidth.dedicated = 0;
    attr->bandwidth.shared = 12000.0 * 1024 * 1024;
    attr->overhead = 10e-9;
    attr->priority = 0;
    return UCS_OK;
}

ucs_status_t iface_get_address(uct_iface_h tl_iface,
                               uct_iface_addr_t *addr) noexcept
{
    Iface *iface = to_iface(tl_iface);
    IfaceAddr a{};
    a.secret[0] = iface->secret.k0;
    a.secret[1] = iface->secret.k1;
    a.pid = static_cast<int32_t>(getpid());
    a.fifo_fd = iface->fifo.fd();
    a.fifo_bytes = iface->fifo.bytes();
    std::memcpy(addr, &a, sizeof(a));
    return UCS_OK;
}

// The device address and reachability of UCX's own shared-memory
// transports: the boot id, and the IPC namespace when not the default one.
// Processes of one kernel in different IPC namespaces (containers, or the
// emulated cluster's hosts) are different hosts to UCP: a boot id alone
// would let UCP route their traffic through this FIFO (fds passed through
// /proc still work there), hiding the network from the planner.
ucs_status_t iface_get_device_address(uct_iface_h tl_iface,
                                      uct_device_addr_t *addr) noexcept
{
    return uct_sm_iface_get_device_address(tl_iface, addr);
}

int iface_is_reachable(uct_iface_h tl_iface, const uct_device_addr_t *dev_addr,
                       const uct_iface_addr_t *iface_addr) noexcept
{
    return dev_addr != nullptr && iface_addr != nullptr &&
           uct_sm_iface_is_reachable(tl_iface, dev_addr, iface_addr);
}

// The endpoints with pending or zcopy work; out of line, so the idle
// poll below saves no registers for it.
[[gnu::noinline]] unsigned progress_busy(Iface *iface) noexcept
{
    unsigned count = 0;
    // Indexes, not iterators: a callback may list or destroy endpoints.
    for (size_t i = 0; i < iface->busy.size();) {
        Ep *ep = iface->busy[i];
        count += ep_progress(ep);
        if (i >= iface->busy.size() || iface->busy[i] != ep) {
            continue; // the list changed under us: look at slot i again
        }
        if (ep_has_work(ep)) {
            ++i;
            continue;
        }
        ep->in_busy = false;
        iface->busy[i] = iface->busy.back();
        iface->busy.pop_back();
    }
    return count;
}

// O(1) when idle, whatever the number of endpoints and groups: the FIFO's
// next slot, and only the endpoints with pending or zcopy work (groups run
// from their own worker callback while they have work). UCP polls every
// iface on every progress call, so the idle path is a few loads.
unsigned iface_progress(uct_iface_h tl_iface) noexcept
{
    Iface *iface = to_iface(tl_iface);
    const unsigned count = iface->rx.poll(kMaxPoll, deliver, iface);
    return iface->busy.empty() ? count : count + progress_busy(iface);
}

ucs_status_t iface_flush(uct_iface_h tl_iface, unsigned,
                         uct_completion_t *comp) noexcept
{
    if (comp != nullptr) {
        return UCS_ERR_UNSUPPORTED;
    }
    for (Ep *ep : to_iface(tl_iface)->busy) {
        if (ep->ch.outstanding() != 0) {
            return UCS_INPROGRESS;
        }
    }
    return UCS_OK;
}

void iface_close(uct_iface_h tl_iface) noexcept
{
    Iface *iface = to_iface(tl_iface);
    while (!iface->eps.empty()) {
        ep_destroy(&iface->eps.back()->super.super);
    }
    uct_base_iface_progress_disable(tl_iface,
                                    UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    uct_mm_common::base_iface_cleanup(&iface->super);
    delete iface;
}

ucs_status_t configure(Iface *iface, const IfaceConfig *cfg)
{
    iface->geo.num_members = 1;
    iface->geo.num_slots = cfg->fifo_size;
    iface->geo.slot_bytes = static_cast<uint32_t>(cfg->seg_size);
    if (Ring::validate(iface->geo) != Status::kOk) {
        return UCS_ERR_INVALID_PARAM; // validate() logged why
    }
    if (cfg->max_group_size < 1 ||
        cfg->max_group_size > uct_mm_common::kMaxGroupMembers ||
        cfg->max_outstanding < 1 || cfg->group_ring_size < 2 ||
        !uct_mm_common::is_pow2(cfg->group_ring_size) ||
        cfg->group_ring_size > kMaxSlots || cfg->group_seg_size < kCacheLine ||
        cfg->group_seg_size % kCacheLine != 0 ||
        cfg->group_seg_size > kMaxSegBytes) {
        ucs_error("UCX_MM_BCAST_MAX_GROUP_SIZE=%u (1..%u), MAX_OUTSTANDING=%u "
                  "(>= 1), GROUP_RING_SIZE=%u (a power of two, 2..%u) or "
                  "GROUP_SEG_SIZE=%zu (a multiple of 64 up to %u) out of range",
                  cfg->max_group_size, uct_mm_common::kMaxGroupMembers,
                  cfg->max_outstanding, cfg->group_ring_size, kMaxSlots,
                  cfg->group_seg_size, kMaxSegBytes);
        return UCS_ERR_INVALID_PARAM;
    }
    iface->chan_cfg.name = "mm_bcast";
    iface->chan_cfg.timeout_ms = static_cast<uint32_t>(cfg->timeout * 1e3);
    iface->chan_cfg.max_zcopy = cfg->max_zcopy;
    iface->min_zcopy = cfg->min_zcopy < 1 ? 1 : cfg->min_zcopy;
    iface->chan_cfg.max_iov = cfg->max_iov;
    GroupSettings &g = iface->group;
    g.max_group_size = cfg->max_group_size;
    g.ring_size = cfg->group_ring_size;
    g.seg_size = static_cast<unsigned>(cfg->group_seg_size);
    g.cma_thresh = cfg->cma_thresh;
    g.cma_max = cfg->cma_max;
    g.stream_thresh = cfg->stream_thresh;
    g.max_outstanding = cfg->max_outstanding;
    g.timeout_ms = static_cast<unsigned>(cfg->timeout * 1e3);
    g.attach_timeout_ms = static_cast<unsigned>(cfg->attach_timeout * 1e3);
    const size_t capacity = iface->geo.payload_capacity();
    iface->max_short = cfg->max_short < capacity ? cfg->max_short : capacity;
    if (sizeof(CmaDescriptor) + cfg->max_iov * sizeof(RemoteIov) >= capacity) {
        ucs_error("UCX_MM_BCAST_MAX_IOV=%u does not fit a %zu-byte slot",
                  cfg->max_iov, cfg->seg_size);
        return UCS_ERR_INVALID_PARAM;
    }
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
        "mm_bcast", &iface->super, &g_iface_ops, md, worker, params, tl_config);
    if (status != UCS_OK) {
        delete iface;
        return status;
    }
    status = configure(iface, cfg);
    if (status == UCS_OK) {
        status = uct_mm_common::to_ucs_status(FifoSegment::create(
            iface->geo.num_slots, iface->geo.slot_bytes, &iface->fifo));
    }
    if (status != UCS_OK) {
        uct_mm_common::base_iface_cleanup(&iface->super);
        delete iface;
        return status;
    }
    iface->rx.init(iface->fifo.ring(), iface->chan_cfg);
    // Without a doorbell the iface is simply polled always (no events).
    (void)iface->bell.open(iface->fifo.bell());
    iface->secret = uct_mm_common::random_secret();
    *iface_p = &iface->super.super;
    return UCS_OK;
}

} // namespace

ucs_status_t iface_open(uct_md_h md, uct_worker_h worker,
                        const uct_iface_params_t *params,
                        const uct_iface_config_t *config,
                        uct_iface_h *iface_p) noexcept
{
    UCT_MM_GUARD("mm_bcast iface_open",
                 iface_open_impl(md, worker, params, config, iface_p));
}

bool is_mm_bcast_iface(uct_iface_h iface) noexcept
{
    return iface != nullptr && iface->ops.iface_query == iface_query;
}

ucs_status_t iface_fence(uct_iface_h, unsigned) noexcept
{
    return UCS_OK;
}

ucs_status_t iface_event_fd_get(uct_iface_h tl_iface, int *fd_p) noexcept
{
    const int fd = to_iface(tl_iface)->bell.fd();
    if (fd < 0) {
        return UCS_ERR_UNSUPPORTED;
    }
    *fd_p = fd;
    return UCS_OK;
}

// UCS_OK: the doorbell's descriptor will be readable once a message lands
// (a receive event) or nothing can complete (no send is outstanding);
// UCS_ERR_BUSY: an event is at hand, progress first.
ucs_status_t iface_event_arm(uct_iface_h tl_iface, unsigned events) noexcept
{
    Iface *iface = to_iface(tl_iface);
    if (iface->bell.fd() < 0) {
        return UCS_ERR_UNSUPPORTED;
    }
    iface->bell.drain();
    if ((events & UCT_EVENT_SEND_COMP) && !iface->busy.empty()) {
        return UCS_ERR_BUSY; // pending or zcopy sends complete by polling
    }
    if ((events & (UCT_EVENT_RECV | UCT_EVENT_RECV_SIG)) && !iface->rx.arm()) {
        return UCS_ERR_BUSY;
    }
    return UCS_OK;
}

ucs_status_t ep_fence(uct_ep_h, unsigned) noexcept
{
    return UCS_OK;
}

uct_iface_ops_t g_iface_ops = [] {
    uct_iface_ops_t ops{};
    ops.ep_am_short = ep_am_short;
    ops.ep_am_short_iov = ep_am_short_iov;
    ops.ep_am_bcopy = ep_am_bcopy;
    ops.ep_am_zcopy = ep_am_zcopy;
    ops.ep_pending_add = ep_pending_add;
    ops.ep_pending_purge = ep_pending_purge;
    ops.ep_flush = ep_flush;
    ops.ep_fence = ep_fence;
    ops.ep_check = ep_check;
    ops.ep_create = ep_create;
    ops.ep_destroy = ep_destroy;
    ops.iface_flush = iface_flush;
    ops.iface_fence = iface_fence;
    ops.iface_event_fd_get = iface_event_fd_get;
    ops.iface_event_arm = iface_event_arm;
    ops.iface_progress_enable = uct_base_iface_progress_enable;
    ops.iface_progress_disable = uct_base_iface_progress_disable;
    ops.iface_progress = iface_progress;
    ops.iface_close = iface_close;
    ops.iface_query = iface_query;
    ops.iface_get_device_address = iface_get_device_address;
    ops.iface_get_address = iface_get_address;
    ops.iface_is_reachable = iface_is_reachable;
    return ops;
}();

} // namespace uct_mm_bcast
