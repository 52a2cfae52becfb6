/* SPDX-License-Identifier: BSD-3-Clause */
/* Reductions under coll/ucg: reduce, allreduce, scan, exscan,
 * reduce_scatter(_block) for every predefined op x type, MAXLOC/MINLOC
 * pairs, integer wrap, MPI_IN_PLACE, zero and odd counts, every root, a
 * non-commutative user op and a user op on a contiguous derived type.
 * The expected results are computed locally from the same inputs. */
#include "verdict.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_size, g_errors;

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

enum {
    OP_SUM,
    OP_PROD,
    OP_MIN,
    OP_MAX,
    OP_LAND,
    OP_LOR,
    OP_LXOR,
    OP_BAND,
    OP_BOR,
    OP_BXOR,
    OP_N
};
static const char *const op_names[OP_N] = {
    "sum", "prod", "min", "max", "land", "lor", "lxor", "band", "bor", "bxor"};
static MPI_Op mpi_op(int op)
{
    const MPI_Op ops[OP_N] = {MPI_SUM, MPI_PROD, MPI_MIN,  MPI_MAX, MPI_LAND,
                              MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    return ops[op];
}

/* The input of rank r at index i: small, so floating results are exact,
 * 1..3 for products; the "big" variant makes integer sums wrap. */
static long long value(int op, int r, size_t i, int big)
{
    if (big) {
        return 0x7ffffff0LL + r * 3 + (long long)i;
    }
    if (op == OP_PROD) {
        return 1 + (long long)((r + i) % 3);
    }
    return (long long)((r * 7 + i * 3) % 11);
}

enum coll { C_REDUCE, C_ALLREDUCE, C_SCAN, C_EXSCAN, C_RS, C_RSB, C_N };
static const char *const coll_names[C_N] = {
    "reduce", "allreduce",      "scan",
    "exscan", "reduce_scatter", "reduce_scatter_block"};

#define DEFINE_TYPE(NAME, T, IS_INT)                                           \
    static T fold_##NAME(int op, int lo, int hi, size_t i, int big)            \
    {                                                                          \
        T acc = (T)value(op, lo, i, big);                                      \
        for (int r = lo + 1; r <= hi; ++r) {                                   \
            T v = (T)value(op, r, i, big);                                     \
            switch (op) {                                                      \
            case OP_SUM:                                                       \
                acc = IS_INT ? (T)((uint64_t)(long long)acc +                  \
                                   (uint64_t)(long long)v)                     \
                             : (T)(acc + v);                                   \
                break;                                                         \
            case OP_PROD:                                                      \
                acc = IS_INT ? (T)((uint64_t)(long long)acc *                  \
                                   (uint64_t)(long long)v)                     \
                             : (T)(acc * v);                                   \
                break;                                                         \
            case OP_MIN:                                                       \
                acc = v < acc ? v : acc;                                       \
                break;                                                         \
            case OP_MAX:                                                       \
                acc = v > acc ? v : acc;                                       \
                break;                                                         \
            case OP_LAND:                                                      \
                acc = (T)((acc != 0) && (v != 0));                             \
                break;                                                         \
            case OP_LOR:                                                       \
                acc = (T)((acc != 0) || (v != 0));                             \
                break;                                                         \
            case OP_LXOR:                                                      \
                acc = (T)((acc != 0) != (v != 0));                             \
                break;                                                         \
            case OP_BAND:                                                      \
                acc = (T)((long long)acc & (long long)v);                      \
                break;                                                         \
            case OP_BOR:                                                       \
                acc = (T)((long long)acc | (long long)v);                      \
                break;                                                         \
            default:                                                           \
                acc = (T)((long long)acc ^ (long long)v);                      \
                break;                                                         \
            }                                                                  \
        }                                                                      \
        return acc;                                                            \
    }                                                                          \
    static void fill_##NAME(void *buf, int op, int r, size_t off, size_t n,    \
                            int big)                                           \
    {                                                                          \
        for (size_t i = 0; i < n; ++i) {                                       \
            ((T *)buf)[i] = (T)value(op, r, off + i, big);                     \
        }                                                                      \
    }                                                                          \
    static int check_##NAME(const void *buf, int op, int lo, int hi,           \
                            size_t off, size_t n, int big)                     \
    {                                                                          \
        for (size_t i = 0; i < n; ++i) {                                       \
            T e = fold_##NAME(op, lo, hi, off + i, big);                       \
            if (((const T *)buf)[i] != e) {                                    \
                return (int)i;                                                 \
            }                                                                  \
        }                                                                      \
        return -1;                                                             \
    }

