/* SPDX-License-Identifier: BSD-3-Clause */
/* A conformance sweep through coll/ucg: random cases of every collective,
 * blocking and nonblocking, x datatypes (predefined, contiguous, vector,
 * indexed, struct with gaps, resized, a true lb past 0, dup'ed, freed
 * before the wait) x operators (every predefined one on the types it
 * takes, a user commutative and a user non-commutative one, freed before
 * the wait) x MPI_IN_PLACE, zero and odd counts, every root x
 * communicators (world, dup, split into uneven parts with reversed keys,
 * one freed while another is busy).
 *
 * The oracle needs no collective: every rank derives every rank's input
 * from (seed, case, rank), builds its own expected output (moves: by the
 * types' int offsets; reductions: a fold in rank order with
 * MPI_Reduce_local, Open MPI's own kernels), and compares its whole buffer
 * (gaps and slack included, filled with a sentinel). Each rank prints its
 * own failures and exits non-zero on any: the verdict never passes
 * through the collectives under test.
 *
 * With a soak time, rounds of [cases] on communicators created and freed
 * each round run that long; descriptors, /dev/shm and memory must stay
 * flat after a warm-up (ctest -L soak with -DUCG_SOAK_SECONDS=<s>).
 *
 *   test_sweep [cases] [soak seconds]
 *                          UCG_SWEEP_SEED=<n> replays a run;
 *                          UCG_SWEEP_VERBOSE=1 names each case done
 */
#include "verdict.h"

#include <dirent.h>
#include <malloc.h>
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SENTINEL 0xA5
#define SLACK 32
#define MAX_OFFS 4

/* ------------------------------------------------------------------ */
/* Deterministic values                                               */
/* ------------------------------------------------------------------ */

static uint64_t g_seed;

static uint32_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return (uint32_t)x;
}

static uint32_t hash4(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return mix(g_seed ^ mix(a * 0x9E3779B97F4A7C15ULL ^ mix(b + 17) ^
                            mix(c * 31 + 7) ^ mix(d * 131 + 3)));
}

/* A case's random choices: the same on every rank. */
typedef struct rng {
    uint64_t state;
} rng_t;

static uint32_t rnd(rng_t *r, uint32_t n)
{
    r->state = r->state * 6364136223846793005ULL + 1442695040888963407ULL;
    return n == 0 ? 0 : mix(r->state) % n;
}

/* ------------------------------------------------------------------ */
/* Int-based datatypes: where each element's ints lie                 */
/* ------------------------------------------------------------------ */

typedef struct itype {
    const char *name;
    MPI_Datatype t;
    int nints;
    int offs[MAX_OFFS]; /* byte offsets of the ints in one element; NULL
                           offsets at set time: the ints back to back */
    MPI_Aint extent;
} itype_t;

enum {
    T_INT,
    T_2INT,
    T_CONTIG2,
    T_CONTIG3,
    T_VECTOR,
    T_INDEXED,
    T_STRUCT,
    T_RESIZED,
    T_LB4,
    T_DUP,
    T_BIG, /* 514 ints: an element no power-of-two chunk ends on */
    T_COUNT
};

static itype_t g_types[T_COUNT];
/* A type made for one call and freed before its wait (a dup of one of
 * the above): user operators look types up here too. */
static itype_t g_freed;

static void itype_set(int i, const char *name, MPI_Datatype t, int nints,
                      const int *offs)
{
    itype_t *it = &g_types[i];
    MPI_Aint lb;
    it->name = name;
    it->t = t;
    it->nints = nints;
    for (int j = 0; j < nints && j < MAX_OFFS; ++j) {
        it->offs[j] = offs != NULL ? offs[j] : 4 * j;
    }
    MPI_Type_get_extent(t, &lb, &it->extent);
}

static void types_init(void)
{
    MPI_Datatype t, u;
    itype_set(T_INT, "int", MPI_INT, 1, (int[]){0});
    itype_set(T_2INT, "2int", MPI_2INT, 2, (int[]){0, 4});
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_commit(&t);
    itype_set(T_CONTIG2, "contig2", t, 2, (int[]){0, 4});
    MPI_Type_contiguous(3, MPI_INT, &t);
    MPI_Type_commit(&t);
    itype_set(T_CONTIG3, "contig3", t, 3, (int[]){0, 4, 8});
    MPI_Type_vector(2, 1, 3, MPI_INT, &t);
    MPI_Type_commit(&t);
    itype_set(T_VECTOR, "vector", t, 2, (int[]){0, 12});
    MPI_Type_indexed(2, (int[]){1, 2}, (int[]){0, 3}, MPI_INT, &t);
    MPI_Type_commit(&t);
    itype_set(T_INDEXED, "indexed", t, 3, (int[]){0, 12, 16});
    MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8},
                           (MPI_Datatype[]){MPI_INT, MPI_INT}, &t);
    MPI_Type_commit(&t);
    itype_set(T_STRUCT, "struct-gaps", t, 2, (int[]){0, 8});
    MPI_Type_create_resized(MPI_INT, 0, 8, &t);
    MPI_Type_commit(&t);
    itype_set(T_RESIZED, "resized", t, 1, (int[]){0});
    /* lb 4, extent 4: contiguous data whose origin is 4 bytes before */
    MPI_Type_create_struct(1, (int[]){1}, (MPI_Aint[]){4},
                           (MPI_Datatype[]){MPI_INT}, &u);
    MPI_Type_commit(&u);
    itype_set(T_LB4, "lb4", u, 1, (int[]){4});
    MPI_Type_dup(MPI_INT, &t);
    itype_set(T_DUP, "dup", t, 1, (int[]){0});
    MPI_Type_contiguous(514, MPI_INT, &t);
    MPI_Type_commit(&t);
    itype_set(T_BIG, "contig514", t, 514, NULL);
}

static void types_fini(void)
{
    for (int i = T_CONTIG2; i < T_COUNT; ++i) {
        MPI_Type_free(&g_types[i].t);
    }
}

