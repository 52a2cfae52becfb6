// SPDX-License-Identifier: BSD-3-Clause
// Atomic kernels under contention: threads reducing into one buffer lose
// no update.
#include "ucg_test/thread_ranks.h"

#include <ucg/reduce_atomic.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 4;
constexpr int kRounds = 20000;
constexpr std::size_t kCount = 16; // few elements: the threads collide

/// All threads start reducing together: without it the first could finish
/// before the last has started. Spins a little, then yields (more threads
/// than cores).
void start_together(std::atomic<int> &arrived)
{
    arrived.fetch_add(1);
    for (int spins = 0; arrived.load() < kThreads; ++spins) {
        if (spins > 100) {
            std::this_thread::yield();
        }
    }
}

/// Every thread reduces its own source kRounds times into one shared dst;
/// the result must equal the sequential plain reduction (the operators are
/// associative and commutative on these values, so order does not matter).
template <typename T>
void check_contended(ucg_op_t op, ucg_dtype_t dtype, T start,
                     T (*value)(int thread, std::size_t i))
{
    INFO(ucg_op_name(op) << " " << ucg_dtype_name(dtype));
    const ucg::reduce::AtomicKernel kernel =
        ucg::reduce::atomic_kernel(op, dtype);
    REQUIRE(kernel != nullptr);
    std::vector<std::vector<T>> srcs(kThreads, std::vector<T>(kCount));
    for (int t = 0; t < kThreads; ++t) {
        for (std::size_t i = 0; i < kCount; ++i) {
            srcs[t][i] = value(t, i);
        }
    }
    std::vector<T> expect(kCount, start);
    for (int r = 0; r < kRounds; ++r) {
        for (int t = 0; t < kThreads; ++t) {
            ucg_reduce(op, dtype, expect.data(), srcs[t].data(), kCount);
        }
    }
    std::vector<T> shared(kCount, start);
    std::atomic<int> arrived{0};
    ucg_test::run_thread_ranks(kThreads, [&](int t) {
        start_together(arrived);
        for (int r = 0; r < kRounds; ++r) {
            kernel(shared.data(), srcs[t].data(), kCount);
        }
    });
    CHECK(std::memcmp(shared.data(), expect.data(), kCount * sizeof(T)) == 0);
}

template <typename T> T mixed(int thread, std::size_t i)
{
    return static_cast<T>((thread + 1) * 37 + i * 11 + 0x5A5A5A5A5A5AULL * i);
}

template <typename T> T one_bit_per_thread(int thread, std::size_t i)
{
    return static_cast<T>(~(T(1) << ((thread + i) % (8 * sizeof(T)))));
}

} // namespace

TEST_CASE("atomic_kernel: integer sums and bitwise ops lose no update",
          "[reduce][threads]")
{
    check_contended<int8_t>(UCG_OP_SUM, UCG_DTYPE_INT8, 0, mixed<int8_t>);
    check_contended<uint16_t>(UCG_OP_SUM, UCG_DTYPE_UINT16, 7, mixed<uint16_t>);
    check_contended<int32_t>(UCG_OP_SUM, UCG_DTYPE_INT32, 0, mixed<int32_t>);
    check_contended<uint64_t>(UCG_OP_SUM, UCG_DTYPE_UINT64, 0, mixed<uint64_t>);
    check_contended<uint32_t>(UCG_OP_BXOR, UCG_DTYPE_UINT32, 0,
                              mixed<uint32_t>);
    check_contended<int64_t>(UCG_OP_BOR, UCG_DTYPE_INT64, 0, mixed<int64_t>);
    check_contended<uint8_t>(UCG_OP_BAND, UCG_DTYPE_UINT8, 0xFF,
                             one_bit_per_thread<uint8_t>);
}

TEST_CASE("atomic_kernel: compare-and-swap loops lose no update",
          "[reduce][threads]")
{
    check_contended<int32_t>(UCG_OP_PROD, UCG_DTYPE_INT32, 1, mixed<int32_t>);
    check_contended<int64_t>(UCG_OP_MAX, UCG_DTYPE_INT64, INT64_MIN,
                             mixed<int64_t>);
    check_contended<uint16_t>(UCG_OP_MIN, UCG_DTYPE_UINT16, 0xFFFF,
                              mixed<uint16_t>);
    // Sums of small integers are exact in any order.
    check_contended<double>(UCG_OP_SUM, UCG_DTYPE_DOUBLE, 0.0,
                            [](int t, std::size_t i) { return t + i / 4.0; });
    check_contended<float>(UCG_OP_SUM, UCG_DTYPE_FLOAT, 0.0f,
                           [](int t, std::size_t) { return t + 1.0f; });
    check_contended<float>(UCG_OP_MAX, UCG_DTYPE_FLOAT, -1.0f,
                           [](int t, std::size_t i) {
                               return static_cast<float>((t * 7 + i) % 13);
                           });
    check_contended<uint8_t>(
        UCG_OP_LXOR, UCG_DTYPE_BOOL, 0,
        [](int t, std::size_t i) { return uint8_t((t + i) % 3 == 0); });
}
