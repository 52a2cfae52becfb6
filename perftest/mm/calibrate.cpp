// SPDX-License-Identifier: BSD-3-Clause
// --calibrate: the thresholds that make each transport's automatic choice
// the fastest path measured on this machine. Runs the incast and bcast
// benchmarks quietly at the sizes and group sizes asked for, then fits:
//  - mm_incast MODE=auto (UCX_MM_INCAST_AUTO_*): every combination of
//    the six thresholds of policy.h, each over the values that change a
//    measured point's mode; the cost of a set is the sum over points of
//    (median of the mode message_mode() picks) / (fastest mode measured),
//    evaluated with the transport's own policy function, at most
//    kMaxRatio per point (an outlier median must not decide). The set
//    leaves the defaults only if it saves kMinGain per point it changes
//    (noise keeps the defaults);
//  - mm_bcast UCX_MM_BCAST_CMA_THRESH: the same cost over ring vs CMA;
//    UCX_MM_BCAST_MIN_ZCOPY (am_zcopy's advertised minimum): the same fit
//    over the two-rank points alone (one receiver reading by CMA);
//    UCX_MM_BCAST_GROUP_SEG_SIZE and UCX_MM_INCAST_GROUP_SEG_SIZE: the
//    ring timed with slots of 8k, 16k and 32k beside its default 64k
//    (fragments an eighth of the message within a slot, decision 0056),
//    MODE=auto at 4k, 8k, 16k and 32k beside its default auto; one value
//    for all sizes (fit_seg).
// Prints the points as `#` comments, then one `export UCX_MM_...=...` line
// per threshold (sizes in bytes or `inf`).
#include "bench_common.h"
#include "benches.h"

#include "calibrate_fit.h"
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
    // Fragment sizes besides each transport's default: mm_incast's auto
    // (8-64 KiB by group size), mm_bcast's 64 KiB slots (8k: the slots,
    // and so the fragments, of stops before decision 0056).
    const std::vector<std::size_t> incast_segs{4096, 8192, 16384, 32768};
    const std::vector<std::size_t> bcast_segs{8192, 16384, 32768};
    int rc = 0;
    if (incast) {
        opts.seg_sizes = incast_segs;
        rc |= bench_incast(opts);
    }
    if (bcast) {
        opts.seg_sizes = bcast_segs;
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
    // am_zcopy to one receiver reads the sender's buffer with CMA as a
    // group's CMA path does: the pairs' crossover (none: the default).
    std::vector<BcastPoint> pairs;
    for (const BcastPoint &p : got.bcast) {
        if (p.n == 2) {
            pairs.push_back(p);
        }
    }
    const std::size_t zcopy = fit_bcast(pairs);
    std::vector<SegPoint> bcast_seg, incast_seg;
    for (const BcastPoint &p : got.bcast) {
        bcast_seg.push_back({p.bytes, p.ring_us, p.seg_us});
    }
    for (const IncastPoint &p : got.incast) {
        incast_seg.push_back({p.bytes, p.auto_us, p.seg_us});
    }
    const std::size_t seg =
        fit_seg(bcast_seg, bcast_segs, kBcastDefaultSegBytes);
    const std::size_t incast_seg_bytes = fit_seg(incast_seg, incast_segs, 0);
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
    for (const BcastPoint &p : got.bcast) {
        std::printf("# bcast    %2d %8zu  ring by GROUP_SEG_SIZE (us): %zu "
                    "%.3f",
                    p.n, p.bytes, kBcastDefaultSegBytes, p.ring_us);
        for (std::size_t i = 0; i < p.seg_us.size(); ++i) {
            std::printf(", %zu %.3f", bcast_segs[i], p.seg_us[i]);
        }
        std::printf("\n");
    }
    for (const IncastPoint &p : got.incast) {
        std::printf("# %-8s %2d %8zu  auto by GROUP_SEG_SIZE (us): auto %.3f",
                    kCollNames[p.coll], p.n, p.bytes, p.auto_us);
        for (std::size_t i = 0; i < p.seg_us.size(); ++i) {
            std::printf(", %zu %.3f", incast_segs[i], p.seg_us[i]);
        }
        std::printf("\n");
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
        std::printf("export UCX_MM_INCAST_AUTO_PAIR_LOCKED_MIN=%s\n",
                    size_str(fit.pair_locked_min_bytes).c_str());
        std::printf("export UCX_MM_INCAST_AUTO_GATHER_BATCHED_MAX_GROUP=%u\n",
                    fit.gather_batched_max_group);
        std::printf("export UCX_MM_INCAST_GROUP_SEG_SIZE=%s\n",
                    incast_seg_bytes == 0
                        ? "auto"
                        : std::to_string(incast_seg_bytes).c_str());
    }
    if (bcast) {
        std::printf("export UCX_MM_BCAST_CMA_THRESH=%s\n",
                    size_str(cma).c_str());
        std::printf("export UCX_MM_BCAST_GROUP_SEG_SIZE=%zu\n", seg);
        // No crossover: the transport's default (32 MiB, above max_zcopy).
        std::printf("export UCX_MM_BCAST_MIN_ZCOPY=%zu\n",
                    zcopy == SIZE_MAX ? std::size_t{32} << 20 : zcopy);
    }
    return 0;
}

} // namespace ucg_mm_bench
