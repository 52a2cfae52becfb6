// SPDX-License-Identifier: BSD-3-Clause
// Targeted algorithm tests: registry lookups, shapes and step counts.
#include "algorithms/common.h"

#include <catch2/catch.hpp>

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
