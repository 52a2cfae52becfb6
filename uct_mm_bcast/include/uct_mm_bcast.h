/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file uct_mm_bcast.h
 * What uct.h lacks for the mm_bcast transport: its groups, through the
 * common group API (uct_group.h). A group is a set of processes on one
 * host, each with an open mm_bcast iface; it carries BCAST messages from
 * any member (the root of each message) to all others, each receiving into
 * the buffer it posts. With ordinary endpoints (uct_ep_create with an iface
 * address) mm_bcast is an ordinary point-to-point UCT transport.
 */
#ifndef UCT_MM_BCAST_H_
#define UCT_MM_BCAST_H_

#include <uct_group.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Transport name, as in uct_tl_resource_desc_t::tl_name. */
#define UCT_MM_BCAST_TL_NAME "mm_bcast"

/**
 * Limits of the groups of an iface: cap_flags BCAST | HOST_LOCAL,
 * max_group_size (UCX_MM_BCAST_MAX_GROUP_SIZE), max_outstanding
 * (UCX_MM_BCAST_MAX_OUTSTANDING), max_length, and seg_length (half the
 * group ring: UCX_MM_BCAST_GROUP_RING_SIZE x GROUP_SEG_SIZE / 2).
 * @param [in]  iface  An open mm_bcast iface.
 * @param [out] attr   Filled on success.
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM for another transport's iface.
 */
ucs_status_t uct_mm_bcast_group_iface_query(uct_iface_h iface,
                                            uct_group_attr_t *attr);

/**
 * Creates this member's part of a group (uct_group.h) without waiting for
 * the others: member 0 creates the group's segment, named from a secret in
 * its iface address and group_key; the others attach during progress.
 * A member that has not joined within UCX_MM_BCAST_ATTACH_TIMEOUT fails the
 * group with UCS_ERR_ENDPOINT_TIMEOUT; a segment of another user, or not
 * mode 0600, fails it with UCS_ERR_REJECTED. Destroy with
 * uct_group_destroy.
 * @param [in]  iface    An open mm_bcast iface (its worker progresses it).
 * @param [in]  params   Group parameters (all fields).
 * @param [out] group_p  The group, written only on success.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM (not an mm_bcast iface, a missing
 *         field, a bad index or address); UCS_ERR_EXCEEDS_LIMIT;
 *         UCS_ERR_NO_MEMORY; UCS_ERR_IO_ERROR (e.g. a live group with the
 *         same member 0 and key).
 */
ucs_status_t uct_mm_bcast_group_create(uct_iface_h iface,
                                       const uct_group_params_t *params,
                                       uct_group_h *group_p);

/**
 * Health of a point-to-point endpoint: UCS_OK, or the error that stopped
 * it for good (UCS_ERR_CONNECTION_RESET: the peer's process died).
 * @param [in] ep  An endpoint of an mm_bcast iface.
 */
ucs_status_t uct_mm_bcast_ep_status(uct_ep_h ep);

#ifdef __cplusplus
}
#endif

#endif /* UCT_MM_BCAST_H_ */
