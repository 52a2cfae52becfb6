// SPDX-License-Identifier: BSD-3-Clause
// The barrier witness (barrier_witness.h).
#include "ucg_test/barrier_witness.h"

#include <atomic>
#include <thread>

namespace ucg_test {

namespace {

using Stamp = std::atomic<std::uint64_t>;
static_assert(Stamp::is_always_lock_free, "stamps are shared across forks");

} // namespace

BarrierWitness::BarrierWitness(int ranks, std::chrono::milliseconds pause)
    : ranks_(ranks < 1 ? 1 : ranks), pause_(pause),
      stamps_(sizeof(Stamp) * static_cast<std::size_t>(ranks_))
{
}

void BarrierWitness::arrive(int rank, std::uint64_t round)
{
    if (ranks_ > 1 && rank == late_rank(round)) {
        std::this_thread::sleep_for(pause_);
    }
    stamps_.as<Stamp>()[rank].store(round + 1, std::memory_order_release);
}

std::string BarrierWitness::left(int rank, std::uint64_t round) const
{
    for (int r = 0; r < ranks_; ++r) {
        if (stamps_.as<Stamp>()[r].load(std::memory_order_acquire) <
            round + 1) {
            return "rank " + std::to_string(rank) + " left barrier round " +
                   std::to_string(round) + " before rank " + std::to_string(r) +
                   " arrived";
        }
    }
    return {};
}

} // namespace ucg_test
