// SPDX-License-Identifier: BSD-3-Clause
// The reductions mm_incast applies, from the shared kernels library
// (ucg_reduce: ucg/reduce.h, ucg/reduce_atomic.h), in the core's terms:
// one place says which pairs REDUCE messages may use and how the root and
// LOCKED senders combine (multi-source, left to right), and which atomic
// kernels ATOMIC senders use.
#pragma once

#include "uct_mm_common/status.h"

#include <ucg/reduce.h>
#include <ucg/reduce_atomic.h>

#include <cstddef>

namespace uct_mm_incast {

using uct_mm_common::Status;

/// kOk when REDUCE messages may use the pair; kInvalidParam otherwise (out
/// of range, a pair MPI does not define, UCG_OP_USER): uct_group.h's
/// UCS_ERR_INVALID_PARAM for an unsupported op/dtype.
inline Status check_pair(ucg_op_t op, ucg_dtype_t dtype) noexcept
{
    return ucg_reduce_check(op, dtype) == UCS_OK ? Status::kOk
                                                 : Status::kInvalidParam;
}

/// Bytes of one element (0 out of range).
inline std::size_t dtype_bytes(ucg_dtype_t dtype) noexcept
{
    return ucg_dtype_size(dtype);
}

/// dst = dst op srcs[0] op ... (accumulate) or srcs[0] op srcs[1] ...
/// (not), `count` elements, left to right, in one blocked pass.
inline void reduce_multi(ucg_op_t op, ucg_dtype_t dtype, void *dst,
                         const void *const *srcs, unsigned nsrcs,
                         std::size_t count, bool accumulate) noexcept
{
    ucg_reduce_multi(op, dtype, dst, srcs, nsrcs, count, accumulate ? 1 : 0);
}

/// dst[i] = dst[i] op src[i] with every dst[i] updated atomically.
using AtomicReduceFn = ucg::reduce::AtomicKernel;

/// The atomic kernel of a checked pair, or nullptr where the type has no
/// lock-free atomics (ATOMIC mode then runs LOCKED).
inline AtomicReduceFn atomic_reduce_fn(ucg_op_t op, ucg_dtype_t dtype) noexcept
{
    return ucg::reduce::atomic_kernel(op, dtype);
}

/// True when the atomic kernel is one hardware read-modify-write per
/// element (integer sum and bitwise ops), false for a CAS loop.
inline bool atomic_is_single_rmw(ucg_op_t op, ucg_dtype_t dtype) noexcept
{
    return ucg::reduce::atomic_is_single_rmw(op, dtype);
}

} // namespace uct_mm_incast
