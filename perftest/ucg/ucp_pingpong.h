// SPDX-License-Identifier: BSD-3-Clause
// The floor between hosts: UCX's own point-to-point latency between ranks
// 0 and 1, measured in the same run as the tables (issue 27: a collective's
// step across hosts reads against it). A UCP worker of ucg_perftest's own
// (UCX's transports as the environment selects them, UCX_TLS and
// UCX_NET_DEVICES, as for UCG's) ping-pongs an 8-byte tagged message.
#pragma once

#include "bench.h"

namespace ucg::perftest {

inline constexpr int kPingBatches = 7;
inline constexpr int kPingPerBatch = 200;
inline constexpr int kPingWarmup = 50;

/// Collective: every rank calls it (out-of-band allgathers; ranks past 1
/// take part in those only). Rank 0's result: half the round trip in us,
/// the median of kPingBatches batches' means; < 0 where UCP failed (one
/// line on stderr says why) or there is one rank.
double ucp_one_way_us(const Env &env);

} // namespace ucg::perftest
