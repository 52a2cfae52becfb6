// SPDX-License-Identifier: BSD-3-Clause
// The fits behind --calibrate (calibrate_fit.h), apart from the runs so
// tests can feed them points.
#include "calibrate_fit.h"

#include "bench_common.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace ucg_mm_bench {
namespace {

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

/// The fastest of a point's measured paths (an unmeasured one reads 0).
template <class Range> double fastest(const Range &us_of_paths)
{
    double best = std::numeric_limits<double>::infinity();
    for (double us : us_of_paths) {
        best = (us > 0 && us < best) ? us : best;
    }
    return best;
}

/// What a point costs a set of choices: the picked path's time over the
/// fastest measured, at most kMaxRatio (also when it was not measured).
/// Every fit below minimizes the sum over its points.
double point_cost(double picked_us, double fastest_us)
{
    return picked_us > 0 ? std::min(picked_us / fastest_us, kMaxRatio)
                         : kMaxRatio;
}

} // namespace

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
        cost += point_cost(p.mode_us[picked(p, t)], fastest(p.mode_us));
    }
    return cost;
}

namespace {

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

/// Thresholds that differ from the defaults.
int moved(const AutoThresholds &t)
{
    const AutoThresholds d;
    return (t.atomic_max_bytes != d.atomic_max_bytes) +
           (t.locked_min_bytes != d.locked_min_bytes) +
           (t.locked_min_group != d.locked_min_group) +
           (t.pair_group != d.pair_group) +
           (t.pair_locked_min_bytes != d.pair_locked_min_bytes) +
           (t.gather_batched_max_group != d.gather_batched_max_group);
}

} // namespace

AutoThresholds fit_incast(const std::vector<IncastPoint> &pts)
{
    // Each threshold over the values that change a measured point's mode
    // (and its default), every combination: the modes interlock (a pair
    // can reach LOCKED through pair_locked_min_bytes, or through
    // pair_group, locked_min_group and locked_min_bytes moved together),
    // so one at a time can stall. (sizes + 2)^2 x (sizes + 1) x 9^3
    // combinations: 214,326 with the five default sizes, under a second.
    const AutoThresholds def;
    std::vector<std::size_t> atomic_max{0, def.atomic_max_bytes},
        locked_min{def.locked_min_bytes, SIZE_MAX},
        pair_locked_min{def.pair_locked_min_bytes};
    for (const IncastPoint &p : pts) {
        atomic_max.push_back(p.bytes);
        locked_min.push_back(p.bytes);
        pair_locked_min.push_back(p.bytes);
    }
    for (auto *v : {&atomic_max, &locked_min, &pair_locked_min}) {
        std::sort(v->begin(), v->end());
        v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    std::vector<std::uint32_t> groups;
    for (std::uint32_t g = 1; g <= kMaxRanks + 1; ++g) {
        groups.push_back(g);
    }
    const double def_cost = incast_cost(pts, def);
    AutoThresholds best = def;
    double best_cost = def_cost;
    int best_changed = 0;
    // Leaves the defaults only where that saves kMinGain per point whose
    // path it changes; among equal costs, the fewest paths changed, then
    // the fewest thresholds moved.
    const auto consider = [&](const AutoThresholds &t) {
        const double c = incast_cost(pts, t);
        const int ch = changed(pts, def, t);
        if (c >= def_cost - kMinGain * ch) {
            return;
        }
        if (c < best_cost ||
            (c == best_cost &&
             std::pair{ch, moved(t)} < std::pair{best_changed, moved(best)})) {
            best = t;
            best_cost = c;
            best_changed = ch;
        }
    };
    AutoThresholds t;
    for (std::size_t am : atomic_max) {
        t.atomic_max_bytes = am;
        for (std::size_t lm : locked_min) {
            t.locked_min_bytes = lm;
            for (std::uint32_t lg : groups) {
                t.locked_min_group = lg;
                for (std::uint32_t pg : groups) {
                    t.pair_group = pg;
                    for (std::size_t pl : pair_locked_min) {
                        t.pair_locked_min_bytes = pl;
                        for (std::uint32_t gb : groups) {
                            t.gather_batched_max_group = gb;
                            consider(t);
                        }
                    }
                }
            }
        }
    }
    return best;
}

namespace {

double bcast_cost(const std::vector<BcastPoint> &pts, std::size_t thresh)
{
    double cost = 0;
    for (const BcastPoint &p : pts) {
        const bool cma = p.cma_us > 0 && p.bytes >= thresh;
        cost += point_cost(cma ? p.cma_us : p.ring_us,
                           fastest(std::array{p.ring_us, p.cma_us}));
    }
    return cost;
}

} // namespace

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

std::size_t fit_seg(const std::vector<SegPoint> &pts,
                    const std::vector<std::size_t> &cands, std::size_t kept)
{
    const auto us = [](const SegPoint &p, std::size_t c) {
        return c == 0 ? p.default_us
                      : (c - 1 < p.seg_us.size() ? p.seg_us[c - 1] : 0.0);
    };
    // Each point's fastest fragment size, over the default and every
    // candidate: the same whichever candidate is being costed.
    std::vector<double> best(pts.size());
    std::vector<double> paths(cands.size() + 1);
    for (std::size_t i = 0; i < pts.size(); ++i) {
        for (std::size_t k = 0; k <= cands.size(); ++k) {
            paths[k] = us(pts[i], k);
        }
        best[i] = fastest(paths);
    }
    const auto cost = [&](std::size_t c) {
        double sum = 0;
        for (std::size_t i = 0; i < pts.size(); ++i) {
            sum += point_cost(us(pts[i], c), best[i]);
        }
        return sum;
    };
    std::size_t pick = 0;
    double cur = cost(0);
    for (std::size_t c = 1; c <= cands.size(); ++c) {
        int matters = 0;
        for (const SegPoint &p : pts) {
            matters += p.bytes > std::min(cands[c - 1], kDefaultSegBytes);
        }
        const double trial = cost(c);
        if (matters > 0 && trial < cur - kMinGain * matters) {
            pick = c;
            cur = trial;
        }
    }
    return pick == 0 ? kept : cands[pick - 1];
}

} // namespace ucg_mm_bench
