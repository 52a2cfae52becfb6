/* SPDX-License-Identifier: BSD-3-Clause */
/* Data-moving collectives under coll/ucg: barrier, bcast, gather(v),
 * scatter(v), allgather(v), alltoall(v) with every root, MPI_IN_PLACE,
 * zero and odd counts, and send/receive datatypes that differ: MPI_INT, a
 * contiguous derived type (3 ints) and a non-contiguous vector (2 of every
 * 3 ints); split and dup communicators. Expected values are computed
 * locally: int j of the block rank s sends to rank d is val(s, d, j). */
#include "verdict.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_errors;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            if (++g_errors < 10) {                                             \
                fprintf(stderr, "rank %d: %s:%d: ", g_rank, __FILE__,          \
                        __LINE__);                                             \
                fprintf(stderr, __VA_ARGS__);                                  \
                fprintf(stderr, "\n");                                         \
            }                                                                  \
        }                                                                      \
    } while (0)

/* A view: how the logical ints of a block lie in a buffer. */
typedef struct view {
    const char *name;
    MPI_Datatype dt;
    int k; /* ints of data per element */
    int e; /* extent in ints */
} view_t;

static view_t g_int, g_c3, g_vec;

static size_t pos_of(const view_t *v, size_t elem_off, size_t j)
{
    size_t in = j % (size_t)v->k;
    if (v->k == 2 && v->e == 3) {
        in *= 2; /* the vector: ints 0 and 2 of every 3 */
    }
    return (elem_off + j / (size_t)v->k) * (size_t)v->e + in;
}

static int val(int s, int d, size_t j)
{
    return s * 100000 + d * 1000 + (int)(j % 1000);
}

static void put(const view_t *v, int *buf, size_t elem_off, size_t n, int s,
                int d)
{
    for (size_t j = 0; j < n; ++j) {
        buf[pos_of(v, elem_off, j)] = val(s, d, j);
    }
}

static int check(const view_t *v, const int *buf, size_t elem_off, size_t n,
                 int s, int d)
{
    for (size_t j = 0; j < n; ++j) {
        if (buf[pos_of(v, elem_off, j)] != val(s, d, j)) {
            return (int)j;
        }
    }
    return -1;
}

static int *alloc_ints(size_t elems, const view_t *v)
{
    size_t n = elems * (size_t)v->e + 4;
    int *p = malloc(n * sizeof(int));
    for (size_t i = 0; i < n; ++i) {
        p[i] = -1;
    }
    return p;
}

/* Ints in the v block of rank r (a multiple of 6, some zero). */
static size_t vlen(size_t n, int r)
{
    return r % 3 == 1 ? 0 : n + (size_t)r * 6;
}

/* v layout: counts and displacements (elements), blocks in reverse rank
 * order with one element of gap. Returns the total elements. */
static size_t vlayout(const view_t *v, size_t n, int size, int *counts,
                      int *displs)
{
    size_t at = 0;
    for (int r = size - 1; r >= 0; --r) {
        counts[r] = (int)(vlen(n, r) / (size_t)v->k);
        displs[r] = (int)at;
        at += (size_t)counts[r] + 1;
    }
    return at;
}

