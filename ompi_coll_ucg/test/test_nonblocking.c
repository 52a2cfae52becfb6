/* SPDX-License-Identifier: BSD-3-Clause */
/* Nonblocking collectives under coll/ucg, several in flight at once:
 * ibarrier, iallreduce, ireduce, iscan, iexscan, ireduce_scatter(_block),
 * ibcast (of a non-contiguous type: unpacked at completion), iallgather,
 * igather, iscatterv, iallgatherv, ialltoall(v), a blocking allreduce in
 * between; completed by MPI_Waitall or an MPI_Test loop. */
#include "verdict.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 100 };

/* igather, iscatterv, iallgatherv, ialltoall, ialltoallv, a vector ibcast
 * in flight together; returns the errors seen. */
static int moves(int rank, int size, MPI_Datatype vec, int round)
{
    int errors = 0;
    int vb[15];
    for (int i = 0; i < 15; ++i) {
        vb[i] = rank == 0 ? i + round : -1;
    }
    int sg[2] = {rank, rank * 10}, *gg = malloc(sizeof(int) * 2 * size);
    int *sv = malloc(sizeof(int) * size * size),
        *cnt = malloc(sizeof(int) * size);
    int *dsp = malloc(sizeof(int) * size), rv[64];
    int *ag = malloc(sizeof(int) * 2 * size), *agc = malloc(sizeof(int) * size);
    int *agd = malloc(sizeof(int) * size);
    int *as = malloc(sizeof(int) * 3 * size),
        *ar = malloc(sizeof(int) * 3 * size);
    int *avs = malloc(sizeof(int) * size), *avr = malloc(sizeof(int) * size);
    int *avsc = malloc(sizeof(int) * size), *avrc = malloc(sizeof(int) * size);
    int *avd = malloc(sizeof(int) * size);
    int at = 0;
    for (int r = 0; r < size; ++r) {
        cnt[r] = r % 3 + 1;
        dsp[r] = at;
        at += cnt[r];
        agc[r] = r % 2 + 1;
        agd[r] = 2 * r;
        avsc[r] = avrc[r] = 1;
        avd[r] = r;
        avs[r] = rank * 100 + r;
        for (int k = 0; k < 3; ++k) {
            as[3 * r + k] = rank * 1000 + r * 10 + k;
        }
    }
    for (int i = 0; i < at && i < size * size; ++i) {
        sv[i] = i * 7 + round;
    }
    int ag_in[2] = {rank + round, rank - round};
    MPI_Request req[6];
    const int groot = 1 % size;
    MPI_Ibcast(vb, 5, vec, 0, MPI_COMM_WORLD, &req[0]);
    MPI_Igather(sg, 2, MPI_INT, gg, 2, MPI_INT, groot, MPI_COMM_WORLD, &req[1]);
    MPI_Iscatterv(sv, cnt, dsp, MPI_INT, rv, cnt[rank], MPI_INT, 0,
                  MPI_COMM_WORLD, &req[2]);
    MPI_Iallgatherv(ag_in, agc[rank], MPI_INT, ag, agc, agd, MPI_INT,
                    MPI_COMM_WORLD, &req[3]);
    MPI_Ialltoall(as, 3, MPI_INT, ar, 3, MPI_INT, MPI_COMM_WORLD, &req[4]);
    MPI_Ialltoallv(avs, avsc, avd, MPI_INT, avr, avrc, avd, MPI_INT,
                   MPI_COMM_WORLD, &req[5]);
    MPI_Waitall(6, req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 15; ++i) {
        int expect = i % 3 == 1 ? (rank == 0 ? i + round : -1) : i + round;
        errors += vb[i] != expect;
    }
    for (int r = 0; rank == groot && r < size; ++r) {
        errors += gg[2 * r] != r || gg[2 * r + 1] != r * 10;
    }
    for (int k = 0; k < cnt[rank]; ++k) {
        errors += rv[k] != (dsp[rank] + k) * 7 + round;
    }
    for (int r = 0; r < size; ++r) {
        errors += ag[2 * r] != r + round;
        errors += agc[r] == 2 && ag[2 * r + 1] != r - round;
        errors += avr[r] != r * 100 + rank;
        for (int k = 0; k < 3; ++k) {
            errors += ar[3 * r + k] != r * 1000 + rank * 10 + k;
        }
    }
    free(gg);
    free(sv);
    free(cnt);
    free(dsp);
    free(ag);
    free(agc);
    free(agd);
    free(as);
    free(ar);
    free(avs);
    free(avr);
    free(avsc);
    free(avrc);
    free(avd);
    if (errors) {
        fprintf(stderr, "rank %d: %d errors in moves\n", rank, errors);
    }
    return errors;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, errors = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *in = malloc(sizeof(int) * N * (size_t)size);
    int *a = malloc(sizeof(int) * N), *b = malloc(sizeof(int) * N);
    int *c = malloc(sizeof(int) * N), *d = malloc(sizeof(int) * N);
    int *e = malloc(sizeof(int) * N), *f = malloc(sizeof(int) * N);
    int *g = malloc(sizeof(int) * N * (size_t)size);
    int *rcounts = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < N * size; ++i) {
        in[i] = rank + i;
    }
    for (int r = 0; r < size; ++r) {
        rcounts[r] = r % 2 ? 3 : 1;
    }
    MPI_Datatype v0, vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v0);
    MPI_Type_create_resized(v0, 0, 3 * (MPI_Aint)sizeof(int), &vec);
    MPI_Type_commit(&vec);
    MPI_Type_free(&v0);
    for (int round = 0; round < 3; ++round) {
        errors += moves(rank, size, vec, round);
        MPI_Request req[9];
        int bc = rank == 0 ? 77 + round : -1;
        int mine = rank, all = 0;
        MPI_Ibarrier(MPI_COMM_WORLD, &req[0]);
        MPI_Iallreduce(in, a, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[1]);
        MPI_Ireduce(in, b, N, MPI_INT, MPI_MAX, size - 1, MPI_COMM_WORLD,
                    &req[2]);
        MPI_Iscan(in, c, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[3]);
        MPI_Iexscan(in, d, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[4]);
        MPI_Ibcast(&bc, 1, MPI_INT, 0, MPI_COMM_WORLD, &req[5]);
        MPI_Ireduce_scatter_block(in, e, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                  &req[6]);
        MPI_Ireduce_scatter(in, f, rcounts, MPI_INT, MPI_MIN, MPI_COMM_WORLD,
                            &req[7]);
        MPI_Iallgather(&mine, 1, MPI_INT, g, 1, MPI_INT, MPI_COMM_WORLD,
                       &req[8]);
        MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (round == 1) {
            int done = 0;
            while (!done) {
                MPI_Testall(9, req, &done, MPI_STATUSES_IGNORE);
            }
        } else {
            MPI_Waitall(9, req, MPI_STATUSES_IGNORE);
        }
        const int tri = size * (size - 1) / 2;
        errors += all != tri;
        errors += bc != 77 + round;
        for (int r = 0; r < size; ++r) {
            errors += g[r] != r;
        }
        int at = 0;
        for (int r = 0; r < rank; ++r) {
            at += rcounts[r];
        }
        for (int i = 0; i < N; ++i) {
            errors += a[i] != tri + size * i;
            errors += rank == size - 1 && b[i] != size - 1 + i;
            errors += c[i] != rank * (rank + 1) / 2 + (rank + 1) * i;
            errors += rank > 0 && d[i] != rank * (rank - 1) / 2 + rank * i;
            errors += e[i] != tri + size * (rank * N + i);
            errors += i < rcounts[rank] && f[i] != at + i;
        }
    }
    MPI_Type_free(&vec);

    /* the communicator freed while its collective is in flight */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    long lx = rank, ly = -1;
    MPI_Request dreq;
    MPI_Iallreduce(&lx, &ly, 1, MPI_LONG, MPI_SUM, dup, &dreq);
    MPI_Comm_free(&dup);
    MPI_Wait(&dreq, MPI_STATUS_IGNORE);
    errors += ly != (long)size * (size - 1) / 2;

    const int rc = rank_verdict("test_nonblocking", size, rank, errors);
    free(in);
    free(a);
    free(b);
    free(c);
    free(d);
    free(e);
    free(f);
    free(g);
    free(rcounts);
    MPI_Finalize();
    return rc;
}
