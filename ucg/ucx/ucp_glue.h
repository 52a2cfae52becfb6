/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The only place UCG's runtime touches UCP's internals (private headers of
 * the matching UCX source tree, DESIGN.md section 2): finding the ifaces a
 * worker opened, and a peer's iface address inside its worker address,
 * with UCP's own address code. Porting to another UCX touches this file.
 */
#ifndef UCG_UCP_GLUE_H_
#define UCG_UCP_GLUE_H_

#include <stddef.h>
#include <stdint.h>
#include <ucp/api/ucp.h>
#include <uct/api/uct.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The `nth` iface (0: the first) `worker` opened for transport `tl_name`,
 * in the worker's order (its resources': the same on hosts configured
 * alike), if any.
 * @return 1 and *iface_p, *csum_p (UCP's checksum of the name, as found in
 *         packed addresses), *addr_len_p (its iface address length) and,
 *         when dev_name_p is not NULL, *dev_name_p (its device's name, valid
 *         while the worker lives); 0 when the worker has no such iface.
 */
int ucg_ucp_find_iface(ucp_worker_h worker, const char *tl_name, unsigned nth,
                       uct_iface_h *iface_p, uint16_t *csum_p,
                       size_t *addr_len_p, const char **dev_name_p);

/**
 * Copies the `nth` iface address of transport `csum` (0: the first) out of
 * a peer's packed worker address (ucp_worker_get_address) into `out`
 * (`len` bytes).
 * @return UCS_OK; UCS_ERR_NO_ELEM (the peer has no such iface);
 *         UCS_ERR_INVALID_PARAM (unpack failed).
 */
ucs_status_t ucg_ucp_peer_iface_addr(ucp_worker_h worker,
                                     const void *worker_addr, uint16_t csum,
                                     unsigned nth, void *out, size_t len);

#ifdef __cplusplus
}
#endif

#endif
