// SPDX-License-Identifier: BSD-3-Clause
// The base iface's lifetime and the pending-queue purge (iface_glue.h).
#include "iface_glue.h"

#include <ucs/debug/log_def.h>

namespace uct_mm_common {

ucs_status_t base_iface_init(const char *tl, uct_base_iface_t *super,
                             uct_iface_ops_t *ops, uct_md_h md,
                             uct_worker_h worker,
                             const uct_iface_params_t *params,
                             const uct_iface_config_t *tl_config) noexcept
{
    if (!(params->field_mask & UCT_IFACE_PARAM_FIELD_OPEN_MODE) ||
        !(params->open_mode & UCT_IFACE_OPEN_MODE_DEVICE)) {
        ucs_error("%s supports only UCT_IFACE_OPEN_MODE_DEVICE", tl);
        return UCS_ERR_UNSUPPORTED;
    }
    int init_count = 1;
    const ucs_status_t status = uct_base_iface_t_init(
        super, &uct_base_iface_t_class, &init_count, ops,
        &uct_base_iface_internal_ops, md, worker, params, tl_config);
    if (status != UCS_OK) {
        ucs_class_call_cleanup_chain(&uct_base_iface_t_class, super,
                                     init_count);
    }
    return status;
}

void base_iface_cleanup(uct_base_iface_t *super) noexcept
{
    ucs_class_call_cleanup_chain(&uct_base_iface_t_class, super, -1);
}

void purge_pending(ucs_queue_head_t *pending, uct_pending_purge_callback_t cb,
                   void *arg) noexcept
{
    while (!ucs_queue_is_empty(pending)) {
        auto *priv = ucs_queue_pull_elem_non_empty(
            pending, uct_pending_req_priv_queue_t, queue_elem);
        auto *req = ucs_container_of(priv, uct_pending_req_t, priv);
        if (cb != nullptr) {
            cb(req, arg);
        }
    }
}

} // namespace uct_mm_common
