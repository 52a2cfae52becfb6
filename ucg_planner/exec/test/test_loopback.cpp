// SPDX-License-Identifier: BSD-3-Clause
// The engine runs every registered algorithm on the loopback fabric and
// every rank ends with the collective's result, with eager sends and with
// synchronous ones (rendezvous: a send completes only once received).
#include "exec/test/loopback_runner.h"

#include "algorithms/registry.h"

#include <catch2/catch.hpp>

#include <sstream>

namespace ucg::exec::test {

namespace {

using algorithms::LevelChoice;
using algorithms::Request;
using algorithms::Shape;
using plan::Collective;

bool rooted(Collective c)
{
    return c == Collective::kBcast || c == Collective::kReduce ||
           c == Collective::kGather || c == Collective::kScatter;
}

struct Hier {
    std::vector<int> sizes;
    std::vector<LevelChoice> shapes;
    std::string top;
};

std::vector<Hier> hier_sets(const algorithms::Algorithm &a)
{
    if (a.name != "hierarchical") {
        return {Hier{}};
    }
    return {Hier{{2}, {{Shape::kShm, 2}}, "recursive_doubling"},
            Hier{{3}, {{Shape::kKnomial, 2}}, "ring"},
            Hier{{2, 2}, {{Shape::kChain, 2}, {Shape::kShm, 2}}, "bruck"},
            Hier{{4}, {{Shape::kMcast, 2}}, "linear"}};
}

// Runs every applicable point of one algorithm; returns how many ran.
int run_algorithm(const algorithms::Algorithm &a, bool sync)
{
    int ran = 0;
    for (int p : {1, 2, 3, 4, 5, 7, 8}) {
        for (const Hier &h : hier_sets(a)) {
            for (int root = 0; root < (rooted(a.collective) ? p : 1); ++root) {
                for (int segs : {1, 3}) {
                    Request q;
                    q.collective = a.collective;
                    q.nranks = p;
                    q.root = root;
                    q.radix = 3;
                    q.segments = segs;
                    if (!h.sizes.empty()) {
                        q.levels = algorithms::make_levels(p, h.sizes);
                        q.per_level = h.shapes;
                        q.top = h.top;
                    }
                    if (!a.applicable(q)) {
                        continue;
                    }
                    const plan::Plan plan = a.build(q);
                    const bool barrier = a.collective == Collective::kBarrier;
                    for (std::uint64_t count :
                         barrier ? std::vector<std::uint64_t>{0}
                                 : std::vector<std::uint64_t>{1, 5, 37}) {
                        const std::string err =
                            run_and_check(plan, count, sync);
                        if (!err.empty()) {
                            FAIL(plan::to_string(a.collective)
                                 << "/" << a.name << " P=" << p
                                 << " root=" << root << " segments=" << segs
                                 << " levels=" << h.sizes.size()
                                 << " top=" << h.top << " count=" << count
                                 << (sync ? " sync" : " eager") << ": " << err);
                        }
                        ++ran;
                    }
                }
            }
        }
    }
    return ran;
}

void run_collective(Collective c, bool sync)
{
    int ran = 0;
    for (const algorithms::Algorithm &a : algorithms::registry()) {
        if (a.collective == c) {
            ran += run_algorithm(a, sync);
        }
    }
    CHECK(ran > 0);
}

} // namespace

TEST_CASE("every algorithm gives the right result on the loopback fabric",
          "[exec][loopback]")
{
    const auto c = static_cast<Collective>(
        GENERATE(range(0, static_cast<int>(plan::kNumCollectives))));
    const bool sync = GENERATE(false, true);
    INFO(plan::to_string(c) << (sync ? " synchronous sends" : " eager"));
    run_collective(c, sync);
}

} // namespace ucg::exec::test
