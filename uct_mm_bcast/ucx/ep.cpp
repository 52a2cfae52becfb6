// SPDX-License-Identifier: BSD-3-Clause
// mm_bcast endpoints (point-to-point, into the peer's FIFO): the AM sends,
// pending queue, flush; the list of endpoints that have work.
#include "mm_bcast.h"

#include "iface_glue.h"
#include "uct_mm_bcast.h"
#include "ucx_glue.h"

#include <ucg/copy.h>

#include <algorithm>

namespace uct_mm_bcast {
namespace {

using uct_mm_common::to_ucs_status;

constexpr size_t kMaxIovOnStack = 64;

Ep *to_ep(uct_ep_h tl_ep)
{
    return reinterpret_cast<Ep *>(tl_ep);
}

// Creates the UCX part of an endpoint and links it into the iface.
ucs_status_t ep_alloc(Iface *iface, Ep **ep_p)
{
    auto *ep = new Ep();
    int init_count = 1;
    const ucs_status_t status = uct_base_ep_t_init(
        &ep->super, &uct_base_ep_t_class, &init_count, &iface->super);
    if (status != UCS_OK) {
        delete ep;
        return status;
    }
    ep->iface = iface;
    ucs_queue_head_init(&ep->pending);
    *ep_p = ep;
    return UCS_OK;
}

void ep_link(Ep *ep)
{
    ep->iface->eps.push_back(ep);
    // ep_mark_busy runs in send paths, which must not allocate.
    ep->iface->busy.reserve(ep->iface->eps.size());
}

void unlink_from(std::vector<Ep *> *list, Ep *ep)
{
    list->erase(std::remove(list->begin(), list->end(), ep), list->end());
}

ucs_status_t p2p_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    if (!(params->field_mask & UCT_EP_PARAM_FIELD_IFACE) ||
        !(params->field_mask & UCT_EP_PARAM_FIELD_IFACE_ADDR)) {
        ucs_error("mm_bcast: ep_create needs an iface and an iface address");
        return UCS_ERR_INVALID_PARAM;
    }
    auto *iface = reinterpret_cast<Iface *>(params->iface);
    IfaceAddr addr;
    std::memcpy(&addr, params->iface_addr, sizeof(addr));
    Ep *ep;
    ucs_status_t status = ep_alloc(iface, &ep);
    if (status != UCS_OK) {
        return status;
    }
    status = to_ucs_status(FifoSegment::attach(
        addr.pid, addr.fifo_fd, addr.fifo_bytes, &ep->peer_fifo));
    if (status != UCS_OK) {
        ucs_class_call_cleanup_chain(&uct_base_ep_t_class, &ep->super, -1);
        delete ep;
        return status;
    }
    status = uct_mm_peer_init(&ep->peer, &ep->super.super, addr.pid);
    if (status != UCS_OK) {
        ucs_class_call_cleanup_chain(&uct_base_ep_t_class, &ep->super, -1);
        delete ep;
        return status;
    }
    ep->ch.init(ep->peer_fifo.ring(), iface->chan_cfg);
    ep->ch.set_bell(ep->peer_fifo.bell());
    ep_link(ep);
    *ep_p = &ep->super.super;
    return UCS_OK;
}

bool check_am_id(uint8_t id)
{
    if (id >= UCT_AM_ID_MAX) {
        ucs_error("mm_bcast: active message id %u out of range", id);
        return false;
    }
    return true;
}

void zcopy_complete(void *arg, void *cookie, Status st)
{
    auto *ep = static_cast<Ep *>(arg);
    ++ep->zcopy_done;
    if (cookie != nullptr) {
        uct_invoke_completion(static_cast<uct_completion_t *>(cookie),
                              to_ucs_status(st));
    }
}

// Whether the endpoint failed: its channel's own failure (found by a
// stalled send), else its peer's liveness; a failure goes to the iface's
// error handler once.
void peer_check(Ep *ep)
{
    if (ep->ch.state() != Status::kOk) {
        uct_mm_peer_report(&ep->peer, to_ucs_status(ep->ch.state()));
        return;
    }
    uct_mm_peer_check(&ep->peer);
}

// A send with UCT_SEND_FLAG_PEER_CHECK (UCP's keepalive) checks the peer.
template <typename T> T with_peer_check(Ep *ep, unsigned flags, T result)
{
    if (flags & UCT_SEND_FLAG_PEER_CHECK) {
        peer_check(ep);
    }
    return result;
}

} // namespace

