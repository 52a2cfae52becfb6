/* SPDX-License-Identifier: BSD-3-Clause
 * mm_incast endpoint: connects to a peer iface's receive FIFO (by its
 * owner's pid and memfd) and writes active messages into it. Sends are
 * complete when they return; a full FIFO answers UCS_ERR_NO_RESOURCE and
 * the request may wait on the iface's pending queue. */
#include "mm_incast_iface.h"

#include <uct/base/uct_iov.inl>

#include <string.h>

UCS_CLASS_INIT_FUNC(uct_mm_incast_ep_t, const uct_ep_params_t *params)
{
    uct_mm_incast_iface_t *iface =
        ucs_derived_of(params->iface, uct_mm_incast_iface_t);
    const uct_mm_incast_iface_addr_t *addr;
    ucs_status_t status;

    UCS_CLASS_CALL_SUPER_INIT(uct_base_ep_t, &iface->super.super);
    if (!(params->field_mask & UCT_EP_PARAM_FIELD_IFACE_ADDR) ||
        (params->iface_addr == NULL)) {
        ucs_error("mm_incast: ep_create needs the peer's iface address");
        return UCS_ERR_INVALID_PARAM;
    }
    addr = (const uct_mm_incast_iface_addr_t *)params->iface_addr;
    status = uct_mm_incast_fifo_tx_create(
        (int)addr->pid, addr->fd, addr->bytes,
        uct_mm_incast_timeout_ms(iface->group.timeout), &self->tx);
    if (status != UCS_OK) {
        ucs_error("mm_incast: cannot map the FIFO of pid %u fd %d: %s",
                  addr->pid, addr->fd, ucs_status_string(status));
        return status;
    }
    /* What this iface advertises (UCX_MM_INCAST_SEG_SIZE), within what a
     * slot of the peer's FIFO holds. */
    self->max_payload = ucs_min(iface->max_payload,
                                uct_mm_incast_fifo_tx_max_payload(self->tx));
    status = uct_mm_peer_init(&self->peer, &self->super.super, (int)addr->pid);
    if (status != UCS_OK) {
        uct_mm_incast_fifo_tx_destroy(self->tx);
        return status;
    }
    return UCS_OK;
}

UCS_CLASS_CLEANUP_FUNC(uct_mm_incast_ep_t)
{
    uct_mm_peer_cleanup(&self->peer);
    uct_mm_incast_ep_pending_purge(&self->super.super, NULL, NULL);
    uct_mm_incast_fifo_tx_destroy(self->tx);
}

UCS_CLASS_DEFINE(uct_mm_incast_ep_t, uct_base_ep_t);
UCS_CLASS_DEFINE_NEW_FUNC(uct_mm_incast_ep_t, uct_ep_t,
                          const uct_ep_params_t *);
UCS_CLASS_DEFINE_DELETE_FUNC(uct_mm_incast_ep_t, uct_ep_t);

