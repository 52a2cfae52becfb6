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

TEST_CASE("rules that can never apply are refused, naming the rule",
          "[select][tune]")
{
    struct Case {
        const char *text;
        const char *expect;
    };
    const Case cases[] = {
        // An algorithm the collective does not have.
        {"bcast:0-8k:knomial;bcast:8k-inf:ring",
         "rule 2 ('bcast:8k-inf:ring'), column 33: no algorithm 'ring' for "
         "bcast"},
        {"*:0-inf:fancy", "no algorithm 'fancy' for any collective"},
        {"scan:0-inf:hierarchical", "no algorithm 'hierarchical' for scan"},
        // A radix the algorithm does not read (radix=2 is neutral).
        {"allgather:0-inf:ring:radix=4", "radix=4: 'ring' takes no radix"},
        {"*:0-inf:bruck:radix=3", "'bruck' takes no radix"},
        {"bcast:0-inf:auto:radix=4", "the cost model picks the radix"},
        // Segments for an algorithm that does not pipeline (segments=1 is
        // neutral).
        {"allgather:0-inf:ring:segments=4",
         "segments=4: 'ring' does not pipeline"},
        {"bcast:0-inf:knomial:seg=16k", "seg=16384: 'knomial' does not"},
        // Level rules: a shape that does not exist or does not fit.
        {"bcast@host:0-inf:ring", "unknown level shape 'ring'"},
        {"scatter@host:0-inf:shm", "does not apply to a scatter level"},
        {"gather@host:0-inf:chain", "does not apply to a gather level"},
        {"bcast@host:0-inf:chain:radix=4", "'chain' takes no radix"},
        {"scan@host:0-inf:linear", "scan has no hierarchical algorithm"},
        {"bcast@world:0-inf:rabenseifner",
         "unknown level shape 'rabenseifner'"},
        {"barrier@world:0-inf:recursive_doubling",
         "unknown level shape 'recursive_doubling'"},
        {"*@world:0-inf:rabenseifner", "unknown level shape 'rabenseifner'"},
        // Empty ranges.
        {"bcast:64k-8k:knomial", "empty size range"},
        {"bcast:0-8k:knomial:ranks=8-4", "expected ranks=LO-HI"},
    };
    for (const Case &c : cases) {
        auto r = parse_rules(c.text, "UCG_TUNE");
        INFO(c.text);
        REQUIRE(!r.ok());
        CHECK_THAT(r.error().message, Catch::Contains("UCG_TUNE: rule") &&
                                          Catch::Contains(c.expect));
    }
    // The same algorithms where they exist, and radix=2 anywhere (what a
    // printed decision says of an algorithm without a radix).
    for (const char *text :
         {"allgather:0-inf:ring:radix=2", "*:0-inf:ring:radix=2",
          "*:0-inf:knomial:radix=4", "bcast:0-inf:hierarchical:radix=4",
          "gather@host:0-inf:shm", "gather:0-inf:hierarchical",
          "bcast@host:0-inf:knomial:radix=4", "*@host:0-inf:chain",
          "allgather:0-inf:ring:segments=1", "bcast:0-inf:chain:segments=8",
          "allreduce:0-inf:hierarchical:seg=64k", "bcast:0-inf:shm:segments=4",
          "bcast:0-inf:two_tree:segments=16",
          "allreduce@world:0-inf:rabenseifner",
          "allreduce@switch:0-inf:recursive_doubling"}) {
        INFO(text);
        CHECK(parse_rules(text, "UCG_TUNE").ok());
    }
}

TEST_CASE("a rule an earlier one shadows entirely is a warning",
          "[select][tune]")
{
    auto set = parse_rules("*:0-inf:auto:ranks=2-64;bcast:8k-1m:knomial:"
                           "ranks=4-8;bcast:0-inf:linear;bcast@host:0-inf:"
                           "linear",
                           "UCG_TUNE");
    REQUIRE(set.ok());
    CHECK(set->rules.size() == 4);
    REQUIRE(set->warnings.size() == 1);
    CHECK(set->warnings[0] ==
          "UCG_TUNE: rule 2 ('bcast:8k-1m:knomial:ranks=4-8') never applies: "
          "rule 1 ('*:0-inf:auto:ranks=2-64') matches everything it does");
    CHECK(parse_rules("bcast:0-8k:knomial;bcast:4k-inf:linear", "t")
              ->warnings.empty());
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
