// SPDX-License-Identifier: BSD-3-Clause
// Reductions of mm_incast: operator x datatype kernels, plain and atomic,
// chosen per group (no global table of state).
#pragma once

#include "uct_mm_incast.h"

#include <cstddef>

namespace uct_mm_incast {

/// dst[i] = dst[i] op src[i] for i < count (elements, not bytes).
using ReduceFn = void (*)(void *dst, const void *src, std::size_t count);

/// Same, with every dst[i] updated atomically (dst is shared).
using AtomicReduceFn = void (*)(void *dst, const void *src, std::size_t count);

/// Bytes of one element of dtype (0 for an invalid dtype).
std::size_t dtype_size(uct_mm_incast_dtype_t dtype);

/// UCS_OK, UCS_ERR_INVALID_PARAM (out of range) or UCS_ERR_UNSUPPORTED
/// (bitwise operator on a floating type).
ucs_status_t check_op(uct_mm_incast_op_t op, uct_mm_incast_dtype_t dtype);

/// Kernel for a checked pair; nullptr for GATHER.
ReduceFn reduce_fn(uct_mm_incast_op_t op, uct_mm_incast_dtype_t dtype);

/// Atomic kernel for a checked pair, or nullptr where the type has no
/// lock-free atomics on this machine (the group then runs LOCKED).
AtomicReduceFn atomic_reduce_fn(uct_mm_incast_op_t op,
                                uct_mm_incast_dtype_t dtype);

/// True when the atomic kernel is one hardware read-modify-write per
/// element (fetch_add/and/or/xor), false when it is a CAS loop.
bool atomic_is_single_rmw(uct_mm_incast_op_t op, uct_mm_incast_dtype_t dtype);

/// Writes `count` identity elements of op (sum 0, prod 1, min the largest
/// value or +inf, max the lowest or -inf, band ~0, land 1, ...).
void fill_identity(void *dst, std::size_t count, uct_mm_incast_op_t op,
                   uct_mm_incast_dtype_t dtype);

} // namespace uct_mm_incast
