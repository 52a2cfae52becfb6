/* SPDX-License-Identifier: BSD-3-Clause */
/* What coll/ucg hands to the previous module: a user op on a
 * non-contiguous datatype (the wrapper script checks the verbose log says
 * so) still gives the right result; an allreduce and a bcast that UCG
 * runs are checked next to it. */
#include "verdict.h"

#include <mpi.h>
#include <stdio.h>

static void add_ints(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt; /* called with the vector type: every other int */
    int *a = in, *b = inout;
    for (int i = 0; i < *len; ++i) {
        b[2 * i] += a[2 * i];
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, errors = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* 4 vector elements of {int, gap}: user op on ints, via MPI_INT
     * inside the vector (Open MPI calls the op with the base type) */
    MPI_Datatype v0, vec;
    MPI_Type_vector(1, 1, 2, MPI_INT, &v0);
    MPI_Type_create_resized(v0, 0, 2 * (MPI_Aint)sizeof(int), &vec);
    MPI_Type_commit(&vec);
    MPI_Op op;
    MPI_Op_create(add_ints, 1, &op);
    int in[8], out[8];
    for (int i = 0; i < 8; ++i) {
        in[i] = rank + i;
        out[i] = -1;
    }
    MPI_Allreduce(in, out, 4, vec, op, MPI_COMM_WORLD);
    for (int i = 0; i < 4; ++i) {
        int expect = size * (size - 1) / 2 + size * 2 * i;
        if (out[2 * i] != expect || out[2 * i + 1] != -1) {
            ++errors;
            fprintf(stderr, "rank %d: vector allreduce [%d] = %d, not %d\n",
                    rank, i, out[2 * i], expect);
        }
    }
    MPI_Op_free(&op);
    MPI_Type_free(&v0);
    MPI_Type_free(&vec);

    /* the same buffers again and again (a cached collective) */
    long x = 0, sum = 0;
    for (long it = 0; it < 4; ++it) {
        x = rank + 1 + it;
        MPI_Allreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (sum != (long)size * (size + 1) / 2 + it * size) {
            ++errors;
            fprintf(stderr, "rank %d: allreduce %ld = %ld\n", rank, it, sum);
        }
        MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
        if (x != size + it) {
            ++errors;
        }
    }
    int b = rank == 0 ? 42 : 0;
    MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (b != 42) {
        ++errors;
    }
    const int rc = rank_verdict("test_fallback", size, rank, errors);
    MPI_Finalize();
    return rc;
}