static void test_all(MPI_Comm comm, const view_t *sv, const view_t *rv,
                     size_t n, int in_place)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const size_t se = n / (size_t)sv->k, re = n / (size_t)rv->k;
    int *counts = malloc(sizeof(int) * (size_t)size);
    int *displs = malloc(sizeof(int) * (size_t)size);
    int *scounts = malloc(sizeof(int) * (size_t)size);
    int *sdispls = malloc(sizeof(int) * (size_t)size);
    const char *tag = in_place ? "in place" : "";

    for (int root = 0; root < size; ++root) {
        /* bcast (one view: rv) */
        int *b = alloc_ints(re, rv);
        if (rank == root) {
            put(rv, b, 0, n, root, 0);
        }
        MPI_Bcast(b, (int)re, rv->dt, root, comm);
        CHECK(check(rv, b, 0, n, root, 0) < 0, "bcast %s n=%zu root=%d",
              rv->name, n, root);
        free(b);

        /* gather */
        int *s = alloc_ints(se, sv);
        int *r = alloc_ints(re * (size_t)size, rv);
        put(sv, s, 0, n, rank, 0);
        const int ip = in_place && rank == root;
        if (ip) {
            put(rv, r, re * (size_t)rank, n, rank, 0);
        }
        MPI_Gather(ip ? MPI_IN_PLACE : s, (int)se, sv->dt, r, (int)re, rv->dt,
                   root, comm);
        for (int p = 0; rank == root && p < size; ++p) {
            CHECK(check(rv, r, re * (size_t)p, n, p, 0) < 0,
                  "gather %s->%s n=%zu root=%d block %d %s", sv->name, rv->name,
                  n, root, p, tag);
        }
        free(r);

        /* gatherv */
        size_t tot = vlayout(rv, n, size, counts, displs);
        r = alloc_ints(tot, rv);
        free(s);
        size_t mine = vlen(n, rank);
        s = alloc_ints(mine / (size_t)sv->k, sv);
        put(sv, s, 0, mine, rank, 0);
        if (ip) {
            put(rv, r, (size_t)displs[rank], mine, rank, 0);
        }
        MPI_Gatherv(ip ? MPI_IN_PLACE : s, (int)(mine / (size_t)sv->k), sv->dt,
                    r, counts, displs, rv->dt, root, comm);
        for (int p = 0; rank == root && p < size; ++p) {
            CHECK(check(rv, r, (size_t)displs[p], vlen(n, p), p, 0) < 0,
                  "gatherv %s->%s n=%zu root=%d block %d %s", sv->name,
                  rv->name, n, root, p, tag);
        }
        free(r);
        free(s);

        /* scatter */
        s = alloc_ints(se * (size_t)size, sv);
        r = alloc_ints(re, rv);
        for (int p = 0; p < size; ++p) {
            put(sv, s, se * (size_t)p, n, root, p);
        }
        MPI_Scatter(s, (int)se, sv->dt, ip ? MPI_IN_PLACE : r, (int)re, rv->dt,
                    root, comm);
        if (ip) {
            CHECK(check(sv, s, se * (size_t)rank, n, root, rank) < 0,
                  "scatter in place root block");
        } else {
            CHECK(check(rv, r, 0, n, root, rank) < 0,
                  "scatter %s->%s n=%zu root=%d %s", sv->name, rv->name, n,
                  root, tag);
        }
        free(s);
        free(r);

        /* scatterv */
        tot = vlayout(sv, n, size, scounts, sdispls);
        s = alloc_ints(tot, sv);
        for (int p = 0; p < size; ++p) {
            put(sv, s, (size_t)sdispls[p], vlen(n, p), root, p);
        }
        mine = vlen(n, rank);
        r = alloc_ints(mine / (size_t)rv->k, rv);
        MPI_Scatterv(s, scounts, sdispls, sv->dt, ip ? MPI_IN_PLACE : r,
                     (int)(mine / (size_t)rv->k), rv->dt, root, comm);
        if (!ip) {
            CHECK(check(rv, r, 0, mine, root, rank) < 0,
                  "scatterv %s->%s n=%zu root=%d", sv->name, rv->name, n, root);
        }
        free(s);
        free(r);
    }

    /* allgather */
    int *s = alloc_ints(se, sv);
    int *r = alloc_ints(re * (size_t)size, rv);
    put(sv, s, 0, n, rank, 0);
    if (in_place) {
        put(rv, r, re * (size_t)rank, n, rank, 0);
    }
    MPI_Allgather(in_place ? MPI_IN_PLACE : s, (int)se, sv->dt, r, (int)re,
                  rv->dt, comm);
    for (int p = 0; p < size; ++p) {
        CHECK(check(rv, r, re * (size_t)p, n, p, 0) < 0,
              "allgather %s->%s n=%zu block %d %s", sv->name, rv->name, n, p,
              tag);
    }
    free(s);
    free(r);

    /* allgatherv */
    size_t tot = vlayout(rv, n, size, counts, displs);
    size_t mine = vlen(n, rank);
    s = alloc_ints(mine / (size_t)sv->k, sv);
    r = alloc_ints(tot, rv);
    put(sv, s, 0, mine, rank, 0);
    if (in_place) {
        put(rv, r, (size_t)displs[rank], mine, rank, 0);
    }
    MPI_Allgatherv(in_place ? MPI_IN_PLACE : s, (int)(mine / (size_t)sv->k),
                   sv->dt, r, counts, displs, rv->dt, comm);
    for (int p = 0; p < size; ++p) {
        CHECK(check(rv, r, (size_t)displs[p], vlen(n, p), p, 0) < 0,
              "allgatherv %s->%s n=%zu block %d %s", sv->name, rv->name, n, p,
              tag);
    }
    free(s);
    free(r);

    /* alltoall (in place: the receive view holds the input) */
    const view_t *iv = in_place ? rv : sv;
    const size_t ie = in_place ? re : se;
    s = alloc_ints(ie * (size_t)size, iv);
    r = alloc_ints(re * (size_t)size, rv);
    for (int p = 0; p < size; ++p) {
        put(iv, in_place ? r : s, ie * (size_t)p, n, rank, p);
    }
    MPI_Alltoall(in_place ? MPI_IN_PLACE : s, (int)se, sv->dt, r, (int)re,
                 rv->dt, comm);
    for (int p = 0; p < size; ++p) {
        CHECK(check(rv, r, re * (size_t)p, n, p, rank) < 0,
              "alltoall %s->%s n=%zu block %d %s", sv->name, rv->name, n, p,
              tag);
    }
    free(s);
    free(r);

    /* alltoallv: rank s sends vlen(n, s + d) ints to rank d */
    for (int p = 0; p < size; ++p) {
        scounts[p] = (int)(vlen(n, rank + p) / (size_t)iv->k);
        counts[p] = (int)(vlen(n, p + rank) / (size_t)rv->k);
    }
    size_t sat = 0, rat = 0;
    for (int p = size - 1; p >= 0; --p) {
        sdispls[p] = (int)sat;
        displs[p] = (int)rat;
        sat += (size_t)scounts[p] + 1;
        rat += (size_t)counts[p] + 2;
    }
    if (in_place) { /* one layout for both */
        memcpy(scounts, counts, sizeof(int) * (size_t)size);
        memcpy(sdispls, displs, sizeof(int) * (size_t)size);
    }
    s = alloc_ints(sat, iv);
    r = alloc_ints(rat, rv);
    for (int p = 0; p < size; ++p) {
        if (in_place) {
            put(rv, r, (size_t)displs[p], vlen(n, rank + p), rank, p);
        } else {
            put(sv, s, (size_t)sdispls[p], vlen(n, rank + p), rank, p);
        }
    }
    MPI_Alltoallv(in_place ? MPI_IN_PLACE : s, scounts, sdispls, sv->dt, r,
                  counts, displs, rv->dt, comm);
    for (int p = 0; p < size; ++p) {
        CHECK(check(rv, r, (size_t)displs[p], vlen(n, p + rank), p, rank) < 0,
              "alltoallv %s->%s n=%zu block %d %s", sv->name, rv->name, n, p,
              tag);
    }
    free(s);
    free(r);
    free(counts);
    free(displs);
    free(scounts);
    free(sdispls);
    MPI_Barrier(comm);
}

