/* SPDX-License-Identifier: BSD-3-Clause */
/* Open MPI's point-to-point progresses while a rank waits in a UCG
 * collective: rank 0 has a large send pending (over TCP it must push the
 * data itself) and enters a barrier; rank 1 receives before it joins. */
#include "verdict.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { BYTES = 8 << 20 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, errors = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *buf = malloc(BYTES);
    for (int i = 0; i < BYTES; ++i) {
        buf[i] = (char)(rank == 0 ? i * 7 : 0);
    }
    if (rank == 0) {
        MPI_Request req;
        MPI_Isend(buf, BYTES, MPI_CHAR, 1, 5, MPI_COMM_WORLD, &req);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Recv(buf, BYTES, MPI_CHAR, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < BYTES; ++i) {
            errors += buf[i] != (char)(i * 7);
        }
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    const int rc = rank_verdict("test_progress", size, rank, errors);
    free(buf);
    MPI_Finalize();
    return rc;
}
