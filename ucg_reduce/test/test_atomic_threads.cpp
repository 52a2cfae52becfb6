// SPDX-License-Identifier: BSD-3-Clause
// Atomic kernels under contention: threads reducing into one buffer lose
// no update. Each update must count: the threads work through windows of a
// shared buffer together (a barrier between windows), and the inputs are
// chosen per operator so that one lost update changes the window's result
// (a non-atomic kernel fails; scripts/mutants shows it):
// - sum, bxor, prod: distinct odd inputs (an odd factor never reaches 0);
// - bor, band: each update sets (clears) a bit no other update touches;
// - max, min: one update per element and window carries the extreme value,
//   the others keep writing lesser ones around it.
#include "ucg_test/thread_ranks.h"

#include <ucg/reduce_atomic.h>

#include <catch2/catch.hpp>

#include <barrier>
#include <cstring>
#include <limits>
#include <vector>

namespace {

constexpr int kThreads = 4;
// Each window is a barrier of kThreads threads: with 2 cores busy beside
// builds, 2,000 windows a case took up to 60 s (a timeout in 1 of 7
// suite runs); 500 still fail every non-atomic kernel (scripts/mutants).
constexpr int kWindows = 500;
constexpr std::size_t kCount = 16; // elements per window: the threads collide

/// What the updates write: update k of thread t in window w, element i.
template <typename T> using Value = T (*)(int w, int t, int k, std::size_t i);

/// Every thread runs `updates` kernel calls per window into the window's
/// kCount elements of one shared buffer (started at `start`); the result
/// must equal the sequential plain reduction of the same inputs (the
/// operators are associative and commutative on them).
template <typename T>
void check_contended(ucg_op_t op, ucg_dtype_t dtype, T start, int updates,
                     Value<T> value)
{
    INFO(ucg_op_name(op) << " " << ucg_dtype_name(dtype));
    const ucg::reduce::AtomicKernel kernel =
        ucg::reduce::atomic_kernel(op, dtype);
    REQUIRE(kernel != nullptr);
    const std::size_t total = kWindows * kCount;
    std::vector<T> expect(total, start);
    std::vector<T> src(kCount);
    for (int w = 0; w < kWindows; ++w) {
        for (int t = 0; t < kThreads; ++t) {
            for (int k = 0; k < updates; ++k) {
                for (std::size_t i = 0; i < kCount; ++i) {
                    src[i] = value(w, t, k, i);
                }
                ucg_reduce(op, dtype, expect.data() + w * kCount, src.data(),
                           kCount);
            }
        }
    }
    std::vector<T> shared(total, start);
    std::barrier<> window(kThreads);
    ucg_test::run_thread_ranks(kThreads, [&](int t) {
        std::vector<T> mine(kCount);
        for (int w = 0; w < kWindows; ++w) {
            window.arrive_and_wait();
            for (int k = 0; k < updates; ++k) {
                for (std::size_t i = 0; i < kCount; ++i) {
                    mine[i] = value(w, t, k, i);
                }
                kernel(shared.data() + w * kCount, mine.data(), kCount);
            }
        }
    });
    std::size_t wrong = 0;
    for (std::size_t e = 0; e < total; ++e) {
        wrong += std::memcmp(&shared[e], &expect[e], sizeof(T)) != 0;
    }
    INFO(wrong << " of " << total << " elements lost an update");
    CHECK(wrong == 0);
}

/// Distinct odd inputs.
template <typename T> T odd(int w, int t, int k, std::size_t i)
{
    const auto v = static_cast<unsigned long long>(w) * 7919 +
                   static_cast<unsigned long long>(t) * 104729 +
                   static_cast<unsigned long long>(k) * 31 + i * 613;
    return static_cast<T>(2 * v + 3);
}

template <typename T> constexpr int bits_per_thread()
{
    return static_cast<int>(8 * sizeof(T)) / kThreads;
}

/// Update k of thread t owns bit t * bits_per_thread + k (rotated per
/// element): every bit is set by exactly one update.
template <typename T> T own_bit(int, int t, int k, std::size_t i)
{
    const auto bit = static_cast<unsigned>(t * bits_per_thread<T>() + k + i) %
                     (8 * sizeof(T));
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(U{1} << bit);
}

template <typename T> T all_but_own_bit(int w, int t, int k, std::size_t i)
{
    return static_cast<T>(~own_bit<T>(w, t, k, i));
}

/// The extreme update of element i in window w.
bool is_extreme(int w, int t, int k, std::size_t i, int updates)
{
    const auto j = static_cast<std::size_t>(w) + i;
    return t == static_cast<int>(j % kThreads) &&
           k == static_cast<int>((j * 7) % static_cast<std::size_t>(updates));
}

constexpr int kMinMaxUpdates = 16;

template <typename T> T peak(int w, int t, int k, std::size_t i)
{
    return is_extreme(w, t, k, i, kMinMaxUpdates)
               ? T(100)
               : static_cast<T>((t * kMinMaxUpdates + k) % 64);
}

template <typename T> T trough(int w, int t, int k, std::size_t i)
{
    return is_extreme(w, t, k, i, kMinMaxUpdates)
               ? T(1)
               : static_cast<T>(2 + (t * kMinMaxUpdates + k) % 64);
}

} // namespace

