/* SPDX-License-Identifier: BSD-3-Clause
 * mm_incast interface: owns the receive FIFO (a memfd that peers map by
 * pid and fd, so nothing is left in /dev/shm by a crash), delivers active
 * messages from its progress (O(1) when idle), and runs the pending queue.
 * Its UCX_MM_INCAST_* config also gives the defaults of incast groups. */
#include "mm_incast_iface.h"

#include <uct_mm_incast.h>

#include <ucs/arch/cpu.h>
#include <ucs/sys/string.h>

#include <string.h>
#include <unistd.h>

static uct_iface_ops_t uct_mm_incast_iface_ops;

static const char *uct_mm_incast_mode_names[] = {
    [UCT_MM_INCAST_MODE_AUTO] = "auto",
    [UCT_MM_INCAST_MODE_BATCHED] = "batched",
    [UCT_MM_INCAST_MODE_CENTRALIZED] = "centralized",
    [UCT_MM_INCAST_MODE_LOCKED] = "locked",
    [UCT_MM_INCAST_MODE_ATOMIC] = "atomic",
    [UCT_MM_INCAST_MODE_LAST] = NULL};

ucs_config_field_t uct_mm_incast_iface_config_table[] = {
    {"SM_", "", NULL, ucs_offsetof(uct_mm_incast_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_sm_iface_config_table)},

    {"MODE", "auto",
     "How the contributions of an incast group meet in shared memory:\n"
     " batched     - a slot per sender and an atomic pending counter\n"
     " centralized - a slot per sender; the receiver polls each slot's flag\n"
     " locked      - senders reduce into one buffer under a ucs_lock\n"
     " atomic      - senders reduce with atomic operations\n"
     " auto        - chosen per message from the operator, datatype, size\n"
     "               and group size\n"
     "Member 0's is used by the whole group; gather runs batched or\n"
     "centralized whatever is set",
     ucs_offsetof(uct_mm_incast_iface_config_t, mode),
     UCS_CONFIG_TYPE_ENUM(uct_mm_incast_mode_names)},

    {"FIFO_SIZE", "64",
     "Elements of the point-to-point receive FIFO of each iface (a power\n"
     "of two)",
     ucs_offsetof(uct_mm_incast_iface_config_t, fifo_elems),
     UCS_CONFIG_TYPE_UINT},

    {"SEG_SIZE", "8256",
     "Bytes of one FIFO element: the largest active message, header included",
     ucs_offsetof(uct_mm_incast_iface_config_t, seg_size),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"MAX_GROUP_SIZE", "64", "Largest group (members; at most 256)",
     ucs_offsetof(uct_mm_incast_iface_config_t, max_group_size),
     UCS_CONFIG_TYPE_UINT},

    {"TIMEOUT", "2s",
     "A group member whose process died is reported within this time\n"
     "(UCS_ERR_CONNECTION_RESET to every member waiting for it), and the\n"
     "dead peer of an endpoint whose pending sends wait on its full FIFO\n"
     "(through the iface error handler)",
     ucs_offsetof(uct_mm_incast_iface_config_t, timeout), UCS_CONFIG_TYPE_TIME},

    {"ATTACH_TIMEOUT", "10s",
     "Time every member of a new group has to join it; later, the group\n"
     "fails with UCS_ERR_ENDPOINT_TIMEOUT",
     ucs_offsetof(uct_mm_incast_iface_config_t, attach_timeout),
     UCS_CONFIG_TYPE_TIME},

    {"MAX_OUTSTANDING", "16",
     "Group posts per member not yet complete; more return\n"
     "UCS_ERR_NO_RESOURCE",
     ucs_offsetof(uct_mm_incast_iface_config_t, max_outstanding),
     UCS_CONFIG_TYPE_UINT},

    {"GROUP_RING_SIZE", "0",
     "Elements of a group's ring (positions in flight); 0: as many as fit\n"
     "4 MiB, 8 to 256. Member 0's is used",
     ucs_offsetof(uct_mm_incast_iface_config_t, group_ring_size),
     UCS_CONFIG_TYPE_UINT},

    {"STREAM_THRESH", "inf",
     "Group messages from this size are written into the ring with\n"
     "non-temporal stores: the root reads them from memory instead of\n"
     "from the senders' caches. Wins where the members' cores are far\n"
     "apart (another L3 or socket), loses where they share an L3\n"
     "(decision 0047). This member's own",
     ucs_offsetof(uct_mm_incast_iface_config_t, stream_thresh),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"GROUP_SEG_SIZE", "auto",
     "Chunk bytes of one member in a group ring element (a multiple of\n"
     "64): longer messages take consecutive elements. auto: in a group\n"
     "smaller than AUTO_LOCKED_MIN_GROUP, the largest power of two from 8k\n"
     "to 64k whose elements fit 16 times in 4 MiB (64k for 2 members, 32k\n"
     "for 3); 8k in a group that large. Member 0's is used",
     ucs_offsetof(uct_mm_incast_iface_config_t, group_seg_size),
     UCS_CONFIG_TYPE_MEMUNITS},

    /* MODE=auto's crossovers (core/policy.h): defaults measured on a 2-core
     * VM; `ucg_mm_perftest --calibrate` prints these for another machine. */
    {"AUTO_ATOMIC_MAX", "8",
     "MODE=auto: reductions up to this size whose operator and datatype\n"
     "have a single atomic instruction run atomic (0: never). Member 0's\n"
     "is used",
     ucs_offsetof(uct_mm_incast_iface_config_t, auto_atomic_max),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"AUTO_LOCKED_MIN", "32k",
     "MODE=auto: reductions from this size (inf: never), in groups of at\n"
     "least AUTO_LOCKED_MIN_GROUP, run locked. Member 0's is used",
     ucs_offsetof(uct_mm_incast_iface_config_t, auto_locked_min),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"AUTO_LOCKED_MIN_GROUP", "4",
     "MODE=auto: smallest group (members, 1..256) whose reductions from\n"
     "AUTO_LOCKED_MIN run locked. Member 0's is used",
     ucs_offsetof(uct_mm_incast_iface_config_t, auto_locked_min_group),
     UCS_CONFIG_TYPE_UINT},

    {"AUTO_PAIR_GROUP", "2",
     "MODE=auto: groups up to this size (members, 1..256) run centralized\n"
     "(reductions not atomic). Member 0's is used",
     ucs_offsetof(uct_mm_incast_iface_config_t, auto_pair_group),
     UCS_CONFIG_TYPE_UINT},

    {"AUTO_PAIR_LOCKED_MIN", "inf",
     "MODE=auto: reductions in groups up to AUTO_PAIR_GROUP from this size\n"
     "(inf: never) run locked instead; their gathers stay centralized.\n"
     "Member 0's is used",
     ucs_offsetof(uct_mm_incast_iface_config_t, auto_pair_locked_min),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"AUTO_GATHER_BATCHED_MAX_GROUP", "4",
     "MODE=auto: gather in groups over AUTO_PAIR_GROUP and up to this size\n"
     "(members, 1..256) runs batched, in bigger ones centralized. Member\n"
     "0's is used",
     ucs_offsetof(uct_mm_incast_iface_config_t, auto_gather_batched_max_group),
     UCS_CONFIG_TYPE_UINT},

    {"DIRECT_SIZE", "4k",
     "Payload bytes of a member's direct slot (a multiple of 64, at most\n"
     "64k; 0: no direct messages): the largest barrier, bcast, reduce,\n"
     "allreduce or allgather block (alltoall: all of its blocks) its callers\n"
     "run directly on the group's shared memory (uct_mm_incast_direct_*).\n"
     "Member 0's is used",
     ucs_offsetof(uct_mm_incast_iface_config_t, direct_size),
     UCS_CONFIG_TYPE_MEMUNITS},

    {"DIRECT_MAX_GROUP", "16",
     "Largest group (members) with direct messages: each member reads\n"
     "every other's slot. Member 0's is used",
     ucs_offsetof(uct_mm_incast_iface_config_t, direct_max_group),
     UCS_CONFIG_TYPE_UINT},

    {NULL}};