bool ep_has_work(const Ep *ep) noexcept
{
    return ep->ch.outstanding() != 0 || !ep->flushes.empty() ||
           !ucs_queue_is_empty(&ep->pending);
}

void ep_mark_busy(Ep *ep) noexcept
{
    if (!ep->in_busy) {
        ep->in_busy = true;
        ep->iface->busy.push_back(ep); // reserved: never allocates here
    }
}

unsigned ep_progress(Ep *ep) noexcept
{
    unsigned count = 0;
    if (ep->ch.outstanding() != 0) {
        count += ep->ch.progress_completions(zcopy_complete, ep);
        while (!ep->flushes.empty() &&
               ep->flushes.front().first <= ep->zcopy_done) {
            uct_completion_t *comp = ep->flushes.front().second;
            ep->flushes.erase(ep->flushes.begin());
            uct_invoke_completion(comp, to_ucs_status(ep->ch.state()));
        }
    }
    // Pending requests, in order, while the ring has room; one that does
    // not complete stays at the head.
    while (!ucs_queue_is_empty(&ep->pending) && ep->ch.ring().has_space()) {
        auto *priv = ucs_queue_head_elem_non_empty(
            &ep->pending, uct_pending_req_priv_queue_t, queue_elem);
        auto *req = ucs_container_of(priv, uct_pending_req_t, priv);
        ucs_queue_pull_non_empty(&ep->pending);
        const ucs_status_t status = req->func(req);
        if (status != UCS_OK) {
            ucs_queue_push_head(&ep->pending, &priv->queue_elem);
            break;
        }
        ++count;
    }
    // Stalled on a full ring: is the reader still there (every TIMEOUT/4)?
    if (!ucs_queue_is_empty(&ep->pending) && !ep->peer.reported &&
        !ep->ch.ring().has_space()) {
        if (ep->ch.state() != Status::kOk) {
            uct_mm_peer_report(&ep->peer, to_ucs_status(ep->ch.state()));
        } else {
            uct_mm_peer_check_stalled(
                &ep->peer, uint64_t{ep->iface->chan_cfg.timeout_ms} * 250000);
        }
    }
    return count;
}

ucs_status_t ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p) noexcept
{
    UCT_MM_GUARD("mm_bcast ep_create", p2p_ep_create(params, ep_p));
}

void ep_destroy(uct_ep_h tl_ep) noexcept
{
    Ep *ep = to_ep(tl_ep);
    ep_pending_purge(tl_ep, nullptr, nullptr);
    unlink_from(&ep->iface->eps, ep);
    unlink_from(&ep->iface->busy, ep);
    uct_mm_peer_cleanup(&ep->peer);
    ucs_class_call_cleanup_chain(&uct_base_ep_t_class, &ep->super, -1);
    delete ep;
}

ucs_status_t ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                         const void *payload, unsigned length) noexcept
{
    Ep *ep = to_ep(tl_ep);
    if (!check_am_id(id)) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (length + sizeof(header) > ep->iface->max_short) {
        ucs_error("mm_bcast: am_short of %zu bytes exceeds max_short %zu",
                  length + sizeof(header), ep->iface->max_short);
        return UCS_ERR_INVALID_PARAM;
    }
    return to_ucs_status(ep->ch.send_short(id, header, payload, length));
}

ucs_status_t ep_am_short_iov(uct_ep_h tl_ep, uint8_t id, const uct_iov_t *iov,
                             size_t iovcnt) noexcept
{
    Ep *ep = to_ep(tl_ep);
    const size_t total = uct_iov_total_length(iov, iovcnt);
    if (!check_am_id(id)) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (total > ep->iface->max_short) {
        ucs_error("mm_bcast: am_short_iov of %zu bytes exceeds max_short %zu",
                  total, ep->iface->max_short);
        return UCS_ERR_INVALID_PARAM;
    }
    size_t sent;
    return to_ucs_status(ep->ch.send_packed(
        id,
        [&](uint8_t *dest) {
            size_t off = 0;
            for (size_t i = 0; i < iovcnt; ++i) {
                const size_t len = uct_iov_get_length(&iov[i]);
                ucg_copy(dest + off, iov[i].buffer, len);
                off += len;
            }
            return off;
        },
        &sent));
}

