/* SPDX-License-Identifier: BSD-3-Clause */
/* The collectives: MPI arguments to ucg_coll_args_t, one init + start +
 * wait + free per call, or the previous module where UCG cannot help.
 *
 * Data-moving collectives move bytes: a contiguous datatype is used in
 * place, any other is packed into (and unpacked from) a staging buffer, so
 * every member takes the same path whatever datatypes the others pass.
 * Reductions map predefined types and operators to UCG's; user operators
 * run through ompi_op_reduce on contiguous types; everything else (a
 * predefined operator on a derived type, a non-contiguous type) falls
 * back, alike on every member since MPI requires the same type and op. */
#include "coll_ucg.h"

#include "ompi/mca/coll/base/coll_base_util.h"
#include "ompi/op/op.h"
#include "ompi/runtime/mpiruntime.h"
#include "opal/datatype/opal_convertor.h"
#include "opal/runtime/opal_progress.h"

#include <stdlib.h>
#include <string.h>

#define COLL_UCG_FALLBACK 1 /* internal: not handled, use the previous */

#define COLL_UCG_LOG_FALLBACK(_name, _why)                                     \
    opal_output_verbose(10, mca_coll_ucg_component.output,                     \
                        "coll:ucg: %s falls back to the previous module: %s",  \
                        (_name), (_why))

/* ------------------------------------------------------------------ */
/* Running one collective                                             */
/* ------------------------------------------------------------------ */

void mca_coll_ucg_cache_clear(mca_coll_ucg_module_t *m)
{
    ++m->gen;
    m->kept = NULL;
    for (int i = 0; i < COLL_UCG_CACHE_SIZE; ++i) {
        if (m->cache[i].coll != NULL) {
            ucg_collective_free(m->cache[i].coll);
            m->cache[i].coll = NULL;
        }
    }
}

/* Whether a collective may be kept: no per-call state behind a pointer
 * (v counts, a user op's stack state, staging buffers). */
static int coll_ucg_cacheable(const ucg_coll_args_t *a, int staged)
{
    return !staged && a->src.counts == NULL && a->dst.counts == NULL &&
           a->user_op == NULL;
}

/* The cached collective of `a`, or a slot to put one in (*hit 0). The
 * slot of the collective's previous call first. */
static coll_ucg_cached_t *coll_ucg_cache_find(mca_coll_ucg_module_t *m,
                                              const ucg_coll_args_t *a,
                                              int *hit)
{
    coll_ucg_cached_t *last = &m->cache[m->last[a->coll]];
    if (last->coll != NULL && memcmp(&last->args, a, sizeof(*a)) == 0) {
        *hit = 1;
        return last;
    }
    coll_ucg_cached_t *victim = &m->cache[0];
    for (int i = 0; i < COLL_UCG_CACHE_SIZE; ++i) {
        coll_ucg_cached_t *e = &m->cache[i];
        if (e->coll != NULL && memcmp(&e->args, a, sizeof(*a)) == 0) {
            *hit = 1;
            return e;
        }
        if (e->coll == NULL ||
            (victim->coll != NULL && e->used < victim->used)) {
            victim = e;
        }
    }
    *hit = 0;
    return victim;
}

/* A failure on this rank alone once the call runs on UCG here, and so
 * on its peers (they decided alike, from what every member shares): they
 * wait in the collective for a message this rank will never send, and no
 * message can tell them. The job ends here with one line rather than
 * hang; MPI leaves a communicator undefined after a collective's error
 * anyway. */
static int coll_ucg_local_failure(mca_coll_ucg_module_t *m, const char *name,
                                  const char *why)
{
    opal_output(0,
                "coll:ucg: %s on %s failed on this rank alone (%s) while "
                "its peers run it; aborting the job, which would hang",
                name, m->comm->c_name, why);
    ompi_mpi_abort(m->comm, MPI_ERR_INTERN);
    return OMPI_ERROR; /* not reached */
}

/* ucg_collective_init failed. UCS_ERR_UNSUPPORTED follows from what
 * every member passes alike (the operator and datatype, which MPI
 * requires equal): every member falls back. Anything else (memory, a
 * buffer only this rank passes) is this rank's alone. */
static int coll_ucg_init_failed(mca_coll_ucg_module_t *m, const char *prefix,
                                ucg_coll_type_t coll, ucs_status_t st)
{
    if (st == UCS_ERR_UNSUPPORTED) {
        opal_output_verbose(10, mca_coll_ucg_component.output,
                            "coll:ucg: %s%s falls back to the previous "
                            "module: ucg_collective_init: %s",
                            prefix, ucg_coll_type_name(coll),
                            ucs_status_string(st));
        return COLL_UCG_FALLBACK;
    }
    char name[64];
    snprintf(name, sizeof(name), "%s%s", prefix, ucg_coll_type_name(coll));
    return coll_ucg_local_failure(m, name, ucs_status_string(st));
}

/* Starts and waits for h (kept in slot, or not); frees it if not kept
 * or if it failed. */
static int coll_ucg_go(mca_coll_ucg_module_t *m, coll_ucg_cached_t *slot,
                       ucg_coll_h h, ucg_coll_type_t coll)
{
    ucs_status_t st = ucg_collective_start(h);
    if (st == UCS_OK) {
        st = ucg_collective_wait(h);
    }
    if (slot == NULL || st != UCS_OK) {
        ucg_collective_free(h);
        if (slot != NULL) {
            slot->coll = NULL;
            ++m->gen;
        }
    }
    if (st != UCS_OK) {
        opal_output(0, "coll:ucg: %s on %s failed: %s",
                    ucg_coll_type_name(coll), m->comm->c_name,
                    ucs_status_string(st));
        return OMPI_ERROR;
    }
    m->kept = slot;
    return OMPI_SUCCESS;
}

static int coll_ucg_run_ex(mca_coll_ucg_module_t *m, const ucg_coll_args_t *a,
                           int staged)
{
    m->kept = NULL; /* every blocking call that succeeds comes through here */
    if (m->group == NULL) {
        COLL_UCG_LOG_FALLBACK(ucg_coll_type_name(a->coll), "no UCG group");
        return COLL_UCG_FALLBACK;
    }
    const int keep = coll_ucg_cacheable(a, staged);
    coll_ucg_cached_t *slot = NULL;
    int hit = 0;
    ucg_coll_h h = NULL;
    ucs_status_t st;
    if (keep) {
        slot = coll_ucg_cache_find(m, a, &hit);
        slot->used = ++m->clock;
        m->last[a->coll] = (unsigned char)(slot - m->cache);
        if (hit) {
            h = slot->coll;
        } else if (slot->coll != NULL) {
            ucg_collective_free(slot->coll);
            slot->coll = NULL;
            ++m->gen;
        }
    }
    if (h == NULL) {
        st = ucg_collective_init(m->group, a, &h);
        if (st != UCS_OK) {
            return coll_ucg_init_failed(m, "", a->coll, st);
        }
        opal_output_verbose(50, mca_coll_ucg_component.output,
                            "coll:ucg: %s on %s: %s",
                            ucg_coll_type_name(a->coll), m->comm->c_name,
                            ucg_collective_plan_name(h));
        if (keep) {
            slot->args = *a;
            slot->coll = h;
        }
    }
    return coll_ucg_go(m, slot, h, a->coll);
}

/* Whether this blocking call repeats the noted one (coll_ucg_repeat_t). */
static int coll_ucg_repeat_hit(const mca_coll_ucg_module_t *m,
                               ucg_coll_type_t coll, const void *sbuf,
                               const void *rbuf, int count,
                               const ompi_datatype_t *dt,
                               const struct ompi_op_t *op, int root)
{
    const coll_ucg_repeat_t *r = &m->repeat[coll];
    return r->slot != NULL && r->gen == m->gen && r->rbuf == rbuf &&
           r->sbuf == sbuf && r->count == count && r->dt == dt && r->op == op &&
           r->root == root;
}

static int coll_ucg_repeat_run(mca_coll_ucg_module_t *m, ucg_coll_type_t coll)
{
    coll_ucg_cached_t *slot = m->repeat[coll].slot;
    slot->used = ++m->clock;
    return coll_ucg_go(m, slot, slot->coll, coll);
}

/* After a blocking call that succeeded: notes it for repeats if it ran a
 * kept collective and its datatype is predefined. (Its operator is: a kept
 * collective has no user operator, and the others fall back.) */
