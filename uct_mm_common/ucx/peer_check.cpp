// SPDX-License-Identifier: BSD-3-Clause
// Peer failure of p2p endpoints: liveness by pid + start time, reported
// through the iface error handler from a one-shot worker progress callback.
#include "peer_check.h"

#include "uct_mm_common/backoff.h"
#include "uct_mm_common/liveness.h"

// UCX's private headers carry no extern "C" guards of their own.
extern "C" {
#include <ucs/datastruct/callbackq.h>
#include <ucs/debug/log_def.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_worker.h>
}

namespace {

ucs_callbackq_t *progress_q(uct_ep_h ep)
{
    auto *iface = ucs_derived_of(ep->iface, uct_base_iface_t);
    return &iface->worker->super.progress_q;
}

// One-shot: the handler may destroy the endpoint (and `peer` with it).
unsigned deliver_report(void *arg)
{
    auto *peer = static_cast<uct_mm_peer_t *>(arg);
    uct_ep_h ep = peer->ep;
    uct_iface_handle_ep_err(ep->iface, ep, peer->status);
    return 1;
}

int is_report_of(const ucs_callbackq_elem_t *elem, void *arg)
{
    return elem->cb == deliver_report && elem->arg == arg;
}

} // namespace

extern "C" ucs_status_t uct_mm_peer_init(uct_mm_peer_t *peer, uct_ep_h ep,
                                         int pid)
{
    peer->ep = ep;
    peer->pid = pid;
    peer->reported = 0;
    peer->status = UCS_OK;
    peer->next_check_ns = 0;
    peer->start_time = uct_mm_common::process_start_time(pid);
    if (pid <= 0 || peer->start_time == 0) {
        ucs_error("mm: peer process %d is not running", pid);
        return UCS_ERR_UNREACHABLE;
    }
    return UCS_OK;
}

extern "C" ucs_status_t uct_mm_peer_check(uct_mm_peer_t *peer)
{
    if (peer->reported) {
        return peer->status;
    }
    const uct_mm_common::ProcessId id{peer->pid, 0, peer->start_time};
    if (uct_mm_common::process_alive(id)) {
        return UCS_OK;
    }
    ucs_diag("mm: peer process %d of ep %p is gone", peer->pid,
             static_cast<void *>(peer->ep));
    uct_mm_peer_report(peer, UCS_ERR_CONNECTION_RESET);
    return UCS_ERR_CONNECTION_RESET;
}

extern "C" ucs_status_t uct_mm_peer_check_stalled(uct_mm_peer_t *peer,
                                                  uint64_t interval_ns)
{
    const uint64_t now = uct_mm_common::now_ns();
    if (peer->reported || now < peer->next_check_ns) {
        return peer->status;
    }
    peer->next_check_ns = now + interval_ns;
    return uct_mm_peer_check(peer);
}

extern "C" void uct_mm_peer_report(uct_mm_peer_t *peer, ucs_status_t status)
{
    if (peer->reported) {
        return;
    }
    peer->reported = 1;
    peer->status = status;
    auto *iface = ucs_derived_of(peer->ep->iface, uct_base_iface_t);
    if (iface->err_handler == nullptr) {
        ucs_diag("mm: ep %p failed (%s), no error handler",
                 static_cast<void *>(peer->ep), ucs_status_string(status));
        return;
    }
    ucs_callbackq_add_safe(progress_q(peer->ep), deliver_report, peer,
                           UCS_CALLBACKQ_FLAG_ONESHOT);
}

extern "C" ucs_status_t uct_mm_peer_ep_check(uct_mm_peer_t *peer,
                                             unsigned flags,
                                             uct_completion_t *comp)
{
    if (flags != 0 || comp != nullptr) {
        ucs_error("mm: ep_check takes no flags (%x) and no completion (%p)",
                  flags, static_cast<void *>(comp));
        return UCS_ERR_INVALID_PARAM;
    }
    uct_mm_peer_check(peer);
    return UCS_OK;
}

extern "C" void uct_mm_peer_cleanup(uct_mm_peer_t *peer)
{
    if (peer->reported && peer->ep != nullptr) {
        ucs_callbackq_remove_if(progress_q(peer->ep), is_report_of, peer);
    }
}
