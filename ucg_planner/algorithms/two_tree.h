// SPDX-License-Identifier: BSD-3-Clause
// Internal to algorithms/: the two trees and the coloured step schedule of
// the two-tree bcast (large_bcast.cpp), open to its tests.
#pragma once

#include <array>
#include <functional>
#include <vector>

namespace ucg::algorithms::detail {

/*
 * Two binary trees over the n non-root ranks, named by tree position
 * i = 0..n-1 (relative rank i + 1; relative rank 0 is the bcast root).
 * Tree 0 is the in-order tree: its inner positions are the odd ones, its
 * leaves the even ones. Tree 1 is tree 0 with position i renamed n-1-i
 * (mirror, n even) or (i+1) mod n (shift, n odd), so that its inner
 * positions are even: no position is inner in both.
 */
struct TwoTrees {
    int n = 0;
    std::array<std::vector<int>, 2> parent; // -1: the tree's root
    std::array<int, 2> root{-1, -1};        // fed by the bcast root
    // Colour (0 or 1) of the edge into position i of tree t; the bcast
    // root's edges have colours 0 (tree 0) and 1 (tree 1). A position's
    // two edges in differ, and so do the edges out of any sender.
    std::array<std::vector<int>, 2> colour;
    // Steps from the bcast root's send of a chunk of tree t to its arrival
    // at position i (0 at the tree's root).
    std::array<std::vector<int>, 2> delay;
};
TwoTrees make_two_trees(int n);

/* One chunk over one edge, between relative ranks (0 = the bcast root). */
struct TwoTreeSend {
    int step = 0;
    int tree = 0;
    int chunk = 0;
    int from = 0;
    int to = 0;
};

/*
 * Calls `f` for every transfer of the bcast of `nchunks` chunks, in step
 * order. Chunk c travels down tree c % 2; the root sends it in step c, and
 * an edge of colour k carries chunks only in steps s with s % 2 == k, each
 * in the first such step after it arrived upstream. So in every step a
 * rank sends at most one chunk and receives at most one.
 */
void for_each_two_tree_send(const TwoTrees &trees, int nchunks,
                            const std::function<void(const TwoTreeSend &)> &f);

} // namespace ucg::algorithms::detail
