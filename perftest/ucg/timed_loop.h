// SPDX-License-Identifier: BSD-3-Clause
// The loop that times a row of ucg_perftest, the same for UCG's rows and
// the MPI library's: OSU 7's.
#pragma once

#include <ucg/ucg.h>

#include <chrono>
#include <functional>

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

} // namespace ucg::perftest
