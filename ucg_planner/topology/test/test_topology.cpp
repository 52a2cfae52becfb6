// SPDX-License-Identifier: BSD-3-Clause
// Level model, synthetic strings and leader partitions.
#include "topology/synthetic.h"

#include <catch2/catch.hpp>

using namespace ucg::topology;

namespace {

Topology synth(const char *text)
{
    auto t = make_synthetic(text);
    REQUIRE(t.ok());
    return std::move(t).value();
}

std::vector<LevelKind> kinds(const Topology &t)
{
    std::vector<LevelKind> out;
    for (const Level &l : t.levels()) {
        out.push_back(l.kind);
    }
    return out;
}

} // namespace

TEST_CASE("synthetic string sets every key", "[topology]")
{
    auto s = parse_synthetic("racks=4,nodes=8,ppn=16,sockets=2,numa=2,"
                             "order=roundrobin");
    REQUIRE(s.ok());
    CHECK(s->racks == 4);
    CHECK(s->nodes == 8);
    CHECK(s->ppn == 16);
    CHECK(s->sockets == 2);
    CHECK(s->numa == 2);
    CHECK(s->order == RankOrder::kRoundRobin);
    CHECK(s->ranks() == 512);
}

TEST_CASE("malformed synthetic strings name column, key and expectation",
          "[topology]")
{
    auto bad_value = parse_synthetic("racks=4,nodes=x");
    REQUIRE(!bad_value.ok());
    CHECK_THAT(bad_value.error().message,
               Catch::Contains("column 15") && Catch::Contains("'nodes'") &&
                   Catch::Contains("positive integer"));
    auto bad_key = parse_synthetic("racks=4,cores=2");
    REQUIRE(!bad_key.ok());
    CHECK_THAT(bad_key.error().message,
               Catch::Contains("column 9") && Catch::Contains("'cores'"));
    auto no_eq = parse_synthetic("racks=4,,ppn=2");
    REQUIRE(!no_eq.ok());
    CHECK_THAT(no_eq.error().message, Catch::Contains("expected key=value"));
    auto order = parse_synthetic("order=zigzag");
    REQUIRE(!order.ok());
    CHECK_THAT(order.error().message,
               Catch::Contains("block, roundrobin or random"));
    CHECK(!parse_synthetic("nodes=0").ok());
    CHECK(!parse_synthetic("racks=65536,nodes=65536,ppn=2").ok());
    // One value per key, aliases included (issue 12).
    auto twice = parse_synthetic("nodes=2,ppn=4,nodes=3");
    REQUIRE(!twice.ok());
    CHECK_THAT(twice.error().message, Catch::Contains("column 15") &&
                                          Catch::Contains("'nodes'") &&
                                          Catch::Contains("given twice"));
    CHECK(!parse_synthetic("racks=2,switches=2").ok());
    CHECK(!parse_synthetic("order=block,order=random").ok());
}

TEST_CASE("levels repeat no partition and end with one domain", "[topology]")
{
    Topology t = synth("racks=4,nodes=8,ppn=16,sockets=2");
    CHECK(t.size() == 512);
    // numa=1 per socket repeats the socket partition: dropped.
    CHECK(kinds(t) ==
          std::vector<LevelKind>{LevelKind::kSocket, LevelKind::kHost,
                                 LevelKind::kSwitch, LevelKind::kWorld});
    CHECK(t.levels().back().domains.size() == 1);
    CHECK(t.level(LevelKind::kHost)->domains.size() == 32);
    // Merged levels keep the outer name and the inner link class.
    CHECK(t.levels()[0].link.latency_ns ==
          default_link_cost(LevelKind::kNuma).latency_ns);
    CHECK(t.num_hosts() == 32);
    CHECK(t.num_switches() == 4);
    CHECK(t.host_of(17) == 1);
    CHECK(t.switch_of(130) == 1);
    // One host: host is the top level.
    Topology one = synth("ppn=8,sockets=2,numa=2");
    CHECK(kinds(one) == std::vector<LevelKind>{LevelKind::kNuma,
                                               LevelKind::kSocket,
                                               LevelKind::kHost});
}

TEST_CASE("link level is the innermost shared domain", "[topology]")
{
    Topology t = synth("racks=2,nodes=2,ppn=4,sockets=2");
    CHECK(t.link_level(0, 1).kind == LevelKind::kSocket);
    CHECK(t.link_level(0, 2).kind == LevelKind::kHost);
    CHECK(t.link_level(0, 4).kind == LevelKind::kSwitch);
    CHECK(t.link_level(0, 8).kind == LevelKind::kWorld);
    CHECK(t.link(0, 8).alpha_ns() > t.link(0, 4).alpha_ns());
    t.set_link_cost(LevelKind::kWorld, LinkCost{1, 2, 3, 4});
    CHECK(t.link(3, 15).ns_per_byte == 4);
}

