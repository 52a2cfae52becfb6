// SPDX-License-Identifier: BSD-3-Clause
#include "timed_loop.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <limits>

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

SpanTimes span_of(const std::vector<double> &ends, int ranks, int iters)
{
    SpanTimes out;
    double sum = 0;
    for (int i = 0; i < iters; ++i) {
        double last = 0;
        bool late = false;
        for (int r = 0; r < ranks; ++r) {
            const double end = ends[static_cast<std::size_t>(r) *
                                        static_cast<std::size_t>(iters) +
                                    static_cast<std::size_t>(i)];
            late = late || std::isnan(end);
            last = std::max(last, end);
        }
        if (late) {
            ++out.late;
        } else {
            ++out.kept;
            sum += last;
        }
    }
    if (out.kept > 0) {
        out.mean_us = sum / out.kept;
    }
    return out;
}

namespace {

// Sleeps until 200 us before `start` on `clock`, then yields until it:
// ranks that share a core let the others reach the same start.
void wait_until(double start_us, const std::function<double()> &clock)
{
    constexpr double kSpinUs = 200;
    for (double left; (left = start_us - kSpinUs - clock()) > 0;) {
        const long ns = static_cast<long>(left * 1000);
        const timespec ts{ns / 1000000000L, ns % 1000000000L};
        nanosleep(&ts, nullptr);
    }
    while (clock() < start_us) {
        sched_yield();
    }
}

} // namespace

ucs_status_t timed_span(int iters, const SpanSteps &steps, SpanTimes *out)
{
    *out = SpanTimes{};
    const std::function<double()> clock =
        steps.clock ? steps.clock : std::function<double()>(now_us);
    const auto n = static_cast<std::size_t>(iters);
    const auto ranks = static_cast<std::size_t>(steps.ranks);
    std::vector<double> mine(n), agreed(2 * ranks);
    double margin = kSpanMarginUs; // this rank's: doubled after a late start
    ucs_status_t st = UCS_OK;
    for (std::size_t i = 0; i < n && st == UCS_OK; ++i) {
        if ((st = steps.sync()) != UCS_OK) {
            break;
        }
        const double now[2] = {clock(), margin};
        if ((st = steps.allgather(now, agreed.data(), 2)) != UCS_OK) {
            break;
        }
        double start = -std::numeric_limits<double>::infinity();
        for (std::size_t r = 0; r < ranks; ++r) {
            start = std::max(start, agreed[2 * r]);
            margin = std::max(margin, agreed[2 * r + 1]);
        }
        start += margin;
        const bool late = clock() > start;
        if (late) {
            margin = std::min(2 * margin, kSpanMaxMarginUs);
        }
        wait_until(start, clock);
        st = steps.call();
        mine[i] =
            late ? std::numeric_limits<double>::quiet_NaN() : clock() - start;
    }
    if (st != UCS_OK) {
        return st;
    }
    std::vector<double> all(n * static_cast<std::size_t>(steps.ranks));
    if ((st = steps.allgather(mine.data(), all.data(), n)) != UCS_OK) {
        return st;
    }
    *out = span_of(all, steps.ranks, iters);
    return UCS_OK;
}

double clock_offset(const std::vector<ClockSample> &samples)
{
    const auto round_trip = [](const ClockSample &s) {
        return s.back_us - s.sent_us;
    };
    const auto best =
        std::min_element(samples.begin(), samples.end(),
                         [&](const ClockSample &a, const ClockSample &b) {
                             return round_trip(a) < round_trip(b);
                         });
    return best == samples.end()
               ? 0
               : best->remote_us - (best->sent_us + best->back_us) / 2;
}

} // namespace ucg::perftest
