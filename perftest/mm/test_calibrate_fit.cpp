// SPDX-License-Identifier: BSD-3-Clause
// The calibration's fits on made-up points: a setting moves to what is
// clearly faster, and noise keeps the default.
#include "calibrate_fit.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <iterator>

using namespace ucg_mm_bench;

namespace {

// Points at the sizes the calibration uses; the path at 8k, 4k, 16k and
// 32k fragments from `ring(bytes, seg)`.
template <class Ring> std::vector<SegPoint> seg_points(Ring &&ring)
{
    std::vector<SegPoint> pts;
    for (std::size_t b : {8u, 4096u, 32768u, 262144u, 1048576u}) {
        SegPoint p{b, ring(b, 8192), {}};
        for (std::size_t s : {4096u, 16384u, 32768u}) {
            p.seg_us.push_back(ring(b, s));
        }
        pts.push_back(p);
    }
    return pts;
}

const std::vector<std::size_t> kCands{4096, 16384, 32768};

// Gather, int32 and double sums at 2, 4 and 8 ranks and these sizes,
// every mode at 5 us.
std::vector<IncastPoint> tied_incast(std::initializer_list<std::size_t> sizes)
{
    std::vector<IncastPoint> pts;
    for (int coll = 0; coll < 3; ++coll) {
        for (int n : {2, 4, 8}) {
            for (std::size_t b : sizes) {
                IncastPoint p{coll, n, b, {}, 1.0, 0.0, {}};
                for (double &us : p.mode_us) {
                    us = 5.0;
                }
                pts.push_back(p);
            }
        }
    }
    return pts;
}

// The fastest of a point's modes (index 0, AUTO, is not one).
double fastest_us(const IncastPoint &p)
{
    return *std::min_element(std::begin(p.mode_us) + 1, std::end(p.mode_us));
}

} // namespace

TEST_CASE("GROUP_SEG_SIZE moves to a fragment size that is clearly faster",
          "[calibrate]")
{
    // 16k fragments take 30% less time from 32 KiB, the same below.
    auto pts = seg_points([](std::size_t b, std::size_t s) {
        return b >= 32768 && s == 16384 ? 7.0 : 10.0;
    });
    CHECK(fit_seg(pts, kCands, kBcastDefaultSegBytes) == 16384);
}

TEST_CASE("GROUP_SEG_SIZE keeps its default within the noise", "[calibrate]")
{
    // 2% apart at every point: less than the 5% a move must save.
    auto pts = seg_points(
        [](std::size_t, std::size_t s) { return s == 32768 ? 9.8 : 10.0; });
    CHECK(fit_seg(pts, kCands, kBcastDefaultSegBytes) == kBcastDefaultSegBytes);
    // One scheduler-hit median does not decide: 4k once 10x faster, once
    // 10x slower.
    pts = seg_points([](std::size_t b, std::size_t s) {
        return s != 4096 ? 10.0 : b == 4096 ? 1.0 : b == 32768 ? 100.0 : 10.0;
    });
    CHECK(fit_seg(pts, kCands, kBcastDefaultSegBytes) == kBcastDefaultSegBytes);
    // mm_incast's default is auto (0): kept as such.
    CHECK(fit_seg(pts, kCands, 0) == 0);
}

TEST_CASE("CMA_THRESH and MIN_ZCOPY: the size from which CMA wins, else none",
          "[calibrate]")
{
    std::vector<BcastPoint> pts;
    for (std::size_t b : {16384u, 65536u, 262144u, 1048576u}) {
        // CMA 40% faster from 256 KiB, 20% slower below.
        pts.push_back({2, b, 10.0, b >= 262144 ? 6.0 : 12.0, 10.0, {}});
    }
    CHECK(fit_bcast(pts) == 262144);
    for (BcastPoint &p : pts) {
        p.cma_us = 11.0; // never faster
    }
    CHECK(fit_bcast(pts) == SIZE_MAX);
}

