// SPDX-License-Identifier: BSD-3-Clause
// Switch topology files: simple format and ibnetdiscover subset.
#include "topology/topo_file.h"

#include <catch2/catch.hpp>

using namespace ucg::topology;

TEST_CASE("simple switch file maps hosts to switches", "[topology]")
{
    auto m = parse_topology_file("# leaf switches\n"
                                 "switch leaf0 n0 n1  # rack 0\n"
                                 "\n"
                                 "switch leaf1\tn2\n");
    REQUIRE(m.ok());
    CHECK(m->size() == 3);
    CHECK(m->at("n1") == "leaf0");
    CHECK(m->at("n2") == "leaf1");
}

TEST_CASE("malformed switch files name the line and column", "[topology]")
{
    auto typo = parse_switch_file("switch s0 a\n  swtch s1 b\n");
    REQUIRE(!typo.ok());
    CHECK_THAT(typo.error().message, Catch::Contains("line 2") &&
                                         Catch::Contains("column 3") &&
                                         Catch::Contains("expected 'switch"));
    auto empty = parse_switch_file("switch s0\n");
    REQUIRE(!empty.ok());
    CHECK_THAT(empty.error().message, Catch::Contains("at least one host"));
    auto dup = parse_switch_file("switch s0 a\nswitch s1 b a\n");
    REQUIRE(!dup.ok());
    CHECK_THAT(dup.error().message,
               Catch::Contains("line 2") && Catch::Contains("already listed on "
                                                            "line 1"));
}

TEST_CASE("ibnetdiscover output maps hosts to leaf switches", "[topology]")
{
    const char *text =
        "#\n# Topology file: generated on Mon Jan  1 00:00:00 2024\n#\n"
        "vendid=0x2c9\ndevid=0xc738\n"
        "switchguid=0x2c90200412ab0(2c90200412ab0)\n"
        "Switch\t36 \"S-0002c90200412ab0\"\t\t# \"leaf-a\" enhanced port 0 "
        "lid 4 lmc 0\n"
        "[1]\t\"H-0002c9030004a2f0\"[1](2c9030004a2f1) \t\t# \"node01 "
        "HCA-1\" lid 3 4xQDR\n"
        "[2]\t\"S-0002c90200412ac0\"[7]\t\t# \"spine\" lid 9 4xQDR\n"
        "\n"
        "vendid=0x2c9\n"
        "Ca\t2 \"H-0002c9030004a300\"\t\t# \"node02 HCA-1\"\n"
        "[1](2c9030004a301) \t\"S-0002c90200412ab0\"[3]\t\t# lid 5 lmc 0 "
        "\"leaf-a\" lid 4 4xQDR\n";
    auto m = parse_topology_file(text);
    REQUIRE(m.ok());
    CHECK(m->size() == 2);
    CHECK(m->at("node01") == "leaf-a");
    CHECK(m->at("node02") == "leaf-a");
}

TEST_CASE("malformed ibnetdiscover lines are reported", "[topology]")
{
    auto stray = parse_ibnetdiscover("[1]\t\"H-01\"[1]\t# \"n1 HCA\"\n");
    REQUIRE(!stray.ok());
    CHECK_THAT(stray.error().message,
               Catch::Contains("line 1") && Catch::Contains("outside"));
    auto bad = parse_ibnetdiscover("Switch\t36 S-01 no quotes\n");
    REQUIRE(!bad.ok());
    CHECK_THAT(bad.error().message, Catch::Contains("expected 'Switch"));
    auto junk = parse_ibnetdiscover("Switch 2 \"S-1\" # \"x\"\nfoo bar\n");
    REQUIRE(!junk.ok());
    CHECK_THAT(junk.error().message, Catch::Contains("line 2"));
}
