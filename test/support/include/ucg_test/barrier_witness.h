// SPDX-License-Identifier: BSD-3-Clause
// BarrierWitness: proves a barrier held. Before barrier round k each rank
// stamps its arrival in memory every rank sees (mapped shared, so threads
// and ranks forked after its construction alike); one rank per round
// (k % ranks) arrives late, after a pause. After the barrier each rank
// requires every stamp of round k: a barrier that lets a rank leave before
// the last one arrived fails, because the late rank is still paused.
// A correct barrier always passes, whatever the scheduling.
#pragma once

#include "ucg_test/thread_ranks.h"

#include <chrono>
#include <cstdint>
#include <string>

namespace ucg_test {

class BarrierWitness {
  public:
    explicit BarrierWitness(int ranks, std::chrono::milliseconds pause =
                                           std::chrono::milliseconds{20});

    /// Call right before entering barrier `round` (rounds count from 0 and
    /// are the same on every rank); the round's late rank pauses first.
    void arrive(int rank, std::uint64_t round);

    /// After barrier `round` returned on `rank`: empty when every rank had
    /// arrived, else which one had not.
    std::string left(int rank, std::uint64_t round) const;

    /// The rank that arrives late in `round`.
    int late_rank(std::uint64_t round) const
    {
        return static_cast<int>(round % static_cast<std::uint64_t>(ranks_));
    }

  private:
    int ranks_;
    std::chrono::milliseconds pause_;
    SharedMapping stamps_; ///< per rank: the last round arrived at, plus 1
};

} // namespace ucg_test
