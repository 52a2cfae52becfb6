// SPDX-License-Identifier: BSD-3-Clause
// Atomic reduction kernels and identities, for shared-memory transports
// where several processes reduce into one buffer at once.
#pragma once

#include <ucg/reduce.h>

#include <cstddef>

namespace ucg::reduce {

/// dst[i] = dst[i] op src[i] for i < count, each dst[i] updated with one
/// atomic read-modify-write (std::atomic_ref, relaxed), so concurrent
/// callers on the same dst lose no update. dst is aligned to the element
/// size; src is private to the caller.
using AtomicKernel = void (*)(void *dst, const void *src, std::size_t count);

/// The atomic kernel of a pair ucg_reduce_check accepts, or nullptr: for
/// complex, long double and pair types, and where std::atomic_ref of the
/// type is not lock-free on this machine (the caller then takes a lock).
AtomicKernel atomic_kernel(ucg_op_t op, ucg_dtype_t dtype) noexcept;

/// True when atomic_kernel(op, dtype) is one hardware read-modify-write
/// per element (integer sum and bitwise ops: fetch_add/and/or/xor); false
/// for a compare-and-swap loop, which retries under contention, or when
/// there is no atomic kernel.
bool atomic_is_single_rmw(ucg_op_t op, ucg_dtype_t dtype) noexcept;

/// Writes count identity elements of op into dst, so that a reduction can
/// start from dst instead of from the first contribution: sum -0.0 on
/// floating and complex types (x + -0.0 == x for every x, -0.0 included)
/// and 0 on integers; prod 1; min the largest value or +inf; max the
/// lowest value or -inf; band ~0; bor, bxor 0; land 1; lor, lxor 0;
/// maxloc {lowest or -inf, INT_MAX}; minloc {largest or +inf, INT_MAX}.
/// The pair must pass ucg_reduce_check (asserted; else dst is untouched).
void fill_identity(void *dst, std::size_t count, ucg_op_t op,
                   ucg_dtype_t dtype) noexcept;

} // namespace ucg::reduce
