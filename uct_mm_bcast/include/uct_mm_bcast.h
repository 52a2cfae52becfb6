/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file uct_mm_bcast.h
 * What uct.h lacks for the mm_bcast transport: group endpoints. A group is
 * a set of processes on one host, each with an open mm_bcast iface; any
 * member may send on its group endpoint, and every other member receives
 * the message through its iface's active-message handler (uct_iface_set_
 * am_handler), in the same order for a given sender. With two members and
 * ordinary endpoints (uct_ep_create with an iface address) mm_bcast is an
 * ordinary point-to-point UCT transport.
 */
#ifndef UCT_MM_BCAST_H_
#define UCT_MM_BCAST_H_

#include <uct/api/uct.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Transport name, as in uct_tl_resource_desc_t::tl_name. */
#define UCT_MM_BCAST_TL_NAME "mm_bcast"

/** Fields of uct_mm_bcast_group_params_t; all are required. */
enum uct_mm_bcast_group_params_field {
    UCT_MM_BCAST_GROUP_PARAM_FIELD_KEY = UCS_BIT(0),          /**< group_key */
    UCT_MM_BCAST_GROUP_PARAM_FIELD_MEMBER_INDEX = UCS_BIT(1), /**< index */
    UCT_MM_BCAST_GROUP_PARAM_FIELD_GROUP_SIZE = UCS_BIT(2),   /**< size */
    UCT_MM_BCAST_GROUP_PARAM_FIELD_MEMBER_ADDRS = UCS_BIT(3)  /**< addrs */
};

/** Parameters of a group endpoint (the same on every member, except
 *  member_index). */
typedef struct uct_mm_bcast_group_params {
    /** Mask of enum uct_mm_bcast_group_params_field. */
    uint64_t field_mask;
    /** Tells apart groups with the same members (e.g. a communicator id);
     *  unique among the live groups whose member 0 is the same iface. */
    uint64_t group_key;
    /** This process's index in the group, < group_size. */
    unsigned member_index;
    /** Number of members, <= uct_mm_bcast_max_group_size(). */
    unsigned group_size;
    /** Iface address (uct_iface_get_address) of every member, in member
     *  index order; entry member_index is this process's own. */
    const uct_iface_addr_t *const *member_addrs;
} uct_mm_bcast_group_params_t;

/**
 * Creates this member's endpoint of a group. Member 0 creates the group's
 * shared segment; the others attach to it (waiting at most
 * UCX_MM_BCAST_ATTACH_TIMEOUT). A message sent on the endpoint (am_short,
 * am_bcopy, am_zcopy) is delivered to every other member; am_zcopy
 * completes when all of them have copied the data. Destroy it with
 * uct_ep_destroy.
 *
 * @param [in]  iface   An open mm_bcast iface.
 * @param [in]  params  Group parameters.
 * @param [out] ep_p    The group endpoint, written only on success.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM (not an mm_bcast iface, a missing
 *         field, a bad index or address); UCS_ERR_EXCEEDS_LIMIT (group
 *         larger than the limit); UCS_ERR_ENDPOINT_TIMEOUT (member 0's
 *         segment did not appear); UCS_ERR_NO_MEMORY, UCS_ERR_IO_ERROR.
 */
ucs_status_t
uct_mm_bcast_group_ep_create(uct_iface_h iface,
                             const uct_mm_bcast_group_params_t *params,
                             uct_ep_h *ep_p);

/**
 * Largest group an iface accepts (UCX_MM_BCAST_MAX_GROUP_SIZE).
 * @param [in] iface  An open mm_bcast iface.
 * @return The limit, or 0 when iface is not an mm_bcast iface.
 */
unsigned uct_mm_bcast_max_group_size(uct_iface_h iface);

/**
 * Health of an endpoint: UCS_OK, or the error that stopped it for good
 * (UCS_ERR_CONNECTION_RESET: a member's process died;
 * UCS_ERR_ENDPOINT_TIMEOUT: a member never attached). Sends on a failed
 * endpoint return the same error; it is found by iface progress within
 * about UCX_MM_BCAST_TIMEOUT of the failure.
 * @param [in] ep  An endpoint of an mm_bcast iface.
 */
ucs_status_t uct_mm_bcast_ep_status(uct_ep_h ep);

#ifdef __cplusplus
}
#endif

#endif /* UCT_MM_BCAST_H_ */
