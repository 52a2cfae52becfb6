// SPDX-License-Identifier: BSD-3-Clause
// Golden files: the text form of a few plans is stable. Set
// UCG_UPDATE_GOLDEN=1 to rewrite them after an intended change.
#include "algorithms/registry.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace ucg::algorithms;
using ucg::plan::Collective;

namespace {

struct Golden {
    const char *file;
    const char *algorithm;
    Request req;
};

Request req(Collective c, int p, int root, int segments, int radix = 2)
{
    Request q;
    q.collective = c;
    q.nranks = p;
    q.root = root;
    q.segments = segments;
    q.radix = radix;
    return q;
}

std::vector<Golden> goldens()
{
    Request h = req(Collective::kAllreduce, 4, 0, 2);
    h.levels = make_levels(4, {2});
    h.per_level = {{Shape::kShm, 2}};
    Request g = req(Collective::kGather, 6, 1, 1);
    g.levels = make_levels(6, {3});
    g.per_level = {{Shape::kShm, 2}};
    return {
        {"bcast_knomial_p5_r2_k3.plan", "knomial",
         req(Collective::kBcast, 5, 2, 1, 3)},
        {"bcast_chain_p3_r1_s2.plan", "chain",
         req(Collective::kBcast, 3, 1, 2)},
        {"allreduce_ring_p3.plan", "ring",
         req(Collective::kAllreduce, 3, 0, 1)},
        {"allreduce_hier_shm_p4_s2.plan", "hierarchical", h},
        {"alltoall_bruck_p3.plan", "bruck",
         req(Collective::kAlltoall, 3, 0, 1)},
        {"gather_knomial_p4_r3.plan", "knomial",
         req(Collective::kGather, 4, 3, 1)},
        {"exscan_recursive_doubling_p5.plan", "recursive_doubling",
         req(Collective::kExscan, 5, 0, 1)},
        {"gather_hier_shm_p6_r1.plan", "hierarchical", g},
    };
}

std::string slurp(const std::string &path)
{
    std::ifstream in(path);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

} // namespace

TEST_CASE("golden plans print as recorded and parse back", "[plan][golden]")
{
    const bool update = std::getenv("UCG_UPDATE_GOLDEN") != nullptr;
    for (const Golden &g : goldens()) {
        INFO(g.file);
        const auto plan = build(g.algorithm, g.req);
        REQUIRE(plan.ok());
        const std::string path =
            std::string(UCG_PLAN_GOLDEN_DIR) + "/" + g.file;
        const std::string text = ucg::plan::print(plan.value());
        if (update) {
            std::ofstream(path) << text;
        }
        CHECK(slurp(path) == text);
        const auto back = ucg::plan::parse(slurp(path));
        REQUIRE(back.ok());
        CHECK(back.value() == plan.value());
    }
}
