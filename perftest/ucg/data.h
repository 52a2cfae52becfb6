// SPDX-License-Identifier: BSD-3-Clause
// ucg_perftest's buffers and reference data: every input element is a
// function of (rank, element, iteration), small integers for reductions so
// floating sums are exact, and check() recomputes every output element.
#pragma once

#include <ucg/ucg.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ucg::perftest {

bool is_reduction(ucg_coll_type_t c);
/// Whether the collective has a v form's counts (sized per rank).
bool is_vector(ucg_coll_type_t c);

/// Buffers of one collective at one size on one rank (root 0).
struct Case {
    Case(int rank, int size, ucg_coll_type_t coll, std::size_t bytes,
         std::size_t elem);

    int rank, size;
    ucg_coll_type_t coll;
    bool reduction;
    std::size_t elem;  ///< bytes per element
    std::size_t count; ///< elements per block
    std::vector<std::uint8_t> src, dst;
    std::vector<std::size_t> counts, displs; ///< v forms: count, b * count

    /// Writes iteration `iter`'s input (and clears the output).
    void fill(int iter, ucg_dtype_t dtype);
    /// Wrong output elements of iteration `iter`.
    long check(int iter, ucg_dtype_t dtype) const;
};

} // namespace ucg::perftest
