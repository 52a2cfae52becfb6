/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file uct_group.h
 * One shape for every one-to-many UCT transport (mm_bcast, mm_incast,
 * ud_mcast): what uct.h lacks to run collectives on them.
 *
 * A group is a fixed set of members, each with an open iface of the same
 * transport. It is created once (per communicator, say) on every member
 * and serves every collective on it: what varies per message (root,
 * operator, datatype, length, destination) travels with the message.
 *
 * Messages. Every message of a group involves every member:
 *   - BCAST:  the root sends `length` bytes; every other member receives
 *             them into the buffer it names.
 *   - GATHER: every member but the root sends `length` bytes; the root
 *             receives each member's bytes where it names.
 *   - REDUCE: every member but the root sends `length` bytes of `dtype`;
 *             the root receives their reduction under `op`, optionally
 *             accumulated into what its buffer holds.
 * Order. The group's messages form one sequence, and every member posts
 * its part of each (uct_group_send or uct_group_recv) in that sequence
 * order: the k-th post on every member is part of the same message k. A
 * transport may check that the members agree (root, kind, length, tag)
 * and fail the group with UCS_ERR_IO_ERROR when they do not.
 * Completion. A post returns UCS_OK when it is complete already, or
 * UCS_INPROGRESS: its uct_completion_t is then invoked once (count
 * decremented; func called at zero, with the status) from
 * uct_worker_progress of the iface's worker. A send's buffer may be read
 * until completion (zero copy); a receive's buffer may be written before
 * completion (pipelined) and holds the result at completion.
 * Flow control. A post is accepted as long as the member has fewer than
 * uct_group_attr_t::max_outstanding messages posted and not complete;
 * beyond that it returns UCS_ERR_NO_RESOURCE and nothing is posted (post
 * it again after progress, before any later message).
 * Connection. Creation does not wait for the other members; the group
 * connects during progress, and messages posted before complete after.
 * Failure. A member whose process dies, or that does not join within the
 * transport's attach timeout, fails the group for good: every outstanding
 * and later post completes or returns UCS_ERR_CONNECTION_RESET (dead
 * member) or UCS_ERR_ENDPOINT_TIMEOUT (never joined), within the
 * transport's timeout setting (UCX_<TL>_TIMEOUT); nothing hangs. A member
 * that refuses what it would attach to (a shared segment of another user)
 * fails with UCS_ERR_REJECTED; corrupted shared state, with
 * UCS_ERR_IO_ERROR.
 * Cost. Progress of a group with nothing posted costs nothing; idle
 * progress of an iface is O(1) whatever the number of groups.
 */
#ifndef UCT_GROUP_H_
#define UCT_GROUP_H_

#include <ucg/reduce.h>
#include <uct/api/uct.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque group; its first member is the operations table. */
typedef struct uct_group *uct_group_h;

/** Fields of uct_group_params_t; all are required. */
enum uct_group_params_field {
    UCT_GROUP_PARAM_FIELD_KEY = UCS_BIT(0),          /**< group_key */
    UCT_GROUP_PARAM_FIELD_MEMBER_INDEX = UCS_BIT(1), /**< member_index */
    UCT_GROUP_PARAM_FIELD_GROUP_SIZE = UCS_BIT(2),   /**< group_size */
    UCT_GROUP_PARAM_FIELD_MEMBER_ADDRS = UCS_BIT(3), /**< member_addrs */
    UCT_GROUP_PARAM_FIELD_FLAGS = UCS_BIT(4)         /**< flags */
};

/** uct_group_params_t::flags, the same on every member. */
enum uct_group_flags {
    /** Move no message by reading another member's memory (CMA): the
     *  caller knows a member cannot, or that it would not pay (a host with
     *  fewer cores than members). */
    UCT_GROUP_FLAG_NO_CMA = UCS_BIT(0)
};

/** The same on every member except member_index. */
typedef struct uct_group_params {
    /** Mask of enum uct_group_params_field. */
    uint64_t field_mask;
    /** Tells apart live groups with the same members (e.g. a random part
     *  drawn by member 0 plus a communicator id). */
    uint64_t group_key;
    /** This member's index, < group_size. */
    unsigned member_index;
    /** Number of members, <= uct_group_attr_t::max_group_size. */
    unsigned group_size;
    /** Iface address (uct_iface_get_address) of every member in member
     *  index order; entry member_index is this member's own. */
    const uct_iface_addr_t *const *member_addrs;
    /** enum uct_group_flags (with UCT_GROUP_PARAM_FIELD_FLAGS). */
    uint64_t flags;
} uct_group_params_t;

/** What a transport's groups can do (uct_<tl>_group_iface_query). */
enum uct_group_cap_flags {
    UCT_GROUP_CAP_BCAST = UCS_BIT(0),     /**< BCAST messages */
    UCT_GROUP_CAP_GATHER = UCS_BIT(1),    /**< GATHER messages */
    UCT_GROUP_CAP_REDUCE = UCS_BIT(2),    /**< REDUCE messages */
    UCT_GROUP_CAP_HOST_LOCAL = UCS_BIT(3) /**< members must share a host */
};

/** Limits of an iface's groups. */
typedef struct uct_group_attr {
    uint64_t cap_flags;       /**< enum uct_group_cap_flags */
    unsigned max_group_size;  /**< members, root included */
    unsigned max_outstanding; /**< posts not complete, per member */
    size_t max_length;        /**< largest message (bytes per member) */
    size_t seg_length;        /**< preferred message size: a plan that
                                   splits a large message into messages of
                                   this size pipelines best */
} uct_group_attr_t;

