// SPDX-License-Identifier: BSD-3-Clause
// Targeted algorithm tests: registry lookups, shapes and step counts.
#include "algorithms/common.h"

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace ucg::algorithms;
using ucg::plan::Collective;

TEST_CASE("registry lists every collective and finds by name",
          "[plan][algorithms]")
{
    for (int c = 0; c < ucg::plan::kNumCollectives; ++c) {
        const auto coll = static_cast<Collective>(c);
        int n = 0;
        for (const auto &a : registry()) {
            n += a.collective == coll ? 1 : 0;
        }
        CHECK(n >= 2);
    }
    CHECK(find_algorithm(Collective::kBcast, "knomial") != nullptr);
    CHECK(find_algorithm(Collective::kBcast, "nope") == nullptr);
    Request q;
    q.collective = Collective::kBcast;
    q.nranks = 4;
    q.root = 4;
    CHECK_FALSE(build("knomial", q).ok());
    q.root = 1;
    CHECK(build("knomial", q).ok());
    CHECK_FALSE(build("hierarchical", q).ok()); // no levels
}

namespace {

// Point-to-point messages between ranks of different groups of four
// (ranks numbered group by group), as (from, to) pairs.
std::vector<std::pair<int, int>> cross_group(const ucg::plan::Plan &plan)
{
    std::vector<std::pair<int, int>> out;
    for (int r = 0; r < plan.nranks; ++r) {
        for (const auto &op : plan.ranks[static_cast<std::size_t>(r)].ops) {
            if (op.kind == ucg::plan::OpKind::kSend &&
                op.peers[0] / 4 != r / 4) {
                out.emplace_back(r, op.peers[0]);
            }
        }
    }
    return out;
}

ucg::plan::Plan hier_plan(Collective c, const std::string &top)
{
    Request q;
    q.collective = c;
    q.nranks = 16;
    q.levels = make_levels(16, {4});
    q.top = top;
    auto plan = build("hierarchical", q);
    REQUIRE(plan.ok());
    return plan.value();
}

} // namespace

TEST_CASE("hierarchical exchanges cross groups only between leaders",
          "[plan][algorithms][allgather][alltoall][reduce_scatter]")
{
    // Four groups of four: 4 top leaders (0, 4, 8, 12).
    struct Case {
        Collective c;
        const char *top;
        std::size_t messages; // between the leaders
    };
    const Case cases[] = {
        {Collective::kAllgather, "ring", 12},
        {Collective::kAllgather, "linear", 12},
        {Collective::kAllgather, "bruck", 8},
        {Collective::kAllgather, "recursive_doubling", 8},
        {Collective::kReduceScatter, "ring", 12},
        {Collective::kReduceScatter, "linear", 12},
        {Collective::kAlltoall, "linear", 12},
    };
    for (const Case &k : cases) {
        INFO(ucg::plan::to_string(k.c) << " top=" << k.top);
        const auto msgs = cross_group(hier_plan(k.c, k.top));
        CHECK(msgs.size() == k.messages);
        std::set<int> senders;
        for (auto [from, to] : msgs) {
            CHECK(from % 4 == 0);
            CHECK(to % 4 == 0);
            senders.insert(from);
        }
        // Every leader sends (no funnel through rank 0).
        CHECK(senders == std::set<int>{0, 4, 8, 12});
    }
}
