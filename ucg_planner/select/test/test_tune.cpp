// SPDX-License-Identifier: BSD-3-Clause
// The rule grammar shared by built-in rules and UCG_TUNE.
#include "select/tune.h"

#include <catch2/catch.hpp>

#include <cstdlib>

using namespace ucg::select;
using ucg::plan::Collective;
using ucg::topology::LevelKind;

TEST_CASE("the brief's example parses", "[select][tune]")
{
    auto set = parse_rules("bcast:0-8k:knomial:radix=4;allreduce:64k-inf:ring",
                           "test");
    REQUIRE(set.ok());
    REQUIRE(set->rules.size() == 2);
    const Rule &b = set->rules[0];
    CHECK(b.collective == Collective::kBcast);
    CHECK(!b.level);
    CHECK(b.min_bytes == 0);
    CHECK(b.max_bytes == 8192);
    CHECK(b.algorithm == "knomial");
    CHECK(b.radix == 4);
    const Rule &a = set->rules[1];
    CHECK(a.min_bytes == 65536);
    CHECK(a.max_bytes == kInfinity);
    CHECK(a.text == "allreduce:64k-inf:ring");
}

TEST_CASE("levels, wildcards and every parameter", "[select][tune]")
{
    auto set = parse_rules(" *@rack:1k-1m:chain:seg=16k,segments=4,"
                           "ranks=2-64 ;\n bcast@numa:0-inf:shm;",
                           "test");
    REQUIRE(set.ok());
    REQUIRE(set->rules.size() == 2);
    const Rule &r = set->rules[0];
    CHECK(!r.collective);
    CHECK(r.level == LevelKind::kSwitch);
    CHECK(r.segment_bytes == 16384);
    CHECK(r.segments == 4);
    CHECK(r.min_ranks == 2);
    CHECK(r.max_ranks == 64);
    CHECK(r.matches(Collective::kGather, LevelKind::kSwitch, 1024, 8));
    CHECK(!r.matches(Collective::kGather, LevelKind::kSwitch, 1 << 20, 8));
    CHECK(!r.matches(Collective::kGather, LevelKind::kSwitch, 1024, 65));
    CHECK(!r.matches(Collective::kGather, std::nullopt, 1024, 8));
    CHECK(set->find(Collective::kBcast, LevelKind::kNuma, 5, 4) ==
          &set->rules[1]);
}

TEST_CASE("malformed rules name the rule, column and expectation",
          "[select][tune]")
{
    struct Case {
        const char *text;
        const char *expect;
    };
    const Case cases[] = {
        {"bcast:0-8k:knomial;allreduce:64k-x:ring", "rule 2"},
        {"bcast:0-8k:knomial;allreduce:64k-x:ring", "column 34"},
        {"bcast:0-8k:knomial;allreduce:64k-x:ring", "or inf, got 'x'"},
        {"bcst:0-8k:knomial", "expected a collective"},
        {"bcast@cpu:0-8k:knomial", "column 7"},
        {"bcast:0-8k:knomial:radix=1", "radix >= 2"},
        {"bcast:0-8k:knomial:fanout=3", "unknown parameter 'fanout'"},
        {"bcast:8k-8k:knomial", "empty size range"},
        {"bcast:0:knomial", "expected '-'"},
        {"bcast:0-8k", "expected ':' and an algorithm"},
        {"bcast:0-8k:knomial:radix", "expected param=value"},
    };
    for (const Case &c : cases) {
        auto r = parse_rules(c.text, "UCG_TUNE");
        INFO(c.text);
        REQUIRE(!r.ok());
        CHECK_THAT(r.error().message,
                   Catch::Contains("UCG_TUNE") && Catch::Contains(c.expect));
    }
}

TEST_CASE("sizes parse and print with units", "[select][tune]")
{
    CHECK(parse_size("4096").value() == 4096);
    CHECK(parse_size("64k").value() == 65536);
    CHECK(parse_size("1M").value() == 1048576);
    CHECK(parse_size("2g").value() == (uint64_t(2) << 30));
    CHECK(parse_size("inf").value() == kInfinity);
    CHECK(!parse_size("1t").ok());
    CHECK(!parse_size("").ok());
    CHECK(format_size(65536) == "64k");
    CHECK(format_size(1000) == "1000");
}

TEST_CASE("built-in rules use the same grammar", "[select][tune]")
{
    auto again = parse_rules(builtin_rules_text(), "built-in");
    REQUIRE(again.ok());
    CHECK(builtin_rules().rules.size() == again->rules.size());
    CHECK(!builtin_rules().rules.empty());
    CHECK(builtin_rules().rules.back().algorithm == "auto");
}

TEST_CASE("UCG_TUNE is read from the environment", "[select][tune]")
{
    setenv("UCG_TUNE", "allreduce:0-inf:ring", 1);
    auto ok = rules_from_env();
    setenv("UCG_TUNE", "allreduce:0-inf", 1);
    auto bad = rules_from_env();
    unsetenv("UCG_TUNE");
    REQUIRE(ok.ok());
    REQUIRE(ok->rules.size() == 1);
    CHECK(!bad.ok());
    CHECK(rules_from_env()->rules.empty());
}