static void coll_ucg_repeat_note(mca_coll_ucg_module_t *m, ucg_coll_type_t coll,
                                 const void *sbuf, const void *rbuf, int count,
                                 ompi_datatype_t *dt, struct ompi_op_t *op,
                                 int root)
{
    coll_ucg_repeat_t *r = &m->repeat[coll];
    r->slot = NULL;
    if (m->kept == NULL || (dt != NULL && !ompi_datatype_is_predefined(dt))) {
        return;
    }
    r->sbuf = sbuf;
    r->rbuf = rbuf;
    r->dt = dt;
    r->op = op;
    r->count = count;
    r->root = root;
    r->slot = m->kept;
    r->gen = m->gen;
}

static int coll_ucg_run(mca_coll_ucg_module_t *m, const ucg_coll_args_t *a)
{
    return coll_ucg_run_ex(m, a, 0);
}

/* ------------------------------------------------------------------ */
/* Byte sides of data-moving collectives                              */
/* ------------------------------------------------------------------ */

/* One side: the user's (buffer, datatype) seen as bytes, directly where
 * the datatype is contiguous, else through a packed staging buffer. */
typedef struct coll_ucg_side {
    char *user; /* the user's buffer */
    ompi_datatype_t *dt;
    size_t tsize;     /* bytes of data per element */
    ptrdiff_t extent; /* extent of an element */
    int contig;       /* elements are back to back, no gaps */
    char *tmp;        /* staging (non-contiguous) */
    size_t *counts;   /* v: bytes per rank */
    size_t *displs;   /* v: byte offsets per rank */
} coll_ucg_side_t;

static void coll_ucg_side_init(coll_ucg_side_t *s, const void *buf,
                               ompi_datatype_t *dt)
{
    memset(s, 0, sizeof(*s));
    s->user = (char *)(uintptr_t)buf;
    s->dt = dt;
    ptrdiff_t lb = 0, true_lb = 0, true_extent = 0;
    ompi_datatype_type_size(dt, &s->tsize);
    ompi_datatype_get_extent(dt, &lb, &s->extent);
    ompi_datatype_get_true_extent(dt, &true_lb, &true_extent);
    s->contig = ompi_datatype_is_contiguous_memory_layout(dt, 2) &&
                s->extent == (ptrdiff_t)s->tsize;
    if (s->contig) { /* MPI_BOTTOM (NULL) + an absolute lb too */
        s->user = (char *)((uintptr_t)s->user + (uintptr_t)true_lb);
    }
}

static void coll_ucg_side_fini(coll_ucg_side_t *s)
{
    free(s->tmp);
    free(s->counts);
    free(s->displs);
    s->tmp = NULL;
    s->counts = s->displs = NULL;
}

/* Packs or unpacks `count` elements at user + byte offset `uoff` to or
 * from tmp + `toff`, through Open MPI's convertor: counts are size_t (no
 * 2^31 limit that one rank could hit alone) and no MPI handle is looked
 * up (the user may have freed it while a nonblocking call is pending). */
static int coll_ucg_pack(coll_ucg_side_t *s, int unpack, ptrdiff_t uoff,
                         size_t toff, size_t count)
{
    if (count == 0) {
        return OMPI_SUCCESS;
    }
    const size_t bytes = count * s->tsize;
    void *user = s->user + uoff;
    opal_convertor_t conv;
    OBJ_CONSTRUCT(&conv, opal_convertor_t);
    int32_t rc =
        unpack
            ? opal_convertor_copy_and_prepare_for_recv(ompi_mpi_local_convertor,
                                                       &s->dt->super, count,
                                                       user, 0, &conv)
            : opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor,
                                                       &s->dt->super, count,
                                                       user, 0, &conv);
    struct iovec iov = {.iov_base = s->tmp + toff, .iov_len = bytes};
    uint32_t iov_count = 1;
    size_t done = bytes;
    if (rc == OPAL_SUCCESS) {
        rc = unpack ? opal_convertor_unpack(&conv, &iov, &iov_count, &done)
                    : opal_convertor_pack(&conv, &iov, &iov_count, &done);
    }
    OBJ_DESTRUCT(&conv);
    return rc >= 0 && done == bytes ? OMPI_SUCCESS : OMPI_ERROR;
}

/* A side of `total` elements (all blocks back to back). Sets *ptr and
 * returns the bytes per element. `input`: the data is read. */
