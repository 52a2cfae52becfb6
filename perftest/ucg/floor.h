// SPDX-License-Identifier: BSD-3-Clause
// The hardware floor ucg_perftest prints in its header, measured in the
// same run as its tables: what one cache line costs to pass from rank 0 to
// rank 1 (half the round trip of a flag ping-pong on two shared lines;
// between hosts, UCP's own one-way latency between them),
// the floor of every small row, what one memcpy moves per second on
// rank 0, the floor of every large one, and what one reading of the rows'
// clock costs (about one reading lies inside every row's time).
#pragma once

#include "bench.h"

namespace ucg::perftest {

struct Floor {
    /// One way, us; < 0: no shared line (one rank, or ranks 0 and 1 on
    /// different hosts, or no answer).
    double flag_us = -1;
    bool other_hosts = false; ///< ranks 0 and 1 on different hosts
    /// There: UCP's own 8 B one-way latency between them, us (ucp_pingpong.h);
    /// < 0: not measured.
    double ucp_us = -1;
    double memcpy_gbs = 0; ///< rank 0, 16 MiB copies, best of 5
    /// Rank 0: one reading of the steady clock that times the rows, ns
    /// (median of 7 batches of 1000 readings).
    double clock_ns = 0;
};

/// Collective: every rank calls it (out-of-band allgathers; ranks past 1
/// only take part in those). The result is rank 0's.
Floor measure_floor(const Env &env);

} // namespace ucg::perftest
