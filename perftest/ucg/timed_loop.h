// SPDX-License-Identifier: BSD-3-Clause
// The loop that times a row of ucg_perftest, the same for UCG's rows and
// the MPI library's: OSU 7's.
#pragma once

#include <ucg/ucg.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <vector>

namespace ucg::perftest {

/// Microseconds on the steady clock (the clock that times the rows).
inline double now_us()
{
    using namespace std::chrono;
    return duration<double, std::micro>(steady_clock::now().time_since_epoch())
        .count();
}

/// One iteration's parts. `prepare` and `check` (validation: fill the
/// inputs, compare the outputs) run outside the timer, `call` inside it,
/// `sync` (a barrier of the library timed) between iterations outside it.
struct LoopSteps {
    std::function<void(int iteration)> prepare;
    std::function<ucs_status_t()> call;
    std::function<void(int iteration)> check;
    std::function<ucs_status_t()> sync;
};

struct LoopTimes {
    double total_us = 0; ///< the timed iterations' sum
    double first_us = 0; ///< iteration 0 (init included where it runs)
};

/// Whether OSU 7 puts a barrier between two timed iterations of `coll`:
/// for every collective but the barrier itself, which osu_barrier times
/// back to back (a barrier between would start every timed barrier with
/// the ranks in the order the one before released them).
bool sync_between(ucg_coll_type_t coll);

/// `sync` once, then `warm` untimed iterations and `iters` timed ones, each
/// timed alone on the steady clock; `sync` after each where
/// sync_between(coll). Stops at the first call or sync that fails and
/// returns its status.
ucs_status_t timed_loop(ucg_coll_type_t coll, int warm, int iters,
                        const LoopSteps &steps, LoopTimes *out);

/// A row's span (--span): each call timed from a start every rank agreed
/// on, on one clock, to the last rank's end; what the cost model predicts
/// (ranks that start together), where a row's Max is the slowest rank's
/// time from when the barrier before released it (decision 0061).
struct SpanSteps {
    std::function<ucs_status_t()> call;
    std::function<ucs_status_t()> sync;
    /// Every rank's `n` doubles into `all`, rank order (blocking).
    std::function<ucs_status_t(const double *mine, double *all, std::size_t n)>
        allgather;
    int ranks = 1;
    /// The clock the ranks share, us: rank 0's where their machines' clocks
    /// differ (this rank's less its offset, clock_offset()); empty: now_us.
    std::function<double()> clock;
};

struct SpanTimes {
    double mean_us = -1; ///< mean span of the iterations kept; < 0: none
    int kept = 0;        ///< iterations every rank started on time
    int late = 0;        ///< iterations a rank reached after their start
};

/// How far after the last rank's clock reading a row's first iteration
/// starts: more than the skew with which the ranks leave the allgather
/// that agreed it. A rank that reached a start late asks for twice the
/// margin from then on in the row, up to kSpanMaxMarginUs (a loaded
/// machine, a sanitizer's build, a large job's allgather).
inline constexpr double kSpanMarginUs = 1000;
inline constexpr double kSpanMaxMarginUs = 64000;

/// The spans of `ends` (`ranks` x `iters`, rank-major: each rank's end of
/// each call after the agreed start, NaN where the rank came late): per
/// iteration the latest end, their mean over the iterations no rank came
/// late to.
SpanTimes span_of(const std::vector<double> &ends, int ranks, int iters);

/// `iters` calls, each after a `sync` and an allgather of the ranks'
/// clocks (steps.clock) and margins that sets its start the largest margin
/// after the latest reading; every rank waits for that start (sleeping,
/// then yielding) and times its call from it. Stops at the first failure
/// and returns its status.
ucs_status_t timed_span(int iters, const SpanSteps &steps, SpanTimes *out);

/// One ping-pong of rank 0 with another rank, for the other rank's clock
/// offset (--span where the ranks' machines have clocks of their own,
/// decision 0063): rank 0's clock when it sent the ping and when the pong
/// came back, and the other rank's clock when it answered.
struct ClockSample {
    double sent_us = 0;
    double remote_us = 0;
    double back_us = 0;
};

/// The other rank's clock less rank 0's, from the sample of least round
/// trip: its reading less the midpoint of rank 0's two (wrong by at most
/// half that round trip, the least a queue or a switch of processes
/// stretched). 0 for no samples.
double clock_offset(const std::vector<ClockSample> &samples);

} // namespace ucg::perftest
