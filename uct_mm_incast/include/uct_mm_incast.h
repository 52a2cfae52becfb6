/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file uct_mm_incast.h
 * What uct.h lacks for the mm_incast transport: its groups, through the
 * common group API (uct_group.h). A group is a set of processes on one
 * host, each with an open mm_incast iface; it carries GATHER and REDUCE
 * messages from every member to any one (the root of each message). One
 * group serves every root, operator, datatype and length.
 */
#ifndef UCT_MM_INCAST_H_
#define UCT_MM_INCAST_H_

#include <uct_group.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Transport name, as listed by `ucx_info -d`. */
#define UCT_MM_INCAST_TL_NAME "mm_incast"

/** How the senders' chunks of one message meet in shared memory. */
typedef enum uct_mm_incast_mode {
    UCT_MM_INCAST_MODE_AUTO = 0,    /**< Chosen per message (group.h). */
    UCT_MM_INCAST_MODE_BATCHED,     /**< Slot per sender + a count of
                                         senders in; the root combines. */
    UCT_MM_INCAST_MODE_CENTRALIZED, /**< Slot per sender; the root polls
                                         each slot's sequence word. */
    UCT_MM_INCAST_MODE_LOCKED,      /**< Senders reduce into one buffer
                                         under a process-shared lock. */
    UCT_MM_INCAST_MODE_ATOMIC,      /**< Senders reduce into one buffer with
                                         atomic operations. */
    UCT_MM_INCAST_MODE_LAST
} uct_mm_incast_mode_t;

/**
 * Limits of the groups of an iface: cap_flags GATHER | REDUCE |
 * HOST_LOCAL, max_group_size (UCX_MM_INCAST_MAX_GROUP_SIZE),
 * max_outstanding (UCX_MM_INCAST_MAX_OUTSTANDING), max_length, seg_length.
 * @param [in]  iface  An open mm_incast iface.
 * @param [out] attr   Filled on success.
 * @return UCS_OK, or UCS_ERR_INVALID_PARAM for another transport's iface.
 */
ucs_status_t uct_mm_incast_group_iface_query(uct_iface_h iface,
                                             uct_group_attr_t *attr);

/**
 * Creates this member's part of a group (uct_group.h) without waiting for
 * the others: member 0 creates the group's segment, named from a secret in
 * its iface address and group_key, with its UCX_MM_INCAST_MODE,
 * GROUP_RING_SIZE and GROUP_SEG_SIZE (every member uses member 0's); the
 * others attach during progress. A member that has not joined within
 * UCX_MM_INCAST_ATTACH_TIMEOUT fails the group with
 * UCS_ERR_ENDPOINT_TIMEOUT; a segment of another user, or not mode 0600,
 * fails it with UCS_ERR_REJECTED. Destroy with uct_group_destroy.
 * @param [in]  iface    An open mm_incast iface (its worker progresses it).
 * @param [in]  params   Group parameters (all fields).
 * @param [out] group_p  The group, written only on success.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM; UCS_ERR_EXCEEDS_LIMIT;
 *         UCS_ERR_NO_MEMORY; UCS_ERR_IO_ERROR.
 */
ucs_status_t uct_mm_incast_group_create(uct_iface_h iface,
                                        const uct_group_params_t *params,
                                        uct_group_h *group_p);

/**
 * The mode a message runs in (never AUTO): from its kind, operator,
 * datatype, length and the group's size and configured mode, as every
 * member computes it. UCT_MM_INCAST_MODE_LAST before the group has
 * connected (member 0's configuration is not known yet) or for a group of
 * another transport.
 */
uct_mm_incast_mode_t uct_mm_incast_group_msg_mode(uct_group_h group,
                                                  const uct_group_msg_t *msg);

/** "auto", "batched", "centralized", "locked", "atomic"; "invalid". */
const char *uct_mm_incast_mode_name(uct_mm_incast_mode_t mode);

