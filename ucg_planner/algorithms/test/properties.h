// SPDX-License-Identifier: BSD-3-Clause
// The registry property checks shared by the unit suite's sample
// (test_registry_properties.cpp) and the full sweep
// (test_registry_sweep.cpp).
#pragma once

#include "algorithms/registry.h"

#include <vector>

namespace ucg::algorithms::test {

/* Which sweep points to visit. */
struct SweepSpec {
    std::vector<int> sizes; // group sizes
    // true: every root, chunk counts 1, 2, 3, 7 and every level set.
    // false (the sample): every root up to 8 ranks, 0, P/2, P-1 at 13
    // and 16, 0 and P-1 at 64, P/2 at 100; chunk counts 1, 2, 7 up to 8
    // ranks, 3 at 13, 16 and 64, 1 at 100; from 64 ranks two of the six
    // level sets of the hierarchical algorithms (groups of 4, strided
    // two-level).
    bool full = false;
    // Only roots r with r % root_parts == root_part (splits a sweep of a
    // rooted collective into tests that ctest runs in parallel).
    int root_parts = 1;
    int root_part = 0;
};

/* The sizes of the sweep: 1, 2, 3, 4, 5, 7, 8, 13, 16, 64, 100. */
const std::vector<int> &sweep_sizes();

/*
 * Checks every applicable registry algorithm of `c` at every point of
 * `spec`: the all-rank plan validates, checks symbolically (also in rank
 * order where the algorithm preserves order), runs without deadlock with
 * synchronous sends (check_synchronous), simulates and prints and parses
 * back; the one-rank
 * builds of every rank up to 8 ranks, of the root and of rank P-1 above
 * (from pruned levels too, where levels_for_rank() applies) equal their
 * projections (every rank at 100 ranks would cost P builds per plan; a
 * builder runs the same code for every rank and PlanBuilder only drops
 * the other ranks' ops). Returns the number of plans checked; FAILs on
 * the first wrong one.
 */
int sweep(plan::Collective c, const SweepSpec &spec);

} // namespace ucg::algorithms::test