DEFINE_TYPE(i8, int8_t, 1)
DEFINE_TYPE(u8, uint8_t, 1)
DEFINE_TYPE(i16, int16_t, 1)
DEFINE_TYPE(u16, uint16_t, 1)
DEFINE_TYPE(i32, int32_t, 1)
DEFINE_TYPE(u32, uint32_t, 1)
DEFINE_TYPE(i64, int64_t, 1)
DEFINE_TYPE(u64, uint64_t, 1)
DEFINE_TYPE(f32, float, 0)
DEFINE_TYPE(f64, double, 0)
DEFINE_TYPE(ld, long double, 0)

typedef struct type_desc {
    const char *name;
    MPI_Datatype dt;
    size_t size;
    int is_int;
    void (*fill)(void *, int, int, size_t, size_t, int);
    int (*check)(const void *, int, int, int, size_t, size_t, int);
} type_desc_t;

#define T(NAME, DT, CT, INT)                                                   \
    {                                                                          \
#DT, DT, sizeof(CT), INT, fill_##NAME, check_##NAME                    \
    }

static int op_applies(int op, const type_desc_t *t)
{
    if (op >= OP_LAND) {
        return t->is_int;
    }
    return 1;
}

/* Runs one collective on n elements and checks it; every rank calls it
 * with the same arguments. */
static void run_one(MPI_Comm comm, int coll, const type_desc_t *t, int op,
                    size_t n, int root, int in_place, int big)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const size_t total = coll == C_RS || coll == C_RSB ? n * (size_t)size : n;
    int *rcounts = malloc(sizeof(int) * (size_t)size);
    size_t my_off = 0, my_n = total;
    for (int r = 0; r < size; ++r) {
        rcounts[r] = (int)n; /* reduce_scatter: odd pattern below */
        if (coll == C_RS) {
            rcounts[r] = (int)((n + (size_t)r) % 4);
        }
    }
    size_t rs_total = 0;
    if (coll == C_RS) {
        for (int r = 0; r < size; ++r) {
            if (r == rank) {
                my_off = rs_total;
            }
            rs_total += (size_t)rcounts[r];
        }
    }
    const size_t in_n = coll == C_RS ? rs_total : total;
    if (coll == C_RS) {
        my_n = (size_t)rcounts[rank];
    } else if (coll == C_RSB) {
        my_off = n * (size_t)rank;
        my_n = n;
    }
    char *in = malloc(in_n * t->size + 16);
    char *out = malloc(in_n * t->size + 16);
    t->fill(in, op, rank, 0, in_n, big);
    memset(out, 0x5a, in_n * t->size + 16);
    const void *sbuf = in;
    void *rbuf = out;
    int ip = in_place && !(coll == C_REDUCE && rank != root);
    if (ip) {
        memcpy(out, in, in_n * t->size);
        sbuf = MPI_IN_PLACE;
    }
    int rc = MPI_SUCCESS;
    MPI_Op mop = mpi_op(op);
    switch (coll) {
    case C_REDUCE:
        rc = MPI_Reduce(sbuf, rbuf, (int)n, t->dt, mop, root, comm);
        break;
    case C_ALLREDUCE:
        rc = MPI_Allreduce(sbuf, rbuf, (int)n, t->dt, mop, comm);
        break;
    case C_SCAN:
        rc = MPI_Scan(sbuf, rbuf, (int)n, t->dt, mop, comm);
        break;
    case C_EXSCAN:
        rc = MPI_Exscan(sbuf, rbuf, (int)n, t->dt, mop, comm);
        break;
    case C_RS:
        rc = MPI_Reduce_scatter(sbuf, rbuf, rcounts, t->dt, mop, comm);
        break;
    default:
        rc = MPI_Reduce_scatter_block(sbuf, rbuf, (int)n, t->dt, mop, comm);
        break;
    }
    CHECK(rc == MPI_SUCCESS, "%s returned %d", coll_names[coll], rc);
    int lo = 0, hi = size - 1, check = 1;
    if (coll == C_SCAN) {
        hi = rank;
    } else if (coll == C_EXSCAN) {
        hi = rank - 1;
        check = rank > 0;
    } else if (coll == C_REDUCE) {
        check = rank == root;
    }
    if (check) {
        const char *res = out;
        int bad = t->check(res, op, lo, hi, my_off,
                           coll == C_RS || coll == C_RSB ? my_n : n, big);
        CHECK(bad < 0,
              "%s %s %s n=%zu root=%d in_place=%d size=%d: element %d wrong",
              coll_names[coll], t->name, op_names[op], n, root, ip, size, bad);
    }
    free(in);
    free(out);
    free(rcounts);
}

