// SPDX-License-Identifier: BSD-3-Clause
// ucg_reduce_multi equals a sequence of ucg_reduce calls, bit for bit.
#include "reduce_ref.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

using namespace reduce_test;

namespace {

using Bytes = std::vector<unsigned char>;

/// Floating values of very different magnitudes: any change in the order
/// of a sum changes its rounding.
template <typename T>
Bytes spread_values(std::size_t count, std::mt19937_64 &rng)
{
    std::vector<T> values(count);
    for (T &v : values) {
        const auto mantissa = static_cast<double>(static_cast<int64_t>(rng()));
        v = static_cast<T>(
            std::ldexp(mantissa, static_cast<int>(rng() % 60) - 93));
    }
    Bytes out(count * sizeof(T));
    std::memcpy(out.data(), values.data(), out.size());
    return out;
}

Bytes make_values(ucg_dtype_t dtype, std::size_t count, std::mt19937_64 &rng)
{
    if (dtype == UCG_DTYPE_FLOAT) {
        return spread_values<float>(count, rng);
    }
    if (dtype == UCG_DTYPE_DOUBLE) {
        return spread_values<double>(count, rng);
    }
    return random_elements(dtype, count, rng);
}

/// What the multi-source kernel must equal: one ucg_reduce per source.
Bytes sequential(ucg_op_t op, ucg_dtype_t dtype, Bytes dst,
                 const std::vector<Bytes> &srcs, std::size_t count,
                 bool accumulate)
{
    std::size_t next = 0;
    if (!accumulate && !srcs.empty()) {
        dst = srcs[0];
        next = 1;
    }
    for (; next < srcs.size(); ++next) {
        ucg_reduce(op, dtype, dst.data(), srcs[next].data(), count);
    }
    return dst;
}

/// Empty when ucg_reduce_multi == sequential; else what differs.
std::string check_multi(ucg_op_t op, ucg_dtype_t dtype, unsigned nsrcs,
                        std::size_t count, bool accumulate,
                        std::mt19937_64 &rng)
{
    std::vector<Bytes> srcs;
    std::vector<const void *> ptrs;
    for (unsigned i = 0; i < nsrcs; ++i) {
        srcs.push_back(make_values(dtype, count, rng));
    }
    for (const Bytes &s : srcs) {
        ptrs.push_back(s.data());
    }
    Bytes dst = make_values(dtype, count, rng);
    const Bytes expect = sequential(op, dtype, dst, srcs, count, accumulate);
    ucg_reduce_multi(op, dtype, dst.data(), ptrs.data(), nsrcs, count,
                     accumulate ? 1 : 0);
    // Bits, not values: NaN payloads must match too.
    if (std::memcmp(dst.data(), expect.data(), dst.size()) == 0) {
        return "";
    }
    const std::size_t at =
        first_difference(dtype, dst.data(), expect.data(), count);
    return std::string(ucg_op_name(op)) + " " + ucg_dtype_name(dtype) + " " +
           std::to_string(nsrcs) + " sources, count " + std::to_string(count) +
           (accumulate ? " accumulate" : "") + ": first difference at " +
           std::to_string(at);
}

} // namespace

TEST_CASE("ucg_reduce_multi: floating sums equal sequential ucg_reduce bit "
          "for bit",
          "[reduce]")
{
    std::mt19937_64 rng(13);
    for (ucg_dtype_t dtype : {UCG_DTYPE_FLOAT, UCG_DTYPE_DOUBLE}) {
        const std::size_t block = 4096 / element_size(dtype);
        for (unsigned nsrcs : {1u, 2u, 3u, 8u, 33u}) {
            for (std::size_t count :
                 {std::size_t{1}, block - 1, block, block + 1, 3 * block + 5,
                  std::size_t{100000}}) {
                if ((nsrcs > 8) && (count > 10000)) {
                    continue; // 33 x 100000 adds little and is slow in ASan
                }
                for (bool accumulate : {false, true}) {
                    CHECK(check_multi(UCG_OP_SUM, dtype, nsrcs, count,
                                      accumulate, rng) == "");
                }
            }
        }
    }
}

TEST_CASE("ucg_reduce_multi: every pair equals sequential ucg_reduce",
          "[reduce]")
{
    std::mt19937_64 rng(14);
    for (ucg_op_t op : all_ops()) {
        for (ucg_dtype_t dtype : all_dtypes()) {
            if (mpi_defines(op, dtype)) {
                CHECK(check_multi(op, dtype, 3, 1500, false, rng) == "");
                CHECK(check_multi(op, dtype, 2, 1500, true, rng) == "");
            }
        }
    }
}

TEST_CASE("ucg_reduce_multi: dst may be srcs[0] without accumulate", "[reduce]")
{
    std::mt19937_64 rng(15);
    const std::size_t count = 5000;
    std::vector<Bytes> srcs;
    for (int i = 0; i < 5; ++i) {
        srcs.push_back(spread_values<double>(count, rng));
    }
    const Bytes expect =
        sequential(UCG_OP_SUM, UCG_DTYPE_DOUBLE, {}, srcs, count, false);
    Bytes dst = srcs[0];
    std::vector<const void *> ptrs = {dst.data()};
    for (std::size_t i = 1; i < srcs.size(); ++i) {
        ptrs.push_back(srcs[i].data());
    }
    ucg_reduce_multi(UCG_OP_SUM, UCG_DTYPE_DOUBLE, dst.data(), ptrs.data(),
                     static_cast<unsigned>(ptrs.size()), count, 0);
    CHECK(dst == expect);
}

TEST_CASE("ucg_reduce_multi: no sources leave dst as it is", "[reduce]")
{
    std::vector<int32_t> dst = {1, 2, 3};
    for (int accumulate : {0, 1}) {
        ucg_reduce_multi(UCG_OP_SUM, UCG_DTYPE_INT32, dst.data(), nullptr, 0,
                         dst.size(), accumulate);
        CHECK(dst == std::vector<int32_t>{1, 2, 3});
    }
}