static UCS_F_ALWAYS_INLINE ucs_status_t uct_mm_incast_check_am(uint8_t id,
                                                               size_t length,
                                                               size_t max,
                                                               const char *op)
{
    if (ucs_unlikely(id >= UCT_AM_ID_MAX)) {
        ucs_error("mm_incast: %s: invalid am id %d", op, id);
        return UCS_ERR_INVALID_PARAM;
    }
    if (ucs_unlikely(length > max)) {
        ucs_error("mm_incast: %s: %zu bytes over the maximum %zu", op, length,
                  max);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    return UCS_OK;
}

/* A send with UCT_SEND_FLAG_PEER_CHECK (UCP's keepalive) checks the peer. */
static UCS_F_ALWAYS_INLINE void
uct_mm_incast_ep_peer_check(uct_mm_incast_ep_t *ep, unsigned flags)
{
    if (ucs_unlikely(flags & UCT_SEND_FLAG_PEER_CHECK)) {
        uct_mm_peer_check(&ep->peer);
    }
}

typedef struct {
    uint64_t header;
    const void *payload;
    unsigned length;
} uct_mm_incast_short_args_t;

static size_t uct_mm_incast_pack_short(void *dest, void *arg)
{
    const uct_mm_incast_short_args_t *a = arg;

    memcpy(dest, &a->header, sizeof(a->header));
    if (a->length > 0) { /* payload may be NULL when empty */
        memcpy(UCS_PTR_BYTE_OFFSET(dest, sizeof(a->header)), a->payload,
               a->length);
    }
    return sizeof(a->header) + a->length;
}

typedef struct {
    const uct_iov_t *iov;
    size_t iovcnt;
} uct_mm_incast_iov_args_t;

static size_t uct_mm_incast_pack_iov(void *dest, void *arg)
{
    const uct_mm_incast_iov_args_t *a = arg;
    ucs_iov_iter_t iter;

    ucs_iov_iter_init(&iter);
    return uct_iov_to_buffer(a->iov, a->iovcnt, &iter, dest, SIZE_MAX);
}

ucs_status_t uct_mm_incast_ep_am_short(uct_ep_h tl_ep, uint8_t id,
                                       uint64_t header, const void *payload,
                                       unsigned length)
{
    uct_mm_incast_ep_t *ep = ucs_derived_of(tl_ep, uct_mm_incast_ep_t);
    uct_mm_incast_short_args_t args = {header, payload, length};
    size_t total = sizeof(header) + length;
    ucs_status_t status;

    status = uct_mm_incast_check_am(id, total, ep->max_payload, "am_short");
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_mm_incast_fifo_tx_send(ep->tx, id, uct_mm_incast_pack_short,
                                        &args, &total);
    if (status == UCS_OK) {
        UCT_TL_EP_STAT_OP(&ep->super, AM, SHORT, total);
    }
    return status;
}

ucs_status_t uct_mm_incast_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                           const uct_iov_t *iov, size_t iovcnt)
{
    uct_mm_incast_ep_t *ep = ucs_derived_of(tl_ep, uct_mm_incast_ep_t);
    uct_mm_incast_iov_args_t args = {iov, iovcnt};
    size_t total = uct_iov_total_length(iov, iovcnt);
    ucs_status_t status;

    status = uct_mm_incast_check_am(id, total, ep->max_payload, "am_short_iov");
    if (ucs_unlikely(status != UCS_OK)) {
        return status;
    }
    status = uct_mm_incast_fifo_tx_send(ep->tx, id, uct_mm_incast_pack_iov,
                                        &args, &total);
    if (status == UCS_OK) {
        UCT_TL_EP_STAT_OP(&ep->super, AM, SHORT, total);
    }
    return status;
}

ssize_t uct_mm_incast_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                                  uct_pack_callback_t pack_cb, void *arg,
                                  unsigned flags)
{
    uct_mm_incast_ep_t *ep = ucs_derived_of(tl_ep, uct_mm_incast_ep_t);
    ucs_status_t status;
    size_t length;

    if (ucs_unlikely(id >= UCT_AM_ID_MAX)) {
        ucs_error("mm_incast: am_bcopy: invalid am id %d", id);
        return UCS_ERR_INVALID_PARAM;
    }
    /* UCT's contract: pack_cb writes at most max_bcopy bytes; more is
     * refused (UCS_ERR_EXCEEDS_LIMIT, nothing delivered). */
    status = uct_mm_incast_fifo_tx_send(ep->tx, id, pack_cb, arg, &length);
    uct_mm_incast_ep_peer_check(ep, flags);
    if (status != UCS_OK) {
        return status;
    }
    UCT_TL_EP_STAT_OP(&ep->super, AM, BCOPY, length);
    return (ssize_t)length;
}