/* MPI_BOTTOM with an absolute-address type, and gatherv/allgatherv with
 * negative displacements (blocks below the buffer pointer). */
static void test_bottom_and_negative(int size)
{
    int data[8];
    for (int i = 0; i < 8; ++i) {
        data[i] = g_rank == 0 ? 40 + i : -1;
    }
    MPI_Aint addr;
    MPI_Get_address(data, &addr);
    int len = 8;
    MPI_Datatype abs_t;
    MPI_Type_create_hindexed(1, &len, &addr, MPI_INT, &abs_t);
    MPI_Type_commit(&abs_t);
    MPI_Bcast(MPI_BOTTOM, 1, abs_t, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 8; ++i) {
        CHECK(data[i] == 40 + i, "bcast MPI_BOTTOM [%d] = %d", i, data[i]);
    }
    MPI_Type_free(&abs_t);

    int *all = malloc(sizeof(int) * (size_t)size * 2);
    int *counts = malloc(sizeof(int) * (size_t)size);
    int *displs = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; ++r) {
        counts[r] = 2;
        displs[r] = 2 * r - 2 * (size - 1); /* last block at the pointer */
    }
    int *base = all + 2 * (size - 1);
    int mine[2] = {g_rank * 3, g_rank * 3 + 1};
    MPI_Allgatherv(mine, 2, MPI_INT, base, counts, displs, MPI_INT,
                   MPI_COMM_WORLD);
    for (int r = 0; r < size; ++r) {
        CHECK(all[2 * r] == r * 3 && all[2 * r + 1] == r * 3 + 1,
              "allgatherv negative displacement block %d", r);
    }
    free(all);
    free(counts);
    free(displs);
}

/* Repeated calls with the same arguments run the component's noted
 * collective (coll_ucg_repeat_t): every change of root, count, buffer or
 * datatype, and the cache's evictions, must reach a fresh collective. */