static int coll_ucg_side_flat(coll_ucg_side_t *s, size_t total, int input,
                              void **ptr)
{
    if (s->contig) {
        *ptr = s->user;
        return OMPI_SUCCESS;
    }
    s->tmp = malloc(total * s->tsize + 1);
    if (s->tmp == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    *ptr = s->tmp;
    return input ? coll_ucg_pack(s, 0, 0, 0, total) : OMPI_SUCCESS;
}

static int coll_ucg_side_flat_done(coll_ucg_side_t *s, size_t total)
{
    if (s->contig || total == 0) {
        return OMPI_SUCCESS;
    }
    return coll_ucg_pack(s, 1, 0, 0, total);
}

/* A v side: per-rank counts and displacements (in elements / extents). */
static int coll_ucg_side_vec(coll_ucg_side_t *s, const int *counts,
                             const int *displs, int size, int input, void **ptr)
{
    s->counts = malloc(sizeof(size_t) * (size_t)size);
    s->displs = malloc(sizeof(size_t) * (size_t)size);
    if (s->counts == NULL || s->displs == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    size_t total = 0;
    int low = 0; /* negative displacements: UCG's start is the lowest */
    for (int i = 0; i < size; ++i) {
        low = displs[i] < low ? displs[i] : low;
    }
    for (int i = 0; i < size; ++i) {
        s->counts[i] = counts[i] > 0 ? (size_t)counts[i] * s->tsize : 0;
        if (s->contig) {
            s->displs[i] = (size_t)((long)displs[i] - low) * s->tsize;
        } else {
            s->displs[i] = total;
            total += s->counts[i];
        }
    }
    if (s->contig) {
        *ptr = (char *)((uintptr_t)s->user +
                        (uintptr_t)((ptrdiff_t)low * s->extent));
        return OMPI_SUCCESS;
    }
    s->tmp = malloc(total + 1);
    if (s->tmp == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    *ptr = s->tmp;
    for (int i = 0; input && i < size; ++i) {
        int rc = coll_ucg_pack(s, 0, (ptrdiff_t)displs[i] * s->extent,
                               s->displs[i], (size_t)counts[i]);
        if (rc != OMPI_SUCCESS) {
            return rc;
        }
    }
    return OMPI_SUCCESS;
}

static int coll_ucg_side_vec_done(coll_ucg_side_t *s, const int *counts,
                                  const int *displs, int size)
{
    for (int i = 0; !s->contig && i < size; ++i) {
        int rc = coll_ucg_pack(s, 1, (ptrdiff_t)displs[i] * s->extent,
                               s->displs[i], (size_t)counts[i]);
        if (rc != OMPI_SUCCESS) {
            return rc;
        }
    }
    return OMPI_SUCCESS;
}

static void coll_ucg_bytes(ucg_buffer_t *b, void *ptr, size_t count)
{
    b->buffer = ptr;
    b->count = count;
    b->dtype.base = UCG_DTYPE_UINT8;
    b->dtype.run = 1;
}

/* ------------------------------------------------------------------ */
/* Nonblocking collectives: an Open MPI request completed by progress  */
/* ------------------------------------------------------------------ */

/* A user operator's state for one call. */
typedef struct coll_ucg_user {
    struct ompi_op_t *op;
    ompi_datatype_t *dt;
    ptrdiff_t shift; /* UCG sees the data from the type's true lb on */
    ucg_user_op_t uop;
} coll_ucg_user_t;

/* The staging of a data-moving collective and what its end does. */
typedef struct coll_ucg_moves {
    coll_ucg_side_t src, dst;
    int unpack;        /* dst is staged: unpack at the end */
    int vec;           /* dst is a v side */
    size_t total;      /* flat dst: elements */
    const int *counts; /* v dst: the user's counts and displacements */
    const int *displs;
    int size;
} coll_ucg_moves_t;

static void coll_ucg_moves_init(coll_ucg_moves_t *mv)
{
    memset(mv, 0, sizeof(*mv));
}

static int coll_ucg_moves_finish(coll_ucg_moves_t *mv)
{
    if (!mv->unpack) {
        return OMPI_SUCCESS;
    }
    return mv->vec ? coll_ucg_side_vec_done(&mv->dst, mv->counts, mv->displs,
                                            mv->size)
                   : coll_ucg_side_flat_done(&mv->dst, mv->total);
}

static void coll_ucg_moves_fini(coll_ucg_moves_t *mv)
{
    coll_ucg_side_fini(&mv->src);
    coll_ucg_side_fini(&mv->dst);
}

/* Open MPI's bindings treat a nonblocking collective's request as an
 * ompi_coll_base_nbc_request_t: they hold its operator and significant
 * datatypes in its fields until it completes (so the program may free
 * them before the wait), and ours extends it. Nothing here reads the
 * communicator after the start (the module, retained, keeps the group),
 * so the program may free that too. */
typedef struct coll_ucg_request {
    ompi_coll_base_nbc_request_t super;
    coll_ucg_moves_t moves; /* staging, finished at completion */
    int has_moves;
    mca_coll_ucg_module_t *module; /* retained in flight: keeps the group */
    struct coll_ucg_request *next; /* in the component's active list */
    ucg_coll_h coll;
    coll_ucg_user_t user; /* a user op's state lives as long as this */
    size_t *counts;       /* reduce_scatter's counts */
} coll_ucg_request_t;

static OBJ_CLASS_INSTANCE(coll_ucg_request_t, ompi_coll_base_nbc_request_t,
                          NULL, NULL);

static int coll_ucg_request_free(ompi_request_t **rptr)
{
    coll_ucg_request_t *r = (coll_ucg_request_t *)*rptr;
    if (r->coll != NULL) { /* never freed in flight: MPI forbids it */
        return OMPI_ERROR;
    }
    free(r->counts);
    OMPI_REQUEST_FINI(&r->super.super);
    OBJ_RELEASE(r);
    *rptr = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static int coll_ucg_request_cancel(ompi_request_t *req, int flag)
{
    (void)req;
    (void)flag;
    return OMPI_SUCCESS; /* collectives are not cancelled */
}

static coll_ucg_request_t *coll_ucg_request_new(ompi_communicator_t *comm)
{
    coll_ucg_request_t *r = OBJ_NEW(coll_ucg_request_t);
    if (r == NULL) {
        return NULL;
    }
    OMPI_REQUEST_INIT(&r->super.super, false);
    r->super.super.req_type = OMPI_REQUEST_COLL;
    r->super.super.req_free = coll_ucg_request_free;
    r->super.super.req_cancel = coll_ucg_request_cancel;
    r->super.super.req_mpi_object.comm = comm;
    r->next = NULL;
    r->coll = NULL;
    r->counts = NULL;
    r->has_moves = 0;
    r->module = NULL;
    return r;
}

/* Drops a request that never started (its collective fell back). */
static void coll_ucg_request_drop(coll_ucg_request_t *r)
{
    ompi_request_t *p = &r->super.super;
    (void)coll_ucg_request_free(&p);
}

static int coll_ucg_progress(void)
{
    mca_coll_ucg_component_t *c = &mca_coll_ucg_component;
    if (c->active == NULL || c->in_ucg) {
        return 0;
    }
    int events = 0;
    c->in_ucg = 1;
    coll_ucg_request_t **link = &c->active;
    while (*link != NULL) {
        coll_ucg_request_t *r = *link;
        ucs_status_t st = ucg_collective_test(r->coll);
        if (st == UCS_INPROGRESS) {
            link = &r->next;
            continue;
        }
        *link = r->next;
        r->next = NULL;
        ucg_collective_free(r->coll);
        r->coll = NULL;
        OBJ_RELEASE(r->module); /* may destroy the group: r->coll is gone */
        r->module = NULL;
        if (r->has_moves) {
            if (st == UCS_OK &&
                coll_ucg_moves_finish(&r->moves) != OMPI_SUCCESS) {
                st = UCS_ERR_IO_ERROR;
            }
            coll_ucg_moves_fini(&r->moves);
            r->has_moves = 0;
        }
        if (st != UCS_OK) {
            opal_output(0, "coll:ucg: a nonblocking collective failed: %s",
                        ucs_status_string(st));
        }
        r->super.super.req_status.MPI_ERROR =
            st == UCS_OK ? MPI_SUCCESS : MPI_ERR_OTHER;
        ompi_request_complete(&r->super.super, true);
        ++events;
    }
    c->in_ucg = 0;
    return events;
}

void mca_coll_ucg_progress_fini(void)
{
    mca_coll_ucg_component_t *c = &mca_coll_ucg_component;
    if (c->progress_registered) {
        opal_progress_unregister(coll_ucg_progress);
        c->progress_registered = 0;
    }
}

/* Starts `a` as the collective of request r: OMPI_SUCCESS (in flight or
 * done), COLL_UCG_FALLBACK (nothing started), or an error. */
static int coll_ucg_start_nb(mca_coll_ucg_module_t *m, const ucg_coll_args_t *a,
                             coll_ucg_request_t *r)
{
    mca_coll_ucg_component_t *c = &mca_coll_ucg_component;
    if (m->group == NULL) {
        COLL_UCG_LOG_FALLBACK(ucg_coll_type_name(a->coll), "no UCG group");
        return COLL_UCG_FALLBACK;
    }
    ucs_status_t st = ucg_collective_init(m->group, a, &r->coll);
    if (st != UCS_OK) {
        r->coll = NULL;
        return coll_ucg_init_failed(m, "i", a->coll, st);
    }
    opal_output_verbose(50, c->output, "coll:ucg: i%s on %s: %s",
                        ucg_coll_type_name(a->coll), m->comm->c_name,
                        ucg_collective_plan_name(r->coll));
    st = ucg_collective_start(r->coll);
    if (st != UCS_OK) {
        ucg_collective_free(r->coll);
        r->coll = NULL;
        opal_output(0, "coll:ucg: i%s on %s failed: %s",
                    ucg_coll_type_name(a->coll), m->comm->c_name,
                    ucs_status_string(st));
        return OMPI_ERROR;
    }
    if (!c->progress_registered) {
        opal_progress_register(coll_ucg_progress);
        c->progress_registered = 1;
    }
    OBJ_RETAIN(m);
    r->module = m;
    r->super.super.req_state = OMPI_REQUEST_ACTIVE;
    r->next = c->active;
    c->active = r;
    return OMPI_SUCCESS;
}

static void coll_ucg_args_init(ucg_coll_args_t *a, ucg_coll_type_t coll)
{
    memset(a, 0, sizeof(*a));
    a->coll = coll;
}

static void coll_ucg_set_root(ucg_coll_args_t *a, int root)
{
    a->field_mask |= UCG_COLL_ARGS_FIELD_ROOT;
    a->root = (unsigned)root;
}

static void coll_ucg_set_in_place(ucg_coll_args_t *a)
{
    a->field_mask |= UCG_COLL_ARGS_FIELD_FLAGS;
    a->flags |= UCG_COLL_FLAG_IN_PLACE;
}

/* ------------------------------------------------------------------ */
/* Reductions: types and operators                                    */
/* ------------------------------------------------------------------ */

static int coll_ucg_map_dtype(ompi_datatype_t *dt, ucg_dtype_t *out)
{
    static const struct {
        MPI_Datatype mpi;
        ucg_dtype_t ucg;
    } map[] = {
        {MPI_CHAR, UCG_DTYPE_INT8},
        {MPI_SIGNED_CHAR, UCG_DTYPE_INT8},
        {MPI_UNSIGNED_CHAR, UCG_DTYPE_UINT8},
        {MPI_BYTE, UCG_DTYPE_UINT8},
        {MPI_SHORT, UCG_DTYPE_INT16},
        {MPI_UNSIGNED_SHORT, UCG_DTYPE_UINT16},
        {MPI_INT, UCG_DTYPE_INT32},
        {MPI_UNSIGNED, UCG_DTYPE_UINT32},
        {MPI_LONG, UCG_DTYPE_INT64},
        {MPI_UNSIGNED_LONG, UCG_DTYPE_UINT64},
        {MPI_LONG_LONG_INT, UCG_DTYPE_INT64},
        {MPI_LONG_LONG, UCG_DTYPE_INT64},
        {MPI_UNSIGNED_LONG_LONG, UCG_DTYPE_UINT64},
        {MPI_INT8_T, UCG_DTYPE_INT8},
        {MPI_INT16_T, UCG_DTYPE_INT16},
        {MPI_INT32_T, UCG_DTYPE_INT32},
        {MPI_INT64_T, UCG_DTYPE_INT64},
        {MPI_UINT8_T, UCG_DTYPE_UINT8},
        {MPI_UINT16_T, UCG_DTYPE_UINT16},
        {MPI_UINT32_T, UCG_DTYPE_UINT32},
        {MPI_UINT64_T, UCG_DTYPE_UINT64},
        {MPI_AINT, UCG_DTYPE_INT64},
        {MPI_OFFSET, UCG_DTYPE_INT64},
        {MPI_COUNT, UCG_DTYPE_INT64},
        {MPI_WCHAR, UCG_DTYPE_INT32},
        {MPI_FLOAT, UCG_DTYPE_FLOAT},
        {MPI_DOUBLE, UCG_DTYPE_DOUBLE},
        {MPI_LONG_DOUBLE, UCG_DTYPE_LONG_DOUBLE},
        {MPI_C_BOOL, UCG_DTYPE_BOOL},
        {MPI_C_FLOAT_COMPLEX, UCG_DTYPE_FLOAT_COMPLEX},
        {MPI_C_COMPLEX, UCG_DTYPE_FLOAT_COMPLEX},
        {MPI_C_DOUBLE_COMPLEX, UCG_DTYPE_DOUBLE_COMPLEX},
        {MPI_C_LONG_DOUBLE_COMPLEX, UCG_DTYPE_LONG_DOUBLE_COMPLEX},
        {MPI_FLOAT_INT, UCG_DTYPE_FLOAT_INT},
        {MPI_DOUBLE_INT, UCG_DTYPE_DOUBLE_INT},
        {MPI_LONG_INT, UCG_DTYPE_LONG_INT},
        {MPI_2INT, UCG_DTYPE_2INT},
        {MPI_SHORT_INT, UCG_DTYPE_SHORT_INT},
        {MPI_LONG_DOUBLE_INT, UCG_DTYPE_LONG_DOUBLE_INT},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); ++i) {
        if (map[i].mpi == dt) {
            *out = map[i].ucg;
            return 1;
        }
    }
    return 0;
}

static int coll_ucg_map_op(struct ompi_op_t *op, ucg_op_t *out)
{
    static const struct {
        MPI_Op mpi;
        ucg_op_t ucg;
    } map[] = {
        {MPI_SUM, UCG_OP_SUM},       {MPI_PROD, UCG_OP_PROD},
        {MPI_MIN, UCG_OP_MIN},       {MPI_MAX, UCG_OP_MAX},
        {MPI_LAND, UCG_OP_LAND},     {MPI_LOR, UCG_OP_LOR},
        {MPI_LXOR, UCG_OP_LXOR},     {MPI_BAND, UCG_OP_BAND},
        {MPI_BOR, UCG_OP_BOR},       {MPI_BXOR, UCG_OP_BXOR},
        {MPI_MAXLOC, UCG_OP_MAXLOC}, {MPI_MINLOC, UCG_OP_MINLOC},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); ++i) {
        if (map[i].mpi == op) {
            *out = map[i].ucg;
            return 1;
        }
    }
    return 0;
}

/* MPI_REPLACE and MPI_NO_OP: predefined, never in a collective here. */
static int coll_ucg_predefined_op(struct ompi_op_t *op)
{
    return op == MPI_REPLACE || op == MPI_NO_OP || op == MPI_OP_NULL;
}

/* UCG's elements start at the type's true lb; the operator takes the
 * buffers as the program passed them (the type's origin). Open MPI's own
 * reduction (counts past 2^31 split): no handle is looked up (a pending
 * call's operator and type stay valid, held by the bindings, where the
 * program has freed its handles). */
static void coll_ucg_user_fn(const void *in, void *inout, size_t count,
                             void *arg)
{
    coll_ucg_user_t *u = (coll_ucg_user_t *)arg;
    ompi_op_reduce(u->op, (void *)((uintptr_t)in - (uintptr_t)u->shift),
                   (void *)((uintptr_t)inout - (uintptr_t)u->shift), count,
                   u->dt);
}

/* Fills the type and op of a reduction; returns 0 where UCG cannot run
 * it (*why says why) and *shift the byte offset of the data (true lb). */
static int coll_ucg_reduction(ucg_coll_args_t *a, ompi_datatype_t *dt,
                              struct ompi_op_t *op, coll_ucg_user_t *u,
                              ptrdiff_t *shift, const char **why)
{
    ucg_datatype_t t;
    t.run = 1;
    *shift = 0;
    a->field_mask |= UCG_COLL_ARGS_FIELD_OP;
    if (coll_ucg_map_op(op, &a->op)) {
        if (!coll_ucg_map_dtype(dt, &t.base)) {
            *why = "datatype of a predefined operator";
            return 0;
        }
    } else if (coll_ucg_predefined_op(op)) {
        *why = "operator";
        return 0;
    } else {
        coll_ucg_side_t s;
        coll_ucg_side_init(&s, NULL, dt);
        if (!coll_ucg_map_dtype(dt, &t.base)) {
            if (!s.contig || s.tsize == 0 || s.tsize > UINT32_MAX) {
                *why = "non-contiguous datatype of a user operator";
                return 0;
            }
            ptrdiff_t tlb = 0, text = 0;
            ompi_datatype_get_true_extent(dt, &tlb, &text);
            *shift = tlb;
            t.base = UCG_DTYPE_UINT8;
            t.run = (uint32_t)s.tsize;
        }
        u->op = op;
        u->dt = dt;
        u->shift = *shift;
        u->uop.func = coll_ucg_user_fn;
        u->uop.arg = u;
        u->uop.commutative = ompi_op_is_commute(op) ? 1 : 0;
        a->op = UCG_OP_USER;
        a->user_op = &u->uop;
        a->field_mask |= UCG_COLL_ARGS_FIELD_USER_OP;
    }
    a->src.dtype = t;
    a->dst.dtype = t;
    return 1;
}

static char *coll_ucg_shift(const void *p, ptrdiff_t shift)
{
    return (char *)((uintptr_t)p + (uintptr_t)shift); /* MPI_BOTTOM too */
}

/* ------------------------------------------------------------------ */
/* The collectives                                                    */
/* ------------------------------------------------------------------ */

#define COLL_UCG_M(_module) ((mca_coll_ucg_module_t *)(_module))

int mca_coll_ucg_barrier(ompi_communicator_t *comm,
                         mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    if (coll_ucg_repeat_hit(m, UCG_COLL_BARRIER, NULL, NULL, 0, NULL, NULL,
                            0)) {
        return coll_ucg_repeat_run(m, UCG_COLL_BARRIER);
    }
    ucg_coll_args_t a;
    coll_ucg_args_init(&a, UCG_COLL_BARRIER);
    int rc = coll_ucg_run(m, &a);
    if (rc == COLL_UCG_FALLBACK) {
        return m->prev.barrier(comm, m->prev.barrier_module);
    }
    if (rc == OMPI_SUCCESS) {
        coll_ucg_repeat_note(m, UCG_COLL_BARRIER, NULL, NULL, 0, NULL, NULL, 0);
    }
    return rc;
}

/* Runs a data-moving collective whose staging is in mv (rc: how building
 * it went): blocking, or started as request req (mv is then req's, and
 * the staging is finished when it completes). */
static int coll_ucg_moves_go(mca_coll_ucg_module_t *m, const ucg_coll_args_t *a,
                             coll_ucg_moves_t *mv, coll_ucg_request_t *req,
                             int rc)
{
    if (rc == OMPI_SUCCESS && req != NULL) {
        req->has_moves = 1;
        rc = coll_ucg_start_nb(m, a, req);
        if (rc == OMPI_SUCCESS) {
            return rc;
        }
        req->has_moves = 0;
    } else if (rc == OMPI_SUCCESS) {
        rc = coll_ucg_run_ex(m, a, mv->src.tmp != NULL || mv->dst.tmp != NULL);
        if (rc == OMPI_SUCCESS) {
            rc = coll_ucg_moves_finish(mv);
        }
    } else if (m->group != NULL) { /* staging failed here, not elsewhere */
        coll_ucg_moves_fini(mv);
        return coll_ucg_local_failure(m, ucg_coll_type_name(a->coll),
                                      "staging its data");
    }
    coll_ucg_moves_fini(mv);
    return rc;
}

/* The staging of one call: the request's, or the caller's. */
#define COLL_UCG_MOVES(_req, _local)                                           \
    ((_req) != NULL ? &(_req)->moves : &(_local))

static int coll_ucg_bcast_do(void *buff, int count, ompi_datatype_t *dtype,
                             int root, ompi_communicator_t *comm,
                             mca_coll_ucg_module_t *m, coll_ucg_request_t *req)
{
    coll_ucg_moves_t local;
    coll_ucg_moves_t *mv = COLL_UCG_MOVES(req, local);
    coll_ucg_moves_init(mv);
    ucg_coll_args_t a;
    coll_ucg_args_init(&a, UCG_COLL_BCAST);
    coll_ucg_set_root(&a, root);
    coll_ucg_side_init(&mv->dst, buff, dtype);
    const int at_root = ompi_comm_rank(comm) == root;
    void *p = NULL;
    int rc = coll_ucg_side_flat(&mv->dst, (size_t)count, at_root, &p);
    coll_ucg_bytes(&a.dst, p, (size_t)count * mv->dst.tsize);
    mv->unpack = !at_root && !mv->dst.contig;
    mv->total = (size_t)count;
    return coll_ucg_moves_go(m, &a, mv, req, rc);
}

int mca_coll_ucg_bcast(void *buff, int count, ompi_datatype_t *dtype, int root,
                       ompi_communicator_t *comm,
                       mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    if (coll_ucg_repeat_hit(m, UCG_COLL_BCAST, NULL, buff, count, dtype, NULL,
                            root)) {
        return coll_ucg_repeat_run(m, UCG_COLL_BCAST);
    }
    int rc = coll_ucg_bcast_do(buff, count, dtype, root, comm, m, NULL);
    if (rc == COLL_UCG_FALLBACK) {
        return m->prev.bcast(buff, count, dtype, root, comm,
                             m->prev.bcast_module);
    }
    if (rc == OMPI_SUCCESS) {
        coll_ucg_repeat_note(m, UCG_COLL_BCAST, NULL, buff, count, dtype, NULL,
                             root);
    }
    return rc;
}

/* reduce, allreduce, scan, exscan */
static int coll_ucg_one_block(ucg_coll_type_t coll, const void *sbuf,
                              void *rbuf, int count, ompi_datatype_t *dtype,
                              struct ompi_op_t *op, int root,
                              ompi_communicator_t *comm,
                              mca_coll_ucg_module_t *m, coll_ucg_request_t *req)
{
    ucg_coll_args_t a;
    coll_ucg_user_t u_local;
    coll_ucg_user_t *u = req != NULL ? &req->user : &u_local;
    ptrdiff_t shift = 0;
    const char *why = NULL;
    coll_ucg_args_init(&a, coll);
    if (coll == UCG_COLL_REDUCE) {
        coll_ucg_set_root(&a, root);
    }
    if (!coll_ucg_reduction(&a, dtype, op, u, &shift, &why)) {
        COLL_UCG_LOG_FALLBACK(ucg_coll_type_name(coll), why);
        return COLL_UCG_FALLBACK;
    }
    if (sbuf == MPI_IN_PLACE) {
        coll_ucg_set_in_place(&a);
    } else {
        a.src.buffer = coll_ucg_shift(sbuf, shift);
        a.src.count = (size_t)count;
    }
    const int has_out = coll != UCG_COLL_REDUCE || ompi_comm_rank(comm) == root;
    if (has_out) {
        a.dst.buffer = coll_ucg_shift(rbuf, shift);
        a.dst.count = (size_t)count;
    }
    return req != NULL ? coll_ucg_start_nb(m, &a, req) : coll_ucg_run(m, &a);
}

int mca_coll_ucg_reduce(const void *sbuf, void *rbuf, int count,
                        ompi_datatype_t *dtype, struct ompi_op_t *op, int root,
                        ompi_communicator_t *comm,
                        mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    if (coll_ucg_repeat_hit(m, UCG_COLL_REDUCE, sbuf, rbuf, count, dtype, op,
                            root)) {
        return coll_ucg_repeat_run(m, UCG_COLL_REDUCE);
    }
    int rc = coll_ucg_one_block(UCG_COLL_REDUCE, sbuf, rbuf, count, dtype, op,
                                root, comm, m, NULL);
    if (rc == OMPI_SUCCESS) {
        coll_ucg_repeat_note(m, UCG_COLL_REDUCE, sbuf, rbuf, count, dtype, op,
                             root);
    }
    if (rc == COLL_UCG_FALLBACK) {
        return m->prev.reduce(sbuf, rbuf, count, dtype, op, root, comm,
                              m->prev.reduce_module);
    }
    return rc;
}

int mca_coll_ucg_allreduce(const void *sbuf, void *rbuf, int count,
                           ompi_datatype_t *dtype, struct ompi_op_t *op,
                           ompi_communicator_t *comm,
                           mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    if (coll_ucg_repeat_hit(m, UCG_COLL_ALLREDUCE, sbuf, rbuf, count, dtype, op,
                            0)) {
        return coll_ucg_repeat_run(m, UCG_COLL_ALLREDUCE);
    }
    int rc = coll_ucg_one_block(UCG_COLL_ALLREDUCE, sbuf, rbuf, count, dtype,
                                op, 0, comm, m, NULL);
    if (rc == OMPI_SUCCESS) {
        coll_ucg_repeat_note(m, UCG_COLL_ALLREDUCE, sbuf, rbuf, count, dtype,
                             op, 0);
    }
    if (rc == COLL_UCG_FALLBACK) {
        return m->prev.allreduce(sbuf, rbuf, count, dtype, op, comm,
                                 m->prev.allreduce_module);
    }
    return rc;
}

int mca_coll_ucg_scan(const void *sbuf, void *rbuf, int count,
                      ompi_datatype_t *dtype, struct ompi_op_t *op,
                      ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    int rc = coll_ucg_one_block(UCG_COLL_SCAN, sbuf, rbuf, count, dtype, op, 0,
                                comm, m, NULL);
    if (rc == COLL_UCG_FALLBACK) {
        return m->prev.scan(sbuf, rbuf, count, dtype, op, comm,
                            m->prev.scan_module);
    }
    return rc;
}

int mca_coll_ucg_exscan(const void *sbuf, void *rbuf, int count,
                        ompi_datatype_t *dtype, struct ompi_op_t *op,
                        ompi_communicator_t *comm,
                        mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    int rc = coll_ucg_one_block(UCG_COLL_EXSCAN, sbuf, rbuf, count, dtype, op,
                                0, comm, m, NULL);
    if (rc == COLL_UCG_FALLBACK) {
        return m->prev.exscan(sbuf, rbuf, count, dtype, op, comm,
                              m->prev.exscan_module);
    }
    return rc;
}

static int coll_ucg_rs(const void *sbuf, void *rbuf, const int *rcounts,
                       int rcount, ompi_datatype_t *dtype, struct ompi_op_t *op,
                       ompi_communicator_t *comm, mca_coll_ucg_module_t *m,
                       coll_ucg_request_t *req)
{
    const int block = rcounts == NULL;
    ucg_coll_type_t coll =
        block ? UCG_COLL_REDUCE_SCATTER_BLOCK : UCG_COLL_REDUCE_SCATTER;
    ucg_coll_args_t a;
    coll_ucg_user_t u_local;
    coll_ucg_user_t *u = req != NULL ? &req->user : &u_local;
    ptrdiff_t shift = 0;
    const char *why = NULL;
    coll_ucg_args_init(&a, coll);
    if (!coll_ucg_reduction(&a, dtype, op, u, &shift, &why)) {
        COLL_UCG_LOG_FALLBACK(ucg_coll_type_name(coll), why);
        return COLL_UCG_FALLBACK;
    }
    const int size = ompi_comm_size(comm);
    size_t *counts = NULL;
    size_t total = 0;
    if (block) {
        a.dst.count = (size_t)rcount;
        total = (size_t)rcount * (size_t)size;
    } else {
        counts = malloc(sizeof(size_t) * (size_t)size);
        if (counts == NULL && m->group != NULL) {
            return coll_ucg_local_failure(m, ucg_coll_type_name(coll),
                                          "no memory for its counts");
        }
        if (counts == NULL) {
            return COLL_UCG_FALLBACK;
        }
        for (int i = 0; i < size; ++i) {
            counts[i] = (size_t)rcounts[i];
            total += counts[i];
        }
        a.dst.counts = counts;
    }
    a.dst.buffer = coll_ucg_shift(rbuf, shift);
    if (sbuf == MPI_IN_PLACE) {
        coll_ucg_set_in_place(&a);
    } else {
        a.src.buffer = coll_ucg_shift(sbuf, shift);
        a.src.count = total;
    }
    int rc;
    if (req != NULL) {
        req->counts = counts; /* freed with the request */
        rc = coll_ucg_start_nb(m, &a, req);
    } else {
        rc = coll_ucg_run(m, &a);
        free(counts);
    }
    return rc;
}

int mca_coll_ucg_reduce_scatter(const void *sbuf, void *rbuf,
                                const int *rcounts, ompi_datatype_t *dtype,
                                struct ompi_op_t *op, ompi_communicator_t *comm,
                                mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    int rc = coll_ucg_rs(sbuf, rbuf, rcounts, 0, dtype, op, comm, m, NULL);
    if (rc == COLL_UCG_FALLBACK) {
        return m->prev.reduce_scatter(sbuf, rbuf, rcounts, dtype, op, comm,
                                      m->prev.reduce_scatter_module);
    }
    return rc;
}

int mca_coll_ucg_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                      ompi_datatype_t *dtype,
                                      struct ompi_op_t *op,
                                      ompi_communicator_t *comm,
                                      mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    int rc = coll_ucg_rs(sbuf, rbuf, NULL, rcount, dtype, op, comm, m, NULL);
    if (rc == COLL_UCG_FALLBACK) {
        return m->prev.reduce_scatter_block(
            sbuf, rbuf, rcount, dtype, op, comm,
            m->prev.reduce_scatter_block_module);
    }
    return rc;
}

/* The P-block output of gather, allgather, alltoall and their v forms:
 * rcount elements per block, or counts and displacements (vec); packed
 * through a staging buffer where the datatype is not contiguous. */
static int coll_ucg_dst_blocks(coll_ucg_moves_t *mv, ucg_coll_args_t *a,
                               int vec, int rcount, const int *rcounts,
                               const int *displs, int size, int in_place)
{
    void *p = NULL;
    int rc;
    mv->unpack = !mv->dst.contig;
    mv->vec = vec;
    mv->size = size;
    if (vec) {
        rc = coll_ucg_side_vec(&mv->dst, rcounts, displs, size, in_place, &p);
        coll_ucg_bytes(&a->dst, p, 0);
        a->dst.counts = mv->dst.counts;
        a->dst.displs = mv->dst.displs;
        mv->counts = rcounts;
        mv->displs = displs;
    } else {
        mv->total = (size_t)rcount * (size_t)size;
        rc = coll_ucg_side_flat(&mv->dst, mv->total, in_place, &p);
        coll_ucg_bytes(&a->dst, p, (size_t)rcount * mv->dst.tsize);
    }
    return rc;
}

/* gather, gatherv, allgather, allgatherv: one block in, P blocks out (at
 * the root only for gather). */
static int coll_ucg_gather_like(ucg_coll_type_t coll, const void *sbuf,
                                int scount, ompi_datatype_t *sdtype, void *rbuf,
                                int rcount, const int *rcounts,
                                const int *displs, ompi_datatype_t *rdtype,
                                int root, ompi_communicator_t *comm,
                                mca_coll_ucg_module_t *m,
                                coll_ucg_request_t *req)
{
    const int all = coll == UCG_COLL_ALLGATHER || coll == UCG_COLL_ALLGATHERV;
    const int vec = coll == UCG_COLL_GATHERV || coll == UCG_COLL_ALLGATHERV;
    const int size = ompi_comm_size(comm);
    const int has_out = all || ompi_comm_rank(comm) == root;
    const int in_place = sbuf == MPI_IN_PLACE;
    coll_ucg_moves_t local;
    coll_ucg_moves_t *mv = COLL_UCG_MOVES(req, local);
    coll_ucg_moves_init(mv);
    ucg_coll_args_t a;
    coll_ucg_args_init(&a, coll);
    if (!all) {
        coll_ucg_set_root(&a, root);
    }
    void *p = NULL;
    int rc = OMPI_SUCCESS;
    if (in_place) {
        coll_ucg_set_in_place(&a);
    } else {
        coll_ucg_side_init(&mv->src, sbuf, sdtype);
        rc = coll_ucg_side_flat(&mv->src, (size_t)scount, 1, &p);
        coll_ucg_bytes(&a.src, p, (size_t)scount * mv->src.tsize);
    }
    if (rc == OMPI_SUCCESS && has_out) {
        coll_ucg_side_init(&mv->dst, rbuf, rdtype);
        rc = coll_ucg_dst_blocks(mv, &a, vec, rcount, rcounts, displs, size,
                                 in_place);
    }
    return coll_ucg_moves_go(m, &a, mv, req, rc);
}

int mca_coll_ucg_gather(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                        void *rbuf, int rcount, ompi_datatype_t *rdtype,
                        int root, ompi_communicator_t *comm,
                        mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    int rc =
        coll_ucg_gather_like(UCG_COLL_GATHER, sbuf, scount, sdtype, rbuf,
                             rcount, NULL, NULL, rdtype, root, comm, m, NULL);
    if (rc == COLL_UCG_FALLBACK) {
        return m->prev.gather(sbuf, scount, sdtype, rbuf, rcount, rdtype, root,
                              comm, m->prev.gather_module);
    }
    return rc;
}

int mca_coll_ucg_gatherv(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                         void *rbuf, const int *rcounts, const int *displs,
                         ompi_datatype_t *rdtype, int root,
                         ompi_communicator_t *comm,
                         mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    int rc =
        coll_ucg_gather_like(UCG_COLL_GATHERV, sbuf, scount, sdtype, rbuf, 0,
                             rcounts, displs, rdtype, root, comm, m, NULL);
    if (rc == COLL_UCG_FALLBACK) {
        return m->prev.gatherv(sbuf, scount, sdtype, rbuf, rcounts, displs,
                               rdtype, root, comm, m->prev.gatherv_module);
    }
    return rc;
}

int mca_coll_ucg_allgather(const void *sbuf, int scount,
                           ompi_datatype_t *sdtype, void *rbuf, int rcount,
                           ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                           mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    int rc =
        coll_ucg_gather_like(UCG_COLL_ALLGATHER, sbuf, scount, sdtype, rbuf,
                             rcount, NULL, NULL, rdtype, 0, comm, m, NULL);
    if (rc == COLL_UCG_FALLBACK) {
        return m->prev.allgather(sbuf, scount, sdtype, rbuf, rcount, rdtype,
                                 comm, m->prev.allgather_module);
    }
    return rc;
}

int mca_coll_ucg_allgatherv(const void *sbuf, int scount,
                            ompi_datatype_t *sdtype, void *rbuf,
                            const int *rcounts, const int *displs,
                            ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                            mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    int rc =
        coll_ucg_gather_like(UCG_COLL_ALLGATHERV, sbuf, scount, sdtype, rbuf, 0,
                             rcounts, displs, rdtype, 0, comm, m, NULL);
    if (rc == COLL_UCG_FALLBACK) {
        return m->prev.allgatherv(sbuf, scount, sdtype, rbuf, rcounts, displs,
                                  rdtype, comm, m->prev.allgatherv_module);
    }
    return rc;
}

/* scatter, scatterv: P blocks in at the root, one block out. */
static int coll_ucg_scatter_like(int vec, const void *sbuf, int scount,
                                 const int *scounts, const int *displs,
                                 ompi_datatype_t *sdtype, void *rbuf,
                                 int rcount, ompi_datatype_t *rdtype, int root,
                                 ompi_communicator_t *comm,
                                 mca_coll_ucg_module_t *m,
                                 coll_ucg_request_t *req)
{
    const int size = ompi_comm_size(comm);
    const int at_root = ompi_comm_rank(comm) == root;
    const int in_place = at_root && rbuf == MPI_IN_PLACE;
    coll_ucg_moves_t local;
    coll_ucg_moves_t *mv = COLL_UCG_MOVES(req, local);
    coll_ucg_moves_init(mv);
    ucg_coll_args_t a;
    coll_ucg_args_init(&a, vec ? UCG_COLL_SCATTERV : UCG_COLL_SCATTER);
    coll_ucg_set_root(&a, root);
    void *p = NULL;
    int rc = OMPI_SUCCESS;
    if (at_root) {
        coll_ucg_side_init(&mv->src, sbuf, sdtype);
        if (vec) {
            rc = coll_ucg_side_vec(&mv->src, scounts, displs, size, 1, &p);
            coll_ucg_bytes(&a.src, p, 0);
            a.src.counts = mv->src.counts;
            a.src.displs = mv->src.displs;
        } else {
            rc = coll_ucg_side_flat(&mv->src, (size_t)scount * (size_t)size, 1,
                                    &p);
            coll_ucg_bytes(&a.src, p, (size_t)scount * mv->src.tsize);
        }
    }
    if (in_place) {
        coll_ucg_set_in_place(&a);
    } else if (rc == OMPI_SUCCESS) {
        coll_ucg_side_init(&mv->dst, rbuf, rdtype);
        rc = coll_ucg_side_flat(&mv->dst, (size_t)rcount, 0, &p);
        coll_ucg_bytes(&a.dst, p, (size_t)rcount * mv->dst.tsize);
        mv->unpack = !mv->dst.contig;
        mv->total = (size_t)rcount;
    }
    return coll_ucg_moves_go(m, &a, mv, req, rc);
}

int mca_coll_ucg_scatter(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                         void *rbuf, int rcount, ompi_datatype_t *rdtype,
                         int root, ompi_communicator_t *comm,
                         mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    int rc = coll_ucg_scatter_like(0, sbuf, scount, NULL, NULL, sdtype, rbuf,
                                   rcount, rdtype, root, comm, m, NULL);
    if (rc == COLL_UCG_FALLBACK) {
        return m->prev.scatter(sbuf, scount, sdtype, rbuf, rcount, rdtype, root,
                               comm, m->prev.scatter_module);
    }
    return rc;
}

int mca_coll_ucg_scatterv(const void *sbuf, const int *scounts,
                          const int *displs, ompi_datatype_t *sdtype,
                          void *rbuf, int rcount, ompi_datatype_t *rdtype,
                          int root, ompi_communicator_t *comm,
                          mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    int rc = coll_ucg_scatter_like(1, sbuf, 0, scounts, displs, sdtype, rbuf,
                                   rcount, rdtype, root, comm, m, NULL);
    if (rc == COLL_UCG_FALLBACK) {
        return m->prev.scatterv(sbuf, scounts, displs, sdtype, rbuf, rcount,
                                rdtype, root, comm, m->prev.scatterv_module);
    }
    return rc;
}

static int
coll_ucg_alltoall_like(const void *sbuf, int scount, const int *scounts,
                       const int *sdispls, ompi_datatype_t *sdtype, void *rbuf,
                       int rcount, const int *rcounts, const int *rdispls,
                       ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                       mca_coll_ucg_module_t *m, coll_ucg_request_t *req)
{
    const int vec = rcounts != NULL;
    const int size = ompi_comm_size(comm);
    const int in_place = sbuf == MPI_IN_PLACE;
    coll_ucg_moves_t local;
    coll_ucg_moves_t *mv = COLL_UCG_MOVES(req, local);
    coll_ucg_moves_init(mv);
    ucg_coll_args_t a;
    coll_ucg_args_init(&a, vec ? UCG_COLL_ALLTOALLV : UCG_COLL_ALLTOALL);
    if (!in_place) {
        coll_ucg_side_init(&mv->src, sbuf, sdtype);
    }
    coll_ucg_side_init(&mv->dst, rbuf, rdtype);
    void *p = NULL;
    int rc = OMPI_SUCCESS;
    if (in_place) {
        coll_ucg_set_in_place(&a);
    } else if (vec) {
        rc = coll_ucg_side_vec(&mv->src, scounts, sdispls, size, 1, &p);
        coll_ucg_bytes(&a.src, p, 0);
        a.src.counts = mv->src.counts;
        a.src.displs = mv->src.displs;
    } else {
        rc = coll_ucg_side_flat(&mv->src, (size_t)scount * (size_t)size, 1, &p);
        coll_ucg_bytes(&a.src, p, (size_t)scount * mv->src.tsize);
    }
    if (rc == OMPI_SUCCESS) {
        rc = coll_ucg_dst_blocks(mv, &a, vec, rcount, rcounts, rdispls, size,
                                 in_place);
    }
    return coll_ucg_moves_go(m, &a, mv, req, rc);
}

int mca_coll_ucg_alltoall(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                          void *rbuf, int rcount, ompi_datatype_t *rdtype,
                          ompi_communicator_t *comm,
                          mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    int rc = coll_ucg_alltoall_like(sbuf, scount, NULL, NULL, sdtype, rbuf,
                                    rcount, NULL, NULL, rdtype, comm, m, NULL);
    if (rc == COLL_UCG_FALLBACK) {
        return m->prev.alltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype,
                                comm, m->prev.alltoall_module);
    }
    return rc;
}