static ucs_status_t uct_mm_incast_iface_query(uct_iface_h tl_iface,
                                              uct_iface_attr_t *attr)
{
    uct_mm_incast_iface_t *iface =
        ucs_derived_of(tl_iface, uct_mm_incast_iface_t);

    uct_base_iface_query(&iface->super.super, attr);
    attr->iface_addr_len = sizeof(uct_mm_incast_iface_addr_t);
    attr->device_addr_len = uct_sm_iface_get_device_addr_len();
    attr->ep_addr_len = 0;
    attr->max_conn_priv = 0;
    attr->cap.flags = UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                      UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
                      UCT_IFACE_FLAG_PENDING | UCT_IFACE_FLAG_CB_SYNC |
                      UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE |
                      UCT_IFACE_FLAG_EP_CHECK;
    attr->cap.event_flags =
        (uct_mm_incast_fifo_rx_event_fd(iface->rx) >= 0)
            ? (UCT_IFACE_FLAG_EVENT_RECV | UCT_IFACE_FLAG_EVENT_SEND_COMP |
               UCT_IFACE_FLAG_EVENT_FD)
            : 0;
    attr->cap.am.max_short = iface->max_payload - sizeof(uint64_t);
    attr->cap.am.max_bcopy = iface->max_payload;
    attr->cap.am.min_zcopy = 0;
    attr->cap.am.max_zcopy = 0;
    attr->cap.am.max_iov = SIZE_MAX;
    attr->cap.am.max_hdr = 0;
    attr->cap.am.opt_zcopy_align = UCS_SYS_CACHE_LINE_SIZE;
    attr->cap.am.align_mtu = UCS_SYS_CACHE_LINE_SIZE;
    attr->latency = ucs_linear_func_make(80e-9, 0);
    attr->bandwidth.dedicated = iface->super.config.bandwidth;
    attr->bandwidth.shared = 0;
    attr->overhead = 10e-9;
    attr->priority = 0;
    return UCS_OK;
}

