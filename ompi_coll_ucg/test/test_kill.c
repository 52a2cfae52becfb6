/* SPDX-License-Identifier: BSD-3-Clause */
/* A rank dies while the others are in UCG collectives. Run with mpirun's
 * --enable-recovery (the others are not killed with it) and errors
 * returned: each survivor must see UCG fail its allreduce and say so
 * (the ctest entry expects that line from every survivor, and a non-zero
 * exit well inside its timeout, not a hang). */
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
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    long x = rank, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == size - 1) {
        usleep(100000); /* the others are waiting in the allreduce */
        raise(SIGKILL);
    }
    for (int i = 0; i < 1000000; ++i) {
        if (MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) !=
            MPI_SUCCESS) {
            printf("test_kill: rank %d: the allreduce failed\n", rank);
            fflush(stdout);
            return 1; /* no MPI_Finalize: its barrier would need the dead */
        }
    }
    printf("test_kill: the collectives completed without rank %d\n", size - 1);
    MPI_Finalize();
    return 0;
}
