// SPDX-License-Identifier: BSD-3-Clause
// The two-tree bcast: its trees (binary, in-order, complementary), its
// coloured schedule (one chunk in and out per rank and step, every chunk
// once, at most S + 2 floor(log2(P-1)) steps) and the plan it builds.
#include "algorithms/registry.h"
#include "algorithms/two_tree.h"
#include "cost/simulator.h"

#include <catch2/catch.hpp>

#include <bit>
#include <sstream>
#include <string>

namespace {

using ucg::algorithms::detail::for_each_two_tree_send;
using ucg::algorithms::detail::make_two_trees;
using ucg::algorithms::detail::TwoTrees;
using ucg::algorithms::detail::TwoTreeSend;
using IntVec = std::vector<int>;

std::size_t ix(int v)
{
    return static_cast<std::size_t>(v);
}

int floor_log2(int n)
{
    return n < 1 ? 0 : static_cast<int>(std::bit_width(unsigned(n))) - 1;
}

// Why `parent` is not a binary tree over 0..n-1 of depth <= floor(log2 n)
// rooted at `root`, or "".
std::string tree_error(const IntVec &parent, int root)
{
    const int n = static_cast<int>(parent.size());
    IntVec kids(ix(n), 0);
    for (int i = 0; i < n; ++i) {
        const int up = parent[ix(i)];
        if ((up < 0) != (i == root) || up >= n) {
            return "bad parent of " + std::to_string(i);
        }
        if (up >= 0 && ++kids[ix(up)] > 2) {
            return std::to_string(up) + " has 3 children";
        }
        int depth = 0;
        for (int v = i; parent[ix(v)] >= 0; v = parent[ix(v)]) {
            if (++depth > floor_log2(n)) {
                return std::to_string(i) + " too deep (or a cycle)";
            }
        }
    }
    return "";
}

// Tree 1's position for tree 0's i: mirror (n even) or shift (n odd).
int renamed(int n, int i)
{
    return n % 2 == 0 ? n - 1 - i : (i + 1) % n;
}

bool inner(const IntVec &parent, int i)
{
    for (int up : parent) {
        if (up == i) {
            return true;
        }
    }
    return false;
}

// In-order: every position lies between its left (smaller) and right
// (larger) subtrees, i.e. each position's ancestors on its path split the
// positions as a search tree does.
bool in_order(const IntVec &parent)
{
    const int n = static_cast<int>(parent.size());
    for (int i = 0; i < n; ++i) {
        for (int v = i; parent[ix(v)] >= 0; v = parent[ix(v)]) {
            const int up = parent[ix(v)];
            // i is in up's subtree on v's side.
            if ((v < up) != (i < up)) {
                return false;
            }
        }
    }
    return true;
}

struct Stats {
    std::string error;
    int steps = 0;
};

// Runs the schedule of P ranks and `nchunks` chunks, checking the step
// order, the colours, that a sender holds what it sends, one send and one
// receive per rank and step, and that every rank gets every chunk once.
Stats run_schedule(int p, int nchunks)
{
    const TwoTrees tt = make_two_trees(p - 1);
    std::vector<IntVec> got(ix(p), IntVec(ix(nchunks), -1)); // step
    IntVec sent_in(ix(p), -1), got_in(ix(p), -1);
    Stats st;
    std::ostringstream err;
    for_each_two_tree_send(tt, nchunks, [&](const TwoTreeSend &x) {
        const int colour = tt.colour[ix(x.tree)][ix(x.to - 1)];
        if (x.step < st.steps - 1 || x.step % 2 != colour ||
            x.tree != x.chunk % 2) {
            err << "step " << x.step << " out of order or colour\n";
        }
        if (x.from != 0 && !(got[ix(x.from)][ix(x.chunk)] >= 0 &&
                             got[ix(x.from)][ix(x.chunk)] < x.step)) {
            err << "rank " << x.from << " sends a chunk it lacks\n";
        }
        if (sent_in[ix(x.from)] == x.step || got_in[ix(x.to)] == x.step) {
            err << "step " << x.step << ": two sends or receives\n";
        }
        if (got[ix(x.to)][ix(x.chunk)] >= 0) {
            err << "rank " << x.to << " gets chunk twice\n";
        }
        sent_in[ix(x.from)] = got_in[ix(x.to)] = x.step;
        got[ix(x.to)][ix(x.chunk)] = x.step;
        st.steps = x.step + 1;
    });
    for (int r = 1; r < p; ++r) {
        for (int c = 0; c < nchunks; ++c) {
            if (got[ix(r)][ix(c)] < 0) {
                err << "rank " << r << " misses chunk " << c << "\n";
            }
        }
    }
    st.error = err.str();
    return st;
}

// The simulated two_tree plan when a chunk takes 1 ns on a port and
// nothing else costs: its makespan counts steps.
double unit_makespan(int p, int root, int nchunks)
{
    ucg::algorithms::Request q;
    q.collective = ucg::plan::Collective::kBcast;
    q.nranks = p;
    q.root = root;
    q.segments = nchunks;
    const auto plan = ucg::algorithms::build("two_tree", q);
    REQUIRE(plan.ok());
    ucg::cost::SimConfig cfg;
    cfg.count = static_cast<std::size_t>(nchunks); // one byte per chunk
    cfg.critical_path = false;
    const ucg::cost::Fabric unit{nullptr, {0, 0, 0, 1}};
    const auto r = ucg::cost::simulate(plan.value(), unit, cfg);
    REQUIRE(r.ok());
    return r.value().makespan_ns;
}

} // namespace

