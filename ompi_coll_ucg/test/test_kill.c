/* SPDX-License-Identifier: BSD-3-Clause */
/* A rank dies while the others are in UCG collectives: mpirun must end
 * with an error, not hang (the ctest entry expects a non-zero exit well
 * inside its timeout). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long x = rank, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == size - 1) {
        usleep(100000); /* the others are waiting in the allreduce */
        raise(SIGKILL);
    }
    for (int i = 0; i < 1000000; ++i) {
        MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
    printf("test_kill: the collectives completed without rank %d\n", size - 1);
    MPI_Finalize();
    return 0;
}