static ucs_status_t uct_mm_incast_iface_get_address(uct_iface_h tl_iface,
                                                    uct_iface_addr_t *addr)
{
    uct_mm_incast_iface_t *iface =
        ucs_derived_of(tl_iface, uct_mm_incast_iface_t);
    uct_mm_incast_iface_addr_t *a = (uct_mm_incast_iface_addr_t *)addr;

    a->secret[0] = iface->group.secret[0];
    a->secret[1] = iface->group.secret[1];
    a->pid = (uint32_t)getpid();
    a->fd = uct_mm_incast_fifo_rx_fd(iface->rx);
    a->bytes = uct_mm_incast_fifo_rx_bytes(iface->rx);
    return UCS_OK;
}

static int uct_mm_incast_iface_is_reachable(const uct_iface_h tl_iface,
                                            const uct_device_addr_t *dev_addr,
                                            const uct_iface_addr_t *iface_addr)
{
    return (iface_addr != NULL) &&
           uct_sm_iface_is_reachable(tl_iface, dev_addr, iface_addr);
}

static void uct_mm_incast_iface_deliver(void *arg, uint8_t am_id, void *data,
                                        size_t length)
{
    uct_mm_incast_iface_t *iface = arg;

    if (am_id >= UCT_AM_ID_MAX) { /* the producer's byte: index checked */
        ucs_error("mm_incast: dropped a message with AM id %u", am_id);
        return;
    }
    uct_iface_trace_am(&iface->super.super, UCT_AM_TRACE_TYPE_RECV, am_id, data,
                       length, "RX: AM");
    /* flags 0: the handler must not keep `data` (it is in the FIFO). */
    uct_iface_invoke_am(&iface->super.super, am_id, data, (unsigned)length, 0);
}

