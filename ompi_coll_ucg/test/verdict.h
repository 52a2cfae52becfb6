/* SPDX-License-Identifier: BSD-3-Clause */
/* Each rank's own verdict, printed and returned as its exit status: never
 * summed by a collective, which may be the one under test. run_mpi.cmake
 * rejects any FAILED line, and mpirun fails on any rank's non-zero exit. */
#ifndef COLL_UCG_TEST_VERDICT_H_
#define COLL_UCG_TEST_VERDICT_H_

#include <stdio.h>

static inline int rank_verdict(const char *test, int size, int rank, int errors)
{
    printf("%s: np=%d: rank %d: %s (%d errors)\n", test, size, rank,
           errors ? "FAILED" : "passed", errors);
    fflush(stdout);
    return errors ? 1 : 0;
}

#endif
