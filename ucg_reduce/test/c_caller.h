/* SPDX-License-Identifier: BSD-3-Clause */
/* Calls into ucg/reduce.h from a C translation unit. */
#ifndef UCG_REDUCE_TEST_C_CALLER_H_
#define UCG_REDUCE_TEST_C_CALLER_H_

#ifdef __cplusplus
extern "C" {
#endif

/** ucg_reduce_check(op, dtype) from C, as an int status. */
int c_caller_check(int op, int dtype);

/** {1, 2, 3} + {10, 20, 30} summed from C: 66. */
int c_caller_sum_int32(void);

/** ucg_copy(dst, src, n) from C (ucg/copy.h is header-only). */
void c_caller_copy(void *dst, const void *src, unsigned long n);

#ifdef __cplusplus
}
#endif

#endif
