/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file coll_ucg.h
 * Open MPI 4.1 coll component "ucg": MPI collectives on intracommunicators
 * run on UCG (ucg.h). What UCG does not cover goes to the module Open MPI
 * selected before this one (saved at enable, as coll/han and coll/hcoll
 * do): nonblocking, persistent and neighborhood collectives are simply
 * not set here, so the lower-priority module keeps them.
 */
#ifndef COLL_UCG_H_
#define COLL_UCG_H_

#include "ompi_config.h"

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/request/request.h"
#include "opal/util/output.h"

#include <ucg/ucg.h>

BEGIN_C_DECLS

/** Collectives this component implements (bits of the enable mask). */
enum coll_ucg_kind {
    COLL_UCG_BARRIER = 0,
    COLL_UCG_BCAST,
    COLL_UCG_REDUCE,
    COLL_UCG_ALLREDUCE,
    COLL_UCG_GATHER,
    COLL_UCG_GATHERV,
    COLL_UCG_SCATTER,
    COLL_UCG_SCATTERV,
    COLL_UCG_ALLGATHER,
    COLL_UCG_ALLGATHERV,
    COLL_UCG_ALLTOALL,
    COLL_UCG_ALLTOALLV,
    COLL_UCG_REDUCE_SCATTER,
    COLL_UCG_REDUCE_SCATTER_BLOCK,
    COLL_UCG_SCAN,
    COLL_UCG_EXSCAN,
    COLL_UCG_KIND_LAST
};

/** The component: Open MPI's struct and our parameters. */
typedef struct mca_coll_ucg_component {
    mca_coll_base_component_2_0_0_t super;
    int priority;            /**< coll_ucg_priority */
    int verbose;             /**< coll_ucg_verbose */
    char *enable;            /**< coll_ucg_enable: "all" or a comma list */
    char *tune;              /**< coll_ucg_tune: UCG_TUNE rules */
    uint32_t enable_mask;    /**< Bits of enum coll_ucg_kind */
    int output;              /**< opal_output stream */
    int mpi_threads;         /**< MPI_THREAD_MULTIPLE requested: not used */
    ucg_context_h ucg;       /**< One per process, created at first use */
    int ucg_failed;          /**< Creating it failed: never try again */
    int groups;              /**< Live groups on ucg */
    int in_ucg;              /**< Inside a UCG call: progress must not enter */
    int progress_registered; /**< opal_progress callback is set */
    struct coll_ucg_request *active; /**< Nonblocking ones in flight */
} mca_coll_ucg_component_t;

OMPI_MODULE_DECLSPEC extern mca_coll_ucg_component_t mca_coll_ucg_component;