/* A non-commutative user op: 2x2 integer matrix product, in op inout. */
typedef struct mat {
    int a, b, c, d;
} mat_t;
static void mat_mul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    mat_t *x = in, *y = inout;
    for (int i = 0; i < *len; ++i) {
        mat_t r = {x[i].a * y[i].a + x[i].b * y[i].c,
                   x[i].a * y[i].b + x[i].b * y[i].d,
                   x[i].c * y[i].a + x[i].d * y[i].c,
                   x[i].c * y[i].b + x[i].d * y[i].d};
        y[i] = r;
    }
}
static mat_t mat_of(int r, int i)
{
    mat_t m = {1, (r + i) % 3, (r * i) % 2, 1};
    return m;
}
static mat_t mat_fold(int lo, int hi, int i)
{
    mat_t acc = mat_of(lo, i);
    for (int r = lo + 1; r <= hi; ++r) {
        mat_t v = mat_of(r, i);
        int one = 1;
        mat_mul(&acc, &v, &one, NULL); /* v = acc * v */
        acc = v;
    }
    return acc;
}

static void test_user_ops(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Datatype mat_dt;
    MPI_Type_contiguous(4, MPI_INT, &mat_dt);
    MPI_Type_commit(&mat_dt);
    MPI_Op op;
    MPI_Op_create(mat_mul, 0, &op);
    enum { N = 5 };
    mat_t in[N], out[N];
    for (int i = 0; i < N; ++i) {
        in[i] = mat_of(rank, i);
    }
    MPI_Allreduce(in, out, N, mat_dt, op, comm);
    for (int i = 0; i < N; ++i) {
        mat_t e = mat_fold(0, size - 1, i);
        CHECK(memcmp(&e, &out[i], sizeof(e)) == 0,
              "non-commutative allreduce element %d", i);
    }
    for (int root = 0; root < size; ++root) {
        memset(out, 0, sizeof(out));
        MPI_Reduce(in, out, N, mat_dt, op, root, comm);
        for (int i = 0; rank == root && i < N; ++i) {
            mat_t e = mat_fold(0, size - 1, i);
            CHECK(memcmp(&e, &out[i], sizeof(e)) == 0,
                  "non-commutative reduce root %d element %d", root, i);
        }
    }
    MPI_Scan(in, out, N, mat_dt, op, comm);
    for (int i = 0; i < N; ++i) {
        mat_t e = mat_fold(0, rank, i);
        CHECK(memcmp(&e, &out[i], sizeof(e)) == 0,
              "non-commutative scan element %d", i);
    }
    MPI_Op_free(&op);
    MPI_Type_free(&mat_dt);
}