int mca_coll_ucg_alltoallv(const void *sbuf, const int *scounts,
                           const int *sdispls, ompi_datatype_t *sdtype,
                           void *rbuf, const int *rcounts, const int *rdispls,
                           ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                           mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    int rc = coll_ucg_alltoall_like(sbuf, 0, scounts, sdispls, sdtype, rbuf, 0,
                                    rcounts, rdispls, rdtype, comm, m, NULL);
    if (rc == COLL_UCG_FALLBACK) {
        return m->prev.alltoallv(sbuf, scounts, sdispls, sdtype, rbuf, rcounts,
                                 rdispls, rdtype, comm,
                                 m->prev.alltoallv_module);
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* Nonblocking forms                                                  */
/* ------------------------------------------------------------------ */

/* Runs `_start` (an expression using r) for a new request; on fallback
 * calls the previous module's `_prev_call`. */
#define COLL_UCG_NB(_comm, _request, _start, _prev_fn, _prev_call)             \
    do {                                                                       \
        coll_ucg_request_t *r = coll_ucg_request_new(_comm);                   \
        if (r == NULL && m->group != NULL) {                                   \
            return coll_ucg_local_failure(m, "a nonblocking collective",       \
                                          "no memory for its request");        \
        }                                                                      \
        if (r == NULL) {                                                       \
            return OMPI_ERR_OUT_OF_RESOURCE;                                   \
        }                                                                      \
        int rc_ = (_start);                                                    \
        if (rc_ == OMPI_SUCCESS) {                                             \
            *(_request) = &r->super.super;                                     \
            return OMPI_SUCCESS;                                               \
        }                                                                      \
        coll_ucg_request_drop(r);                                              \
        if (rc_ != COLL_UCG_FALLBACK) {                                        \
            return rc_;                                                        \
        }                                                                      \
        if ((_prev_fn) == NULL) {                                              \
            return OMPI_ERR_NOT_SUPPORTED;                                     \
        }                                                                      \
        return (_prev_call);                                                   \
    } while (0)

int mca_coll_ucg_ibarrier(ompi_communicator_t *comm, ompi_request_t **req,
                          mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    ucg_coll_args_t a;
    coll_ucg_args_init(&a, UCG_COLL_BARRIER);
    COLL_UCG_NB(comm, req, coll_ucg_start_nb(m, &a, r), m->prev.ibarrier,
                m->prev.ibarrier(comm, req, m->prev.ibarrier_module));
}

int mca_coll_ucg_ireduce(const void *sbuf, void *rbuf, int count,
                         ompi_datatype_t *dtype, struct ompi_op_t *op, int root,
                         ompi_communicator_t *comm, ompi_request_t **req,
                         mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    COLL_UCG_NB(comm, req,
                coll_ucg_one_block(UCG_COLL_REDUCE, sbuf, rbuf, count, dtype,
                                   op, root, comm, m, r),
                m->prev.ireduce,
                m->prev.ireduce(sbuf, rbuf, count, dtype, op, root, comm, req,
                                m->prev.ireduce_module));
}

/* iallreduce, iscan and iexscan: one signature, one block each way. */
static int coll_ucg_i_one_block(ucg_coll_type_t coll, const void *sbuf,
                                void *rbuf, int count, ompi_datatype_t *dtype,
                                struct ompi_op_t *op, ompi_communicator_t *comm,
                                ompi_request_t **req, mca_coll_ucg_module_t *m,
                                mca_coll_base_module_iallreduce_fn_t prev,
                                mca_coll_base_module_t *prev_module)
{
    COLL_UCG_NB(
        comm, req,
        coll_ucg_one_block(coll, sbuf, rbuf, count, dtype, op, 0, comm, m, r),
        prev, prev(sbuf, rbuf, count, dtype, op, comm, req, prev_module));
}

int mca_coll_ucg_iallreduce(const void *sbuf, void *rbuf, int count,
                            ompi_datatype_t *dtype, struct ompi_op_t *op,
                            ompi_communicator_t *comm, ompi_request_t **req,
                            mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    return coll_ucg_i_one_block(UCG_COLL_ALLREDUCE, sbuf, rbuf, count, dtype,
                                op, comm, req, m, m->prev.iallreduce,
                                m->prev.iallreduce_module);
}

int mca_coll_ucg_iscan(const void *sbuf, void *rbuf, int count,
                       ompi_datatype_t *dtype, struct ompi_op_t *op,
                       ompi_communicator_t *comm, ompi_request_t **req,
                       mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    return coll_ucg_i_one_block(UCG_COLL_SCAN, sbuf, rbuf, count, dtype, op,
                                comm, req, m, m->prev.iscan,
                                m->prev.iscan_module);
}

int mca_coll_ucg_iexscan(const void *sbuf, void *rbuf, int count,
                         ompi_datatype_t *dtype, struct ompi_op_t *op,
                         ompi_communicator_t *comm, ompi_request_t **req,
                         mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    return coll_ucg_i_one_block(UCG_COLL_EXSCAN, sbuf, rbuf, count, dtype, op,
                                comm, req, m, m->prev.iexscan,
                                m->prev.iexscan_module);
}

int mca_coll_ucg_ireduce_scatter(const void *sbuf, void *rbuf,
                                 const int *rcounts, ompi_datatype_t *dtype,
                                 struct ompi_op_t *op,
                                 ompi_communicator_t *comm,
                                 ompi_request_t **req,
                                 mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    COLL_UCG_NB(comm, req,
                coll_ucg_rs(sbuf, rbuf, rcounts, 0, dtype, op, comm, m, r),
                m->prev.ireduce_scatter,
                m->prev.ireduce_scatter(sbuf, rbuf, rcounts, dtype, op, comm,
                                        req, m->prev.ireduce_scatter_module));
}

int mca_coll_ucg_ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
                                       ompi_datatype_t *dtype,
                                       struct ompi_op_t *op,
                                       ompi_communicator_t *comm,
                                       ompi_request_t **req,
                                       mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    COLL_UCG_NB(
        comm, req, coll_ucg_rs(sbuf, rbuf, NULL, rcount, dtype, op, comm, m, r),
        m->prev.ireduce_scatter_block,
        m->prev.ireduce_scatter_block(sbuf, rbuf, rcount, dtype, op, comm, req,
                                      m->prev.ireduce_scatter_block_module));
}

int mca_coll_ucg_ibcast(void *buff, int count, ompi_datatype_t *dtype, int root,
                        ompi_communicator_t *comm, ompi_request_t **req,
                        mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    COLL_UCG_NB(comm, req,
                coll_ucg_bcast_do(buff, count, dtype, root, comm, m, r),
                m->prev.ibcast,
                m->prev.ibcast(buff, count, dtype, root, comm, req,
                               m->prev.ibcast_module));
}

int mca_coll_ucg_igather(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                         void *rbuf, int rcount, ompi_datatype_t *rdtype,
                         int root, ompi_communicator_t *comm,
                         ompi_request_t **req, mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    COLL_UCG_NB(comm, req,
                coll_ucg_gather_like(UCG_COLL_GATHER, sbuf, scount, sdtype,
                                     rbuf, rcount, NULL, NULL, rdtype, root,
                                     comm, m, r),
                m->prev.igather,
                m->prev.igather(sbuf, scount, sdtype, rbuf, rcount, rdtype,
                                root, comm, req, m->prev.igather_module));
}

int mca_coll_ucg_igatherv(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                          void *rbuf, const int *rcounts, const int *displs,
                          ompi_datatype_t *rdtype, int root,
                          ompi_communicator_t *comm, ompi_request_t **req,
                          mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    COLL_UCG_NB(
        comm, req,
        coll_ucg_gather_like(UCG_COLL_GATHERV, sbuf, scount, sdtype, rbuf, 0,
                             rcounts, displs, rdtype, root, comm, m, r),
        m->prev.igatherv,
        m->prev.igatherv(sbuf, scount, sdtype, rbuf, rcounts, displs, rdtype,
                         root, comm, req, m->prev.igatherv_module));
}

int mca_coll_ucg_iallgather(const void *sbuf, int scount,
                            ompi_datatype_t *sdtype, void *rbuf, int rcount,
                            ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                            ompi_request_t **req,
                            mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    COLL_UCG_NB(comm, req,
                coll_ucg_gather_like(UCG_COLL_ALLGATHER, sbuf, scount, sdtype,
                                     rbuf, rcount, NULL, NULL, rdtype, 0, comm,
                                     m, r),
                m->prev.iallgather,
                m->prev.iallgather(sbuf, scount, sdtype, rbuf, rcount, rdtype,
                                   comm, req, m->prev.iallgather_module));
}

int mca_coll_ucg_iallgatherv(const void *sbuf, int scount,
                             ompi_datatype_t *sdtype, void *rbuf,
                             const int *rcounts, const int *displs,
                             ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                             ompi_request_t **req,
                             mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    COLL_UCG_NB(
        comm, req,
        coll_ucg_gather_like(UCG_COLL_ALLGATHERV, sbuf, scount, sdtype, rbuf, 0,
                             rcounts, displs, rdtype, 0, comm, m, r),
        m->prev.iallgatherv,
        m->prev.iallgatherv(sbuf, scount, sdtype, rbuf, rcounts, displs, rdtype,
                            comm, req, m->prev.iallgatherv_module));
}

int mca_coll_ucg_iscatter(const void *sbuf, int scount, ompi_datatype_t *sdtype,
                          void *rbuf, int rcount, ompi_datatype_t *rdtype,
                          int root, ompi_communicator_t *comm,
                          ompi_request_t **req, mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    COLL_UCG_NB(comm, req,
                coll_ucg_scatter_like(0, sbuf, scount, NULL, NULL, sdtype, rbuf,
                                      rcount, rdtype, root, comm, m, r),
                m->prev.iscatter,
                m->prev.iscatter(sbuf, scount, sdtype, rbuf, rcount, rdtype,
                                 root, comm, req, m->prev.iscatter_module));
}

int mca_coll_ucg_iscatterv(const void *sbuf, const int *scounts,
                           const int *displs, ompi_datatype_t *sdtype,
                           void *rbuf, int rcount, ompi_datatype_t *rdtype,
                           int root, ompi_communicator_t *comm,
                           ompi_request_t **req, mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    COLL_UCG_NB(comm, req,
                coll_ucg_scatter_like(1, sbuf, 0, scounts, displs, sdtype, rbuf,
                                      rcount, rdtype, root, comm, m, r),
                m->prev.iscatterv,
                m->prev.iscatterv(sbuf, scounts, displs, sdtype, rbuf, rcount,
                                  rdtype, root, comm, req,
                                  m->prev.iscatterv_module));
}

int mca_coll_ucg_ialltoall(const void *sbuf, int scount,
                           ompi_datatype_t *sdtype, void *rbuf, int rcount,
                           ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                           ompi_request_t **req, mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    COLL_UCG_NB(comm, req,
                coll_ucg_alltoall_like(sbuf, scount, NULL, NULL, sdtype, rbuf,
                                       rcount, NULL, NULL, rdtype, comm, m, r),
                m->prev.ialltoall,
                m->prev.ialltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype,
                                  comm, req, m->prev.ialltoall_module));
}

int mca_coll_ucg_ialltoallv(const void *sbuf, const int *scounts,
                            const int *sdispls, ompi_datatype_t *sdtype,
                            void *rbuf, const int *rcounts, const int *rdispls,
                            ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                            ompi_request_t **req,
                            mca_coll_base_module_t *module)
{
    mca_coll_ucg_module_t *m = COLL_UCG_M(module);
    COLL_UCG_NB(comm, req,
                coll_ucg_alltoall_like(sbuf, 0, scounts, sdispls, sdtype, rbuf,
                                       0, rcounts, rdispls, rdtype, comm, m, r),
                m->prev.ialltoallv,
                m->prev.ialltoallv(sbuf, scounts, sdispls, sdtype, rbuf,
                                   rcounts, rdispls, rdtype, comm, req,
                                   m->prev.ialltoallv_module));
}