/** The collectives of the module selected before ours. */
typedef struct coll_ucg_prev {
    mca_coll_base_module_allgather_fn_t allgather;
    mca_coll_base_module_t *allgather_module;
    mca_coll_base_module_allgatherv_fn_t allgatherv;
    mca_coll_base_module_t *allgatherv_module;
    mca_coll_base_module_allreduce_fn_t allreduce;
    mca_coll_base_module_t *allreduce_module;
    mca_coll_base_module_alltoall_fn_t alltoall;
    mca_coll_base_module_t *alltoall_module;
    mca_coll_base_module_alltoallv_fn_t alltoallv;
    mca_coll_base_module_t *alltoallv_module;
    mca_coll_base_module_barrier_fn_t barrier;
    mca_coll_base_module_t *barrier_module;
    mca_coll_base_module_bcast_fn_t bcast;
    mca_coll_base_module_t *bcast_module;
    mca_coll_base_module_exscan_fn_t exscan;
    mca_coll_base_module_t *exscan_module;
    mca_coll_base_module_gather_fn_t gather;
    mca_coll_base_module_t *gather_module;
    mca_coll_base_module_gatherv_fn_t gatherv;
    mca_coll_base_module_t *gatherv_module;
    mca_coll_base_module_reduce_fn_t reduce;
    mca_coll_base_module_t *reduce_module;
    mca_coll_base_module_reduce_scatter_fn_t reduce_scatter;
    mca_coll_base_module_t *reduce_scatter_module;
    mca_coll_base_module_reduce_scatter_block_fn_t reduce_scatter_block;
    mca_coll_base_module_t *reduce_scatter_block_module;
    mca_coll_base_module_scan_fn_t scan;
    mca_coll_base_module_t *scan_module;
    mca_coll_base_module_scatter_fn_t scatter;
    mca_coll_base_module_t *scatter_module;
    mca_coll_base_module_scatterv_fn_t scatterv;
    mca_coll_base_module_t *scatterv_module;
    /* nonblocking forms this component runs */
    mca_coll_base_module_ibarrier_fn_t ibarrier;
    mca_coll_base_module_t *ibarrier_module;
    mca_coll_base_module_ireduce_fn_t ireduce;
    mca_coll_base_module_t *ireduce_module;
    mca_coll_base_module_iallreduce_fn_t iallreduce;
    mca_coll_base_module_t *iallreduce_module;
    mca_coll_base_module_iscan_fn_t iscan;
    mca_coll_base_module_t *iscan_module;
    mca_coll_base_module_iexscan_fn_t iexscan;
    mca_coll_base_module_t *iexscan_module;
    mca_coll_base_module_ireduce_scatter_fn_t ireduce_scatter;
    mca_coll_base_module_t *ireduce_scatter_module;
    mca_coll_base_module_ireduce_scatter_block_fn_t ireduce_scatter_block;
    mca_coll_base_module_t *ireduce_scatter_block_module;
    mca_coll_base_module_ibcast_fn_t ibcast;
    mca_coll_base_module_t *ibcast_module;
    mca_coll_base_module_igather_fn_t igather;
    mca_coll_base_module_t *igather_module;
    mca_coll_base_module_igatherv_fn_t igatherv;
    mca_coll_base_module_t *igatherv_module;
    mca_coll_base_module_iallgather_fn_t iallgather;
    mca_coll_base_module_t *iallgather_module;
    mca_coll_base_module_iallgatherv_fn_t iallgatherv;
    mca_coll_base_module_t *iallgatherv_module;
    mca_coll_base_module_iscatter_fn_t iscatter;
    mca_coll_base_module_t *iscatter_module;
    mca_coll_base_module_iscatterv_fn_t iscatterv;
    mca_coll_base_module_t *iscatterv_module;
    mca_coll_base_module_ialltoall_fn_t ialltoall;
    mca_coll_base_module_t *ialltoall_module;
    mca_coll_base_module_ialltoallv_fn_t ialltoallv;
    mca_coll_base_module_t *ialltoallv_module;
} coll_ucg_prev_t;

/** Initialized collectives kept for calls with the same arguments
 *  (buffers included: UCG binds them at init). */
#define COLL_UCG_CACHE_SIZE 8

typedef struct coll_ucg_cached {
    ucg_coll_args_t args; /**< The key (zeroed padding: memcmp) */
    ucg_coll_h coll;      /**< NULL: free slot */
    uint64_t used;        /**< Last use (LRU) */
} coll_ucg_cached_t;

/** A blocking call's arguments whose datatype and operator are
 *  predefined (static objects, never freed), and the cached collective it
 *  ran: the same call again runs that collective without building and
 *  comparing its arguments (a third of the component's cost per call). */
typedef struct coll_ucg_repeat {
    const void *sbuf;
    const void *rbuf;
    const ompi_datatype_t *dt;
    const struct ompi_op_t *op;
    int count;
    int root;
    coll_ucg_cached_t *slot; /**< NULL: nothing to repeat */
    uint64_t gen;            /**< The module's gen when noted */
} coll_ucg_repeat_t;

/** The module of one communicator. */
typedef struct mca_coll_ucg_module {
    mca_coll_base_module_t super;
    coll_ucg_prev_t prev;
    ompi_communicator_t *comm;
    ucg_group_h group; /**< NULL: every collective falls back */
    coll_ucg_cached_t cache[COLL_UCG_CACHE_SIZE];
    uint64_t clock; /**< Calls so far (LRU) */
    /** Per collective, the slot its last call used: a loop calling one
     *  collective with the same arguments finds it with one compare. */
    unsigned char last[UCG_COLL_LAST];
    uint64_t gen;            /**< Bumped whenever a cached collective goes */
    coll_ucg_cached_t *kept; /**< The slot the last blocking call ran */
    coll_ucg_repeat_t repeat[UCG_COLL_LAST];
} mca_coll_ucg_module_t;

