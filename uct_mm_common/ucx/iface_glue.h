// SPDX-License-Identifier: BSD-3-Clause
// What the C++ transports' ifaces (mm_bcast, ud_mcast) do alike with UCX's
// base classes: open a device iface's base and undo it, and purge an
// endpoint's pending queue.
#pragma once

// UCX's private headers carry no extern "C" guards of their own.
extern "C" {
#include <ucs/datastruct/queue.h>
#include <uct/base/uct_iface.h>
}

namespace uct_mm_common {

/// Checks that `params` open a device iface (else one line, "<tl> supports
/// only UCT_IFACE_OPEN_MODE_DEVICE", and UCS_ERR_UNSUPPORTED), then
/// initialises the base iface `super` with `ops`. On failure nothing is
/// left to undo.
ucs_status_t base_iface_init(const char *tl, uct_base_iface_t *super,
                             uct_iface_ops_t *ops, uct_md_h md,
                             uct_worker_h worker,
                             const uct_iface_params_t *params,
                             const uct_iface_config_t *tl_config) noexcept;

/// Undoes base_iface_init.
void base_iface_cleanup(uct_base_iface_t *super) noexcept;

/// Hands every request of `pending` (queued with uct_pending_req_queue_push)
/// to `cb`, if not null, emptying the queue.
void purge_pending(ucs_queue_head_t *pending, uct_pending_purge_callback_t cb,
                   void *arg) noexcept;

} // namespace uct_mm_common
