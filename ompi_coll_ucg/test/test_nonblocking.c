/* SPDX-License-Identifier: BSD-3-Clause */
/* Nonblocking collectives under coll/ucg, several in flight at once:
 * ibarrier, iallreduce, ireduce, iscan, iexscan, ireduce_scatter(_block)
 * run on UCG, ibcast and iallgather on the previous module, a blocking
 * allreduce in between; completed by MPI_Waitall or an MPI_Test loop. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 100 };

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
    for (int round = 0; round < 3; ++round) {
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
    int total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("test_nonblocking: np=%d: %s (%d errors)\n", size,
               total ? "FAILED" : "passed", total);
    }
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
    return total ? 1 : 0;
}