TEST_CASE("atomic_kernel: integer sums and bitwise ops lose no update",
          "[reduce][threads]")
{
    check_contended<int8_t>(UCG_OP_SUM, UCG_DTYPE_INT8, 0, 16, odd<int8_t>);
    check_contended<uint16_t>(UCG_OP_SUM, UCG_DTYPE_UINT16, 7, 16,
                              odd<uint16_t>);
    check_contended<int32_t>(UCG_OP_SUM, UCG_DTYPE_INT32, 0, 16, odd<int32_t>);
    check_contended<uint64_t>(UCG_OP_SUM, UCG_DTYPE_UINT64, 0, 16,
                              odd<uint64_t>);
    check_contended<uint32_t>(UCG_OP_BXOR, UCG_DTYPE_UINT32, 0, 16,
                              odd<uint32_t>);
    check_contended<int64_t>(UCG_OP_BOR, UCG_DTYPE_INT64, 0,
                             bits_per_thread<int64_t>(), own_bit<int64_t>);
    check_contended<uint8_t>(UCG_OP_BAND, UCG_DTYPE_UINT8, 0xFF,
                             bits_per_thread<uint8_t>(),
                             all_but_own_bit<uint8_t>);
}

TEST_CASE("atomic_kernel: compare-and-swap loops lose no update",
          "[reduce][threads]")
{
    check_contended<int32_t>(UCG_OP_PROD, UCG_DTYPE_INT32, 1, 16, odd<int32_t>);
    check_contended<int64_t>(UCG_OP_MAX, UCG_DTYPE_INT64,
                             std::numeric_limits<int64_t>::min(),
                             kMinMaxUpdates, peak<int64_t>);
    check_contended<uint16_t>(UCG_OP_MIN, UCG_DTYPE_UINT16, 0xFFFF,
                              kMinMaxUpdates, trough<uint16_t>);
    // Sums of small integers are exact in any order.
    check_contended<double>(UCG_OP_SUM, UCG_DTYPE_DOUBLE, 0.0, 16,
                            [](int, int t, int k, std::size_t i) {
                                return 1 + t * 16 + k + i / 4.0;
                            });
    check_contended<float>(UCG_OP_SUM, UCG_DTYPE_FLOAT, 0.0f, 16,
                           [](int, int t, int k, std::size_t) {
                               return static_cast<float>(1 + t * 16 + k);
                           });
    check_contended<float>(UCG_OP_MAX, UCG_DTYPE_FLOAT, -1.0f, kMinMaxUpdates,
                           peak<float>);
    check_contended<uint8_t>(UCG_OP_LXOR, UCG_DTYPE_BOOL, 0, 16,
                             [](int, int t, int k, std::size_t i) {
                                 return uint8_t((t + k + i) % 3 != 0);
                             });
}