/** Frees the module's cached collectives (before its group). */
void mca_coll_ucg_cache_clear(mca_coll_ucg_module_t *m);

OBJ_CLASS_DECLARATION(mca_coll_ucg_module_t);

/** Query entries (coll_ucg_module.c). */
int mca_coll_ucg_init_query(bool enable_progress_threads,
                            bool enable_mpi_threads);
mca_coll_base_module_t *mca_coll_ucg_comm_query(ompi_communicator_t *comm,
                                                int *priority);

/** The collectives (coll_ucg_ops.c). */
int mca_coll_ucg_barrier(ompi_communicator_t *comm,
                         mca_coll_base_module_t *module);
int mca_coll_ucg_bcast(void *buff, int count, ompi_datatype_t *dtype, int root,
                       ompi_communicator_t *comm,
                       mca_coll_base_module_t *module);
int mca_coll_ucg_reduce(const void *sbuf, void *rbuf, int count,
                        ompi_datatype_t *dtype, struct ompi_op_t *op, int root,
                        ompi_communicator_t *comm,
                        mca_coll_base_module_t *module);
int mca_coll_ucg_allreduce(const void *sbuf, void *rbuf, int count,
                           ompi_datatype_t *dtype, struct ompi_op_t *op,
                           ompi_communicator_t *comm,
                           mca_coll_base_module_t *module);
int mca_coll_ucg_scan(const void *sbuf, void *rbuf, int count,
                      ompi_datatype_t *dtype, struct ompi_op_t *op,
                      ompi_communicator_t *comm,
                      mca_coll_base_module_t *module);
int mca_coll_ucg_exscan(const void *sbuf, void *rbuf, int count,
                        ompi_datatype_t *dtype, struct ompi_op_t *op,
                        ompi_communicator_t *comm,
                        mca_coll_base_module_t *module);
int mca_coll_ucg_reduce_scatter(const void *sbuf, void *rbuf,
                                const int *rcounts, ompi_datatype_t *dtype,
                                struct ompi_op_t *op, ompi_communicator_t *comm,
                                mca_coll_base_module_t *module);
int mca_coll_ucg_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                      ompi_datatype_t *dtype,
                                      struct ompi_op_t *op,
                                      ompi_communicator_t *comm,
                                      mca_coll_base_module_t *module);
int mca_coll_ucg_gather(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                        void *rbuf, int rcount, ompi_datatype_t *rdtype,
                        int root, ompi_communicator_t *comm,
                        mca_coll_base_module_t *module);
int mca_coll_ucg_gatherv(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                         void *rbuf, const int *rcounts, const int *displs,
                         ompi_datatype_t *rdtype, int root,
                         ompi_communicator_t *comm,
                         mca_coll_base_module_t *module);
int mca_coll_ucg_scatter(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                         void *rbuf, int rcount, ompi_datatype_t *rdtype,
                         int root, ompi_communicator_t *comm,
                         mca_coll_base_module_t *module);
int mca_coll_ucg_scatterv(const void *sbuf, const int *scounts,
                          const int *displs, ompi_datatype_t *sdtype,
                          void *rbuf, int rcount, ompi_datatype_t *rdtype,
                          int root, ompi_communicator_t *comm,
                          mca_coll_base_module_t *module);
int mca_coll_ucg_allgather(const void *sbuf, int scount,
                           ompi_datatype_t *sdtype, void *rbuf, int rcount,
                           ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                           mca_coll_base_module_t *module);
int mca_coll_ucg_allgatherv(const void *sbuf, int scount,
                            ompi_datatype_t *sdtype, void *rbuf,
                            const int *rcounts, const int *displs,
                            ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                            mca_coll_base_module_t *module);
int mca_coll_ucg_alltoall(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                          void *rbuf, int rcount, ompi_datatype_t *rdtype,
                          ompi_communicator_t *comm,
                          mca_coll_base_module_t *module);
int mca_coll_ucg_alltoallv(const void *sbuf, const int *scounts,
                           const int *sdispls, ompi_datatype_t *sdtype,
                           void *rbuf, const int *rcounts, const int *rdispls,
                           ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                           mca_coll_base_module_t *module);

/** Nonblocking forms: completed by a callback in Open MPI's progress;
 *  staging of non-contiguous data is unpacked at completion. */