TEST_CASE("mm_incast's thresholds stay at their defaults where every mode "
          "ties",
          "[calibrate]")
{
    const std::vector<IncastPoint> pts = tied_incast({8, 4096, 1048576});
    const AutoThresholds def, fit = fit_incast(pts);
    CHECK(fit.atomic_max_bytes == def.atomic_max_bytes);
    CHECK(fit.locked_min_bytes == def.locked_min_bytes);
    CHECK(fit.locked_min_group == def.locked_min_group);
    CHECK(fit.pair_group == def.pair_group);
    CHECK(fit.pair_locked_min_bytes == def.pair_locked_min_bytes);
    CHECK(fit.gather_batched_max_group == def.gather_batched_max_group);
    CHECK(incast_cost(pts, fit) == Approx(double(pts.size())));
}

TEST_CASE("mm_incast's thresholds move together where only a combination "
          "is faster",
          "[calibrate]")
{
    // Pairs reduce fastest LOCKED at every size; bigger groups tie in
    // every mode. An int32 pair at 8 B reaches LOCKED only with two
    // thresholds moved at once (atomic_max_bytes and
    // pair_locked_min_bytes): neither gains there alone.
    std::vector<IncastPoint> pts = tied_incast({8, 64, 4096, 32768});
    for (IncastPoint &p : pts) {
        if (p.n == 2 && p.coll != 0) {
            p.mode_us[UCT_MM_INCAST_MODE_LOCKED] = 4.0;
            p.mode_us[UCT_MM_INCAST_MODE_BATCHED] = 6.0;
        }
    }
    const AutoThresholds fit = fit_incast(pts);
    for (const IncastPoint &p : pts) {
        INFO("coll " << p.coll << " n " << p.n << " bytes " << p.bytes);
        if (p.n == 2 && p.coll != 0) {
            CHECK(picked(p, fit) == UCT_MM_INCAST_MODE_LOCKED);
        } else {
            CHECK(p.mode_us[picked(p, fit)] == 5.0); // a tie: any mode
        }
    }
    CHECK(incast_cost(pts, fit) == Approx(double(pts.size())));
}

TEST_CASE("mm_incast: pairs can reduce locked and still gather centralized",
          "[calibrate]")
{
    // What the VM measures: pair gathers fastest centralized, 4-rank
    // gathers batched, pair reductions locked from 4 KiB (centralized or
    // atomic below). Only AUTO_PAIR_LOCKED_MIN gives all of it: moving
    // pair_group off the pair sends its gathers off centralized.
    std::vector<IncastPoint> pts = tied_incast({8, 64, 4096, 32768});
    for (IncastPoint &p : pts) {
        auto &us = p.mode_us;
        if (p.coll == 0 && p.n <= 4) {
            const bool pair = p.n == 2;
            us[UCT_MM_INCAST_MODE_CENTRALIZED] = pair ? 4.0 : 6.0;
            us[UCT_MM_INCAST_MODE_BATCHED] = pair ? 6.0 : 4.0;
        } else if (p.coll != 0 && p.n == 2) {
            const bool big = p.bytes >= 4096;
            us[UCT_MM_INCAST_MODE_LOCKED] = big ? 4.0 : 6.0;
            us[UCT_MM_INCAST_MODE_CENTRALIZED] = big ? 5.0 : 4.0;
            us[UCT_MM_INCAST_MODE_ATOMIC] = 4.0;
        }
    }
    const AutoThresholds fit = fit_incast(pts);
    CHECK(fit.pair_locked_min_bytes == 4096);
    for (const IncastPoint &p : pts) {
        INFO("coll " << p.coll << " n " << p.n << " bytes " << p.bytes);
        const auto mode = picked(p, fit);
        CHECK(p.mode_us[mode] == fastest_us(p));
        if (p.n == 2 && p.coll != 0 && p.bytes >= 4096) {
            CHECK(mode == UCT_MM_INCAST_MODE_LOCKED);
        }
    }
    CHECK(incast_cost(pts, fit) == Approx(double(pts.size())));
}