static void test_repeats(int size)
{
    enum { N = 64 };
    static int a[4 * N], b[4 * N];
    for (int it = 0; it < 12; ++it) {
        /* iterations 0-3 repeat; 4 changes the root, 5 the count, 6 the
         * buffer; 7 and 8 return to the first; 9 after eleven other
         * collectives (more than the cache holds) */
        const int root = it == 4 ? size - 1 : 0;
        const int count = it == 5 ? N / 2 : N;
        int *buf = it == 6 ? b : a;
        if (it == 9) {
            for (int k = 1; k <= 11; ++k) {
                MPI_Bcast(b, k, MPI_INT, 0, MPI_COMM_WORLD);
            }
        }
        for (int j = 0; j < N; ++j) {
            buf[j] = g_rank == root ? it * 1000 + j : -1;
        }
        MPI_Bcast(buf, count, MPI_INT, root, MPI_COMM_WORLD);
        for (int j = 0; j < N; ++j) {
            const int want = j < count ? it * 1000 + j : -1;
            if (g_rank != root || j < count) {
                CHECK(buf[j] == want, "repeat %d: [%d] = %d, want %d", it, j,
                      buf[j], want);
            }
        }
    }
    /* A derived datatype freed and made again may come back at the same
     * address with another size: never taken for a repeat. */
    for (int w = 1; w <= 4; w *= 2) {
        MPI_Datatype t;
        MPI_Type_contiguous(w, MPI_INT, &t);
        MPI_Type_commit(&t);
        for (int rep = 0; rep < 2; ++rep) {
            for (int j = 0; j < 4 * N; ++j) {
                a[j] = g_rank == 0 ? w * 100000 + rep * 10000 + j : -1;
            }
            MPI_Bcast(a, N, t, 0, MPI_COMM_WORLD);
            for (int j = 0; j < 4 * N; ++j) {
                const int want = j < w * N || g_rank == 0
                                     ? w * 100000 + rep * 10000 + j
                                     : -1;
                CHECK(a[j] == want,
                      "type of %d ints, call %d: [%d] = %d, "
                      "want %d",
                      w, rep, j, a[j], want);
            }
        }
        MPI_Type_free(&t);
    }
    /* allreduce: repeats, then in place, then a new count */
    for (int it = 0; it < 6; ++it) {
        const int in_place = it == 3;
        const int count = it == 4 ? N / 4 : N;
        for (int j = 0; j < N; ++j) {
            a[j] = g_rank + j + it;
            b[j] = -7;
        }
        MPI_Allreduce(in_place ? MPI_IN_PLACE : a, in_place ? a : b, count,
                      MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        const int *out = in_place ? a : b;
        for (int j = 0; j < count; ++j) {
            const int want = size * (size - 1) / 2 + size * (j + it);
            CHECK(out[j] == want, "allreduce %d: [%d] = %d, want %d", it, j,
                  out[j], want);
        }
    }
}

static void test_comm(MPI_Comm comm)
{
    int size;
    MPI_Comm_size(comm, &size);
    const view_t *views[3] = {&g_int, &g_c3, &g_vec};
    const size_t ns[] = {0, 6, 1, 7, 2400};
    for (int a = 0; a < 3; ++a) {
        for (int b = 0; b < 3; ++b) {
            for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); ++i) {
                if ((ns[i] > 100 && size > 4) || /* time on 2 cores */
                    ns[i] % (size_t)views[a]->k != 0 ||
                    ns[i] % (size_t)views[b]->k != 0) {
                    continue;
                }
                test_all(comm, views[a], views[b], ns[i], 0);
                if (a == b) {
                    test_all(comm, views[a], views[b], ns[i], 1);
                }
            }
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    g_int = (view_t){"int", MPI_INT, 1, 1};
    MPI_Datatype c3, vec;
    MPI_Type_contiguous(3, MPI_INT, &c3);
    MPI_Type_commit(&c3);
    g_c3 = (view_t){"contig3", c3, 3, 3};
    MPI_Datatype v0;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v0);
    MPI_Type_create_resized(v0, 0, 3 * (MPI_Aint)sizeof(int), &vec);
    MPI_Type_commit(&vec);
    MPI_Type_free(&v0);
    g_vec = (view_t){"vector", vec, 2, 3};

    for (int i = 0; i < 3; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    test_bottom_and_negative(size);
    test_repeats(size);
    test_comm(MPI_COMM_WORLD);
    MPI_Comm split, dup;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, size - g_rank, &split);
    MPI_Comm_dup(split, &dup);
    test_all(split, &g_int, &g_c3, 18, 0);
    test_all(dup, &g_vec, &g_int, 6, 0);
    test_all(dup, &g_int, &g_int, 7, 1);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&split);

    MPI_Type_free(&c3);
    MPI_Type_free(&vec);
    const int rc = rank_verdict("test_move", size, g_rank, g_errors);
    MPI_Finalize();
    return rc;
}
