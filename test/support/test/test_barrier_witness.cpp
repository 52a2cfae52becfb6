// SPDX-License-Identifier: BSD-3-Clause
#include "ucg_test/barrier_witness.h"
#include "ucg_test/check.h"

#include <atomic>
#include <barrier>
#include <catch2/catch.hpp>

using namespace ucg_test;

namespace {

// Runs `rounds` barrier rounds on `ranks` threads through `enter`; true
// when the witness saw no rank leave early.
template <typename Enter> bool witnessed(int ranks, int rounds, Enter enter)
{
    BarrierWitness w(ranks, std::chrono::milliseconds{20});
    std::atomic<bool> early{false};
    run_thread_ranks(ranks, [&](int rank) {
        for (int k = 0; k < rounds; ++k) {
            w.arrive(rank, static_cast<std::uint64_t>(k));
            enter();
            if (!w.left(rank, static_cast<std::uint64_t>(k)).empty()) {
                early = true;
            }
        }
    });
    return !early;
}

} // namespace

TEST_CASE("barrier witness passes a barrier", "[support][threads]")
{
    std::barrier<> b(4);
    CHECK(witnessed(4, 8, [&] { b.arrive_and_wait(); }));
}

TEST_CASE("barrier witness fails a barrier that returns at once",
          "[support][threads]")
{
    CHECK_FALSE(witnessed(4, 4, [] {}));
}

TEST_CASE("barrier witness names the rank not yet arrived", "[support]")
{
    BarrierWitness w(3, std::chrono::milliseconds{0});
    w.arrive(0, 0);
    w.arrive(2, 0);
    CHECK(w.left(0, 0) == "rank 0 left barrier round 0 before rank 1 arrived");
    w.arrive(1, 0);
    CHECK(w.left(0, 0).empty());
    CHECK(w.late_rank(4) == 1);
}
