/* SPDX-License-Identifier: BSD-3-Clause */
/* The header as a C caller sees it: it compiles as C11, and C may pass any
 * int as an enum, negative values included. */
#include "c_caller.h"

#include <ucg/copy.h>
#include <ucg/reduce.h>

int c_caller_check(int op, int dtype)
{
    return (int)ucg_reduce_check((ucg_op_t)op, (ucg_dtype_t)dtype);
}

int c_caller_sum_int32(void)
{
    int dst[3] = {1, 2, 3};
    const int src[3] = {10, 20, 30};
    ucg_reduce(UCG_OP_SUM, UCG_DTYPE_INT32, dst, src, 3);
    return dst[0] + dst[1] + dst[2];
}

void c_caller_copy(void *dst, const void *src, unsigned long n)
{
    ucg_copy(dst, src, n);
}
