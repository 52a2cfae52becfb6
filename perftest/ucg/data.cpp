// SPDX-License-Identifier: BSD-3-Clause
// Reference data for ucg_perftest --validate (data.h).
#include "data.h"

#include <algorithm>
#include <cstring>

namespace ucg::perftest {

namespace {

// Byte collectives: element i of rank r's block b.
std::uint8_t byte_of(int r, std::size_t b, std::size_t i, int iter)
{
    return static_cast<std::uint8_t>(r * 31 + static_cast<int>(b) * 17 +
                                     static_cast<int>(i) * 7 + iter * 13);
}

// Reductions: 1..7, so sums over thousands of ranks stay exact in float.
long value_of(int r, std::size_t i, int iter)
{
    return (r + static_cast<long>(i) + iter) % 7 + 1;
}

template <class T> void put(std::uint8_t *p, std::size_t i, long v)
{
    const T t = static_cast<T>(v);
    std::memcpy(p + i * sizeof(T), &t, sizeof(T));
}

template <class T> long get(const std::uint8_t *p, std::size_t i)
{
    T t;
    std::memcpy(&t, p + i * sizeof(T), sizeof(T));
    return static_cast<long>(t);
}

void store(ucg_dtype_t dt, std::uint8_t *p, std::size_t i, long v)
{
    switch (dt) {
    case UCG_DTYPE_DOUBLE:
        return put<double>(p, i, v);
    case UCG_DTYPE_INT32:
        return put<std::int32_t>(p, i, v);
    case UCG_DTYPE_INT64:
        return put<std::int64_t>(p, i, v);
    default:
        return put<float>(p, i, v);
    }
}

long load(ucg_dtype_t dt, const std::uint8_t *p, std::size_t i)
{
    switch (dt) {
    case UCG_DTYPE_DOUBLE:
        return get<double>(p, i);
    case UCG_DTYPE_INT32:
        return get<std::int32_t>(p, i);
    case UCG_DTYPE_INT64:
        return get<std::int64_t>(p, i);
    default:
        return get<float>(p, i);
    }
}

// The expected reduction over ranks [lo, hi) of element i.
long sum_of(int lo, int hi, std::size_t i, int iter)
{
    long s = 0;
    for (int r = lo; r < hi; ++r) {
        s += value_of(r, i, iter);
    }
    return s;
}

} // namespace

bool is_reduction(ucg_coll_type_t c)
{
    return c == UCG_COLL_REDUCE || c == UCG_COLL_ALLREDUCE ||
           c == UCG_COLL_REDUCE_SCATTER || c == UCG_COLL_REDUCE_SCATTER_BLOCK ||
           c == UCG_COLL_SCAN || c == UCG_COLL_EXSCAN;
}

bool is_vector(ucg_coll_type_t c)
{
    return c == UCG_COLL_GATHERV || c == UCG_COLL_SCATTERV ||
           c == UCG_COLL_ALLGATHERV || c == UCG_COLL_ALLTOALLV ||
           c == UCG_COLL_REDUCE_SCATTER;
}

Case::Case(int r, int p, ucg_coll_type_t c, std::size_t bytes, std::size_t e)
    : rank(r), size(p), coll(c), reduction(is_reduction(c)), elem(e),
      count(bytes / e)
{
    const std::size_t all = static_cast<std::size_t>(p) * count * elem;
    src.assign(std::max<std::size_t>(all, 1), 0);
    dst.assign(std::max<std::size_t>(all, 1), 0);
    for (int b = 0; b < p; ++b) {
        counts.push_back(count);
        displs.push_back(static_cast<std::size_t>(b) * count);
    }
}

void Case::fill(int iter, ucg_dtype_t dt)
{
    std::fill(dst.begin(), dst.end(), std::uint8_t{0});
    const std::size_t blocks = static_cast<std::size_t>(size);
    if (reduction) {
        const bool many = coll == UCG_COLL_REDUCE_SCATTER ||
                          coll == UCG_COLL_REDUCE_SCATTER_BLOCK;
        const std::size_t n = many ? blocks * count : count;
        for (std::size_t i = 0; i < n; ++i) {
            store(dt, src.data(), i, value_of(rank, i, iter));
        }
        return;
    }
    for (std::size_t b = 0; b < blocks; ++b) {
        for (std::size_t i = 0; i < count; ++i) {
            src[b * count + i] = byte_of(rank, b, i, iter);
        }
    }
    if (coll == UCG_COLL_BCAST && rank == 0 && count != 0) {
        std::memcpy(dst.data(), src.data(), count);
    }
}

long Case::check(int iter, ucg_dtype_t dt) const
{
    long bad = 0;
    const std::size_t blocks = static_cast<std::size_t>(size);
    auto expect_bytes = [&](std::size_t at, std::uint8_t want) {
        bad += dst[at] != want;
    };
    auto expect = [&](std::size_t i, long want) {
        bad += load(dt, dst.data(), i) != want;
    };
    switch (coll) {
    case UCG_COLL_BCAST:
        for (std::size_t i = 0; i < count; ++i) {
            expect_bytes(i, byte_of(0, 0, i, iter));
        }
        break;
    case UCG_COLL_GATHER:
    case UCG_COLL_GATHERV:
    case UCG_COLL_ALLGATHER:
    case UCG_COLL_ALLGATHERV:
        if (rank == 0 || coll == UCG_COLL_ALLGATHER ||
            coll == UCG_COLL_ALLGATHERV) {
            for (std::size_t b = 0; b < blocks; ++b) {
                for (std::size_t i = 0; i < count; ++i) {
                    expect_bytes(b * count + i,
                                 byte_of(static_cast<int>(b), 0, i, iter));
                }
            }
        }
        break;
    case UCG_COLL_SCATTER:
    case UCG_COLL_SCATTERV:
        for (std::size_t i = 0; i < count; ++i) {
            expect_bytes(i,
                         byte_of(0, static_cast<std::size_t>(rank), i, iter));
        }
        break;
    case UCG_COLL_ALLTOALL:
    case UCG_COLL_ALLTOALLV:
        for (std::size_t b = 0; b < blocks; ++b) {
            for (std::size_t i = 0; i < count; ++i) {
                expect_bytes(b * count + i,
                             byte_of(static_cast<int>(b),
                                     static_cast<std::size_t>(rank), i, iter));
            }
        }
        break;
    case UCG_COLL_REDUCE:
    case UCG_COLL_ALLREDUCE:
        if (rank == 0 || coll == UCG_COLL_ALLREDUCE) {
            for (std::size_t i = 0; i < count; ++i) {
                expect(i, sum_of(0, size, i, iter));
            }
        }
        break;
    case UCG_COLL_REDUCE_SCATTER:
    case UCG_COLL_REDUCE_SCATTER_BLOCK:
        for (std::size_t i = 0; i < count; ++i) {
            expect(i, sum_of(0, size,
                             static_cast<std::size_t>(rank) * count + i, iter));
        }
        break;
    case UCG_COLL_SCAN:
        for (std::size_t i = 0; i < count; ++i) {
            expect(i, sum_of(0, rank + 1, i, iter));
        }
        break;
    case UCG_COLL_EXSCAN:
        for (std::size_t i = 0; rank > 0 && i < count; ++i) {
            expect(i, sum_of(0, rank, i, iter));
        }
        break;
    default:
        break;
    }
    return bad;
}

} // namespace ucg::perftest
