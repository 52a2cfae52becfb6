/* SPDX-License-Identifier: BSD-3-Clause */
/* A call that fails on one rank alone after the others run it on UCG:
 * rank 1 passes a NULL buffer with a count to a bcast (UCG refuses it
 * there, UCS_ERR_INVALID_PARAM), the others valid ones. Rank 1 must end
 * the job with one line; before, it fell back to the previous module
 * alone and every rank hung (the wrapper's timeout). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int buf[4] = {rank, rank, rank, rank};
    MPI_Bcast(rank == 1 ? NULL : buf, 4, MPI_INT, 0, MPI_COMM_WORLD);
    printf("test_local_failure: rank %d left the bcast\n", rank);
    MPI_Finalize();
    return 0;
}
