// SPDX-License-Identifier: BSD-3-Clause
// The text form: exact round trips and strict parsing.
#include "algorithms/registry.h"

#include <catch2/catch.hpp>

#include <type_traits>

using namespace ucg::plan;

// One result type across the planner: the parser and the registry return
// ucg::Result (its error() is a ucg::Error).
static_assert(std::is_same_v<decltype(parse("")), ucg::Result<Plan>>);
static_assert(std::is_same_v<decltype(ucg::algorithms::build("", {})),
                             ucg::Result<Plan>>);

TEST_CASE("print then parse gives the same plan", "[plan][text]")
{
    ucg::algorithms::Request q;
    q.collective = Collective::kAllreduce;
    q.nranks = 8;
    q.segments = 2;
    q.levels = ucg::algorithms::make_levels(8, {4});
    q.per_level = {{ucg::algorithms::Shape::kShm, 2}};
    const Plan p = ucg::algorithms::build("hierarchical", q).value();
    const std::string text = print(p);
    const auto back = parse(text);
    REQUIRE(back.ok());
    CHECK(back.value() == p);
    CHECK(print(back.value()) == text);
    CHECK(text.find("incast_recv_reduce shm_incast") != std::string::npos);
    CHECK(text.find("bcast_send shm_bcast") != std::string::npos);
}

TEST_CASE("parser rejects malformed text and names the line", "[plan][text]")
{
    ucg::algorithms::Request q;
    q.collective = Collective::kBcast;
    q.nranks = 2;
    const std::string good = print(ucg::algorithms::build("linear", q).value());
    REQUIRE(parse(good).ok());
    CHECK_FALSE(parse("").ok());
    CHECK_FALSE(parse(good.substr(0, good.size() - 4)).ok());
    CHECK_FALSE(parse(good + "extra\n").ok());
    std::string bad = good;
    bad.replace(bad.find("send"), 4, "snd");
    const auto r = parse(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("line ") == 0);
    std::string bad_range = good;
    bad_range.replace(bad_range.find("in:0+1"), 6, "in:0+x");
    CHECK_FALSE(parse(bad_range).ok());
}

TEST_CASE("chunk split covers the block", "[plan]")
{
    for (std::size_t count : {0, 1, 5, 7, 8, 100}) {
        for (int n : {1, 2, 3, 7}) {
            std::size_t total = 0;
            for (int c = 0; c < n; ++c) {
                CHECK(chunk_begin(count, n, c) == total);
                total += chunk_count(count, n, c);
            }
            CHECK(total == count);
        }
    }
    const std::vector<Range> v = {chunks(Buffer::kOutput, 0, 1, 2, 3)};
    CHECK(range_slots(v) == 6);
    CHECK(range_elements(v, 3, 10) == 3 * (3 + 3));
}
