/* SPDX-License-Identifier: BSD-3-Clause */
/* A host fails while every rank is in UCG collectives (the cluster's
 * fault tests, test/cluster/on_cluster.sh --fault): its ranks are killed
 * or its link goes down. Every rank loops on allreduce with errors
 * returned; rank 0 creates the file UCG_FAULT_READY names once the loop
 * runs (the harness strikes then). A rank whose call fails says how long
 * after the last completed one, which must be within UCG_TIMEOUT (plus 3 s
 * for a loaded machine), and exits 1 (no MPI_Finalize: its barrier would
 * need the failed host). A loop that still runs after 60 s is a hang. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *t = getenv("UCG_TIMEOUT");
    const double limit = (t != NULL ? atof(t) : 30.0) + 3.0;
    const char *ready = getenv("UCG_FAULT_READY");
    const double start = now();
    double last = start;
    long x = rank, y = 0;
    for (long i = 0; now() - start < 60.0; ++i) {
        if (MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD) !=
            MPI_SUCCESS) {
            const double waited = now() - last;
            printf("test_fault: rank %d: the allreduce failed %.1f s after "
                   "the last one completed%s\n",
                   rank, waited,
                   waited > limit ? ": FAILED: past UCG_TIMEOUT" : "");
            fflush(stdout);
            return 1;
        }
        last = now();
        if (i == 100 && rank == 0 && ready != NULL) {
            FILE *f = fopen(ready, "w");
            if (f != NULL) {
                fclose(f);
            }
        }
    }
    printf("test_fault: rank %d: FAILED: the collectives ran on for 60 s\n",
           rank);
    MPI_Finalize();
    return 0;
}
