// SPDX-License-Identifier: BSD-3-Clause
// A reference model of every ucg.h collective for tests: the buffers one
// rank passes (inputs from a formula of rank, block and element; outputs
// preset to a sentinel) and the exact bytes its output buffer must hold
// afterwards, sentinels included, so a write out of place is caught.
#pragma once

#include <ucg/ucg.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ucg::test {

struct RefCase {
    ucg_coll_type_t coll = UCG_COLL_BARRIER;
    int size = 1;
    int rank = 0;
    int root = 0;
    std::size_t count = 0; ///< elements per block (v forms vary around it)
    bool in_place = false;
    ucg_op_t op = UCG_OP_SUM;
    ucg_dtype_t dtype = UCG_DTYPE_INT32; ///< reductions
    const ucg_user_op_t *user_op = nullptr;
    int iter = 0; ///< changes the data between repeats

    /// Builds the buffers; call once, then args() and check().
    void prepare();
    ucg_coll_args_t args();
    /// Refills the inputs and sentinels for `iter` (for repeats).
    void refill(int iter);
    /// Empty when the output is exactly as expected; else where it is not.
    std::string check() const;

    std::vector<std::uint8_t> src, dst, expect;
    std::vector<std::size_t> scounts, sdispls, dcounts, ddispls;
};

/// A prepared case of `coll` on `size` ranks, seen from `rank`, root 0.
inline RefCase ref_case(ucg_coll_type_t coll, int size, int rank,
                        std::size_t count)
{
    RefCase c;
    c.coll = coll;
    c.size = size;
    c.rank = rank;
    c.count = count;
    c.prepare();
    return c;
}

/// Whether the collective reduces.
bool reduces(ucg_coll_type_t c);
/// Whether only the root's in-place flag is meaningful.
bool rooted(ucg_coll_type_t c);

/// A user operator for tests: inout = (in + inout) for int32, commutative.
extern const ucg_user_op_t kUserSum;
/// A non-commutative one on uint64 (affine maps over uint32 composed in
/// rank order): reductions with it are right only in rank order.
extern const ucg_user_op_t kUserAffine;

} // namespace ucg::test
