// SPDX-License-Identifier: BSD-3-Clause
// A reference for the kernels, written differently from the library: one
// element at a time, a runtime switch on the type, integers widened to 64
// bits, floating values read as long double.
#pragma once

#include <ucg/reduce.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace reduce_test {

/// The C layouts the header documents, for the size checks.
struct FloatInt {
    float value;
    int index;
};
struct DoubleInt {
    double value;
    int index;
};
struct LongInt {
    long value;
    int index;
};
struct TwoInt {
    int value;
    int index;
};
struct ShortInt {
    short value;
    int index;
};
struct LongDoubleInt {
    long double value;
    int index;
};

/// Every op and dtype in range, for loops.
std::vector<ucg_op_t> all_ops();
std::vector<ucg_dtype_t> all_dtypes();

/// Whether MPI (and the header) defines op on dtype, from MPI's table.
bool mpi_defines(ucg_op_t op, ucg_dtype_t dtype);

/// Bytes of one element, from the C layouts above.
std::size_t element_size(ucg_dtype_t dtype);

/// a = a op b for one element.
void ref_apply(ucg_op_t op, ucg_dtype_t dtype, void *a, const void *b);

/// Equal in every meaningful byte (not padding, not the 6 unused bytes of
/// an x87 long double); two floating NaNs are equal whatever their payload.
bool same_element(ucg_dtype_t dtype, const void *x, const void *y);

/// Printable element, for failure messages.
std::string element_text(ucg_dtype_t dtype, const void *p);

/// count random elements with edge values mixed in (0, -1, extremes,
/// signed zeros, infinities, NaN; few distinct pair values, so ties).
/// Complex values are small integers and halves, so products are exact.
std::vector<unsigned char> random_elements(ucg_dtype_t dtype, std::size_t count,
                                           std::mt19937_64 &rng,
                                           bool with_nan = true);

/// Index of the first element where a and b differ, or count.
std::size_t first_difference(ucg_dtype_t dtype, const void *a, const void *b,
                             std::size_t count);

} // namespace reduce_test
