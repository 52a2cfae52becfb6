/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file ucg/reduce.h
 * Datatypes, reduction operators and the reduction kernels that every part
 * of UCG shares: the runtime's point-to-point receive-and-reduce, the
 * mm_incast transport and the multicast transport. One table of kernels,
 * as UCC's datatype reduce: every MPI predefined C type and operator.
 *
 * Semantics (MPI): integer sums and products wrap (two's complement, never
 * saturate); LAND/LOR/LXOR give 1 or 0; MIN/MAX keep the first operand
 * unless the second compares smaller/larger (a NaN never replaces a
 * number); MAXLOC/MINLOC take the larger/smaller value and, on a tie, the
 * smaller index. Every predefined operator is commutative, so operand
 * order never changes a result except in the rounding of floating sums and
 * products, which the multi-source kernel fixes (left to right).
 */
#ifndef UCG_REDUCE_H_
#define UCG_REDUCE_H_

#include <stddef.h>
#include <ucs/type/status.h>

#ifdef __cplusplus
extern "C" {
#define UCG_REDUCE_NOEXCEPT noexcept
#else
#define UCG_REDUCE_NOEXCEPT
#endif

/** Default visibility for the entry points: the library is built with
 *  hidden visibility, and a shared library linking it (libucg) exports
 *  them. */
#define UCG_REDUCE_EXPORT __attribute__((visibility("default")))

/** Element types. Pair types are the C structs of MPI's MAXLOC/MINLOC
 *  types ({value; int index}, with the C compiler's padding). */
typedef enum ucg_dtype {
    UCG_DTYPE_INT8 = 0,
    UCG_DTYPE_INT16,
    UCG_DTYPE_INT32,
    UCG_DTYPE_INT64,
    UCG_DTYPE_UINT8,
    UCG_DTYPE_UINT16,
    UCG_DTYPE_UINT32,
    UCG_DTYPE_UINT64,
    UCG_DTYPE_FLOAT,
    UCG_DTYPE_DOUBLE,
    UCG_DTYPE_LONG_DOUBLE,
    UCG_DTYPE_BOOL, /**< C _Bool (MPI_C_BOOL), one byte, 0 or 1 */
    UCG_DTYPE_FLOAT_COMPLEX,
    UCG_DTYPE_DOUBLE_COMPLEX,
    UCG_DTYPE_LONG_DOUBLE_COMPLEX,
    UCG_DTYPE_FLOAT_INT,       /**< MPI_FLOAT_INT: {float; int} */
    UCG_DTYPE_DOUBLE_INT,      /**< MPI_DOUBLE_INT: {double; int} */
    UCG_DTYPE_LONG_INT,        /**< MPI_LONG_INT: {long; int} */
    UCG_DTYPE_2INT,            /**< MPI_2INT: {int; int} */
    UCG_DTYPE_SHORT_INT,       /**< MPI_SHORT_INT: {short; int} */
    UCG_DTYPE_LONG_DOUBLE_INT, /**< MPI_LONG_DOUBLE_INT: {long double; int} */
    UCG_DTYPE_LAST
} ucg_dtype_t;

/** Reduction operators. */
typedef enum ucg_op {
    UCG_OP_SUM = 0, /**< integers, floating, complex */
    UCG_OP_PROD,    /**< integers, floating, complex */
    UCG_OP_MIN,     /**< integers, floating */
    UCG_OP_MAX,     /**< integers, floating */
    UCG_OP_LAND,    /**< integers, bool, floating */
    UCG_OP_LOR,     /**< integers, bool, floating */
    UCG_OP_LXOR,    /**< integers, bool, floating */
    UCG_OP_BAND,    /**< integers */
    UCG_OP_BOR,     /**< integers */
    UCG_OP_BXOR,    /**< integers */
    UCG_OP_MAXLOC,  /**< pair types only */
    UCG_OP_MINLOC,  /**< pair types only */
    UCG_OP_USER,    /**< a user function: called by the runtime, never a
                         kernel here (ucg_reduce_check says unsupported) */
    UCG_OP_LAST
} ucg_op_t;

/** dst[i] = dst[i] op src[i] for i < count (elements). */
typedef void (*ucg_reduce_kernel_t)(void *dst, const void *src, size_t count);

/** Bytes of one element, or 0 for a value out of range. */
UCG_REDUCE_EXPORT size_t ucg_dtype_size(ucg_dtype_t dtype) UCG_REDUCE_NOEXCEPT;

/** "int8", ..., "long_double_int"; "?" out of range. */
UCG_REDUCE_EXPORT const char *
ucg_dtype_name(ucg_dtype_t dtype) UCG_REDUCE_NOEXCEPT;

/** "sum", ..., "minloc", "user"; "?" out of range. */
UCG_REDUCE_EXPORT const char *ucg_op_name(ucg_op_t op) UCG_REDUCE_NOEXCEPT;

/**
 * Whether a kernel exists for the pair. No log line: the caller logs where
 * the error is classified.
 * @return UCS_OK; UCS_ERR_INVALID_PARAM (a value out of range);
 *         UCS_ERR_UNSUPPORTED (a pair MPI does not define, or UCG_OP_USER).
 */
UCG_REDUCE_EXPORT ucs_status_t ucg_reduce_check(ucg_op_t op, ucg_dtype_t dtype)
    UCG_REDUCE_NOEXCEPT;

/** The kernel of a pair ucg_reduce_check accepts, else NULL. For hot loops
 *  that reduce many times with one pair. */
UCG_REDUCE_EXPORT ucg_reduce_kernel_t
ucg_reduce_kernel(ucg_op_t op, ucg_dtype_t dtype) UCG_REDUCE_NOEXCEPT;

/** dst[i] = dst[i] op src[i], i < count. The pair must pass
 *  ucg_reduce_check (asserted; without assertions nothing is written).
 *  dst and src may be the same buffer; they must not otherwise overlap.
 *  Both are aligned as the element's C type (vector loads assume it). */
UCG_REDUCE_EXPORT void ucg_reduce(ucg_op_t op, ucg_dtype_t dtype, void *dst,
                                  const void *src,
                                  size_t count) UCG_REDUCE_NOEXCEPT;

/**
 * Reduces several sources in one pass over dst, blocked so each block of
 * dst stays in cache across the sources:
 *   accumulate: dst = ((dst op srcs[0]) op srcs[1]) ... op srcs[n-1]
 *   otherwise:  dst = (srcs[0] op srcs[1]) ... op srcs[n-1]
 * always left to right, so floating results do not depend on blocking.
 * nsrcs == 0 leaves dst as it is (accumulate) or unchanged (otherwise).
 * Without accumulate dst may be srcs[0]; no other overlap is allowed.
 */
UCG_REDUCE_EXPORT void ucg_reduce_multi(ucg_op_t op, ucg_dtype_t dtype,
                                        void *dst, const void *const *srcs,
                                        unsigned nsrcs, size_t count,
                                        int accumulate) UCG_REDUCE_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* UCG_REDUCE_H_ */