static const itype_t *itype_of(MPI_Datatype t)
{
    for (int i = 0; i < T_COUNT; ++i) {
        if (g_types[i].t == t) {
            return &g_types[i];
        }
    }
    return g_freed.t == t ? &g_freed : NULL;
}

/* Bytes for `count` elements of `it` (slack after, for overruns). */
static size_t ibytes(const itype_t *it, size_t count)
{
    return (size_t)it->extent * count + 8 + SLACK;
}

static int *iat(char *buf, const itype_t *it, size_t elem, int j)
{
    const size_t off = j < MAX_OFFS ? (size_t)it->offs[j] : 4 * (size_t)j;
    return (int *)(buf + (size_t)it->extent * elem + off);
}

/* ------------------------------------------------------------------ */
/* User operators over the int types                                  */
/* ------------------------------------------------------------------ */

static int g_user_errors;

static void op_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const itype_t *it = itype_of(*dt);
    if (it == NULL) {
        ++g_user_errors;
        return;
    }
    for (int e = 0; e < *len; ++e) {
        for (int j = 0; j < it->nints; ++j) {
            int *o = iat(inout, it, (size_t)e, j);
            *o = (int)((uint32_t)*o + (uint32_t)*iat(in, it, (size_t)e, j));
        }
    }
}

/* Pairs (a, b) as x -> a x + b; in o inout (MPI: in is the left operand):
 * associative, not commutative. Types with an even int count only. */