ucs_status_t uct_mm_incast_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id,
                                       const void *header,
                                       unsigned header_length,
                                       const uct_iov_t *iov, size_t iovcnt,
                                       unsigned flags, uct_completion_t *comp)
{
    if ((header_length + uct_iov_total_length(iov, iovcnt)) == 0) {
        ucs_error("mm_incast: am_zcopy: zero-length message");
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_ERR_UNSUPPORTED; /* not advertised: use am_bcopy */
}

ucs_status_t uct_mm_incast_ep_pending_add(uct_ep_h tl_ep,
                                          uct_pending_req_t *req,
                                          unsigned flags)
{
    uct_mm_incast_ep_t *ep = ucs_derived_of(tl_ep, uct_mm_incast_ep_t);
    uct_mm_incast_iface_t *iface =
        ucs_derived_of(tl_ep->iface, uct_mm_incast_iface_t);
    uct_mm_incast_pending_priv_t *priv =
        (uct_mm_incast_pending_priv_t *)req->priv;

    UCS_STATIC_ASSERT(sizeof(*priv) <= UCT_PENDING_REQ_PRIV_LEN);
    if (!uct_mm_incast_fifo_tx_full(ep->tx)) {
        return UCS_ERR_BUSY; /* resources are available: send now */
    }
    priv->ep = ep;
    ucs_queue_push(&iface->pending, &priv->elem);
    return UCS_OK;
}

void uct_mm_incast_ep_pending_purge(uct_ep_h tl_ep,
                                    uct_pending_purge_callback_t cb, void *arg)
{
    uct_mm_incast_ep_t *ep = ucs_derived_of(tl_ep, uct_mm_incast_ep_t);
    uct_mm_incast_iface_t *iface =
        ucs_derived_of(tl_ep->iface, uct_mm_incast_iface_t);
    uct_mm_incast_pending_priv_t *priv;
    ucs_queue_iter_t iter;

    ucs_queue_for_each_safe(priv, iter, &iface->pending, elem)
    {
        if (priv->ep == ep) {
            ucs_queue_del_iter(&iface->pending, iter);
            if (cb != NULL) {
                cb(ucs_container_of(priv, uct_pending_req_t, priv), arg);
            }
        }
    }
}

ucs_status_t uct_mm_incast_ep_flush(uct_ep_h tl_ep, unsigned flags,
                                    uct_completion_t *comp)
{
    uct_mm_incast_ep_t *ep = ucs_derived_of(tl_ep, uct_mm_incast_ep_t);
    uct_mm_incast_iface_t *iface =
        ucs_derived_of(tl_ep->iface, uct_mm_incast_iface_t);
    uct_mm_incast_pending_priv_t *priv;

    /* Data is in the peer's memory when a send returns; only requests
     * still waiting for FIFO space are outstanding. */
    ucs_queue_for_each(priv, &iface->pending, elem)
    {
        if (priv->ep == ep) {
            return UCS_ERR_NO_RESOURCE;
        }
    }
    UCT_TL_EP_STAT_FLUSH(&ep->super);
    return UCS_OK;
}

ucs_status_t uct_mm_incast_ep_check(uct_ep_h tl_ep, unsigned flags,
                                    uct_completion_t *comp)
{
    uct_mm_incast_ep_t *ep = ucs_derived_of(tl_ep, uct_mm_incast_ep_t);
    ucs_status_t status = uct_mm_peer_ep_check(&ep->peer, flags, comp);
    ucs_status_t fifo_status = uct_mm_incast_fifo_tx_state(ep->tx);

    /* The FIFO's own failure (a stalled send found its reader dead). */
    if ((status == UCS_OK) && (fifo_status != UCS_OK)) {
        uct_mm_peer_report(&ep->peer, fifo_status);
    }
    return status;
}

void uct_mm_incast_ep_stalled(uct_mm_incast_ep_t *ep)
{
    uct_mm_incast_iface_t *iface =
        ucs_derived_of(ep->super.super.iface, uct_mm_incast_iface_t);

    double interval_ns = iface->group.timeout * 1e9 / 4;

    if (!(interval_ns < 1e18)) { /* TIMEOUT=inf: never rechecked */
        interval_ns = 1e18;
    }
    if (uct_mm_incast_fifo_tx_state(ep->tx) != UCS_OK) {
        uct_mm_peer_report(&ep->peer, uct_mm_incast_fifo_tx_state(ep->tx));
        return;
    }
    uct_mm_peer_check_stalled(&ep->peer, (uint64_t)interval_ns);
}