/* MAXLOC / MINLOC on the pair types. */
static void test_pairs(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    enum { N = 7 };
    struct {
        double v;
        int i;
    } d_in[N], d_out[N];
    struct {
        float v;
        int i;
    } f_in[N], f_out[N];
    struct {
        int v;
        int i;
    } i_in[N], i_out[N];
    struct {
        long v;
        int i;
    } l_in[N], l_out[N];
    struct {
        short v;
        int i;
    } s_in[N], s_out[N];
    for (int k = 0; k < N; ++k) {
        int v = (rank * 5 + k * 3) % 4; /* ties on purpose */
        d_in[k].v = v;
        d_in[k].i = rank;
        f_in[k].v = (float)v;
        f_in[k].i = rank;
        i_in[k].v = v;
        i_in[k].i = rank;
        l_in[k].v = v;
        l_in[k].i = rank;
        s_in[k].v = (short)v;
        s_in[k].i = rank;
    }
    for (int loc = 0; loc < 2; ++loc) {
        MPI_Op op = loc ? MPI_MINLOC : MPI_MAXLOC;
        MPI_Allreduce(d_in, d_out, N, MPI_DOUBLE_INT, op, comm);
        MPI_Allreduce(f_in, f_out, N, MPI_FLOAT_INT, op, comm);
        MPI_Allreduce(i_in, i_out, N, MPI_2INT, op, comm);
        MPI_Allreduce(l_in, l_out, N, MPI_LONG_INT, op, comm);
        MPI_Allreduce(s_in, s_out, N, MPI_SHORT_INT, op, comm);
        for (int k = 0; k < N; ++k) {
            int best = -1, at = 0;
            for (int r = 0; r < size; ++r) {
                int v = (r * 5 + k * 3) % 4;
                if (best < 0 || (loc ? v < best : v > best)) {
                    best = v;
                    at = r;
                }
            }
            CHECK(d_out[k].v == best && d_out[k].i == at, "double_int");
            CHECK(f_out[k].v == (float)best && f_out[k].i == at, "float_int");
            CHECK(i_out[k].v == best && i_out[k].i == at, "2int");
            CHECK(l_out[k].v == best && l_out[k].i == at, "long_int");
            CHECK(s_out[k].v == best && s_out[k].i == at, "short_int");
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    const type_desc_t types[] = {
        T(i8, MPI_INT8_T, int8_t, 1),
        T(u8, MPI_UNSIGNED_CHAR, uint8_t, 1),
        T(i16, MPI_SHORT, int16_t, 1),
        T(u16, MPI_UINT16_T, uint16_t, 1),
        T(i32, MPI_INT, int32_t, 1),
        T(u32, MPI_UNSIGNED, uint32_t, 1),
        T(i64, MPI_LONG, int64_t, 1),
        T(u64, MPI_UINT64_T, uint64_t, 1),
        T(f32, MPI_FLOAT, float, 0),
        T(f64, MPI_DOUBLE, double, 0),
        T(ld, MPI_LONG_DOUBLE, long double, 0),
    };
    const size_t ntypes = sizeof(types) / sizeof(types[0]);
    const size_t counts[] = {0, 1, 7, 1000};
    for (int coll = 0; coll < C_N; ++coll) {
        for (size_t t = 0; t < ntypes; ++t) {
            for (int op = 0; op < OP_N; ++op) {
                if (!op_applies(op, &types[t])) {
                    continue;
                }
                /* 1000 elements for a quarter of the pairs and up to 4
                 * ranks: time on 2 loaded cores */
                const int big_ok = g_size <= 4 && (t + (size_t)op) % 4 == 0;
                for (size_t c = 0; c < (big_ok ? 4u : 3u); ++c) {
                    int root = (int)(c + t) % g_size;
                    run_one(MPI_COMM_WORLD, coll, &types[t], op, counts[c],
                            root, (int)((c + (size_t)op) % 2), 0);
                }
            }
        }
        /* integer wrap */
        run_one(MPI_COMM_WORLD, coll, &types[4], OP_SUM, 5, 0, 0, 1);
        run_one(MPI_COMM_WORLD, coll, &types[6], OP_PROD, 5, 0, 1, 1);
    }
    test_pairs(MPI_COMM_WORLD);
    test_user_ops(MPI_COMM_WORLD);

    /* split and dup communicators */
    MPI_Comm split, dup;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_size - g_rank, &split);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (int coll = 0; coll < C_N; ++coll) {
        run_one(split, coll, &types[9], OP_SUM, 33, 0, 0, 0);
        run_one(dup, coll, &types[4], OP_MAX, 17, g_size - 1, 1, 0);
    }
    test_user_ops(split);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);

    const int rc = rank_verdict("test_reduce", g_size, g_rank, g_errors);
    MPI_Finalize();
    return rc;
}
