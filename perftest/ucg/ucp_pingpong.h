// SPDX-License-Identifier: BSD-3-Clause
// The floor between hosts: UCX's own point-to-point latency between ranks
// 0 and 1, measured in the same run as the tables (issue 27: a collective's
// step across hosts reads against it). A UCP worker of ucg_perftest's own
// (UCX's transports as the environment selects them, UCX_TLS and
// UCX_NET_DEVICES, as for UCG's) ping-pongs an 8-byte tagged message.
// The same kind of worker measures each rank's clock offset to rank 0's
// where --span runs on machines with clocks of their own (ClockOffsets).
#pragma once

#include "bench.h"

#include <functional>
#include <memory>

namespace ucg::perftest {

inline constexpr int kPingBatches = 7;
inline constexpr int kPingPerBatch = 200;
inline constexpr int kPingWarmup = 50;

/// Collective: every rank calls it (out-of-band allgathers; ranks past 1
/// take part in those only). Rank 0's result: half the round trip in us,
/// the median of kPingBatches batches' means; < 0 where UCP failed (one
/// line on stderr says why) or there is one rank.
double ucp_one_way_us(const Env &env);

/// Each rank's clock less rank 0's, where the ranks' machines have clocks
/// of their own (--span, decision 0063): rank 0 ping-pongs every other
/// rank in turn over UCP (the floor's worker, one endpoint each way) and
/// keeps each rank's sample of least round trip (clock_offset()).
class ClockOffsets {
  public:
    /// Collective: connects every rank with rank 0; status() says how.
    explicit ClockOffsets(const Env &env);
    ~ClockOffsets();
    ClockOffsets(const ClockOffsets &) = delete;
    ClockOffsets &operator=(const ClockOffsets &) = delete;
    ucs_status_t status() const;
    /// Collective: this rank's offset (rank 0: 0), measured now on
    /// `clock` (us), from kClockPings ping-pongs.
    ucs_status_t measure(const std::function<double()> &clock,
                         double *offset_us);

  private:
    struct Impl;
    const Env &env_;
    std::unique_ptr<Impl> impl_;
};

inline constexpr int kClockPings = 50;

} // namespace ucg::perftest
