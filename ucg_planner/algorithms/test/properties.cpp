// SPDX-License-Identifier: BSD-3-Clause
// The registry property checks (properties.h): sweep points, the levels
// the hierarchical algorithms get, and the checks of one plan.
#include "algorithms/test/properties.h"

#include "cost/simulator.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>

namespace ucg::algorithms::test {

namespace {

using plan::Collective;

bool rooted(Collective c)
{
    return c == Collective::kBcast || c == Collective::kReduce ||
           c == Collective::kGather || c == Collective::kScatter;
}

std::vector<int> roots(Collective c, int p, const SweepSpec &spec)
{
    if (!rooted(c)) {
        return {0};
    }
    std::set<int> s;
    if (spec.full || p <= 8) {
        for (int r = spec.root_part; r < p; r += spec.root_parts) {
            s.insert(r);
        }
    } else if (p <= 16) {
        s = {0, p / 2, p - 1};
    } else if (p <= 64) {
        s = {0, p - 1};
    } else {
        s = {p / 2};
    }
    return {s.begin(), s.end()};
}

std::vector<int> chunk_counts(int p, const SweepSpec &spec)
{
    if (spec.full) {
        return {1, 2, 3, 7};
    }
    if (p <= 8) {
        return {1, 2, 7};
    }
    return {p == 64 || p <= 16 ? 3 : 1};
}

std::vector<int> radices(const Algorithm &a, int p)
{
    if (!a.takes_radix || p == 1) {
        return {2};
    }
    return p <= 8 ? std::vector<int>{2, 3, 4} : std::vector<int>{3};
}

struct Hier {
    Levels levels;
    std::vector<LevelChoice> per_level;
    std::string top = "recursive_doubling";
};

// Groups of ranks r with r % ngroups == g (nodes not numbered in order).
Level strided_level(int p, int ngroups)
{
    Level level(static_cast<std::size_t>(std::min(p, ngroups)));
    for (int r = 0; r < p; ++r) {
        level[static_cast<std::size_t>(r % ngroups)].push_back(r);
    }
    return level;
}

// Strided nodes of four leaders, paired in reverse (3, 2), (1, 0) above:
// neither level numbers its groups or leaders in order.
Levels strided_two_levels(int p)
{
    Level top;
    for (int l = std::min(p, 4) - 1; l >= 0; l -= 2) {
        top.push_back(l > 0 ? Group{l, l - 1} : Group{l});
    }
    return {strided_level(p, 4), top};
}

std::vector<Hier> hier_sets(const Algorithm &a, int p, const SweepSpec &spec)
{
    using S = Shape;
    if (a.name != "hierarchical" && a.name != "leader") {
        return {Hier{}};
    }
    if (!spec.full && p >= 64) {
        return {Hier{make_levels(p, {4}), {}, "recursive_doubling"},
                Hier{make_levels(p, {4}), {}, "rabenseifner"},
                Hier{strided_two_levels(p), {{S::kKnomial, 2}}, "bruck"}};
    }
    return {
        Hier{make_levels(p, {4}), {}, "recursive_doubling"},
        Hier{make_levels(p, {2, 3}),
             {{S::kShm, 2}, {S::kChain, 2}, {S::kBinary, 2}},
             "recursive_k"},
        // Each segment cut into a piece per top leader: the levels below
        // move a segment at once, in every shape.
        Hier{make_levels(p, {2, 3}),
             {{S::kShm, 2}, {S::kChain, 2}, {S::kBinary, 2}},
             "rabenseifner"},
        Hier{{strided_level(p, 3)}, {{S::kMcast, 2}}, "rabenseifner"},
        Hier{make_levels(p, {p}), {{S::kMcast, 2}}, "tree"},
        Hier{
            {strided_level(p, 3)}, {{S::kLinear, 2}, {S::kKnomial, 3}}, "ring"},
        Hier{strided_two_levels(p), {{S::kKnomial, 2}}, "bruck"},
        Hier{make_levels(p, {3}), {{S::kChain, 2}}, "linear"},
        // The top leaders bcast their pieces through shm: their own
        // block (one level), blocks they gathered (two).
        Hier{make_levels(p, {p}), {{S::kShm, 2}}, "shm"},
        Hier{make_levels(p, {3, p}), {{S::kShm, 2}}, "shm"},
    };
}

std::string context(const Algorithm &a, const Request &q)
{
    std::ostringstream os;
    os << to_string(a.collective) << "/" << a.name << " P=" << q.nranks
       << " root=" << q.root << " segments=" << q.segments
       << " radix=" << q.radix << " levels=" << q.levels.size()
       << " top=" << q.top;
    return os.str();
}

bool pruning_applies(const Algorithm &a)
{
    return a.name == "hierarchical" &&
           (a.collective == Collective::kBcast ||
            a.collective == Collective::kReduce ||
            a.collective == Collective::kAllreduce ||
            a.collective == Collective::kBarrier);
}

void check_simulates(const Algorithm &a, const Request &q,
                     const plan::Plan &plan)
{
    cost::SimConfig cfg;
    cfg.count = static_cast<std::size_t>(plan.nchunks) + 1;
    cfg.critical_path = false;
    cost::Fabric fabric;
    fabric.uniform = {1000, 100, 200, 1};
    const auto sim = cost::simulate(plan, fabric, cfg);
    if (!sim) {
        FAIL(context(a, q) << ": simulation: " << sim.error().message);
    }
}

// Every rank up to 8 ranks; above, the root and rank P-1.
std::vector<int> one_rank_ranks(const Request &q)
{
    std::vector<int> v;
    for (int r = 0; r < q.nranks && q.nranks <= 8; ++r) {
        v.push_back(r);
    }
    if (v.empty()) {
        v = {q.root, q.nranks - 1};
    }
    return v;
}

void check_one_rank(const Algorithm &a, const Request &q,
                    const plan::Plan &plan)
{
    for (int r : one_rank_ranks(q)) {
        Request one = q;
        one.only_rank = r;
        const auto projected = plan::project(plan, r);
        if (!(a.build(one) == projected)) {
            FAIL(context(a, q) << ": one-rank build of rank " << r
                               << " differs from the projection");
        }
        if (pruning_applies(a)) {
            one.levels = levels_for_rank(q.levels, r,
                                         rooted(a.collective) ? q.root : -1);
            if (!a.applicable(one) || !(a.build(one) == projected)) {
                FAIL(context(a, q) << ": one-rank build of rank " << r
                                   << " from pruned levels differs");
            }
        }
    }
}

void check_one(const Algorithm &a, const Request &q)
{
    const plan::Plan plan = a.build(q);
    auto errs = plan::validate(plan);
    if (errs.empty()) {
        errs = plan::check_symbolic(plan);
    }
    // Without an operator the ordered mode adds nothing.
    if (errs.empty() && a.preserves_order && plan::has_operator(a.collective)) {
        errs = plan::check_symbolic(plan, plan::Combine::kOrdered);
    }
    if (errs.empty()) {
        errs = plan::check_synchronous(plan);
    }
    if (!errs.empty()) {
        FAIL(context(a, q) << ": " << errs.front());
    }
    check_simulates(a, q, plan);
    const auto parsed = plan::parse(plan::print(plan));
    if (!parsed || !(parsed.value() == plan)) {
        FAIL(context(a, q) << ": text round trip differs");
    }
    check_one_rank(a, q, plan);
}

int sweep_one(const Algorithm &a, int p, const SweepSpec &spec)
{
    int built = 0;
    for (const Hier &h : hier_sets(a, p, spec)) {
        for (int radix : radices(a, p)) {
            for (int root : roots(a.collective, p, spec)) {
                for (int segs : chunk_counts(p, spec)) {
                    Request q;
                    q.collective = a.collective;
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
                    check_one(a, q);
                    ++built;
                }
            }
        }
    }
    return built;
}

} // namespace

const std::vector<int> &sweep_sizes()
{
    static const std::vector<int> v = {1, 2, 3, 4, 5, 7, 8, 13, 16, 64, 100};
    return v;
}

int sweep(Collective c, const SweepSpec &spec)
{
    int built = 0;
    for (const Algorithm &a : registry()) {
        if (a.collective != c) {
            continue;
        }
        for (int p : spec.sizes) {
            built += sweep_one(a, p, spec);
        }
    }
    return built;
}

} // namespace ucg::algorithms::test
