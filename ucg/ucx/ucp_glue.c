/* SPDX-License-Identifier: BSD-3-Clause */
/* UCP internals for UCG's runtime (ucp_glue.h). */
#include "ucp_glue.h"

#include <string.h>
#include <ucp/core/ucp_context.h>
#include <ucp/core/ucp_worker.h>
#include <ucp/core/ucp_worker.inl>
#include <ucp/wireup/address.h>
#include <ucs/debug/memtrack_int.h>

int ucg_ucp_find_iface(ucp_worker_h worker, const char *tl_name, unsigned nth,
                       uct_iface_h *iface_p, uint16_t *csum_p,
                       size_t *addr_len_p, const char **dev_name_p)
{
    ucp_context_h context = worker->context;
    unsigned i;

    for (i = 0; i < worker->num_ifaces; ++i) {
        ucp_worker_iface_t *wiface = worker->ifaces[i];
        const ucp_tl_resource_desc_t *rsc;

        if (wiface == NULL || wiface->iface == NULL) {
            continue;
        }
        rsc = &context->tl_rscs[wiface->rsc_index];
        if (strcmp(rsc->tl_rsc.tl_name, tl_name) != 0) {
            continue;
        }
        if (nth-- != 0) {
            continue;
        }
        *iface_p = wiface->iface;
        *csum_p = rsc->tl_name_csum;
        *addr_len_p = wiface->attr.iface_addr_len;
        if (dev_name_p != NULL) {
            *dev_name_p = rsc->tl_rsc.dev_name;
        }
        return 1;
    }
    return 0;
}

ucs_status_t ucg_ucp_peer_iface_addr(ucp_worker_h worker,
                                     const void *worker_addr, uint16_t csum,
                                     unsigned nth, void *out, size_t len)
{
    ucp_unpacked_address_t unpacked;
    const ucp_address_entry_t *ae;
    ucs_status_t status;

    status = ucp_address_unpack(worker, worker_addr,
                                ucp_worker_default_address_pack_flags(worker),
                                &unpacked);
    if (status != UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }
    status = UCS_ERR_NO_ELEM;
    ucp_unpacked_address_for_each(ae, &unpacked)
    {
        if ((ae->tl_name_csum == csum) && (ae->iface_addr != NULL) &&
            (nth-- == 0)) {
            memcpy(out, ae->iface_addr, len);
            status = UCS_OK;
            break;
        }
    }
    ucs_free(unpacked.address_list);
    return status;
}
