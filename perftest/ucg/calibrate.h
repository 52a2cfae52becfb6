// SPDX-License-Identifier: BSD-3-Clause
// ucg_perftest --calibrate-links: the cost of the link between the two
// ranks of a run, measured through UCG's point-to-point path (a bcast of
// two ranks is one message), fitted as alpha + bytes * beta, and printed
// as the UCG_LINKS entry of the link's level (the cost model's link costs,
// which every member then reads; docs/guide/tuning.md).
#pragma once

#include "bench.h"
#include "link_fit.h"

#include <ucg/ucg.h>

#include <string>
#include <vector>

namespace ucg::perftest {

/// Runs on both ranks of a 2-rank run (the caller checks: a rank that
/// returned early could leave while the other still connects to it) over
/// `group` (made point-to-point only); rank 0 prints the table, the fit
/// and an `export UCG_LINKS=...` line. Returns the process exit code.
int calibrate_links(const Env &env, const Options &opt, ucg_context_h ctx,
                    ucg_group_h group);

/// --calibrate-turn: every rank polls UCG and yields its CPU for
/// kTurnWindowUs, kTurnPasses times after a barrier each, and counts its
/// rounds (its best pass kept); a rank's round on a CPU that k ranks share is k
/// poll turns (poll_turn_ns). Rank 0 prints each rank's round and an `export
/// UCG_POLL_TURN=...` line (decision 0062). Returns the exit code.
inline constexpr double kTurnWindowUs = 20000;
inline constexpr int kTurnPasses = 5;
int calibrate_turn(const Env &env, ucg_context_h ctx, ucg_group_h group);

} // namespace ucg::perftest