TEST_CASE("link costs parse from level entries and lists and errors name "
          "the part",
          "[topology]")
{
    auto one = parse_link("switch=1500,150,200,0.5");
    REQUIRE(one);
    CHECK(one->kind == LevelKind::kSwitch);
    CHECK(one->cost.latency_ns == 1500);
    CHECK(one->cost.overhead_ns == 150);
    CHECK(one->cost.gap_ns == 200);
    CHECK(one->cost.ns_per_byte == 0.5);
    auto two = parse_links("host=1,2,3,4;;world=5,6,7,8;");
    REQUIRE(two);
    REQUIRE(two->size() == 2);
    CHECK((*two)[1].kind == LevelKind::kWorld);
    CHECK((*two)[1].cost.ns_per_byte == 8);
    CHECK(parse_links("")->empty());
    auto twice = parse_links("host=1,2,3,4;host=1,2,3,5");
    REQUIRE_FALSE(twice);
    CHECK_THAT(twice.error().message, Catch::Contains("'host' is given twice"));
    CHECK_THAT(parse_links("host=1,2,3").error().message,
               Catch::Contains("expected 4 values"));
    CHECK_THAT(parse_links("host=1,2,3,-4").error().message,
               Catch::Contains("'-4'"));
    CHECK_THAT(parse_links("rack9=1,2,3,4").error().message,
               Catch::Contains("unknown level"));
}

TEST_CASE("round-robin order puts consecutive ranks on different hosts",
          "[topology]")
{
    Topology t = synth("racks=2,nodes=2,ppn=2,order=roundrobin");
    const Level *host = t.level(LevelKind::kHost);
    REQUIRE(host != nullptr);
    CHECK(host->domains[0].ranks == std::vector<int>{0, 4});
    CHECK(t.link_level(0, 1).kind == LevelKind::kSwitch);
    CHECK(t.link_level(0, 2).kind == LevelKind::kWorld);
}

TEST_CASE("random order is a seeded permutation of the slots", "[topology]")
{
    Topology a = synth("nodes=4,ppn=4,order=random,seed=7");
    Topology b = synth("nodes=4,ppn=4,order=random,seed=7");
    Topology c = synth("nodes=4,ppn=4,order=random,seed=8");
    std::vector<int> ha, hb, hc, count(4);
    for (int r = 0; r < 16; ++r) {
        ha.push_back(a.host_of(r));
        hb.push_back(b.host_of(r));
        hc.push_back(c.host_of(r));
        ++count[size_t(a.host_of(r))];
    }
    CHECK(ha == hb);
    CHECK(ha != hc);
    CHECK(count == std::vector<int>{4, 4, 4, 4});
    CHECK(ha !=
          std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
}

TEST_CASE("hierarchy groups leaders of the level below", "[topology]")
{
    Topology t = synth("racks=2,nodes=2,ppn=4,order=roundrobin");
    auto parts = t.hierarchy({});
    REQUIRE(parts.size() == 3);
    CHECK(parts[0].kind == LevelKind::kHost);
    CHECK(parts[0].participants == 16);
    CHECK(parts[0].groups[0].ranks == std::vector<int>{0, 4, 8, 12});
    CHECK(parts[1].kind == LevelKind::kSwitch);
    CHECK(parts[1].participants == 4);
    CHECK(parts[1].groups[0].ranks == std::vector<int>{0, 1});
    CHECK(parts[2].groups.size() == 1);
    CHECK(parts[2].groups[0].ranks == std::vector<int>{0, 2});
}

TEST_CASE("the root leads every group holding it", "[topology]")
{
    Topology t = synth("racks=2,nodes=2,ppn=4");
    auto parts = t.hierarchy({.root = 7, .keep_trivial = false});
    REQUIRE(parts.size() == 3);
    CHECK(parts[0].groups[1].leader == 7);
    CHECK(parts[0].groups[0].leader == 0);
    CHECK(parts[1].groups[0].ranks == std::vector<int>{0, 7});
    CHECK(parts[2].groups[0].ranks == std::vector<int>{7, 8});
    CHECK(parts[2].groups[0].leader == 7);
}

TEST_CASE("localities with unknown ids and switch maps", "[topology]")
{
    std::vector<Locality> ranks = {{"a", -1, -1, ""},
                                   {"b", -1, -1, ""},
                                   {"a", -1, -1, ""},
                                   {"c", -1, -1, ""}};
    SwitchMap sw = {{"a", "s1"}, {"b", "s1"}, {"c", "s2"}};
    auto t = Topology::from_localities(ranks, &sw);
    REQUIRE(t.ok());
    CHECK(t->link_level(0, 2).kind == LevelKind::kHost);
    CHECK(t->link_level(0, 1).kind == LevelKind::kSwitch);
    CHECK(t->link_level(0, 3).kind == LevelKind::kWorld);
    auto no_map = Topology::from_localities(ranks, nullptr);
    REQUIRE(no_map.ok());
    CHECK(no_map->link_level(0, 3).kind == LevelKind::kWorld);
    CHECK(no_map->level(LevelKind::kSwitch) == nullptr);
    ranks[1].host.clear();
    auto bad = Topology::from_localities(ranks, nullptr);
    REQUIRE(!bad.ok());
    CHECK_THAT(bad.error().message, Catch::Contains("rank 1"));
}

TEST_CASE("65,536 ranks build in a few levels", "[topology]")
{
    Topology t = synth("racks=16,nodes=64,ppn=64,sockets=2");
    CHECK(t.size() == 65536);
    auto parts = t.hierarchy({});
    REQUIRE(parts.size() == 4);
    CHECK(parts[3].groups[0].ranks.size() == 16);
}
