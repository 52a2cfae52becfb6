/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file ucg/ucg.h
 * UCG: collectives over UCP point-to-point and UCX's one-to-many
 * transports, on plans a topology-aware planner picks per collective, size
 * and group.
 *
 * Objects: a context (one UCP context and worker, the caller's or its
 * own), groups of processes created from a rank, a size and an out-of-band
 * allgather, and collectives initialized on a group and started any number
 * of times (persistent; init + start + wait + free for a one-off call).
 * Every collective is nonblocking; ucg_progress() never blocks.
 *
 * Threads: a context and everything on it must be used by one thread at a
 * time (the caller serializes; no lock is taken inside).
 * Errors: every entry returns a ucs_status_t (or nothing) and never
 * throws; bad input gets a named status and one log line.
 */
#ifndef UCG_UCG_H_
#define UCG_UCG_H_

#include <stddef.h>
#include <stdint.h>
#include <ucg/reduce.h>
#include <ucp/api/ucp.h>
#include <ucs/type/status.h>

#ifdef __cplusplus
extern "C" {
#define UCG_NOEXCEPT noexcept
#else
#define UCG_NOEXCEPT
#endif

/** Exported entry points (the library is built -fvisibility=hidden). */
#define UCG_API __attribute__((visibility("default")))

/** Version of this API. */
#define UCG_API_MAJOR 0
#define UCG_API_MINOR 1

typedef struct ucg_context *ucg_context_h; /**< A context */
typedef struct ucg_group *ucg_group_h;     /**< A group of processes */
typedef struct ucg_coll *ucg_coll_h;       /**< An initialized collective */

/* ------------------------------------------------------------------ */
/* Context                                                            */
/* ------------------------------------------------------------------ */

/** Fields of ucg_context_params_t that are set. */
enum ucg_context_params_field {
    UCG_CONTEXT_PARAM_FIELD_UCP_CONTEXT = UCS_BIT(0), /**< ucp_context */
    UCG_CONTEXT_PARAM_FIELD_UCP_WORKER = UCS_BIT(1),  /**< ucp_worker */
    UCG_CONTEXT_PARAM_FIELD_TIMEOUT = UCS_BIT(2),     /**< timeout_sec */
    UCG_CONTEXT_PARAM_FIELD_IDLE = UCS_BIT(3)         /**< idle, idle_arg */
};

/** Context parameters; all optional. */
typedef struct ucg_context_params {
    uint64_t field_mask; /**< Mask of enum ucg_context_params_field */
    /** The caller's UCP context and worker (both or neither; the worker
     *  must belong to the context and outlive the UCG context). Without
     *  them UCG opens its own, with mm_bcast and mm_incast among the
     *  transports unless UCX_TLS leaves them out. The caller's context
     *  must have UCP_FEATURE_TAG; one-to-many transports are used only
     *  where its worker opened them. */
    ucp_context_h ucp_context;
    ucp_worker_h ucp_worker; /**< See ucp_context */
    /** Seconds a collective may make no progress before its members are
     *  checked and it fails (default: UCG_TIMEOUT, else 30). */
    double timeout_sec;
    /** Called by ucg_collective_wait every 16 polls that found the
     *  collective unfinished: the caller's own progress (an MPI library's,
     *  so a peer that waits for this rank's other traffic gets it). It may
     *  yield the CPU, progress UCG and test collectives, not wait for one. */
    void (*idle)(void *idle_arg);
    void *idle_arg; /**< Passed to idle */
} ucg_context_params_t;

/**
 * Creates a context.
 * @param [in]  params     Parameters (NULL: all defaults).
 * @param [out] context_p  The context, written only on success.
 * @return UCS_OK, UCS_ERR_INVALID_PARAM, UCS_ERR_NO_MEMORY, or what UCP
 *         returned.
 */
UCG_API ucs_status_t ucg_context_create(const ucg_context_params_t *params,
                                        ucg_context_h *context_p) UCG_NOEXCEPT;

/** Destroys a context; its groups must be destroyed first. */
UCG_API void ucg_context_destroy(ucg_context_h context) UCG_NOEXCEPT;

/**
 * Makes progress on every collective of the context. Never blocks.
 * @return The number of events (completions) handled.
 */
UCG_API unsigned ucg_progress(ucg_context_h context) UCG_NOEXCEPT;

/* ------------------------------------------------------------------ */
/* Groups                                                             */
/* ------------------------------------------------------------------ */

/**
 * Out-of-band allgather the group's members run at creation: every member
 * passes `length` bytes and receives every member's bytes, in rank order,
 * in recvbuf (size * length bytes). Blocking. MPI_Allgather, PMIx or a
 * launcher provides it.
 * @return UCS_OK, or an error that fails the group creation.
 */
typedef ucs_status_t (*ucg_oob_allgather_fn_t)(void *arg, const void *sendbuf,
                                               void *recvbuf, size_t length);

/** Fields of ucg_group_params_t that are set. */
enum ucg_group_params_field {
    UCG_GROUP_PARAM_FIELD_SIZE = UCS_BIT(0),      /**< size (required) */
    UCG_GROUP_PARAM_FIELD_RANK = UCS_BIT(1),      /**< rank (required) */
    UCG_GROUP_PARAM_FIELD_OOB = UCS_BIT(2),       /**< oob_* (required) */
    UCG_GROUP_PARAM_FIELD_HOST = UCS_BIT(3),      /**< host_id */
    UCG_GROUP_PARAM_FIELD_TUNE = UCS_BIT(4),      /**< tune */
    UCG_GROUP_PARAM_FIELD_FLAGS = UCS_BIT(5),     /**< flags */
    UCG_GROUP_PARAM_FIELD_PLAN_FILES = UCS_BIT(6) /**< plan_files */
};

/** Flags of ucg_group_params_t. */
enum ucg_group_flags {
    /** Point-to-point only: no one-to-many transport (for comparison). */
    UCG_GROUP_FLAG_NO_ONE_TO_MANY = UCS_BIT(0)
};

/** Group parameters. */
typedef struct ucg_group_params {
    uint64_t field_mask; /**< Mask of enum ucg_group_params_field */
    unsigned size;       /**< Number of members, >= 1 */
    unsigned rank;       /**< This member's rank, < size */
    ucg_oob_allgather_fn_t oob_allgather; /**< Out-of-band allgather */
    void *oob_arg;                        /**< Its first argument */
    /** Host identity (members with equal ids share memory). Default: the
     *  environment's UCG_TOPO_HOST, else the host name; tests set it to let
     *  one machine pose as several hosts. */
    const char *host_id;
    /** Selection rules (the UCG_TUNE grammar) ahead of the built-in ones;
     *  default: the environment's UCG_TUNE. Must be the same on every
     *  member. */
    const char *tune;
    uint64_t flags; /**< Mask of enum ucg_group_flags */
    /** Plan files to run instead of the selector's plans, e.g.
     *  "allreduce=/path/a.plan;bcast=/path/b.plan" (the text form of
     *  `ucg_plan print`); default: the environment's UCG_PLAN_FILES. Read
     *  and checked at creation (collective, ranks, validity, symbolic
     *  correctness); a file that fails fails the creation with
     *  UCS_ERR_INVALID_PARAM. Must be the same on every member. */
    const char *plan_files;
} ucg_group_params_t;

/**
 * Creates a group: a collective call of every member (it runs the
 * out-of-band allgather). Exchanges the members' UCP worker addresses
 * (which carry the one-to-many transports' addresses) and localities. The
 * group is made on every member or on none: a member that fails its own
 * part (its endpoints, its plan files) fails the others' creation too,
 * with its status and one line naming it; and no member returns before
 * every member holds its endpoints.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM (missing field, rank >= size, the
 *         members disagree on the size, a plan file fails its checks);
 * UCS_ERR_UNREACHABLE (a member's address cannot be used); UCS_ERR_NO_MEMORY;
 * the allgather's error.
 */
UCG_API ucs_status_t ucg_group_create(ucg_context_h context,
                                      const ucg_group_params_t *params,
                                      ucg_group_h *group_p) UCG_NOEXCEPT;

/** Destroys a group; its collectives must be freed first. Local: no
 *  communication. */
UCG_API void ucg_group_destroy(ucg_group_h group) UCG_NOEXCEPT;

/* ------------------------------------------------------------------ */
/* Collectives                                                        */
/* ------------------------------------------------------------------ */

/** Collectives (MPI's, on intracommunicators). */
typedef enum ucg_coll_type {
    UCG_COLL_BARRIER = 0,
    UCG_COLL_BCAST,
    UCG_COLL_REDUCE,
    UCG_COLL_ALLREDUCE,
    UCG_COLL_GATHER,
    UCG_COLL_GATHERV,
    UCG_COLL_SCATTER,
    UCG_COLL_SCATTERV,
    UCG_COLL_ALLGATHER,
    UCG_COLL_ALLGATHERV,
    UCG_COLL_ALLTOALL,
    UCG_COLL_ALLTOALLV,
    UCG_COLL_REDUCE_SCATTER,       /**< MPI_Reduce_scatter (recvcounts) */
    UCG_COLL_REDUCE_SCATTER_BLOCK, /**< equal blocks */
    UCG_COLL_SCAN,
    UCG_COLL_EXSCAN,
    UCG_COLL_LAST
} ucg_coll_type_t;

/** A datatype: `run` consecutive elements of a base type (a contiguous
 *  MPI derived type); run 0 means 1. */
typedef struct ucg_datatype {
    ucg_dtype_t base;
    uint32_t run;
} ucg_datatype_t;

/** A user reduction: inout[i] = in[i] op inout[i] for i < count (MPI's
 *  operand order: in is the left operand), count in datatype elements. */
typedef void (*ucg_user_op_fn_t)(const void *in, void *inout, size_t count,
                                 void *arg);

/** A user operator. */
typedef struct ucg_user_op {
    ucg_user_op_fn_t func; /**< The reduction */
    void *arg;             /**< Its last argument */
    int commutative;       /**< 0: applied in rank order */
} ucg_user_op_t;

/** One side of a collective: where data is, in datatype elements. */
typedef struct ucg_buffer {
    void *buffer;         /**< Start (may be NULL where count is 0) */
    size_t count;         /**< Elements (per block: see below) */
    ucg_datatype_t dtype; /**< Element type */
    const size_t *counts; /**< v collectives: per rank (size entries) */
    const size_t *displs; /**< v collectives: per rank, in elements */
} ucg_buffer_t;

/** Fields of ucg_coll_args_t that are set. */
enum ucg_coll_args_field {
    UCG_COLL_ARGS_FIELD_ROOT = UCS_BIT(0),    /**< root (default 0) */
    UCG_COLL_ARGS_FIELD_OP = UCS_BIT(1),      /**< op (reductions) */
    UCG_COLL_ARGS_FIELD_USER_OP = UCS_BIT(2), /**< user_op */
    UCG_COLL_ARGS_FIELD_FLAGS = UCS_BIT(3)    /**< flags */
};

/** Flags of ucg_coll_args_t. */
enum ucg_coll_flags {
    /** MPI_IN_PLACE: the input is in dst, as MPI says per collective
     *  (gather/allgather: this rank's block of dst; scatter: the root
     *  keeps its block in src; reductions and alltoall: dst holds the
     *  input and receives the result). src is ignored where MPI ignores
     *  sendbuf. */
    UCG_COLL_FLAG_IN_PLACE = UCS_BIT(0)
};

/**
 * What a collective does. Counts per collective, in elements of the
 * side's datatype (as MPI's arguments):
 *   barrier              -
 *   bcast                dst.count (src unused; root's data in dst)
 *   reduce, allreduce    src.count = dst.count
 *   gather               src.count; root: dst.count per rank
 *   gatherv              src.count; root: dst.counts/displs
 *   scatter              root: src.count per rank; dst.count
 *   scatterv             root: src.counts/displs; dst.count
 *   allgather            src.count; dst.count per rank
 *   allgatherv           src.count; dst.counts/displs
 *   alltoall             src.count and dst.count per rank
 *   alltoallv            src.counts/displs and dst.counts/displs
 *   reduce_scatter       dst.counts (recvcounts; src holds their sum)
 *   reduce_scatter_block dst.count per rank (src holds size * count)
 *   scan, exscan         src.count = dst.count
 * Reductions take op (UCG_OP_USER with user_op) and dst.dtype, which must
 * equal src.dtype; others move bytes and need equal byte counts on both
 * sides of each transfer.
 */
typedef struct ucg_coll_args {
    uint64_t field_mask;          /**< Mask of enum ucg_coll_args_field */
    ucg_coll_type_t coll;         /**< The collective */
    unsigned root;                /**< Rooted collectives */
    ucg_buffer_t src;             /**< Input */
    ucg_buffer_t dst;             /**< Output */
    ucg_op_t op;                  /**< Reductions */
    const ucg_user_op_t *user_op; /**< With UCG_OP_USER (copied at init) */
    uint64_t flags;               /**< Mask of enum ucg_coll_flags */
} ucg_coll_args_t;

/**
 * Initializes a collective (picks and prepares its plan). The buffers are
 * bound at init: each start uses them. Local: no communication.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM (NULL buffer with a non-zero
 *         count, root >= size, datatype or op out of range, counts that
 *         differ where it is cheap to see); UCS_ERR_UNSUPPORTED (op and
 *         datatype MPI does not combine); UCS_ERR_NO_MEMORY.
 */
UCG_API ucs_status_t ucg_collective_init(ucg_group_h group,
                                         const ucg_coll_args_t *args,
                                         ucg_coll_h *coll_p) UCG_NOEXCEPT;

/**
 * Starts an initialized collective that is not in flight. Every member
 * must start the collectives of a group in the same order.
 * @return UCS_OK (started, or already complete), UCS_ERR_BUSY (still in
 *         flight), or the group's failure.
 */
UCG_API ucs_status_t ucg_collective_start(ucg_coll_h coll) UCG_NOEXCEPT;

/**
 * Progresses the context and tells where the collective is.
 * @return UCS_OK (complete), UCS_INPROGRESS, or the error it failed with
 *         (UCS_ERR_CONNECTION_RESET: a member died; UCS_ERR_ENDPOINT_TIMEOUT:
 *         no progress within the context's timeout).
 */
UCG_API ucs_status_t ucg_collective_test(ucg_coll_h coll) UCG_NOEXCEPT;

/** Progresses until the collective is complete or failed, backing off
 *  after a bounded spin (where the group's ranks outnumber the cores,
 *  after every poll that moved nothing), and calls the context's idle
 *  callback every 16 polls; returns as ucg_collective_test. */
UCG_API ucs_status_t ucg_collective_wait(ucg_coll_h coll) UCG_NOEXCEPT;

/** Frees a collective that is not in flight (a failed one may be freed). */
UCG_API void ucg_collective_free(ucg_coll_h coll) UCG_NOEXCEPT;

/**
 * The plan a collective runs, for tools: "algorithm radix=.. segments=..".
 * @return A string owned by the collective, valid until it is freed.
 */
UCG_API const char *ucg_collective_plan_name(ucg_coll_h coll) UCG_NOEXCEPT;

/**
 * The cost model's prediction of one call's time for the plan the planner
 * chose (the figure it chose by, from the topology's link costs), for
 * tools that print it beside a measurement.
 * @return Microseconds, or a negative value where no model chose: a direct
 *         message, a plan file, a call with nothing to move.
 */
UCG_API double ucg_collective_predicted_us(ucg_coll_h coll) UCG_NOEXCEPT;

/** "barrier", "bcast", ..., "exscan"; "?" out of range. */
UCG_API const char *ucg_coll_type_name(ucg_coll_type_t coll) UCG_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* UCG_UCG_H_ */