/**
 * Direct messages: small collectives of the whole group (barrier, bcast,
 * reduce, allreduce, allgather, alltoall, gather, scatter) that the caller
 * runs on flags in the group's segment, without the iface's progress.
 * Every member posts its part of each direct message in one order (a
 * sequence of its own, apart from uct_group_send/recv's); a member's slot
 * holds at most max_length bytes (UCX_MM_INCAST_DIRECT_SIZE of member 0,
 * in groups of up to DIRECT_MAX_GROUP members). Reductions combine in
 * member order, so every member gets the same result.
 */
typedef struct uct_mm_incast_direct *uct_mm_incast_direct_h;

/** Kinds of direct message. */
typedef enum uct_mm_incast_direct_coll {
    UCT_MM_INCAST_DIRECT_BARRIER = 0, /**< length 0: done once all posted */
    UCT_MM_INCAST_DIRECT_BCAST,       /**< root's src into others' dst */
    UCT_MM_INCAST_DIRECT_REDUCE,      /**< all srcs reduced into root's dst */
    UCT_MM_INCAST_DIRECT_ALLREDUCE,   /**< all srcs reduced into every dst */
    UCT_MM_INCAST_DIRECT_ALLGATHER,   /**< member m's src at dst + m*length */
    UCT_MM_INCAST_DIRECT_ALLTOALL,    /**< block j of member m's src (length
                                           bytes each, group_size of them) at
                                           dst + m*length of member j; the
                                           blocks must fit max_length */
    UCT_MM_INCAST_DIRECT_GATHER,      /**< member m's src at root's dst +
                                           m*length */
    UCT_MM_INCAST_DIRECT_SCATTER      /**< block m of root's src (length
                                           bytes each, group_size of them)
                                           into member m's dst; the blocks
                                           must fit max_length */
} uct_mm_incast_direct_coll_t;

/** One member's part of one direct message. */
typedef struct uct_mm_incast_direct_msg {
    uct_mm_incast_direct_coll_t coll;
    unsigned root;     /**< BCAST, REDUCE, GATHER, SCATTER: member index */
    ucg_op_t op;       /**< reductions (no UCG_OP_USER) */
    ucg_dtype_t dtype; /**< reductions */
    size_t length;     /**< bytes per member, the same on every member */
    const void *src;   /**< read during the post only */
    void *dst;         /**< written before completion; may equal src */
} uct_mm_incast_direct_msg_t;

/**
 * The direct messages of a connected group.
 * @param [in]  group         An mm_incast group this member has joined.
 * @param [out] direct_p      Its direct messages, valid until the group is
 *                            destroyed.
 * @param [out] max_length_p  Largest length of a direct message.
 * @return UCS_OK; UCS_ERR_UNSUPPORTED where member 0 configured none for
 *         this group; UCS_ERR_NO_RESOURCE before this member joined;
 *         UCS_ERR_INVALID_PARAM for a group of another transport.
 */
ucs_status_t uct_mm_incast_group_direct(uct_group_h group,
                                        uct_mm_incast_direct_h *direct_p,
                                        size_t *max_length_p);

/**
 * Posts this member's part of the next direct message.
 * @return UCS_OK when complete already; UCS_INPROGRESS (*id_p set: test
 *         it); UCS_ERR_NO_RESOURCE with 64 posts not complete (nothing
 *         posted); UCS_ERR_INVALID_PARAM (one log line) for a message the
 *         group cannot run; the group's failure (as uct_group.h).
 */
ucs_status_t uct_mm_incast_direct_post(uct_mm_incast_direct_h direct,
                                       const uct_mm_incast_direct_msg_t *msg,
                                       uint64_t *id_p);

/**
 * Moves every posted direct message as far as it goes (never blocks).
 * @return UCS_OK once message `id` is complete, UCS_INPROGRESS, or the
 *         group's failure (a dead member: UCS_ERR_CONNECTION_RESET within
 *         UCX_MM_INCAST_TIMEOUT; members that disagree on a message:
 *         UCS_ERR_IO_ERROR).
 */
ucs_status_t uct_mm_incast_direct_test(uct_mm_incast_direct_h direct,
                                       uint64_t id);

/** The poster of message `id` is gone: it completes in order without
 *  writing its dst. */
void uct_mm_incast_direct_abandon(uct_mm_incast_direct_h direct, uint64_t id);

#ifdef __cplusplus
}
#endif

#endif /* UCT_MM_INCAST_H_ */
