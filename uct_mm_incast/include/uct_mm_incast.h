/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file uct_mm_incast.h
 * Public API of the mm_incast transport: shared-memory fan-in (gather and
 * reduce) from N-1 senders to one receiver (the root) of a group. UCT's
 * public API has no notion of group, member index, root, operator or
 * datatype, so they are given here, per group.
 */
#ifndef UCT_MM_INCAST_H_
#define UCT_MM_INCAST_H_

#include <stddef.h>
#include <stdint.h>
#include <ucs/type/status.h>

#ifdef __cplusplus
extern "C" {
/** Entries never throw: errors are statuses. */
#define UCT_MM_INCAST_NOTHROW noexcept
#else
#define UCT_MM_INCAST_NOTHROW
#endif

/** Symbols the plugin exports (it builds -fvisibility=hidden). */
#define UCT_MM_INCAST_EXPORT __attribute__((visibility("default")))

/** Transport name, as listed by `ucx_info -d`. */
#define UCT_MM_INCAST_TL_NAME "mm_incast"

/** Largest group (members, root included). */
#define UCT_MM_INCAST_MAX_GROUP_SIZE 256

/** How the contributions of one incast meet in shared memory. */
typedef enum uct_mm_incast_mode {
    UCT_MM_INCAST_MODE_AUTO = 0,    /**< Chosen from op, size and group. */
    UCT_MM_INCAST_MODE_BATCHED,     /**< Slot per sender + atomic pending
                                         counter; the receiver reduces. */
    UCT_MM_INCAST_MODE_CENTRALIZED, /**< Slot per sender, the receiver
                                         polls each slot's sequence word. */
    UCT_MM_INCAST_MODE_LOCKED,      /**< Senders reduce into one buffer
                                         under a process-shared lock. */
    UCT_MM_INCAST_MODE_ATOMIC,      /**< Senders reduce into one buffer with
                                         atomic operations. */
    UCT_MM_INCAST_MODE_LAST
} uct_mm_incast_mode_t;

/** Reduction operator; GATHER concatenates instead of reducing. */
typedef enum uct_mm_incast_op {
    UCT_MM_INCAST_OP_GATHER = 0, /**< Concatenate in sender member order. */
    UCT_MM_INCAST_OP_SUM,
    UCT_MM_INCAST_OP_PROD,
    UCT_MM_INCAST_OP_MIN,
    UCT_MM_INCAST_OP_MAX,
    UCT_MM_INCAST_OP_BAND, /**< Integers only. */
    UCT_MM_INCAST_OP_BOR,  /**< Integers only. */
    UCT_MM_INCAST_OP_BXOR, /**< Integers only. */
    UCT_MM_INCAST_OP_LAND, /**< Result is 1 or 0 (1.0 or 0.0). */
    UCT_MM_INCAST_OP_LOR,  /**< Result is 1 or 0 (1.0 or 0.0). */
    UCT_MM_INCAST_OP_LAST
} uct_mm_incast_op_t;

/** Element type of a reduction (ignored by GATHER). */
typedef enum uct_mm_incast_dtype {
    UCT_MM_INCAST_DTYPE_INT8 = 0,
    UCT_MM_INCAST_DTYPE_INT16,
    UCT_MM_INCAST_DTYPE_INT32,
    UCT_MM_INCAST_DTYPE_INT64,
    UCT_MM_INCAST_DTYPE_UINT8,
    UCT_MM_INCAST_DTYPE_UINT16,
    UCT_MM_INCAST_DTYPE_UINT32,
    UCT_MM_INCAST_DTYPE_UINT64,
    UCT_MM_INCAST_DTYPE_FLOAT,
    UCT_MM_INCAST_DTYPE_DOUBLE,
    UCT_MM_INCAST_DTYPE_LAST
} uct_mm_incast_dtype_t;

/** Fields of @ref uct_mm_incast_group_params_t that are set. */
enum uct_mm_incast_group_params_field {
    UCT_MM_INCAST_GROUP_FIELD_NAME = 1u << 0,
    UCT_MM_INCAST_GROUP_FIELD_GROUP_SIZE = 1u << 1,
    UCT_MM_INCAST_GROUP_FIELD_MEMBER_INDEX = 1u << 2,
    UCT_MM_INCAST_GROUP_FIELD_ROOT = 1u << 3,
    UCT_MM_INCAST_GROUP_FIELD_MODE = 1u << 4,
    UCT_MM_INCAST_GROUP_FIELD_OP = 1u << 5,
    UCT_MM_INCAST_GROUP_FIELD_DTYPE = 1u << 6,
    UCT_MM_INCAST_GROUP_FIELD_MAX_BYTES = 1u << 7,
    UCT_MM_INCAST_GROUP_FIELD_ELEMENTS = 1u << 8,
    UCT_MM_INCAST_GROUP_FIELD_TIMEOUT = 1u << 9,
    UCT_MM_INCAST_GROUP_FIELD_IFACE = 1u << 10
};

/** Parameters of one group member. All members pass the same values except
 *  member_index. NAME, GROUP_SIZE, MEMBER_INDEX and ROOT are required. */
typedef struct uct_mm_incast_group_params {
    uint64_t field_mask;   /**< UCT_MM_INCAST_GROUP_FIELD_* */
    const char *name;      /**< Key agreed out of band, unique on the host
                                (e.g. "/ucg-<job>-<group>"); the segment's
                                name, starting with '/' and under 200 chars. */
    unsigned group_size;   /**< Members, root included (1..MAX_GROUP_SIZE). */
    unsigned member_index; /**< This member, 0..group_size-1. */
    unsigned root;         /**< The receiver, 0..group_size-1. */
    uct_mm_incast_mode_t mode;   /**< Default: the iface's UCX_MM_INCAST_MODE,
                                      else AUTO. */
    uct_mm_incast_op_t op;       /**< Default GATHER. */
    uct_mm_incast_dtype_t dtype; /**< Default UINT8. */
    size_t max_bytes;   /**< Largest contribution of one sender (default:
                             the iface's UCX_MM_INCAST_MAX_BYTES or 8 KiB).*/
    unsigned elements;  /**< Incasts in flight (ring depth; default: the
                             iface's UCX_MM_INCAST_ELEMENTS or 8). */
    double timeout_sec; /**< Attach timeout (default 10 s). */
    void *iface;        /**< Optional uct_iface_h (any transport; one of
                             mm_incast gives the defaults above from its
                             UCX_MM_INCAST_*, others are refused). */
} uct_mm_incast_group_params_t;

/** Opaque group handle. */
typedef struct uct_mm_incast_group *uct_mm_incast_group_h;

/** What a group resolved its parameters to. */
typedef struct uct_mm_incast_group_attr {
    uct_mm_incast_mode_t mode; /**< Never AUTO. */
    size_t max_bytes;          /**< Largest contribution accepted. */
    unsigned elements;         /**< Ring depth. */
    unsigned num_senders;      /**< group_size - 1. */
} uct_mm_incast_group_attr_t;

/**
 * Creates (root) or attaches to (others) a group's segment. The root
 * creates it 0600 and exclusive; the last member to attach unlinks its name.
 * Errors: UCS_ERR_INVALID_PARAM (missing or inconsistent fields),
 * UCS_ERR_EXCEEDS_LIMIT (group size over the limit), UCS_ERR_UNSUPPORTED
 * (op/dtype pair, e.g. BAND on FLOAT; GATHER with LOCKED or ATOMIC),
 * UCS_ERR_TIMED_OUT (the root did not publish the segment in time),
 * UCS_ERR_CONNECTION_RESET (a member died while attaching).
 */
UCT_MM_INCAST_EXPORT ucs_status_t uct_mm_incast_group_create(
    const uct_mm_incast_group_params_t *params,
    uct_mm_incast_group_h *group_p) UCT_MM_INCAST_NOTHROW;

/** Detaches; unlinks the segment name if it is still linked. */
UCT_MM_INCAST_EXPORT void
uct_mm_incast_group_destroy(uct_mm_incast_group_h group) UCT_MM_INCAST_NOTHROW;

/** Resolved parameters of a group. */
UCT_MM_INCAST_EXPORT ucs_status_t uct_mm_incast_group_query(
    uct_mm_incast_group_h group,
    uct_mm_incast_group_attr_t *attr) UCT_MM_INCAST_NOTHROW;

/**
 * A sender's contribution to its next incast. Nonblocking.
 * @return UCS_OK (buffer reusable), UCS_ERR_NO_RESOURCE (the ring is full:
 * the receiver has not drained; retry), UCS_ERR_EXCEEDS_LIMIT (length over
 * max_bytes), UCS_ERR_INVALID_PARAM (called on the root; length not a
 * multiple of the dtype size or different from another sender's),
 * UCS_ERR_CONNECTION_RESET (a member died or left).
 */
UCT_MM_INCAST_EXPORT ucs_status_t
uct_mm_incast_group_send(uct_mm_incast_group_h group, const void *buffer,
                         size_t length) UCT_MM_INCAST_NOTHROW;

/**
 * The root's next incast, when complete. Nonblocking. GATHER writes the
 * contributions concatenated in sender member order; a reduction writes
 * the reduced vector.
 * @return UCS_OK (*length_p set), UCS_INPROGRESS (not complete yet),
 * UCS_ERR_MESSAGE_TRUNCATED (capacity too small; the incast stays),
 * UCS_ERR_INVALID_PARAM (not the root), UCS_ERR_CONNECTION_RESET.
 */
UCT_MM_INCAST_EXPORT ucs_status_t uct_mm_incast_group_recv(
    uct_mm_incast_group_h group, void *buffer, size_t capacity,
    size_t *length_p) UCT_MM_INCAST_NOTHROW;

/** Whether ATOMIC mode reduces this pair with lock-free atomics; when 0,
 *  an ATOMIC group with this pair runs LOCKED (see the README). */
UCT_MM_INCAST_EXPORT int uct_mm_incast_atomic_supported(
    uct_mm_incast_op_t op, uct_mm_incast_dtype_t dtype) UCT_MM_INCAST_NOTHROW;

/** "batched", "centralized", "locked", "atomic" or "auto". */
UCT_MM_INCAST_EXPORT const char *
uct_mm_incast_mode_name(uct_mm_incast_mode_t mode) UCT_MM_INCAST_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif
