/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file uct_ud_mcast.h
 * What uct.h lacks for the ud_mcast transport: its groups (the one-to-many
 * shape of uct_group.h, BCAST messages between hosts over multicast) and
 * its counters. With ordinary endpoints (uct_ep_create with an iface
 * address) ud_mcast is a reliable point-to-point transport.
 */
#ifndef UCT_UD_MCAST_H_
#define UCT_UD_MCAST_H_

#include <uct_group.h>

#include <stdint.h>
#include <uct/api/uct.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Transport name, as in uct_tl_resource_desc_t::tl_name. */
#define UCT_UD_MCAST_TL_NAME "ud_mcast"

/**
 * Limits of an iface's groups: cap_flags BCAST (members may be on any
 * host), max_group_size (UCX_UD_MCAST_MAX_GROUP_SIZE), max_outstanding
 * (UCX_UD_MCAST_MAX_OUTSTANDING), max_length, seg_length.
 * @param [in]  iface  An open ud_mcast iface.
 * @param [out] attr   The limits.
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM for another transport's iface.
 */
ucs_status_t uct_ud_mcast_group_iface_query(uct_iface_h iface,
                                            uct_group_attr_t *attr);

/**
 * Creates this member's part of a group (uct_group.h): joins the group's
 * multicast address (derived from group_key and member 0's iface) and
 * starts the join barrier; never blocks. Messages posted before every
 * member joined are sent once they have.
 * @param [in]  iface    An open ud_mcast iface.
 * @param [in]  params   Group parameters (all fields required).
 * @param [out] group_p  The group, written only on success.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM (another transport's iface, a
 *         missing field, a bad index or address); UCS_ERR_EXCEEDS_LIMIT;
 *         UCS_ERR_NO_MEMORY; UCS_ERR_IO_ERROR (joining failed).
 */
ucs_status_t uct_ud_mcast_group_create(uct_iface_h iface,
                                       const uct_group_params_t *params,
                                       uct_group_h *group_p);

/**
 * Whether this member's own messages on a group reached every member: a
 * send completes once copied into the send window, and its packets may
 * still be resent to a member that lost some. A member should keep
 * progressing (and not destroy the group) until this says UCS_OK when
 * the others may still be receiving.
 * @param [in]  group  A ud_mcast group.
 * @return UCS_OK (every member consumed them), UCS_INPROGRESS (some are
 *         not yet acknowledged, or queued), the group's error when it
 *         failed, or UCS_ERR_INVALID_PARAM for another transport's group.
 */
ucs_status_t uct_ud_mcast_group_flush(uct_group_h group);

/** Counters of an iface: every session (groups and endpoints) on it. */
typedef struct uct_ud_mcast_counters {
    uint64_t tx_packets;        /**< packets sent */
    uint64_t tx_bytes;          /**< their bytes, headers included */
    uint64_t rx_packets;        /**< packets received */
    uint64_t rx_bytes;          /**< their bytes */
    uint64_t tx_data;           /**< data packets sent the first time */
    uint64_t tx_data_bytes;     /**< their bytes */
    uint64_t tx_resent;         /**< data packets sent again */
    uint64_t tx_resent_bytes;   /**< their bytes */
    uint64_t tx_acks;           /**< ACKs sent */
    uint64_t tx_nacks;          /**< NACKs sent */
    uint64_t tx_ctrl;           /**< join, probe, status and abort packets */
    uint64_t tx_overhead_bytes; /**< bytes of ACK, NACK, control, resends */
    uint64_t nacks_suppressed;  /**< NACKed packets not resent (holdoff) */
    uint64_t rx_delivered;      /**< data packets delivered in order */
    uint64_t rx_duplicate;      /**< duplicates dropped */
    uint64_t rx_out_of_order;   /**< stored until a gap was filled */
    uint64_t drop_malformed;    /**< bad magic, length, type or body */
    uint64_t drop_bad_check;    /**< CRC mismatch (corrupt or foreign key) */
    uint64_t drop_bad_mac;      /**< not sealed with the session's key */
    uint64_t drop_foreign;      /**< no group or endpoint with the key */
    uint64_t drop_peer_limit;   /**< a new peer's JOIN past MAX_PEERS */
    uint64_t drop_stale;        /**< old epoch, or outside the window */
    uint64_t drop_early;        /**< before the join barrier */
    uint64_t drop_injected;     /**< by UCX_UD_MCAST_RX_LOSS (tests) */
    uint64_t tx_failed;         /**< refused by the socket or queue */
} uct_ud_mcast_counters_t;

/**
 * Reads an iface's counters.
 * @param [in]  iface     An open ud_mcast iface.
 * @param [out] counters  The counters.
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM for another transport's iface.
 */
ucs_status_t uct_ud_mcast_iface_counters(uct_iface_h iface,
                                         uct_ud_mcast_counters_t *counters);

#ifdef __cplusplus
}
#endif

#endif /* UCT_UD_MCAST_H_ */