static void op_affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const itype_t *it = itype_of(*dt);
    if (it == NULL || it->nints % 2 != 0) {
        ++g_user_errors;
        return;
    }
    for (int e = 0; e < *len; ++e) {
        for (int j = 0; j < it->nints; j += 2) {
            uint32_t a1 = (uint32_t)*iat(in, it, (size_t)e, j);
            uint32_t b1 = (uint32_t)*iat(in, it, (size_t)e, j + 1);
            int *a2 = iat(inout, it, (size_t)e, j);
            int *b2 = iat(inout, it, (size_t)e, j + 1);
            uint32_t na = a1 * (uint32_t)*a2;
            uint32_t nb = a1 * (uint32_t)*b2 + b1;
            *a2 = (int)na;
            *b2 = (int)nb;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Predefined types for predefined operators                          */
/* ------------------------------------------------------------------ */

typedef enum { K_INT, K_UINT, K_FLOAT, K_PAIR } kind_t;

typedef struct ptype {
    const char *name;
    MPI_Datatype t;
    size_t size;
    kind_t kind;
} ptype_t;

static const ptype_t *ptypes(int *n)
{
    static ptype_t p[16];
    static int count;
    if (count == 0) {
        ptype_t all[] = {
            {"int", MPI_INT, sizeof(int), K_INT},
            {"long", MPI_LONG, sizeof(long), K_INT},
            {"short", MPI_SHORT, sizeof(short), K_INT},
            {"signed char", MPI_SIGNED_CHAR, 1, K_INT},
            {"int64_t", MPI_INT64_T, 8, K_INT},
            {"unsigned", MPI_UNSIGNED, sizeof(unsigned), K_UINT},
            {"uint8_t", MPI_UINT8_T, 1, K_UINT},
            {"unsigned long long", MPI_UNSIGNED_LONG_LONG, 8, K_UINT},
            {"float", MPI_FLOAT, sizeof(float), K_FLOAT},
            {"double", MPI_DOUBLE, sizeof(double), K_FLOAT},
            /* pairs without padding (padding bytes are nobody's) */
            {"2int", MPI_2INT, 2 * sizeof(int), K_PAIR},
            {"float_int", MPI_FLOAT_INT, 2 * sizeof(int), K_PAIR},
        };
        count = (int)(sizeof(all) / sizeof(all[0]));
        memcpy(p, all, sizeof(all));
    }
    *n = count;
    return p;
}

typedef struct pop {
    const char *name;
    MPI_Op op;
} pop_t;

static const pop_t g_arith[] = {
    {"sum", MPI_SUM}, {"prod", MPI_PROD}, {"min", MPI_MIN}, {"max", MPI_MAX}};
static const pop_t g_logic[] = {{"land", MPI_LAND}, {"lor", MPI_LOR},
                                {"lxor", MPI_LXOR}, {"band", MPI_BAND},
                                {"bor", MPI_BOR},   {"bxor", MPI_BXOR}};
static const pop_t g_loc[] = {{"maxloc", MPI_MAXLOC}, {"minloc", MPI_MINLOC}};

/* One element's value for a predefined type: small, so every operator is
 * exact in any order (PROD of 8 ranks stays far from overflow). */
static void pvalue(const ptype_t *p, MPI_Op op, char *dst, uint32_t h)
{
    long v = op == MPI_PROD ? (long[]){1, -1, 2}[h % 3] : (long)(h % 7) - 3;
    if (p->kind == K_UINT) {
        v = op == MPI_PROD ? 1 + (long)(h % 2) : (long)(h % 5);
    }
    if (p->t == MPI_INT) {
        *(int *)dst = (int)v;
    } else if (p->t == MPI_LONG) {
        *(long *)dst = v;
    } else if (p->t == MPI_SHORT) {
        *(short *)dst = (short)v;
    } else if (p->t == MPI_SIGNED_CHAR) {
        *(signed char *)dst = (signed char)v;
    } else if (p->t == MPI_INT64_T) {
        *(int64_t *)dst = v;
    } else if (p->t == MPI_UNSIGNED) {
        *(unsigned *)dst = (unsigned)v;
    } else if (p->t == MPI_UINT8_T) {
        *(uint8_t *)dst = (uint8_t)v;
    } else if (p->t == MPI_UNSIGNED_LONG_LONG) {
        *(unsigned long long *)dst = (unsigned long long)v;
    } else if (p->t == MPI_FLOAT) {
        *(float *)dst = (float)v;
    } else if (p->t == MPI_DOUBLE) {
        *(double *)dst = (double)v;
    } else if (p->t == MPI_2INT) {
        int pr[2] = {(int)(h % 4), (int)((h >> 8) % 5)};
        memcpy(dst, pr, sizeof(pr));
    } else if (p->t == MPI_FLOAT_INT) {
        struct {
            float v;
            int i;
        } pr = {(float)(h % 4), (int)((h >> 8) % 5)};
        memcpy(dst, &pr, sizeof(pr));
    }
}

/* ------------------------------------------------------------------ */
/* Cases                                                              */
/* ------------------------------------------------------------------ */

enum {
    C_BARRIER,
    C_BCAST,
    C_GATHER,
    C_GATHERV,
    C_SCATTER,
    C_SCATTERV,
    C_ALLGATHER,
    C_ALLGATHERV,
    C_ALLTOALL,
    C_ALLTOALLV,
    C_REDUCE,
    C_ALLREDUCE,
    C_REDUCE_SCATTER,
    C_REDUCE_SCATTER_BLOCK,
    C_SCAN,
    C_EXSCAN,
    C_COUNT
};

static const char *g_coll_names[C_COUNT] = {
    "barrier",        "bcast",
    "gather",         "gatherv",
    "scatter",        "scatterv",
    "allgather",      "allgatherv",
    "alltoall",       "alltoallv",
    "reduce",         "allreduce",
    "reduce_scatter", "reduce_scatter_block",
    "scan",           "exscan"};

typedef struct ctx {
    MPI_Comm comm;
    const char *comm_name;
    int rank, size;
    int world_rank;
    long case_no;
    int errors;
    char what[256]; /* the case, for failure lines */
} ctx_t;

/* One failure line per problem (at most 20 per rank), with what replays
 * it: the seed and the case. */
static void fail(ctx_t *c, const char *msg, long v)
{
    ++c->errors;
    if (c->errors <= 20) {
        fprintf(stderr,
                "sweep: rank %d: case %ld FAILED (seed %llu; %s): %s %ld\n",
                c->world_rank, c->case_no, (unsigned long long)g_seed, c->what,
                msg, v);
    }
}

static void check_buf(ctx_t *c, const char *name, const char *got,
                      const char *want, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        if (got[i] != want[i]) {
            ++c->errors;
            if (c->errors <= 20) {
                fprintf(stderr,
                        "sweep: rank %d: case %ld FAILED (seed %llu; %s): "
                        "%s: byte %zu of %zu is 0x%02x, expected 0x%02x\n",
                        c->world_rank, c->case_no, (unsigned long long)g_seed,
                        c->what, name, i, n, (unsigned char)got[i],
                        (unsigned char)want[i]);
            }
            return;
        }
    }
}

static char *sbuf_new(size_t bytes)
{
    char *b = malloc(bytes);
    memset(b, SENTINEL, bytes);
    return b;
}

/* The int k of the block that rank src sends to block index blk. */
static int V(long case_no, int src, int blk, int k)
{
    return (int)hash4((uint64_t)case_no, (uint64_t)src, (uint64_t)blk,
                      (uint64_t)k);
}

/* Writes ints [k0, k0 + n) of stream (src, blk) into elements of `it`
 * starting at element e0 (n a multiple of it->nints). */
static void put_ints(char *buf, const itype_t *it, size_t e0, long case_no,
                     int src, int blk, int k0, int n)
{
    for (int k = 0; k < n; ++k) {
        *iat(buf, it, e0 + (size_t)(k / it->nints), k % it->nints) =
            V(case_no, src, blk, k0 + k);
    }
}

/* A type for `ints` ints per block whose int count divides `unit`. */
static int pick_type(rng_t *r, int unit)
{
    for (;;) {
        int t = (int)rnd(r, T_COUNT);
        if (unit % g_types[t].nints == 0) {
            return t;
        }
    }
}

/* Starts or runs one collective; nonblocking: waits after freeing what
 * the case frees. Returns the MPI error code. */
typedef struct call {
    int nb;
    MPI_Request req;
    MPI_Datatype free_type; /* freed before the wait */
    MPI_Op free_op;
} call_t;

static int finish(call_t *cl, int rc)
{
    if (!cl->nb || rc != MPI_SUCCESS) {
        return rc;
    }
    if (cl->free_type != MPI_DATATYPE_NULL) {
        MPI_Type_free(&cl->free_type);
    }
    if (cl->free_op != MPI_OP_NULL) {
        MPI_Op_free(&cl->free_op);
    }
    return MPI_Wait(&cl->req, MPI_STATUS_IGNORE);
}

/* ---- data moves -------------------------------------------------- */

static void run_moves(ctx_t *c, int coll, rng_t *r, int nb, int freed)
{
    const int P = c->size, me = c->rank;
    const int unit = (int[]){1, 2, 3, 6}[rnd(r, 4)];
    const int root = (int)rnd(r, (uint32_t)P);
    int in_place = rnd(r, 3) == 0;
    /* ints per block, per (src, dst) pair for v forms */
    int *m = malloc(sizeof(int) * (size_t)P * (size_t)P);
    const int flat = unit * (int)rnd(r, 4) + (rnd(r, 4) == 0 ? 0 : unit);
    for (int i = 0; i < P * P; ++i) {
        m[i] = unit * (int)rnd(r, 4);
    }
    /* each rank's types: independent (same signature is all MPI asks) */
    int *st = malloc(sizeof(int) * (size_t)P),
        *rt = malloc(sizeof(int) * (size_t)P);
    for (int i = 0; i < P; ++i) {
        st[i] = pick_type(r, unit);
        rt[i] = pick_type(r, unit);
    }
    const int vec = coll == C_GATHERV || coll == C_SCATTERV ||
                    coll == C_ALLGATHERV || coll == C_ALLTOALLV;
    /* v forms: rank i's block holds m[i*P + j] ints for j (gatherv and
     * allgatherv: m[i*P] for all j; scatterv: m[root*P + j]) */
    int blk_ints_from[64], blk_ints_to[64];
    for (int i = 0; i < P; ++i) {
        int gi = vec ? m[i * P] : flat;        /* what i contributes */
        int si = vec ? m[root * P + i] : flat; /* what the root gives i */
        if (coll == C_ALLTOALL || coll == C_ALLTOALLV) {
            blk_ints_from[i] = vec ? m[i * P + me] : flat; /* i -> me */
            blk_ints_to[i] = vec ? m[me * P + i] : flat;   /* me -> i */
        } else if (coll == C_SCATTER || coll == C_SCATTERV) {
            blk_ints_from[i] = si;
            blk_ints_to[i] = si;
        } else {
            blk_ints_from[i] = gi;
            blk_ints_to[i] = gi;
        }
    }
    if (coll == C_BCAST) {
        in_place = 0; /* bcast has no in-place form */
    }
    const itype_t *S = &g_types[st[me]], *R = &g_types[rt[me]];
    MPI_Datatype sdt = S->t, rdt = R->t;
    call_t cl = {
        .nb = nb, .free_type = MPI_DATATYPE_NULL, .free_op = MPI_OP_NULL};
    if (freed && nb) { /* the receive side's type, freed before the wait */
        MPI_Type_dup(R->t, &rdt);
        g_freed = *R;
        g_freed.t = rdt;
        cl.free_type = rdt;
    }
    snprintf(c->what, sizeof(c->what),
             "%s%s on %s, root %d, unit %d, send %s, recv %s%s%s",
             nb ? "i" : "", g_coll_names[coll], c->comm_name, root, unit,
             S->name, R->name, in_place ? ", in place" : "",
             cl.free_type != MPI_DATATYPE_NULL ? ", type freed before wait"
                                               : "");
    /* element counts and displacements per peer, on each side */
    int *scounts = calloc((size_t)P, sizeof(int)),
        *sdispls = calloc((size_t)P, sizeof(int));
    int *rcounts = calloc((size_t)P, sizeof(int)),
        *rdispls = calloc((size_t)P, sizeof(int));
    size_t selems = 0, relems = 0;
    /* receive displacements: blocks in a shuffled order with gaps */
    int *order = malloc(sizeof(int) * (size_t)P);
    for (int i = 0; i < P; ++i) {
        order[i] = i;
    }
    for (int i = P - 1; vec && i > 0; --i) {
        int j = (int)rnd(r, (uint32_t)i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int n = 0; n < P; ++n) {
        int i = order[n];
        rcounts[i] = blk_ints_from[i] / R->nints;
        rdispls[i] = (int)relems + (vec ? (int)rnd(r, 2) : 0);
        relems = (size_t)rdispls[i] + (size_t)rcounts[i];
        if (!vec) {
            rdispls[i] = i * rcounts[i];
            relems = (size_t)P * (size_t)rcounts[i];
        }
    }
    for (int i = 0; i < P; ++i) {
        scounts[i] = blk_ints_to[i] / S->nints;
        sdispls[i] = (int)selems;
        selems += (size_t)scounts[i];
    }
    char *sb = NULL, *rb = NULL, *want = NULL;
    size_t sbytes = 0, rbytes = 0;
    int rc = MPI_SUCCESS;
    /* inputs; expected outputs */
    switch (coll) {
    case C_BCAST: {
        int cnt = flat / R->nints;
        rbytes = ibytes(R, (size_t)cnt);
        rb = sbuf_new(rbytes);
        want = sbuf_new(rbytes);
        put_ints(want, R, 0, c->case_no, root, 0, 0, flat);
        if (me == root) {
            memcpy(rb, want, rbytes);
        }
        rc = nb ? MPI_Ibcast(rb, cnt, rdt, root, c->comm, &cl.req)
                : MPI_Bcast(rb, cnt, rdt, root, c->comm);
        break;
    }
    case C_GATHER:
    case C_GATHERV:
    case C_ALLGATHER:
    case C_ALLGATHERV: {
        const int all = coll == C_ALLGATHER || coll == C_ALLGATHERV;
        const int out = all || me == root;
        in_place = in_place && out;
        const int sc = blk_ints_from[me] / S->nints; /* my own block */
        sbytes = ibytes(S, (size_t)sc);
        sb = sbuf_new(sbytes);
        put_ints(sb, S, 0, c->case_no, me, 0, 0, blk_ints_from[me]);
        if (out) {
            rbytes = ibytes(R, relems);
            rb = sbuf_new(rbytes);
            want = sbuf_new(rbytes);
            for (int i = 0; i < P; ++i) {
                put_ints(want, R, (size_t)rdispls[i], c->case_no, i, 0, 0,
                         blk_ints_from[i]);
            }
            if (in_place) { /* my block is already in place */
                put_ints(rb, R, (size_t)rdispls[me], c->case_no, me, 0, 0,
                         blk_ints_from[me]);
            }
        }
        const void *s = in_place ? MPI_IN_PLACE : sb;
        if (coll == C_GATHER) {
            rc =
                nb ? MPI_Igather(s, sc, sdt, rb, rcounts[0], rdt, root, c->comm,
                                 &cl.req)
                   : MPI_Gather(s, sc, sdt, rb, rcounts[0], rdt, root, c->comm);
        } else if (coll == C_GATHERV) {
            rc = nb ? MPI_Igatherv(s, sc, sdt, rb, rcounts, rdispls, rdt, root,
                                   c->comm, &cl.req)
                    : MPI_Gatherv(s, sc, sdt, rb, rcounts, rdispls, rdt, root,
                                  c->comm);
        } else if (coll == C_ALLGATHER) {
            rc = nb ? MPI_Iallgather(s, sc, sdt, rb, rcounts[0], rdt, c->comm,
                                     &cl.req)
                    : MPI_Allgather(s, sc, sdt, rb, rcounts[0], rdt, c->comm);
        } else {
            rc = nb ? MPI_Iallgatherv(s, sc, sdt, rb, rcounts, rdispls, rdt,
                                      c->comm, &cl.req)
                    : MPI_Allgatherv(s, sc, sdt, rb, rcounts, rdispls, rdt,
                                     c->comm);
        }
        break;
    }
    case C_SCATTER:
    case C_SCATTERV: {
        /* the root's send side: shuffled with gaps for scatterv */
        in_place = in_place && me == root;
        int *sd = malloc(sizeof(int) * (size_t)P);
        int *sc = malloc(sizeof(int) * (size_t)P);
        size_t se = 0;
        for (int n = 0; n < P; ++n) {
            int i = order[n];
            sc[i] = blk_ints_to[i] / S->nints;
            sd[i] = coll == C_SCATTERV ? (int)se + (int)rnd(r, 2) : i * sc[i];
            se = coll == C_SCATTERV ? (size_t)sd[i] + (size_t)sc[i]
                                    : (size_t)P * (size_t)sc[i];
        }
        if (me == root) {
            sbytes = ibytes(S, se);
            sb = sbuf_new(sbytes);
            for (int i = 0; i < P; ++i) {
                put_ints(sb, S, (size_t)sd[i], c->case_no, root, i, 0,
                         blk_ints_to[i]);
            }
        }
        int cnt = blk_ints_from[me] / R->nints;
        rbytes = ibytes(R, (size_t)cnt);
        rb = sbuf_new(rbytes);
        want = sbuf_new(rbytes);
        if (!in_place) {
            put_ints(want, R, 0, c->case_no, root, me, 0, blk_ints_from[me]);
        }
        void *d = in_place ? MPI_IN_PLACE : rb;
        if (coll == C_SCATTER) {
            rc = nb ? MPI_Iscatter(sb, sc[0], sdt, d, cnt, rdt, root, c->comm,
                                   &cl.req)
                    : MPI_Scatter(sb, sc[0], sdt, d, cnt, rdt, root, c->comm);
        } else {
            rc = nb ? MPI_Iscatterv(sb, sc, sd, sdt, d, cnt, rdt, root, c->comm,
                                    &cl.req)
                    : MPI_Scatterv(sb, sc, sd, sdt, d, cnt, rdt, root, c->comm);
        }
        if (in_place) { /* the root's own block stays in its send side */
            free(want);
            want = NULL;
        }
        free(sd);
        free(sc);
        break;
    }
    case C_ALLTOALL:
    case C_ALLTOALLV: {
        /* in place (every rank or none): the receive side is sent,
         * so each pair must move as much both ways (a fact of m that
         * every rank sees) */
        for (int i = 0; vec && in_place && i < P; ++i) {
            for (int j = 0; j < P; ++j) {
                in_place = in_place && m[i * P + j] == m[j * P + i];
            }
        }
        sbytes = ibytes(S, selems);
        sb = sbuf_new(sbytes);
        for (int i = 0; !in_place && i < P; ++i) {
            put_ints(sb, S, (size_t)sdispls[i], c->case_no, me, i, 0,
                     blk_ints_to[i]);
        }
        rbytes = ibytes(R, relems);
        rb = sbuf_new(rbytes);
        want = sbuf_new(rbytes);
        for (int i = 0; i < P; ++i) {
            put_ints(want, R, (size_t)rdispls[i], c->case_no, i, me, 0,
                     blk_ints_from[i]);
        }
        if (in_place) {
            for (int i = 0; i < P; ++i) {
                put_ints(rb, R, (size_t)rdispls[i], c->case_no, me, i, 0,
                         blk_ints_to[i]);
            }
        }
        const void *s = in_place ? MPI_IN_PLACE : sb;
        if (coll == C_ALLTOALL) {
            rc = nb ? MPI_Ialltoall(s, scounts[0], S->t, rb, rcounts[0], rdt,
                                    c->comm, &cl.req)
                    : MPI_Alltoall(s, scounts[0], S->t, rb, rcounts[0], rdt,
                                   c->comm);
        } else {
            rc = nb ? MPI_Ialltoallv(s, scounts, sdispls, S->t, rb, rcounts,
                                     rdispls, rdt, c->comm, &cl.req)
                    : MPI_Alltoallv(s, scounts, sdispls, S->t, rb, rcounts,
                                    rdispls, rdt, c->comm);
        }
        break;
    }
    default:
        break;
    }
    rc = finish(&cl, rc);
    if (rc != MPI_SUCCESS) {
        fail(c, "returned error", rc);
    } else if (want != NULL) {
        check_buf(c, "receive buffer", rb, want, rbytes);
    }
    free(sb);
    free(rb);
    free(want);
    free(m);
    free(st);
    free(rt);
    free(scounts);
    free(sdispls);
    free(rcounts);
    free(rdispls);
    free(order);
}

/* ---- reductions -------------------------------------------------- */

/* One reduction's type: an int type (user ops) or a predefined one. */
typedef struct rtype {
    MPI_Datatype t;
    MPI_Aint extent;
    const itype_t *it; /* NULL: predefined (pt) */
    const ptype_t *pt;
} rtype_t;

static void rinput(const rtype_t *t, MPI_Op op, char *buf, size_t count,
                   long case_no, int src)
{
    for (size_t e = 0; e < count; ++e) {
        if (t->it != NULL) {
            for (int j = 0; j < t->it->nints; ++j) {
                *iat(buf, t->it, e, j) =
                    V(case_no, src, 0, (int)e * t->it->nints + j);
            }
        } else {
            pvalue(t->pt, op, buf + (size_t)t->extent * e,
                   hash4((uint64_t)case_no, (uint64_t)src, 1, e));
        }
    }
}

static void run_reduction(ctx_t *c, int coll, rng_t *r, int nb, int freed)
{
    const int P = c->size, me = c->rank;
    const int root = (int)rnd(r, (uint32_t)P);
    const int in_place = rnd(r, 3) == 0 && (coll != C_REDUCE || me == root);
    rtype_t T;
    memset(&T, 0, sizeof(T));
    MPI_Op op = MPI_OP_NULL;
    const char *opname = "";
    const int user = rnd(r, 3) == 0;
    int commute = 1;
    if (user) {
        commute = rnd(r, 2);
        int t;
        do {
            t = (int)rnd(r, T_COUNT);
        } while (!commute && g_types[t].nints % 2 != 0);
        T.it = &g_types[t];
        T.t = T.it->t;
        T.extent = T.it->extent;
        MPI_Op_create(commute ? op_sum : op_affine, commute, &op);
        opname = commute ? "user commutative" : "user non-commutative";
    } else {
        int n;
        const ptype_t *p = ptypes(&n);
        T.pt = &p[rnd(r, (uint32_t)n)];
        T.t = T.pt->t;
        MPI_Aint lb;
        MPI_Type_get_extent(T.t, &lb, &T.extent);
        const pop_t *po;
        if (T.pt->kind == K_PAIR) {
            po = &g_loc[rnd(r, 2)];
        } else if (T.pt->kind == K_FLOAT || rnd(r, 2) == 0) {
            po = &g_arith[rnd(r, 4)];
        } else {
            po = &g_logic[rnd(r, 6)];
        }
        op = po->op;
        opname = po->name;
    }
    /* counts: zero, odd, or larger; reduce_scatter: per rank */
    const size_t count = (size_t)(int[]){0, 1, 3, 7, 64, 301}[rnd(r, 6)];
    int *rcounts = malloc(sizeof(int) * (size_t)P);
    size_t total = 0, myoff = 0;
    for (int i = 0; i < P; ++i) {
        rcounts[i] =
            coll == C_REDUCE_SCATTER_BLOCK ? (int)count : (int)rnd(r, 5);
        if (i == me) {
            myoff = total;
        }
        total += (size_t)rcounts[i];
    }
    if (coll != C_REDUCE_SCATTER && coll != C_REDUCE_SCATTER_BLOCK) {
        total = count;
        myoff = 0;
    }
    const size_t mycount =
        coll == C_REDUCE_SCATTER || coll == C_REDUCE_SCATTER_BLOCK
            ? (size_t)rcounts[me]
            : count;
    call_t cl = {
        .nb = nb, .free_type = MPI_DATATYPE_NULL, .free_op = MPI_OP_NULL};
    MPI_Datatype dt = T.t;
    if (freed && nb && T.it != NULL) {
        MPI_Type_dup(T.t, &dt);
        g_freed = *T.it;
        g_freed.t = dt;
        cl.free_type = dt;
    }
    const int op_freed = nb && user && rnd(r, 2) == 0;
    if (op_freed) {
        cl.free_op = op;
    }
    snprintf(
        c->what, sizeof(c->what), "%s%s on %s, root %d, %s of %zu %s%s%s%s",
        nb ? "i" : "", g_coll_names[coll], c->comm_name, root, opname, count,
        T.it != NULL ? T.it->name : T.pt->name, in_place ? ", in place" : "",
        cl.free_type != MPI_DATATYPE_NULL ? ", type freed before wait" : "",
        op_freed ? ", op freed before wait" : "");
    /* expected: fold in rank order, x_0 op (x_1 op (... x_{P-1})) */
    const size_t tb = (size_t)T.extent * total + 8 + SLACK;
    char *x = sbuf_new(tb), *acc = sbuf_new(tb);
    const int last = coll == C_SCAN ? me : coll == C_EXSCAN ? me - 1 : P - 1;
    for (int i = last; i >= 0; --i) {
        char *into = i == last ? acc : x;
        rinput(&T, op, into, total, c->case_no, i);
        if (i != last && total > 0) {
            MPI_Reduce_local(x, acc, (int)total, T.t, op);
        }
    }
    /* my input */
    char *sb = sbuf_new(tb);
    rinput(&T, op, sb, total, c->case_no, me);
    const int out = coll != C_REDUCE || me == root;
    const size_t rbytes =
        (in_place ? tb : (size_t)T.extent * mycount + 8 + SLACK);
    char *rb = sbuf_new(rbytes);
    if (in_place) {
        memcpy(rb, sb, tb);
    }
    char *want = sbuf_new(rbytes);
    if (in_place) {
        memcpy(want, sb, tb); /* untouched beyond the result */
    }
    /* the result: mycount elements from element myoff of acc, data
     * bytes only (an int type's gaps keep what the buffer had) */
    for (size_t e = 0; last >= 0 && e < mycount; ++e) {
        if (T.it == NULL) {
            memcpy(want + (size_t)T.extent * e,
                   acc + (size_t)T.extent * (myoff + e), (size_t)T.extent);
            continue;
        }
        for (int j = 0; j < T.it->nints; ++j) {
            *iat(want, T.it, e, j) = *iat(acc, T.it, myoff + e, j);
        }
    }
    const void *s = in_place ? MPI_IN_PLACE : sb;
    int rc;
    switch (coll) {
    case C_REDUCE:
        rc = nb ? MPI_Ireduce(s, out ? rb : NULL, (int)count, dt, op, root,
                              c->comm, &cl.req)
                : MPI_Reduce(s, out ? rb : NULL, (int)count, dt, op, root,
                             c->comm);
        break;
    case C_ALLREDUCE:
        rc = nb ? MPI_Iallreduce(s, rb, (int)count, dt, op, c->comm, &cl.req)
                : MPI_Allreduce(s, rb, (int)count, dt, op, c->comm);
        break;
    case C_SCAN:
        rc = nb ? MPI_Iscan(s, rb, (int)count, dt, op, c->comm, &cl.req)
                : MPI_Scan(s, rb, (int)count, dt, op, c->comm);
        break;
    case C_EXSCAN:
        rc = nb ? MPI_Iexscan(s, rb, (int)count, dt, op, c->comm, &cl.req)
                : MPI_Exscan(s, rb, (int)count, dt, op, c->comm);
        break;
    case C_REDUCE_SCATTER:
        rc = nb ? MPI_Ireduce_scatter(s, rb, rcounts, dt, op, c->comm, &cl.req)
                : MPI_Reduce_scatter(s, rb, rcounts, dt, op, c->comm);
        break;
    default:
        rc = nb ? MPI_Ireduce_scatter_block(s, rb, (int)count, dt, op, c->comm,
                                            &cl.req)
                : MPI_Reduce_scatter_block(s, rb, (int)count, dt, op, c->comm);
        break;
    }
    rc = finish(&cl, rc);
    if (rc != MPI_SUCCESS) {
        fail(c, "returned error", rc);
    } else if (out && !(coll == C_EXSCAN && me == 0)) {
        /* MPI leaves exscan's rank 0 undefined; the rest is compared
         * whole (data, gaps, slack) */
        /* in place, reduce_scatter's result is its first block; MPI
         * says nothing of the rest of the buffer */
        const int rs =
            coll == C_REDUCE_SCATTER || coll == C_REDUCE_SCATTER_BLOCK;
        check_buf(c, "result", rb, want,
                  in_place && rs ? (size_t)T.extent * mycount : rbytes);
    }
    if (!in_place) {
        char *sb2 = sbuf_new(tb);
        rinput(&T, op, sb2, total, c->case_no, me);
        check_buf(c, "send buffer (must stay unchanged)", sb, sb2, tb);
        free(sb2);
    }
    if (user && !op_freed) {
        MPI_Op_free(&op);
    }
    free(x);
    free(acc);
    free(sb);
    free(rb);
    free(want);
    free(rcounts);
}

/* ---- a barrier that must hold ------------------------------------ */

/* Every rank but the last to arrive must still be inside when it
 * arrives: in one barrier case of eight (a witness), the late rank sleeps
 * kLateUs, then sends each peer a message, then enters; after the
 * barrier, each peer must find the message within kSeenUs (MPI_Iprobe,
 * yielding between probes: on an oversubscribed machine the late rank
 * may need the CPU to push it out). A barrier that lets a peer go before
 * the late rank entered makes it probe while nothing is sent yet. The
 * window is wide (a 10 ms one failed in 2 of 4 suite runs beside
 * builds, one rank short each time: most likely the message was late,
 * not the barrier), so witnesses are rare; the other barrier cases
 * have a late rank without the check. */
enum { kLateUs = 1200000, kSeenUs = 1000000, kPlainLateUs = 2000 };

static void run_barrier(ctx_t *c, rng_t *r, int nb)
{
    const int late = (int)rnd(r, (uint32_t)c->size);
    const int witness = rnd(r, 8) == 0;
    snprintf(c->what, sizeof(c->what), "%sbarrier on %s, late rank %d%s",
             nb ? "i" : "", c->comm_name, late, witness ? ", witnessed" : "");
    int token = 7;
    if (c->rank == late) {
        usleep(witness ? kLateUs : kPlainLateUs);
        for (int i = 0; witness && i < c->size; ++i) {
            if (i != late) {
                MPI_Send(&token, 1, MPI_INT, i, 99, c->comm);
            }
        }
    }
    MPI_Request req;
    int rc = nb ? MPI_Ibarrier(c->comm, &req) : MPI_Barrier(c->comm);
    if (nb && rc == MPI_SUCCESS) {
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS) {
        fail(c, "returned error", rc);
    }
    if (witness && c->rank != late) {
        int flag = 0;
        MPI_Status st;
        /* the late rank sent before it entered: here or in flight */
        const double until = MPI_Wtime() + kSeenUs / 1e6;
        while (!flag && MPI_Wtime() < until) {
            MPI_Iprobe(late, 99, c->comm, &flag, &st);
            if (!flag) {
                sched_yield();
            }
        }
        if (!flag) {
            fail(c, "left the barrier before this rank entered:", late);
        }
        MPI_Recv(&token, 1, MPI_INT, late, 99, c->comm, MPI_STATUS_IGNORE);
    }
}

static void run_case(ctx_t *c, long case_no)
{
    rng_t r = {.state = g_seed * 7919u + (uint64_t)case_no};
    c->case_no = case_no;
    const int coll = (int)rnd(&r, C_COUNT);
    const int nb = (int)rnd(&r, 2);
    const int freed = rnd(&r, 3) == 0;
    if (coll == C_BARRIER) {
        run_barrier(c, &r, nb);
    } else if (coll >= C_REDUCE) {
        run_reduction(c, coll, &r, nb, freed);
    } else {
        run_moves(c, coll, &r, nb, freed);
    }
    if (g_user_errors) {
        fail(c, "a user operator got types it does not know:", g_user_errors);
        g_user_errors = 0;
    }
}

/* Cases [first, first + n) on world, a new dup and a new split into
 * uneven parts with reversed keys (created here, freed at the end).
 * Returns this rank's errors. */
static int run_cases(long first, long n, int wrank, int verbose)
{
    int wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm dup, split;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, wrank < (wsize + 2) / 3 ? 0 : 1, -wrank,
                   &split);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(split, MPI_ERRORS_RETURN);
    struct {
        MPI_Comm comm;
        const char *name;
    } comms[3] = {{MPI_COMM_WORLD, "world"}, {dup, "dup"}, {split, "split"}};
    int errors = 0;
    for (long k = first; k < first + n; ++k) {
        int which = (int)(mix(g_seed + (uint64_t)k) % 3);
        ctx_t c;
        memset(&c, 0, sizeof(c));
        c.comm = comms[which].comm;
        c.comm_name = comms[which].name;
        c.world_rank = wrank;
        MPI_Comm_rank(c.comm, &c.rank);
        MPI_Comm_size(c.comm, &c.size);
        if (c.size > 64) {
            continue;
        }
        run_case(&c, k);
        if (verbose) {
            printf("sweep: rank %d: case %ld: %s\n", wrank, k, c.what);
            fflush(stdout);
        }
        errors += c.errors;
    }
    MPI_Comm_free(&dup);
    MPI_Comm_free(&split);
    return errors;
}

/* What a process holds: heap bytes in use (at a round's end every case's
 * buffer is freed), resident memory (the heap's high-water mark too, so
 * only reported), open descriptors, its mappings of UCG's shared-memory
 * segments, and the host's UCG segment names. */
typedef struct usage {
    long heap_kb, rss_kb, fds, maps, shm;
} usage_t;

/* Entries of a folder whose names start with `prefix`. */
static long count_dir(const char *path, const char *prefix)
{
    long n = 0;
    DIR *d = opendir(path);
    for (struct dirent *e = d != NULL ? readdir(d) : NULL; e != NULL;
         e = readdir(d)) {
        n += e->d_name[0] != '.' &&
             strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    }
    if (d != NULL) {
        closedir(d);
    }
    return n;
}

static long count_maps(const char *what)
{
    long n = 0;
    char line[512];
    FILE *f = fopen("/proc/self/maps", "r");
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        n += strstr(line, what) != NULL;
    }
    if (f != NULL) {
        fclose(f);
    }
    return n;
}

