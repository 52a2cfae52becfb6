// SPDX-License-Identifier: BSD-3-Clause
// --calibrate: the thresholds that make each transport's automatic choice
// the fastest path measured on this machine. Runs the incast and bcast
// benchmarks quietly at the sizes and group sizes asked for, then fits:
//  - mm_incast MODE=auto (UCX_MM_INCAST_AUTO_*): coordinate descent over
//    the five thresholds of policy.h, each over the values that change a
//    measured point's mode; the cost of a set is the sum over points of
//    (median of the mode message_mode() picks) / (fastest mode measured),
//    evaluated with the transport's own policy function, at most
//    kMaxRatio per point (an outlier median must not decide). A value
//    moves only if it saves kMinGain per point it changes (noise keeps
//    the default);
//  - mm_bcast UCX_MM_BCAST_CMA_THRESH: the same cost over ring vs CMA.
// Prints the points as `#` comments, then one `export UCX_MM_...=...` line
// per threshold (sizes in bytes or `inf`).
#include "bench_common.h"
#include "benches.h"

#include "policy.h"

#include <uct_mm_incast.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace ucg_mm_bench {
namespace {

using uct_mm_incast::AutoThresholds;

/// What a move must save per point whose path it changes (5%: more than
/// the medians' run-to-run noise here).
constexpr double kMinGain = 0.05;
/// Most a point can cost (picked / fastest): one median hit by the
/// scheduler (ms where the others take us) must not outweigh the rest.
constexpr double kMaxRatio = 1.5;

uct_mm_common::Message message_of(const IncastPoint &p)
{
    uct_mm_common::Message m;
    m.coll = p.coll == 0 ? uct_mm_common::Coll::kGather
                         : uct_mm_common::Coll::kReduce;
    m.op = UCG_OP_SUM;
    m.dtype = p.coll == 2 ? UCG_DTYPE_DOUBLE : UCG_DTYPE_INT32;
    m.length = p.bytes;
    return m;
}

double best_of(const IncastPoint &p)
{
    double best = std::numeric_limits<double>::infinity();
    for (double us : p.mode_us) {
        best = (us > 0 && us < best) ? us : best;
    }
    return best;
}

uct_mm_incast_mode_t picked(const IncastPoint &p, const AutoThresholds &t)
{
    return uct_mm_incast::message_mode(message_of(p),
                                       static_cast<std::uint32_t>(p.n),
                                       UCT_MM_INCAST_MODE_AUTO, t);
}

double incast_cost(const std::vector<IncastPoint> &pts, const AutoThresholds &t)
{
    double cost = 0;
    for (const IncastPoint &p : pts) {
        const double us = p.mode_us[picked(p, t)];
        cost += us > 0 ? std::min(us / best_of(p), kMaxRatio) : kMaxRatio;
    }
    return cost;
}

/// Points whose mode differs between a and b.
int changed(const std::vector<IncastPoint> &pts, const AutoThresholds &a,
            const AutoThresholds &b)
{
    int n = 0;
    for (const IncastPoint &p : pts) {
        n += picked(p, a) != picked(p, b) ? 1 : 0;
    }
    return n;
}

/// Moves `*field` to the candidate of lowest cost, if every point it
/// changes gains kMinGain on average (noise keeps the current value).
template <class F, class V>
void descend(const std::vector<IncastPoint> &pts, AutoThresholds *t, F field,
             const std::vector<V> &candidates)
{
    double cur = incast_cost(pts, *t);
    for (V v : candidates) {
        AutoThresholds trial = *t;
        field(trial) = v;
        const double c = incast_cost(pts, trial);
        if (c < cur - kMinGain * changed(pts, *t, trial)) {
            *t = trial;
            cur = c;
        }
    }
}

AutoThresholds fit_incast(const std::vector<IncastPoint> &pts)
{
    std::vector<std::size_t> sizes;
    for (const IncastPoint &p : pts) {
        if (sizes.empty() || sizes.back() < p.bytes) {
            sizes.push_back(p.bytes);
        }
    }
    std::vector<std::size_t> atomic_max{0}, locked_min;
    for (std::size_t s : sizes) {
        atomic_max.push_back(s);
        locked_min.push_back(s);
    }
    locked_min.push_back(SIZE_MAX);
    std::vector<std::uint32_t> groups;
    for (std::uint32_t g = 1; g <= kMaxRanks + 1; ++g) {
        groups.push_back(g);
    }
    AutoThresholds t;
    for (int pass = 0; pass < 2; ++pass) {
        descend(
            pts, &t,
            [](AutoThresholds & a) -> auto & { return a.atomic_max_bytes; },
            atomic_max);
        descend(
            pts, &t, [](AutoThresholds & a) -> auto & { return a.pair_group; },
            groups);
        descend(
            pts, &t,
            [](AutoThresholds & a) -> auto & { return a.locked_min_bytes; },
            locked_min);
        descend(
            pts, &t,
            [](AutoThresholds & a) -> auto & { return a.locked_min_group; },
            groups);
        descend(
            pts, &t, [](AutoThresholds & a) -> auto & {
                return a.gather_batched_max_group;
            },
            groups);
    }
    return t;
}

double bcast_cost(const std::vector<BcastPoint> &pts, std::size_t thresh)
{
    double cost = 0;
    for (const BcastPoint &p : pts) {
        const bool cma = p.cma_us > 0 && p.bytes >= thresh;
        const double best =
            p.cma_us > 0 && p.cma_us < p.ring_us ? p.cma_us : p.ring_us;
        cost += std::min((cma ? p.cma_us : p.ring_us) / best, kMaxRatio);
    }
    return cost;
}

std::size_t fit_bcast(const std::vector<BcastPoint> &pts)
{
    std::size_t thresh = SIZE_MAX; // today's default: the ring always
    double cur = bcast_cost(pts, thresh);
    for (const BcastPoint &p : pts) {
        if (p.cma_us <= 0) {
            continue;
        }
        int moved = 0; // points whose path changes
        for (const BcastPoint &q : pts) {
            const bool was = q.cma_us > 0 && q.bytes >= thresh;
            const bool now = q.cma_us > 0 && q.bytes >= p.bytes;
            moved += was != now ? 1 : 0;
        }
        const double c = bcast_cost(pts, p.bytes);
        if (c < cur - kMinGain * moved) {
            thresh = p.bytes;
            cur = c;
        }
    }
    return thresh;
}

std::string size_str(std::size_t v)
{
    return v == SIZE_MAX ? "inf" : std::to_string(v);
}

const char *const kCollNames[] = {"gather", "sum_i32", "sum_f64"};

} // namespace

