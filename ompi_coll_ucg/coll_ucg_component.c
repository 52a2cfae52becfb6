/* SPDX-License-Identifier: BSD-3-Clause */
/* The component: MCA parameters, the process's UCG context, and the
 * module of each communicator (its UCG group and the saved collectives of
 * the module selected before it). */
#include "coll_ucg.h"

#include "opal/mca/base/mca_base_var.h"

#include <stdlib.h>
#include <string.h>

static const char *const coll_ucg_names[COLL_UCG_KIND_LAST] = {
    "barrier",        "bcast",
    "reduce",         "allreduce",
    "gather",         "gatherv",
    "scatter",        "scatterv",
    "allgather",      "allgatherv",
    "alltoall",       "alltoallv",
    "reduce_scatter", "reduce_scatter_block",
    "scan",           "exscan"};

static int coll_ucg_open(void);
static int coll_ucg_close(void);
static int coll_ucg_register(void);

mca_coll_ucg_component_t mca_coll_ucg_component = {
    .super =
        {
            .collm_version =
                {
                    MCA_COLL_BASE_VERSION_2_0_0,
                    .mca_component_name = "ucg",
                    MCA_BASE_MAKE_VERSION(component, 0, 1, 0),
                    .mca_open_component = coll_ucg_open,
                    .mca_close_component = coll_ucg_close,
                    .mca_register_component_params = coll_ucg_register,
                },
            .collm_data = {MCA_BASE_METADATA_PARAM_NONE},
            .collm_init_query = mca_coll_ucg_init_query,
            .collm_comm_query = mca_coll_ucg_comm_query,
        },
    .priority = 90,
    .verbose = 0,
    .enable = NULL,
    .tune = NULL,
    .enable_mask = 0,
    .output = -1,
    .mpi_threads = 0,
    .ucg = NULL,
    .ucg_failed = 0,
    .groups = 0,
    .in_ucg = 0,
    .progress_registered = 0,
    .active = NULL,
};

static int coll_ucg_register(void)
{
    mca_coll_ucg_component_t *c = &mca_coll_ucg_component;
    const mca_base_component_t *v = &c->super.collm_version;
    c->priority = 90;
    (void)mca_base_component_var_register(
        v, "priority",
        "Priority of the ucg coll component (above tuned's 30, so the "
        "component path alone selects it)",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_6,
        MCA_BASE_VAR_SCOPE_READONLY, &c->priority);
    c->verbose = 0;
    (void)mca_base_component_var_register(
        v, "verbose",
        "Verbosity of the ucg coll component (1: selection, 10: every "
        "fallback to the previous module)",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_9,
        MCA_BASE_VAR_SCOPE_LOCAL, &c->verbose);
    c->enable = "all";
    (void)mca_base_component_var_register(
        v, "enable",
        "Collectives run on UCG: \"all\" or a comma list of barrier, "
        "bcast, reduce, allreduce, gather, gatherv, scatter, scatterv, "
        "allgather, allgatherv, alltoall, alltoallv, reduce_scatter, "
        "reduce_scatter_block, scan, exscan (the rest use the previous "
        "module)",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_6,
        MCA_BASE_VAR_SCOPE_READONLY, &c->enable);
    c->tune = "";
    (void)mca_base_component_var_register(
        v, "tune",
        "UCG selection rules (the UCG_TUNE grammar) ahead of the built-in "
        "ones; empty: the environment's UCG_TUNE",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_6,
        MCA_BASE_VAR_SCOPE_READONLY, &c->tune);
    return OMPI_SUCCESS;
}

static uint32_t coll_ucg_parse_enable(const char *list, int output)
{
    if (list == NULL || strcmp(list, "all") == 0 || list[0] == '\0') {
        return (1u << COLL_UCG_KIND_LAST) - 1;
    }
    uint32_t mask = 0;
    char *copy = strdup(list);
    if (copy == NULL) {
        return 0;
    }
    char *save = NULL;
    for (char *t = strtok_r(copy, ", ", &save); t != NULL;
         t = strtok_r(NULL, ", ", &save)) {
        int found = 0;
        for (int k = 0; k < COLL_UCG_KIND_LAST; ++k) {
            if (strcmp(t, coll_ucg_names[k]) == 0) {
                mask |= 1u << k;
                found = 1;
            }
        }
        if (!found) {
            opal_output(output, "coll:ucg: coll_ucg_enable: unknown '%s'", t);
        }
    }
    free(copy);
    return mask;
}