static usage_t usage_now(void)
{
    usage_t u = {(long)(mallinfo2().uordblks / 1024), 0,
                 count_dir("/proc/self/fd", ""), count_maps("/dev/shm/ucg-"),
                 count_dir("/dev/shm", "ucg-")};
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f != NULL && fscanf(f, "%ld %ld", &pages, &resident) == 2) {
        u.rss_kb = resident * (sysconf(_SC_PAGESIZE) / 1024);
    }
    if (f != NULL) {
        fclose(f);
    }
    return u;
}

/* Rounds of cases, each on communicators created and freed, for about
 * `seconds` (rank 0's clock; it tells the others point-to-point whether
 * another round follows). After a warm-up of a tenth of the time, every
 * rank's descriptors and mappings of UCG segments must stay as they were,
 * its heap in use within 1 MiB, and the host's UCG segment names
 * (sampled between barriers, when no group is being made) may not grow:
 * the names are the host's, so the soak runs alone (ctest -L soak), and
 * fewer is another job ending. */
static int soak(long per_round, double seconds, int wrank, int verbose)
{
    int wsize, errors = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    const double start = MPI_Wtime();
    usage_t base = {0, 0, 0, 0, 0}, now = {0, 0, 0, 0, 0};
    int have_base = 0, more = 1;
    long round = 0;
    for (; more; ++round) {
        errors += run_cases(round * per_round, per_round, wrank, verbose);
        MPI_Barrier(MPI_COMM_WORLD);
        now = usage_now();
        MPI_Barrier(MPI_COMM_WORLD);
        const double t = MPI_Wtime() - start;
        if (!have_base && t >= seconds / 10) {
            base = now;
            have_base = 1;
        }
        if (wrank == 0) {
            more = t < seconds;
            for (int i = 1; i < wsize; ++i) {
                MPI_Send(&more, 1, MPI_INT, i, 2, MPI_COMM_WORLD);
            }
        } else {
            MPI_Recv(&more, 1, MPI_INT, 0, 2, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        }
    }
    printf("soak: rank %d: %ld rounds of %ld cases in %.0f s: heap in use "
           "%ld -> %ld KiB, RSS %ld -> %ld KiB, fds %ld -> %ld, UCG "
           "segments mapped %ld -> %ld, /dev/shm/ucg-* %ld -> %ld (after "
           "warm-up)\n",
           wrank, round, per_round, MPI_Wtime() - start, base.heap_kb,
           now.heap_kb, base.rss_kb, now.rss_kb, base.fds, now.fds, base.maps,
           now.maps, base.shm, now.shm);
    if (!have_base || now.fds != base.fds || now.maps != base.maps ||
        now.shm > base.shm || now.heap_kb > base.heap_kb + 1024) {
        ++errors;
        fprintf(stderr, "soak: rank %d: FAILED: usage grew (or no warm-up)\n",
                wrank);
    }
    return errors;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    long ncases = argc > 1 ? atol(argv[1]) : 400;
    const double soak_seconds = argc > 2 ? atof(argv[2]) : 0;
    /* the seed: UCG_SWEEP_SEED, else rank 0's clock, sent point-to-point
     * (not through a collective under test) */
    const int verbose = getenv("UCG_SWEEP_VERBOSE") != NULL;
    const char *env = getenv("UCG_SWEEP_SEED");
    unsigned long long seed = env != NULL ? strtoull(env, NULL, 10) : 0;
    if (env == NULL) {
        if (wrank == 0) {
            seed = (unsigned long long)MPI_Wtime() * 1000003ULL ^
                   (unsigned long long)getpid();
            for (int i = 1; i < wsize; ++i) {
                MPI_Send(&seed, 1, MPI_UNSIGNED_LONG_LONG, i, 1,
                         MPI_COMM_WORLD);
            }
        } else {
            MPI_Recv(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        }
    }
    g_seed = seed;
    if (wrank == 0) {
        printf("sweep: np=%d, %ld cases, seed %llu (UCG_SWEEP_SEED=%llu "
               "replays)\n",
               wsize, ncases, seed, seed);
        fflush(stdout);
    }
    types_init();

    int errors = 0;
    if (soak_seconds > 0) {
        errors += soak(ncases, soak_seconds, wrank, verbose);
    } else {
        /* UCG_SWEEP_FIRST=k: from case k (each case is drawn from the
         * seed and its number alone, so one failing case replays alone) */
        const char *first = getenv("UCG_SWEEP_FIRST");
        errors +=
            run_cases(first != NULL ? atol(first) : 0, ncases, wrank, verbose);
    }

    /* one communicator freed while another is busy (freeing one under
     * its own pending collective: test_nonblocking; stock Open MPI's
     * libnbc crashes on it) */
    {
        MPI_Comm a, b;
        MPI_Comm_dup(MPI_COMM_WORLD, &a);
        MPI_Comm_dup(MPI_COMM_WORLD, &b);
        long x = wrank + 1, y = -1, z = -1;
        MPI_Request ra, rb;
        MPI_Iallreduce(&x, &y, 1, MPI_LONG, MPI_SUM, a, &ra);
        MPI_Comm_free(&b);
        MPI_Iallreduce(&x, &z, 1, MPI_LONG, MPI_MAX, a, &rb);
        MPI_Wait(&ra, MPI_STATUS_IGNORE);
        MPI_Wait(&rb, MPI_STATUS_IGNORE);
        MPI_Comm_free(&a);
        if (y != (long)wsize * (wsize + 1) / 2 || z != wsize) {
            ++errors;
            fprintf(stderr,
                    "sweep: rank %d: FAILED (seed %llu): iallreduce while "
                    "another communicator is freed: %ld and %ld\n",
                    wrank, seed, y, z);
        }
    }

    types_fini();
    const int rc = rank_verdict("test_sweep", wsize, wrank, errors);
    MPI_Finalize();
    return rc;
}