int run_calibrate(Options opts, bool incast, bool bcast)
{
    Collector got;
    opts.collect = &got;
    opts.quiet = true;
    int rc = 0;
    if (incast) {
        rc |= bench_incast(opts);
    }
    if (bcast) {
        rc |= bench_bcast(opts);
    }
    if (rc != 0) {
        std::fprintf(stderr, "ucg_mm_perftest: a calibration point failed\n");
        return rc;
    }
    const AutoThresholds def;
    const AutoThresholds fit = fit_incast(got.incast);
    std::printf("# section   N    bytes  default  calibrated  fastest"
                "  (us: default, calibrated, fastest, p2p-posix)\n");
    for (const IncastPoint &p : got.incast) {
        const auto d = picked(p, def), c = picked(p, fit);
        uct_mm_incast_mode_t best = d;
        for (int m = 1; m < UCT_MM_INCAST_MODE_LAST; ++m) {
            if (p.mode_us[m] > 0 && p.mode_us[m] < p.mode_us[best]) {
                best = static_cast<uct_mm_incast_mode_t>(m);
            }
        }
        std::printf("# %-8s %2d %8zu  %-11s %-11s %-11s %8.3f %8.3f %8.3f "
                    "%8.3f\n",
                    kCollNames[p.coll], p.n, p.bytes,
                    uct_mm_incast::mode_name(d), uct_mm_incast::mode_name(c),
                    uct_mm_incast::mode_name(best), p.mode_us[d], p.mode_us[c],
                    p.mode_us[best], p.p2p_us);
    }
    const std::size_t cma = fit_bcast(got.bcast);
    for (const BcastPoint &p : got.bcast) {
        const bool use_cma = p.cma_us > 0 && p.bytes >= cma;
        std::printf("# bcast    %2d %8zu  ring        %-11s %-11s %8.3f %8.3f "
                    "%8.3f %8.3f\n",
                    p.n, p.bytes, use_cma ? "cma" : "ring",
                    p.cma_us > 0 && p.cma_us < p.ring_us ? "cma" : "ring",
                    p.ring_us, use_cma ? p.cma_us : p.ring_us,
                    p.cma_us > 0 && p.cma_us < p.ring_us ? p.cma_us : p.ring_us,
                    p.p2p_us);
    }
    if (incast) {
        std::printf("# mm_incast cost (sum of picked/fastest over %zu "
                    "points): default %.3f, calibrated %.3f\n",
                    got.incast.size(), incast_cost(got.incast, def),
                    incast_cost(got.incast, fit));
        std::printf("export UCX_MM_INCAST_AUTO_ATOMIC_MAX=%s\n",
                    size_str(fit.atomic_max_bytes).c_str());
        std::printf("export UCX_MM_INCAST_AUTO_LOCKED_MIN=%s\n",
                    size_str(fit.locked_min_bytes).c_str());
        std::printf("export UCX_MM_INCAST_AUTO_LOCKED_MIN_GROUP=%u\n",
                    fit.locked_min_group);
        std::printf("export UCX_MM_INCAST_AUTO_PAIR_GROUP=%u\n",
                    fit.pair_group);
        std::printf("export UCX_MM_INCAST_AUTO_GATHER_BATCHED_MAX_GROUP=%u\n",
                    fit.gather_batched_max_group);
    }
    if (bcast) {
        std::printf("export UCX_MM_BCAST_CMA_THRESH=%s\n",
                    size_str(cma).c_str());
    }
    return 0;
}

} // namespace ucg_mm_bench