static unsigned
uct_mm_incast_iface_dispatch_pending(uct_mm_incast_iface_t *iface)
{
    uct_mm_incast_pending_priv_t *priv;
    uct_pending_req_t *req;
    unsigned count = 0;
    ucs_status_t status;

    while (!ucs_queue_is_empty(&iface->pending)) {
        priv = ucs_queue_head_elem_non_empty(
            &iface->pending, uct_mm_incast_pending_priv_t, elem);
        req = ucs_container_of(priv, uct_pending_req_t, priv);
        ucs_queue_pull_non_empty(&iface->pending);
        status = req->func(req);
        if (status != UCS_OK) {
            ucs_queue_push_head(&iface->pending, &priv->elem);
            uct_mm_incast_ep_stalled(priv->ep);
            break;
        }
        ++count;
    }
    return count;
}

static unsigned uct_mm_incast_iface_progress(uct_iface_h tl_iface)
{
    uct_mm_incast_iface_t *iface =
        ucs_derived_of(tl_iface, uct_mm_incast_iface_t);
    unsigned count;

    count = uct_mm_incast_fifo_rx_poll(iface->rx, iface->rx_burst,
                                       uct_mm_incast_iface_deliver, iface);
    if (ucs_unlikely(!ucs_queue_is_empty(&iface->pending))) {
        count += uct_mm_incast_iface_dispatch_pending(iface);
    }
    return count;
}

static ucs_status_t uct_mm_incast_iface_event_fd_get(uct_iface_h tl_iface,
                                                     int *fd_p)
{
    uct_mm_incast_iface_t *iface =
        ucs_derived_of(tl_iface, uct_mm_incast_iface_t);
    int fd = uct_mm_incast_fifo_rx_event_fd(iface->rx);

    if (fd < 0) {
        return UCS_ERR_UNSUPPORTED;
    }
    *fd_p = fd;
    return UCS_OK;
}

/* UCS_OK: the doorbell's descriptor becomes readable once a message lands
 * (nothing can complete a send: none is pending); UCS_ERR_BUSY: an event
 * is at hand, progress first. */
static ucs_status_t uct_mm_incast_iface_event_arm(uct_iface_h tl_iface,
                                                  unsigned events)
{
    uct_mm_incast_iface_t *iface =
        ucs_derived_of(tl_iface, uct_mm_incast_iface_t);

    if (uct_mm_incast_fifo_rx_event_fd(iface->rx) < 0) {
        return UCS_ERR_UNSUPPORTED;
    }
    if ((events & UCT_EVENT_SEND_COMP) &&
        !ucs_queue_is_empty(&iface->pending)) {
        return UCS_ERR_BUSY;
    }
    if ((events & (UCT_EVENT_RECV | UCT_EVENT_RECV_SIG)) &&
        !uct_mm_incast_fifo_rx_arm(iface->rx)) {
        return UCS_ERR_BUSY;
    }
    return UCS_OK;
}

static ucs_status_t uct_mm_incast_iface_flush(uct_iface_h tl_iface,
                                              unsigned flags,
                                              uct_completion_t *comp)
{
    uct_mm_incast_iface_t *iface =
        ucs_derived_of(tl_iface, uct_mm_incast_iface_t);

    if (!ucs_queue_is_empty(&iface->pending)) {
        return UCS_ERR_NO_RESOURCE;
    }
    UCT_TL_IFACE_STAT_FLUSH(&iface->super.super);
    return UCS_OK;
}

int uct_mm_incast_iface_group_settings(const void *tl_iface,
                                       uct_mm_incast_group_settings_t *s)
{
    const uct_mm_incast_iface_t *iface;

    if ((tl_iface == NULL) || (((uct_iface_h)tl_iface)->ops.iface_query !=
                               uct_mm_incast_iface_query)) {
        return 0;
    }
    iface = ucs_derived_of(tl_iface, uct_mm_incast_iface_t);
    *s = iface->group;
    return 1;
}

void uct_mm_incast_iface_addr_secret(const void *iface_addr, uint64_t secret[2])
{
    const uct_mm_incast_iface_addr_t *a = iface_addr;

    memcpy(secret, a->secret, sizeof(a->secret));
}