static int coll_ucg_open(void)
{
    mca_coll_ucg_component_t *c = &mca_coll_ucg_component;
    c->output = opal_output_open(NULL);
    opal_output_set_verbosity(c->output, c->verbose);
    c->enable_mask = coll_ucg_parse_enable(c->enable, c->output);
    return OMPI_SUCCESS;
}

static int coll_ucg_close(void)
{
    mca_coll_ucg_component_t *c = &mca_coll_ucg_component;
    mca_coll_ucg_progress_fini();
    if (c->ucg != NULL && c->groups == 0) {
        ucg_context_destroy(c->ucg);
        c->ucg = NULL;
        opal_output_verbose(10, c->output, "coll:ucg: context destroyed");
    } else if (c->ucg != NULL) {
        opal_output_verbose(1, c->output,
                            "coll:ucg: %d groups left at close: the context "
                            "stays",
                            c->groups);
    }
    if (c->output >= 0) {
        opal_output_close(c->output);
        c->output = -1;
    }
    return OMPI_SUCCESS;
}

int mca_coll_ucg_init_query(bool enable_progress_threads,
                            bool enable_mpi_threads)
{
    (void)enable_progress_threads;
    mca_coll_ucg_component.mpi_threads = enable_mpi_threads ? 1 : 0;
    return OMPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Module                                                             */
/* ------------------------------------------------------------------ */

static void coll_ucg_module_construct(mca_coll_ucg_module_t *m)
{
    memset(&m->prev, 0, sizeof(m->prev));
    memset(m->cache, 0, sizeof(m->cache));
    memset(m->last, 0, sizeof(m->last));
    memset(m->repeat, 0, sizeof(m->repeat));
    m->kept = NULL;
    m->gen = 0;
    m->clock = 0;
    m->comm = NULL;
    m->group = NULL;
}

#define COLL_UCG_PREV_RELEASE(_m, _name)                                       \
    do {                                                                       \
        if ((_m)->prev._name##_module != NULL) {                               \
            OBJ_RELEASE((_m)->prev._name##_module);                            \
            (_m)->prev._name##_module = NULL;                                  \
        }                                                                      \
    } while (0)

static void coll_ucg_module_destruct(mca_coll_ucg_module_t *m)
{
    mca_coll_ucg_cache_clear(m);
    if (m->group != NULL) {
        ucg_group_destroy(m->group);
        m->group = NULL;
        --mca_coll_ucg_component.groups;
    }
    COLL_UCG_PREV_RELEASE(m, allgather);
    COLL_UCG_PREV_RELEASE(m, allgatherv);
    COLL_UCG_PREV_RELEASE(m, allreduce);
    COLL_UCG_PREV_RELEASE(m, alltoall);
    COLL_UCG_PREV_RELEASE(m, alltoallv);
    COLL_UCG_PREV_RELEASE(m, barrier);
    COLL_UCG_PREV_RELEASE(m, bcast);
    COLL_UCG_PREV_RELEASE(m, exscan);
    COLL_UCG_PREV_RELEASE(m, gather);
    COLL_UCG_PREV_RELEASE(m, gatherv);
    COLL_UCG_PREV_RELEASE(m, reduce);
    COLL_UCG_PREV_RELEASE(m, reduce_scatter);
    COLL_UCG_PREV_RELEASE(m, reduce_scatter_block);
    COLL_UCG_PREV_RELEASE(m, scan);
    COLL_UCG_PREV_RELEASE(m, scatter);
    COLL_UCG_PREV_RELEASE(m, scatterv);
    COLL_UCG_PREV_RELEASE(m, ibarrier);
    COLL_UCG_PREV_RELEASE(m, ireduce);
    COLL_UCG_PREV_RELEASE(m, iallreduce);
    COLL_UCG_PREV_RELEASE(m, iscan);
    COLL_UCG_PREV_RELEASE(m, iexscan);
    COLL_UCG_PREV_RELEASE(m, ireduce_scatter);
    COLL_UCG_PREV_RELEASE(m, ireduce_scatter_block);
    COLL_UCG_PREV_RELEASE(m, ibcast);
    COLL_UCG_PREV_RELEASE(m, igather);
    COLL_UCG_PREV_RELEASE(m, igatherv);
    COLL_UCG_PREV_RELEASE(m, iallgather);
    COLL_UCG_PREV_RELEASE(m, iallgatherv);
    COLL_UCG_PREV_RELEASE(m, iscatter);
    COLL_UCG_PREV_RELEASE(m, iscatterv);
    COLL_UCG_PREV_RELEASE(m, ialltoall);
    COLL_UCG_PREV_RELEASE(m, ialltoallv);
}

OBJ_CLASS_INSTANCE(mca_coll_ucg_module_t, mca_coll_base_module_t,
                   coll_ucg_module_construct, coll_ucg_module_destruct);

#define COLL_UCG_PREV_SAVE(_m, _comm, _name)                                   \
    do {                                                                       \
        (_m)->prev._name = (_comm)->c_coll->coll_##_name;                      \
        (_m)->prev._name##_module = (_comm)->c_coll->coll_##_name##_module;    \
        if ((_m)->prev._name##_module != NULL) {                               \
            OBJ_RETAIN((_m)->prev._name##_module);                             \
        }                                                                      \
    } while (0)

/* The out-of-band allgather of group creation: the previous module's
 * allgather over the communicator itself. */
static ucs_status_t coll_ucg_oob_allgather(void *arg, const void *sendbuf,
                                           void *recvbuf, size_t length)
{
    mca_coll_ucg_module_t *m = (mca_coll_ucg_module_t *)arg;
    if (length > INT32_MAX) {
        return UCS_ERR_INVALID_PARAM;
    }
    int rc =
        m->prev.allgather(sendbuf, (int)length, MPI_BYTE, recvbuf, (int)length,
                          MPI_BYTE, m->comm, m->prev.allgather_module);
    return rc == OMPI_SUCCESS ? UCS_OK : UCS_ERR_IO_ERROR;
}

/* UCG's waits run Open MPI's progress too: a peer may need this rank's
 * pending point-to-point (or a previous module's nonblocking collective)
 * before it joins. */
static void coll_ucg_idle(void *arg)
{
    (void)arg;
    opal_progress();
}

static ucg_context_h coll_ucg_context(void)
{
    mca_coll_ucg_component_t *c = &mca_coll_ucg_component;
    if (c->ucg == NULL && !c->ucg_failed) {
        ucg_context_params_t p;
        memset(&p, 0, sizeof(p));
        p.field_mask = UCG_CONTEXT_PARAM_FIELD_IDLE;
        p.idle = coll_ucg_idle;
        ucs_status_t st = ucg_context_create(&p, &c->ucg);
        if (st != UCS_OK) {
            c->ucg = NULL;
            c->ucg_failed = 1;
            opal_output_verbose(1, c->output,
                                "coll:ucg: ucg_context_create: %s",
                                ucs_status_string(st));
        }
    }
    return c->ucg;
}

static int coll_ucg_module_enable(mca_coll_base_module_t *module,
                                  ompi_communicator_t *comm)
{
    mca_coll_ucg_component_t *c = &mca_coll_ucg_component;
    mca_coll_ucg_module_t *m = (mca_coll_ucg_module_t *)module;
    m->comm = comm;
    COLL_UCG_PREV_SAVE(m, comm, allgather);
    COLL_UCG_PREV_SAVE(m, comm, allgatherv);
    COLL_UCG_PREV_SAVE(m, comm, allreduce);
    COLL_UCG_PREV_SAVE(m, comm, alltoall);
    COLL_UCG_PREV_SAVE(m, comm, alltoallv);
    COLL_UCG_PREV_SAVE(m, comm, barrier);
    COLL_UCG_PREV_SAVE(m, comm, bcast);
    COLL_UCG_PREV_SAVE(m, comm, exscan);
    COLL_UCG_PREV_SAVE(m, comm, gather);
    COLL_UCG_PREV_SAVE(m, comm, gatherv);
    COLL_UCG_PREV_SAVE(m, comm, reduce);
    COLL_UCG_PREV_SAVE(m, comm, reduce_scatter);
    COLL_UCG_PREV_SAVE(m, comm, reduce_scatter_block);
    COLL_UCG_PREV_SAVE(m, comm, scan);
    COLL_UCG_PREV_SAVE(m, comm, scatter);
    COLL_UCG_PREV_SAVE(m, comm, scatterv);
    COLL_UCG_PREV_SAVE(m, comm, ibarrier);
    COLL_UCG_PREV_SAVE(m, comm, ireduce);
    COLL_UCG_PREV_SAVE(m, comm, iallreduce);
    COLL_UCG_PREV_SAVE(m, comm, iscan);
    COLL_UCG_PREV_SAVE(m, comm, iexscan);
    COLL_UCG_PREV_SAVE(m, comm, ireduce_scatter);
    COLL_UCG_PREV_SAVE(m, comm, ireduce_scatter_block);
    COLL_UCG_PREV_SAVE(m, comm, ibcast);
    COLL_UCG_PREV_SAVE(m, comm, igather);
    COLL_UCG_PREV_SAVE(m, comm, igatherv);
    COLL_UCG_PREV_SAVE(m, comm, iallgather);
    COLL_UCG_PREV_SAVE(m, comm, iallgatherv);
    COLL_UCG_PREV_SAVE(m, comm, iscatter);
    COLL_UCG_PREV_SAVE(m, comm, iscatterv);
    COLL_UCG_PREV_SAVE(m, comm, ialltoall);
    COLL_UCG_PREV_SAVE(m, comm, ialltoallv);
    if (m->prev.allgather == NULL || m->prev.allreduce == NULL) {
        opal_output_verbose(1, c->output,
                            "coll:ucg: %s has no previous allgather",
                            comm->c_name);
        return OMPI_ERROR;
    }

    /* Every member must agree that it can create its group, or none
     * does: a rank without a context would never join the allgather. */
    int mine = coll_ucg_context() != NULL ? 1 : 0;
    int all = 0;
    int rc = m->prev.allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm,
                               m->prev.allreduce_module);
    if (rc != OMPI_SUCCESS || all == 0) {
        opal_output_verbose(1, c->output,
                            "coll:ucg: %s: no UCG context on some member",
                            comm->c_name);
        return OMPI_ERROR;
    }

    ucg_group_params_t gp;
    memset(&gp, 0, sizeof(gp));
    gp.field_mask = UCG_GROUP_PARAM_FIELD_SIZE | UCG_GROUP_PARAM_FIELD_RANK |
                    UCG_GROUP_PARAM_FIELD_OOB;
    gp.size = (unsigned)ompi_comm_size(comm);
    gp.rank = (unsigned)ompi_comm_rank(comm);
    gp.oob_allgather = coll_ucg_oob_allgather;
    gp.oob_arg = m;
    if (c->tune != NULL && c->tune[0] != '\0') {
        gp.field_mask |= UCG_GROUP_PARAM_FIELD_TUNE;
        gp.tune = c->tune;
    }
    /* The allgather runs Open MPI's progress: keep ours out of UCG. */
    c->in_ucg = 1;
    ucs_status_t st = ucg_group_create(c->ucg, &gp, &m->group);
    c->in_ucg = 0;
    if (st != UCS_OK) {
        m->group = NULL;
        opal_output_verbose(1, c->output, "coll:ucg: %s: ucg_group_create: %s",
                            comm->c_name, ucs_status_string(st));
    }
    /* All members use the group or none does (a member whose creation
     * failed would run the previous module's collectives alone). */
    mine = m->group != NULL ? 1 : 0;
    rc = m->prev.allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm,
                           m->prev.allreduce_module);
    if (rc != OMPI_SUCCESS || all == 0) {
        if (m->group != NULL) {
            ucg_group_destroy(m->group);
            m->group = NULL;
        }
        opal_output_verbose(1, c->output,
                            "coll:ucg: %s: no UCG group on some member",
                            comm->c_name);
        return OMPI_ERROR;
    }
    ++c->groups;
    opal_output_verbose(
        1, c->output, "coll:ucg: enabled on %s (cid %u, size %d)", comm->c_name,
        ompi_comm_get_cid(comm), ompi_comm_size(comm));
    return OMPI_SUCCESS;
}

#define COLL_UCG_SET(_m, _kind, _name)                                         \
    do {                                                                       \
        if (mca_coll_ucg_component.enable_mask & (1u << (_kind))) {            \
            (_m)->super.coll_##_name = mca_coll_ucg_##_name;                   \
        }                                                                      \
    } while (0)

mca_coll_base_module_t *mca_coll_ucg_comm_query(ompi_communicator_t *comm,
                                                int *priority)
{
    mca_coll_ucg_component_t *c = &mca_coll_ucg_component;
    if (OMPI_COMM_IS_INTER(comm) || ompi_comm_size(comm) < 2 ||
        c->mpi_threads || c->priority < 0 || c->enable_mask == 0) {
        opal_output_verbose(10, c->output,
                            "coll:ucg: not on %s (intercomm %d, size %d)",
                            comm->c_name, OMPI_COMM_IS_INTER(comm) ? 1 : 0,
                            ompi_comm_size(comm));
        return NULL;
    }
    mca_coll_ucg_module_t *m = OBJ_NEW(mca_coll_ucg_module_t);
    if (m == NULL) {
        return NULL;
    }
    m->super.coll_module_enable = coll_ucg_module_enable;
    COLL_UCG_SET(m, COLL_UCG_BARRIER, barrier);
    COLL_UCG_SET(m, COLL_UCG_BCAST, bcast);
    COLL_UCG_SET(m, COLL_UCG_REDUCE, reduce);
    COLL_UCG_SET(m, COLL_UCG_ALLREDUCE, allreduce);
    COLL_UCG_SET(m, COLL_UCG_GATHER, gather);
    COLL_UCG_SET(m, COLL_UCG_GATHERV, gatherv);
    COLL_UCG_SET(m, COLL_UCG_SCATTER, scatter);
    COLL_UCG_SET(m, COLL_UCG_SCATTERV, scatterv);
    COLL_UCG_SET(m, COLL_UCG_ALLGATHER, allgather);
    COLL_UCG_SET(m, COLL_UCG_ALLGATHERV, allgatherv);
    COLL_UCG_SET(m, COLL_UCG_ALLTOALL, alltoall);
    COLL_UCG_SET(m, COLL_UCG_ALLTOALLV, alltoallv);
    COLL_UCG_SET(m, COLL_UCG_REDUCE_SCATTER, reduce_scatter);
    COLL_UCG_SET(m, COLL_UCG_REDUCE_SCATTER_BLOCK, reduce_scatter_block);
    COLL_UCG_SET(m, COLL_UCG_SCAN, scan);
    COLL_UCG_SET(m, COLL_UCG_EXSCAN, exscan);
    COLL_UCG_SET(m, COLL_UCG_BARRIER, ibarrier);
    COLL_UCG_SET(m, COLL_UCG_REDUCE, ireduce);
    COLL_UCG_SET(m, COLL_UCG_ALLREDUCE, iallreduce);
    COLL_UCG_SET(m, COLL_UCG_SCAN, iscan);
    COLL_UCG_SET(m, COLL_UCG_EXSCAN, iexscan);
    COLL_UCG_SET(m, COLL_UCG_REDUCE_SCATTER, ireduce_scatter);
    COLL_UCG_SET(m, COLL_UCG_REDUCE_SCATTER_BLOCK, ireduce_scatter_block);
    COLL_UCG_SET(m, COLL_UCG_BCAST, ibcast);
    COLL_UCG_SET(m, COLL_UCG_GATHER, igather);
    COLL_UCG_SET(m, COLL_UCG_GATHERV, igatherv);
    COLL_UCG_SET(m, COLL_UCG_ALLGATHER, iallgather);
    COLL_UCG_SET(m, COLL_UCG_ALLGATHERV, iallgatherv);
    COLL_UCG_SET(m, COLL_UCG_SCATTER, iscatter);
    COLL_UCG_SET(m, COLL_UCG_SCATTERV, iscatterv);
    COLL_UCG_SET(m, COLL_UCG_ALLTOALL, ialltoall);
    COLL_UCG_SET(m, COLL_UCG_ALLTOALLV, ialltoallv);
    *priority = c->priority;
    opal_output_verbose(1, c->output,
                        "coll:ucg: comm_query on %s (size %d): priority %d",
                        comm->c_name, ompi_comm_size(comm), c->priority);
    return &m->super;
}