ssize_t ep_am_bcopy(uct_ep_h tl_ep, uint8_t id, uct_pack_callback_t pack_cb,
                    void *arg, unsigned flags) noexcept
{
    Ep *ep = to_ep(tl_ep);
    if (!check_am_id(id)) {
        return UCS_ERR_INVALID_PARAM;
    }
    size_t length = 0;
    const Status st = ep->ch.send_packed(
        id, [&](uint8_t *dest) { return pack_cb(dest, arg); }, &length);
    if (st != Status::kOk) {
        return with_peer_check<ssize_t>(ep, flags, to_ucs_status(st));
    }
    return with_peer_check(ep, flags, static_cast<ssize_t>(length));
}

ucs_status_t ep_am_zcopy(uct_ep_h tl_ep, uint8_t id, const void *header,
                         unsigned header_length, const uct_iov_t *iov,
                         size_t iovcnt, unsigned flags,
                         uct_completion_t *comp) noexcept
{
    Ep *ep = to_ep(tl_ep);
    const ChannelConfig &cfg = ep->iface->chan_cfg;
    const size_t total = uct_iov_total_length(iov, iovcnt);
    if (!check_am_id(id)) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (iovcnt > cfg.max_iov || iovcnt > kMaxIovOnStack ||
        header_length > ep->ch.max_cma_header()) {
        ucs_error("mm_bcast: am_zcopy with %zu iov entries (max %u) and a "
                  "%u-byte header (max %zu)",
                  iovcnt, cfg.max_iov, header_length, ep->ch.max_cma_header());
        return UCS_ERR_INVALID_PARAM;
    }
    if (total == 0 || total > cfg.max_zcopy) {
        ucs_error("mm_bcast: am_zcopy of %zu bytes: must be 1..%zu", total,
                  cfg.max_zcopy);
        return total == 0 ? UCS_ERR_INVALID_PARAM : UCS_ERR_EXCEEDS_LIMIT;
    }
    RemoteIov riov[kMaxIovOnStack];
    uint32_t n = 0;
    for (size_t i = 0; i < iovcnt; ++i) {
        const size_t len = uct_iov_get_length(&iov[i]);
        if (len != 0) {
            riov[n++] = {reinterpret_cast<uint64_t>(iov[i].buffer), len};
        }
    }
    const Status st = ep->ch.send_cma(id, header, header_length, riov, n, comp);
    if (st != Status::kOk) {
        return with_peer_check(ep, flags, to_ucs_status(st));
    }
    ++ep->zcopy_posted;
    ep_mark_busy(ep);
    return with_peer_check(ep, flags, UCS_INPROGRESS);
}

ucs_status_t ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                            unsigned) noexcept
{
    Ep *ep = to_ep(tl_ep);
    if (ucs_queue_is_empty(&ep->pending) && ep->ch.ring().has_space()) {
        return UCS_ERR_BUSY;
    }
    uct_pending_req_queue_push(&ep->pending, req);
    ep_mark_busy(ep);
    return UCS_OK;
}

void ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                      void *arg) noexcept
{
    uct_mm_common::purge_pending(&to_ep(tl_ep)->pending, cb, arg);
}

ucs_status_t ep_flush(uct_ep_h tl_ep, unsigned, uct_completion_t *comp) noexcept
{
    Ep *ep = to_ep(tl_ep);
    if (ep->ch.state() != Status::kOk) {
        return to_ucs_status(ep->ch.state());
    }
    if (ep->ch.outstanding() == 0) {
        return UCS_OK; // inline sends are visible once published
    }
    if (comp != nullptr) {
        try {
            ep->flushes.emplace_back(ep->zcopy_posted, comp);
        } catch (...) {
            return UCS_ERR_NO_MEMORY;
        }
    }
    return UCS_INPROGRESS;
}

ucs_status_t ep_check(uct_ep_h tl_ep, unsigned flags,
                      uct_completion_t *comp) noexcept
{
    Ep *ep = to_ep(tl_ep);
    const ucs_status_t status = uct_mm_peer_ep_check(&ep->peer, flags, comp);
    if (status == UCS_OK && ep->ch.state() != Status::kOk) {
        uct_mm_peer_report(&ep->peer, to_ucs_status(ep->ch.state()));
    }
    return status;
}

} // namespace uct_mm_bcast

using namespace uct_mm_bcast;

extern "C" __attribute__((visibility("default"))) ucs_status_t
uct_mm_bcast_ep_status(uct_ep_h ep)
{
    if (ep == nullptr || !is_mm_bcast_iface(ep->iface)) {
        return UCS_ERR_INVALID_PARAM;
    }
    return to_ucs_status(to_ep(ep)->ch.state());
}
