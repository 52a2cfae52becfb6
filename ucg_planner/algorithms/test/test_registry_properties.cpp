// SPDX-License-Identifier: BSD-3-Clause
// The property suite over the registry: every applicable algorithm, group
// size, root (sampled for large groups), chunk count and radix builds a plan
// that validates, checks symbolically, prints and parses back (P = 100:
// with one chunk count), and whose one-rank builds (also from pruned levels)
// equal the projections of the all-rank build. Large groups sample roots
// 0, 1, P/2, P-1 and fewer chunk counts to keep the Debug suite fast.
#include "algorithms/registry.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <sstream>

namespace {

using ucg::algorithms::Algorithm;
using ucg::algorithms::Request;
using ucg::plan::Collective;

const int kSizes[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 64, 100};

bool rooted(Collective c)
{
    return c == Collective::kBcast || c == Collective::kReduce ||
           c == Collective::kGather || c == Collective::kScatter;
}

// Every rank of small groups, else 0, 1, P/2, P-1.
std::vector<int> sample(int p)
{
    std::set<int> s;
    if (p <= 8) {
        for (int r = 0; r < p; ++r) {
            s.insert(r);
        }
    } else {
        s = {0, 1, p - 1, p / 2};
    }
    return {s.begin(), s.end()};
}

std::vector<int> chunk_counts(int p)
{
    // Large groups: fewer chunk counts keep the Debug suite fast.
    if (p == 64) {
        return {3};
    }
    if (p >= 64) {
        return {1, 2};
    }
    return {1, 2, 3, 7};
}

std::vector<int> radices(const Algorithm &a, int p)
{
    const bool uses = a.name == "knomial" || a.name == "recursive_k" ||
                      a.name == "dissemination" ||
                      a.name == "scatter_allgather" || a.name == "hierarchical";
    if (!uses || p == 1) {
        return {2};
    }
    return p <= 8 ? std::vector<int>{2, 3, 4} : std::vector<int>{3};
}

struct Hier {
    ucg::algorithms::Levels levels;
    std::vector<ucg::algorithms::LevelChoice> per_level;
    std::string top = "recursive_doubling";
};

// Groups of ranks r with r % ngroups == g (nodes not numbered in order).
ucg::algorithms::Levels strided_levels(int p, int ngroups)
{
    ucg::algorithms::Level level(
        static_cast<std::size_t>(std::min(p, ngroups)));
    for (int r = 0; r < p; ++r) {
        level[static_cast<std::size_t>(r % ngroups)].push_back(r);
    }
    return {level};
}

std::vector<Hier> hier_sets(const Algorithm &a, int p)
{
    using ucg::algorithms::make_levels;
    using S = ucg::algorithms::Shape;
    if (a.name != "hierarchical") {
        return {Hier{}};
    }
    return {
        Hier{make_levels(p, {4}), {}, "recursive_doubling"},
        Hier{make_levels(p, {2, 3}),
             {{S::kShm, 2}, {S::kChain, 2}, {S::kBinary, 2}},
             "recursive_k"},
        Hier{make_levels(p, {p}), {{S::kMcast, 2}}, "tree"},
        Hier{strided_levels(p, 3),
             {{S::kLinear, 2}, {S::kKnomial, 3}},
             "knomial"},
    };
}

std::string context(const Algorithm &a, const Request &q)
{
    std::ostringstream os;
    os << to_string(a.collective) << "/" << a.name << " P=" << q.nranks
       << " root=" << q.root << " segments=" << q.segments
       << " radix=" << q.radix << " levels=" << q.levels.size();
    return os.str();
}

bool pruning_applies(const Algorithm &a)
{
    return a.name == "hierarchical" && a.collective != Collective::kGather &&
           a.collective != Collective::kScatter &&
           a.collective != Collective::kAllgather;
}

void check_one(const Algorithm &a, const Request &q, bool round_trip)
{
    const ucg::plan::Plan plan = a.build(q);
    auto errs = ucg::plan::validate(plan);
    if (errs.empty()) {
        errs = ucg::plan::check_symbolic(plan);
    }
    if (!errs.empty()) {
        FAIL(context(a, q) << ": " << errs.front());
    }
    if (round_trip) {
        const auto parsed = ucg::plan::parse(ucg::plan::print(plan));
        if (!parsed || !(parsed.value() == plan)) {
            FAIL(context(a, q) << ": text round trip differs");
        }
    }
    for (int r : {q.root, q.nranks - 1}) {
        Request one = q;
        one.only_rank = r;
        const auto projected = ucg::plan::project(plan, r);
        if (!(a.build(one) == projected)) {
            FAIL(context(a, q) << ": one-rank build of rank " << r
                               << " differs from the projection");
        }
        if (pruning_applies(a)) {
            one.levels = ucg::algorithms::levels_for_rank(
                q.levels, r, rooted(a.collective) ? q.root : -1);
            if (!a.applicable(one) || !(a.build(one) == projected)) {
                FAIL(context(a, q) << ": one-rank build of rank " << r
                                   << " from pruned levels differs");
            }
        }
    }
}

void sweep(Collective c)
{
    int built = 0;
    for (const Algorithm &a : ucg::algorithms::registry()) {
        if (a.collective != c) {
            continue;
        }
        for (int p : kSizes) {
            for (const Hier &h : hier_sets(a, p)) {
                for (int radix : radices(a, p)) {
                    const std::vector<int> roots =
                        rooted(c) ? sample(p) : std::vector<int>{0};
                    for (int root : roots) {
                        for (int segs : chunk_counts(p)) {
                            Request q;
                            q.collective = c;
                            q.nranks = p;
                            q.root = root;
                            q.radix = radix;
                            q.segments = segs;
                            q.levels = h.levels;
                            q.per_level = h.per_level;
                            q.top = h.top;
                            if (!a.applicable(q)) {
                                continue;
                            }
                            // Large groups: one text round trip per root.
                            check_one(a, q, p <= 16 || segs == 1 || p == 64);
                            ++built;
                        }
                    }
                }
            }
        }
    }
    CHECK(built > 0);
}

} // namespace

TEST_CASE("registry bcast plans are correct", "[plan][algorithms][bcast]")
{
    sweep(Collective::kBcast);
}
TEST_CASE("registry reduce plans are correct", "[plan][algorithms][reduce]")
{
    sweep(Collective::kReduce);
}
TEST_CASE("registry allreduce plans are correct",
          "[plan][algorithms][allreduce]")
{
    sweep(Collective::kAllreduce);
}
TEST_CASE("registry gather plans are correct", "[plan][algorithms][gather]")
{
    sweep(Collective::kGather);
}
TEST_CASE("registry scatter plans are correct", "[plan][algorithms][scatter]")
{
    sweep(Collective::kScatter);
}
TEST_CASE("registry allgather plans are correct",
          "[plan][algorithms][allgather]")
{
    sweep(Collective::kAllgather);
}
TEST_CASE("registry alltoall plans are correct", "[plan][algorithms][alltoall]")
{
    sweep(Collective::kAlltoall);
}
TEST_CASE("registry reduce_scatter plans are correct",
          "[plan][algorithms][reduce_scatter]")
{
    sweep(Collective::kReduceScatter);
}
TEST_CASE("registry barrier plans are correct", "[plan][algorithms][barrier]")
{
    sweep(Collective::kBarrier);
}