/** Kinds of message. */
typedef enum uct_group_coll {
    UCT_GROUP_COLL_BCAST = 0,
    UCT_GROUP_COLL_GATHER,
    UCT_GROUP_COLL_REDUCE
} uct_group_coll_t;

/** Flags of uct_group_msg_t. */
enum uct_group_msg_flags {
    /** REDUCE receive: buffer = buffer op (contributions), instead of
     *  buffer = (contributions). */
    UCT_GROUP_MSG_FLAG_ACCUMULATE = UCS_BIT(0),
    /** BCAST: through the transport's own buffers, not by reading the
     *  root's memory (every member sets it alike for a message). */
    UCT_GROUP_MSG_FLAG_NO_CMA = UCS_BIT(1)
};

/** One member's part of one message. */
typedef struct uct_group_msg {
    uct_group_coll_t coll;       /**< kind of message */
    unsigned root;               /**< BCAST: the sender; GATHER and REDUCE: the
                                      receiver (member index) */
    ucg_op_t op;                 /**< REDUCE: the operator (no UCG_OP_USER) */
    ucg_dtype_t dtype;           /**< REDUCE: the element type */
    size_t length;               /**< bytes sent by one sender (REDUCE: a
                                      multiple of the dtype size); the same on
                                      every member; 0 is allowed */
    void *buffer;                /**< send: the source. Receive: BCAST and
                                      REDUCE the destination of `length`
                                      bytes; GATHER the destination of
                                      (group_size - 1) * length bytes, senders
                                      in member order, unless member_buffers */
    void *const *member_buffers; /**< GATHER receive, optional: where each
                                      member's bytes go (group_size
                                      entries; the root's is unused) */
    unsigned flags;              /**< enum uct_group_msg_flags */
    uint32_t tag;        /**< the poster's own label of the message, checked to
                              be the same on every member where the transport
                              can (a debugging aid; 0 is fine) */
    const void *operand; /**< REDUCE receive, optional (NULL: none): the
                              root's own contribution, `length` bytes:
                              buffer = operand op (contributions), read as
                              the contributions arrive, so the root needs
                              no copy of it in buffer first; not with
                              UCT_GROUP_MSG_FLAG_ACCUMULATE */
} uct_group_msg_t;

/** Operations of a group; called through the inline functions below. */
typedef struct uct_group_ops {
    ucs_status_t (*send)(uct_group_h group, const uct_group_msg_t *msg,
                         uct_completion_t *comp);
    ucs_status_t (*recv)(uct_group_h group, const uct_group_msg_t *msg,
                         uct_completion_t *comp);
    ucs_status_t (*status)(uct_group_h group);
    void (*destroy)(uct_group_h group);
} uct_group_ops_t;

/** The head of every transport's group object. */
struct uct_group {
    const uct_group_ops_t *ops;
};

/**
 * Posts this member's sending part of the next message (BCAST at its root;
 * GATHER and REDUCE at every other member).
 * @return UCS_OK (complete), UCS_INPROGRESS (comp will be invoked),
 *         UCS_ERR_NO_RESOURCE (too many outstanding; nothing posted),
 *         UCS_ERR_INVALID_PARAM (bad message: wrong side, root out of
 *         range, length over max_length, unsupported op/dtype, ...),
 *         UCS_ERR_CONNECTION_RESET, UCS_ERR_ENDPOINT_TIMEOUT,
 *         UCS_ERR_IO_ERROR (the group failed).
 */
static inline ucs_status_t uct_group_send(uct_group_h group,
                                          const uct_group_msg_t *msg,
                                          uct_completion_t *comp)
{
    return group->ops->send(group, msg, comp);
}

/** Posts this member's receiving part of the next message (BCAST at every
 *  member but the root; GATHER and REDUCE at the root). Returns as
 *  uct_group_send. */
static inline ucs_status_t uct_group_recv(uct_group_h group,
                                          const uct_group_msg_t *msg,
                                          uct_completion_t *comp)
{
    return group->ops->recv(group, msg, comp);
}

/** UCS_OK while the group is healthy (connected or connecting), else the
 *  error that failed it for good. */
static inline ucs_status_t uct_group_status(uct_group_h group)
{
    return group->ops->status(group);
}

/** Leaves the group; outstanding posts are dropped without completion.
 *  The last member to leave releases the group's resources. */
static inline void uct_group_destroy(uct_group_h group)
{
    group->ops->destroy(group);
}

/*
 * Each transport exports, with its name in place of <tl>:
 *   ucs_status_t uct_<tl>_group_iface_query(uct_iface_h iface,
 *                                           uct_group_attr_t *attr);
 *   ucs_status_t uct_<tl>_group_create(uct_iface_h iface,
 *                                      const uct_group_params_t *params,
 *                                      uct_group_h *group_p);
 * Both return UCS_ERR_INVALID_PARAM for an iface of another transport;
 * create returns UCS_ERR_INVALID_PARAM (missing field, bad index or
 * address), UCS_ERR_EXCEEDS_LIMIT (group over max_group_size),
 * UCS_ERR_NO_MEMORY or UCS_ERR_IO_ERROR, and writes *group_p only on
 * success.
 */

#ifdef __cplusplus
}
#endif

#endif /* UCT_GROUP_H_ */