int mca_coll_ucg_ibarrier(ompi_communicator_t *comm, ompi_request_t **req,
                          mca_coll_base_module_t *module);
int mca_coll_ucg_ireduce(const void *sbuf, void *rbuf, int count,
                         ompi_datatype_t *dtype, struct ompi_op_t *op, int root,
                         ompi_communicator_t *comm, ompi_request_t **req,
                         mca_coll_base_module_t *module);
int mca_coll_ucg_iallreduce(const void *sbuf, void *rbuf, int count,
                            ompi_datatype_t *dtype, struct ompi_op_t *op,
                            ompi_communicator_t *comm, ompi_request_t **req,
                            mca_coll_base_module_t *module);
int mca_coll_ucg_iscan(const void *sbuf, void *rbuf, int count,
                       ompi_datatype_t *dtype, struct ompi_op_t *op,
                       ompi_communicator_t *comm, ompi_request_t **req,
                       mca_coll_base_module_t *module);
int mca_coll_ucg_iexscan(const void *sbuf, void *rbuf, int count,
                         ompi_datatype_t *dtype, struct ompi_op_t *op,
                         ompi_communicator_t *comm, ompi_request_t **req,
                         mca_coll_base_module_t *module);
int mca_coll_ucg_ireduce_scatter(const void *sbuf, void *rbuf,
                                 const int *rcounts, ompi_datatype_t *dtype,
                                 struct ompi_op_t *op,
                                 ompi_communicator_t *comm,
                                 ompi_request_t **req,
                                 mca_coll_base_module_t *module);
int mca_coll_ucg_ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                       ompi_datatype_t *dtype,
                                       struct ompi_op_t *op,
                                       ompi_communicator_t *comm,
                                       ompi_request_t **req,
                                       mca_coll_base_module_t *module);

int mca_coll_ucg_ibcast(void *buff, int count, ompi_datatype_t *dtype, int root,
                        ompi_communicator_t *comm, ompi_request_t **req,
                        mca_coll_base_module_t *module);
int mca_coll_ucg_igather(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                         void *rbuf, int rcount, ompi_datatype_t *rdtype,
                         int root, ompi_communicator_t *comm,
                         ompi_request_t **req, mca_coll_base_module_t *module);
int mca_coll_ucg_igatherv(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                          void *rbuf, const int *rcounts, const int *displs,
                          ompi_datatype_t *rdtype, int root,
                          ompi_communicator_t *comm, ompi_request_t **req,
                          mca_coll_base_module_t *module);
int mca_coll_ucg_iallgather(const void *sbuf, int scount,
                            ompi_datatype_t *sdtype, void *rbuf, int rcount,
                            ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                            ompi_request_t **req,
                            mca_coll_base_module_t *module);
int mca_coll_ucg_iallgatherv(const void *sbuf, int scount,
                             ompi_datatype_t *sdtype, void *rbuf,
                             const int *rcounts, const int *displs,
                             ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                             ompi_request_t **req,
                             mca_coll_base_module_t *module);
int mca_coll_ucg_iscatter(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                          void *rbuf, int rcount, ompi_datatype_t *rdtype,
                          int root, ompi_communicator_t *comm,
                          ompi_request_t **req, mca_coll_base_module_t *module);
int mca_coll_ucg_iscatterv(const void *sbuf, const int *scounts,
                           const int *displs, ompi_datatype_t *sdtype,
                           void *rbuf, int rcount, ompi_datatype_t *rdtype,
                           int root, ompi_communicator_t *comm,
                           ompi_request_t **req,
                           mca_coll_base_module_t *module);
int mca_coll_ucg_ialltoall(const void *sbuf, int scount,
                           ompi_datatype_t *sdtype, void *rbuf, int rcount,
                           ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                           ompi_request_t **req,
                           mca_coll_base_module_t *module);
int mca_coll_ucg_ialltoallv(const void *sbuf, const int *scounts,
                            const int *sdispls, ompi_datatype_t *sdtype,
                            void *rbuf, const int *rcounts, const int *rdispls,
                            ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                            ompi_request_t **req,
                            mca_coll_base_module_t *module);

/** Drops the progress callback (component close). */
void mca_coll_ucg_progress_fini(void);

END_C_DECLS

#endif /* COLL_UCG_H_ */