static UCS_CLASS_INIT_FUNC(uct_mm_incast_iface_t, uct_md_h md,
                           uct_worker_h worker,
                           const uct_iface_params_t *params,
                           const uct_iface_config_t *tl_config)
{
    const uct_mm_incast_iface_config_t *config =
        ucs_derived_of(tl_config, uct_mm_incast_iface_config_t);
    ucs_status_t status;

    UCS_CLASS_CALL_SUPER_INIT(uct_sm_iface_t, &uct_mm_incast_iface_ops,
                              &uct_base_iface_internal_ops, md, worker, params,
                              tl_config);
    if ((config->seg_size <= sizeof(uint64_t)) ||
        (config->seg_size > UCS_MBYTE) || (config->fifo_elems < 2) ||
        (config->fifo_elems > 65536) || !ucs_is_pow2(config->fifo_elems)) {
        ucs_error("mm_incast: UCX_MM_INCAST_SEG_SIZE=%zu (9..1M) or "
                  "UCX_MM_INCAST_FIFO_SIZE=%u (a power of two, 2..64k) out "
                  "of range",
                  config->seg_size, config->fifo_elems);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((config->max_group_size < 1) || (config->max_group_size > 256) ||
        (config->max_outstanding < 1) || (config->group_ring_size > 65536) ||
        ((config->group_seg_size != UCS_MEMUNITS_AUTO) &&
         ((config->group_seg_size < 64) || (config->group_seg_size % 64 != 0) ||
          (config->group_seg_size > (1u << 24))))) {
        ucs_error("mm_incast: UCX_MM_INCAST_MAX_GROUP_SIZE=%u (1..256), "
                  "MAX_OUTSTANDING=%u (>= 1), GROUP_RING_SIZE=%u (0..65536) "
                  "or GROUP_SEG_SIZE=%zu (a multiple of 64 up to 16M) out of "
                  "range",
                  config->max_group_size, config->max_outstanding,
                  config->group_ring_size, config->group_seg_size);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((config->auto_locked_min_group < 1) ||
        (config->auto_locked_min_group > 256) ||
        (config->auto_pair_group < 1) || (config->auto_pair_group > 256) ||
        (config->auto_gather_batched_max_group < 1) ||
        (config->auto_gather_batched_max_group > 256)) {
        ucs_error("mm_incast: UCX_MM_INCAST_AUTO_LOCKED_MIN_GROUP=%u, "
                  "AUTO_PAIR_GROUP=%u or AUTO_GATHER_BATCHED_MAX_GROUP=%u "
                  "out of range (1..256)",
                  config->auto_locked_min_group, config->auto_pair_group,
                  config->auto_gather_batched_max_group);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((config->direct_size % 64 != 0) || (config->direct_size > 65536) ||
        (config->direct_max_group > 256)) {
        ucs_error("mm_incast: UCX_MM_INCAST_DIRECT_SIZE=%zu (a multiple of 64 "
                  "up to 64k) or DIRECT_MAX_GROUP=%u (0..256) out of range",
                  config->direct_size, config->direct_max_group);
        return UCS_ERR_INVALID_PARAM;
    }
    /* A slot holds its 16-byte header and SEG_SIZE bytes of message. */
    status = uct_mm_incast_fifo_rx_create(
        config->fifo_elems,
        (unsigned)ucs_align_up(config->seg_size + 16, UCS_SYS_CACHE_LINE_SIZE),
        uct_mm_incast_timeout_ms(config->timeout), &self->rx);
    if (status != UCS_OK) {
        ucs_error("mm_incast: cannot create the receive FIFO: %s",
                  ucs_status_string(status));
        return status;
    }
    ucs_queue_head_init(&self->pending);
    self->max_payload = config->seg_size;
    self->rx_burst = 16;
    self->group.worker = worker;
    uct_mm_incast_new_secret(self->group.secret);
    self->group.mode = config->mode;
    self->group.max_group_size = config->max_group_size;
    self->group.max_outstanding = config->max_outstanding;
    self->group.ring_size = config->group_ring_size;
    /* 0: the group's size decides (auto_seg_bytes) */
    self->group.seg_size = (config->group_seg_size == UCS_MEMUNITS_AUTO)
                               ? 0
                               : config->group_seg_size;
    self->group.stream_thresh = config->stream_thresh;
    self->group.timeout = config->timeout;
    self->group.attach_timeout = config->attach_timeout;
    self->group.auto_atomic_max = config->auto_atomic_max;
    self->group.auto_locked_min = config->auto_locked_min;
    self->group.auto_locked_min_group = config->auto_locked_min_group;
    self->group.auto_pair_group = config->auto_pair_group;
    self->group.auto_pair_locked_min = config->auto_pair_locked_min;
    self->group.auto_gather_batched_max_group =
        config->auto_gather_batched_max_group;
    self->group.direct_size = config->direct_size;
    self->group.direct_max_group = config->direct_max_group;
    return UCS_OK;
}

static UCS_CLASS_CLEANUP_FUNC(uct_mm_incast_iface_t)
{
    uct_base_iface_progress_disable(&self->super.super.super,
                                    UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    uct_mm_incast_fifo_rx_destroy(self->rx);
}

UCS_CLASS_DEFINE(uct_mm_incast_iface_t, uct_sm_iface_t);
UCS_CLASS_DEFINE_NEW_FUNC(uct_mm_incast_iface_t, uct_iface_t, uct_md_h,
                          uct_worker_h, const uct_iface_params_t *,
                          const uct_iface_config_t *);
static UCS_CLASS_DEFINE_DELETE_FUNC(uct_mm_incast_iface_t, uct_iface_t);

static uct_iface_ops_t uct_mm_incast_iface_ops = {
    .ep_am_short = uct_mm_incast_ep_am_short,
    .ep_am_short_iov = uct_mm_incast_ep_am_short_iov,
    .ep_am_bcopy = uct_mm_incast_ep_am_bcopy,
    .ep_am_zcopy = uct_mm_incast_ep_am_zcopy,
    .ep_pending_add = uct_mm_incast_ep_pending_add,
    .ep_pending_purge = uct_mm_incast_ep_pending_purge,
    .ep_flush = uct_mm_incast_ep_flush,
    .ep_fence = uct_sm_ep_fence,
    .ep_check = uct_mm_incast_ep_check,
    .ep_create = UCS_CLASS_NEW_FUNC_NAME(uct_mm_incast_ep_t),
    .ep_destroy = UCS_CLASS_DELETE_FUNC_NAME(uct_mm_incast_ep_t),
    .iface_flush = uct_mm_incast_iface_flush,
    .iface_fence = uct_sm_iface_fence,
    .iface_event_fd_get = uct_mm_incast_iface_event_fd_get,
    .iface_event_arm = uct_mm_incast_iface_event_arm,
    .iface_progress_enable = uct_base_iface_progress_enable,
    .iface_progress_disable = uct_base_iface_progress_disable,
    .iface_progress = uct_mm_incast_iface_progress,
    .iface_close = UCS_CLASS_DELETE_FUNC_NAME(uct_mm_incast_iface_t),
    .iface_query = uct_mm_incast_iface_query,
    .iface_get_device_address = uct_sm_iface_get_device_address,
    .iface_get_address = uct_mm_incast_iface_get_address,
    .iface_is_reachable = uct_mm_incast_iface_is_reachable};

uct_tl_t uct_mm_incast_tl = {
    .name = UCT_MM_INCAST_NAME,
    .query_devices = uct_sm_base_query_tl_devices,
    .iface_open = UCS_CLASS_NEW_FUNC_NAME(uct_mm_incast_iface_t),
    .config = {.name = "mm_incast transport",
               .prefix = "MM_INCAST_",
               .table = uct_mm_incast_iface_config_table,
               .size = sizeof(uct_mm_incast_iface_config_t)}};
