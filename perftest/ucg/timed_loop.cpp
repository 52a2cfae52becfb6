// SPDX-License-Identifier: BSD-3-Clause
#include "timed_loop.h"

namespace ucg::perftest {

bool sync_between(ucg_coll_type_t coll)
{
    return coll != UCG_COLL_BARRIER;
}

ucs_status_t timed_loop(ucg_coll_type_t coll, int warm, int iters,
                        const LoopSteps &steps, LoopTimes *out)
{
    const bool sync = sync_between(coll);
    *out = LoopTimes{};
    // The ranks start the row together, as OSU's loops start after a
    // barrier: what ran before (the floor's ping-pong of ranks 0 and 1,
    // 0.1 s where four ranks share two cores; a row's set-up) is not in
    // the first call's time.
    if (warm + iters > 0) {
        const ucs_status_t st = steps.sync();
        if (st != UCS_OK) {
            return st;
        }
    }
    for (int i = 0; i < warm + iters; ++i) {
        if (steps.prepare) {
            steps.prepare(i);
        }
        const double t0 = now_us();
        ucs_status_t st = steps.call();
        const double dt = now_us() - t0;
        if (st != UCS_OK) {
            return st;
        }
        if (i == 0) {
            out->first_us = dt;
        }
        if (i >= warm) {
            out->total_us += dt;
        }
        if (steps.check) {
            steps.check(i);
        }
        if (sync && (st = steps.sync()) != UCS_OK) {
            return st;
        }
    }
    return UCS_OK;
}

} // namespace ucg::perftest