TEST_CASE("two trees are binary, in-order and complementary for P <= 200",
          "[plan][algorithms][bcast]")
{
    for (int n = 0; n < 200; ++n) {
        INFO("P=" << n + 1);
        const TwoTrees tt = make_two_trees(n);
        REQUIRE(tt.n == n);
        for (std::size_t t = 0; t < 2; ++t) {
            REQUIRE(tt.parent[t].size() == ix(n));
            REQUIRE(tree_error(tt.parent[t], tt.root[t]).empty());
        }
        CHECK(in_order(tt.parent[0]));
        for (int i = 0; i < n; ++i) {
            // Tree 0: odd positions inner; tree 1 its mirror or shift.
            CHECK(inner(tt.parent[0], i) == (i % 2 == 1));
            CHECK_FALSE((inner(tt.parent[0], i) && inner(tt.parent[1], i)));
            const int up = tt.parent[0][ix(i)];
            CHECK(tt.parent[1][ix(renamed(n, i))] ==
                  (up < 0 ? -1 : renamed(n, up)));
        }
    }
}

TEST_CASE("two-tree steps: every rank sends and receives at most one chunk",
          "[plan][algorithms][bcast]")
{
    for (int p = 1; p <= 200; ++p) {
        for (int nchunks : {1, 2, 3, 8}) {
            INFO("P=" << p << " chunks=" << nchunks);
            const Stats st = run_schedule(p, nchunks);
            INFO(st.error.substr(0, 400));
            CHECK(st.error.empty());
            // Both trees at full rate: S steps for the root to send the
            // chunks, then at most 2 per level down a tree.
            CHECK(st.steps <= (p == 1 ? 0 : nchunks + 2 * floor_log2(p - 1)));
        }
    }
}

// The simulator runs ops as soon as data and ports allow: it may beat the
// schedule where a step is idle (no chunk for the other tree), never lose.
TEST_CASE("two_tree plans run within their scheduled steps",
          "[plan][algorithms][bcast][sim]")
{
    for (int p : {1, 2, 3, 4, 5, 7, 8, 13, 16, 64, 100}) {
        for (int nchunks : {1, 2, 3, 8, 64}) {
            INFO("P=" << p << " chunks=" << nchunks);
            CHECK(unit_makespan(p, p / 2, nchunks) <=
                  run_schedule(p, nchunks).steps);
        }
    }
    // 64 + 2 * 5 steps; the heap tree and its mirror (no colouring) took 78.
    CHECK(unit_makespan(64, 0, 64) == Approx(74));
}

TEST_CASE("two_tree plans hold S chunks and every rank sends about m",
          "[plan][algorithms][bcast]")
{
    for (int p : {1, 2, 3, 8, 13, 64}) {
        for (int nchunks : {1, 2, 3, 7}) {
            INFO("P=" << p << " chunks=" << nchunks);
            ucg::algorithms::Request q;
            q.nranks = p;
            q.root = p - 1;
            q.segments = nchunks;
            const auto plan = ucg::algorithms::build("two_tree", q);
            REQUIRE(plan.ok());
            CHECK(plan.value().nchunks == nchunks);
            for (int r = 0; r < p; ++r) {
                int sends = 0, recvs = 0;
                for (const ucg::plan::Op &op : plan.value().ranks[ix(r)].ops) {
                    sends += op.kind == ucg::plan::OpKind::kSend ? 1 : 0;
                    recvs += op.kind == ucg::plan::OpKind::kRecv ? 1 : 0;
                }
                // Tree 0 carries ceil(S/2) chunks, its inner ranks send
                // each twice; the root sends every chunk once.
                CHECK(sends <= nchunks + nchunks % 2);
                CHECK(recvs == (r == q.root ? 0 : nchunks));
            }
        }
    }
}
