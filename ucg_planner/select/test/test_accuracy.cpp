// SPDX-License-Identifier: BSD-3-Clause
// Issue 12, "right in its choices": over collectives x sizes x the
// synthetic topologies the tests use, the default choice simulates within
// 10% of the best registered alternative (the hierarchical plan and every
// costed flat variant, each forced by a rule and simulated), and every
// prediction, the choice's and each alternative's, is within 25% of its
// simulation.
// UCG_SWEEP_PRINT=1 prints the table of docs/decisions/0015 (chosen /
// best, predicted / simulated); UCG_SWEEP_ALL=1 each alternative.
#include "cost/simulator.h"
#include "select/selector.h"
#include "topology/synthetic.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

using namespace ucg;
using namespace ucg::select;
using plan::Collective;

namespace {

bool within(double ratio, double lo, double hi)
{
    return ratio >= lo && ratio <= hi;
}

double simulate_ns(const topology::Topology &t, const Decision &d)
{
    auto p = Selector(t, {}).build(d, std::nullopt);
    INFO((p.ok() ? "" : p.error().message));
    REQUIRE(p.ok());
    cost::SimConfig cfg;
    cfg.count = d.bytes;
    cfg.critical_path = false;
    cfg.reduce_ns_per_byte = kDefaultReduceNsPerByte;
    auto r = cost::simulate(*p, cost::Fabric{&t, {}}, cfg);
    INFO((r.ok() ? "" : r.error().message));
    REQUIRE(r.ok());
    return r->makespan_ns;
}

// The selector's options for c at `bytes`, with the simulation's costs:
// copies free (the simulator would also charge the bcast root's
// input-to-output copy, which the runtime elides for one buffer), gamma
// the default on both sides.
SelectOptions options(Collective c, uint64_t bytes)
{
    SelectOptions o{c, bytes, 0};
    o.copy_ns_per_byte = 0;
    return o;
}

Result<Decision> forced(const topology::Topology &t, Collective c,
                        uint64_t bytes, const std::string &alg)
{
    auto set = parse_rules(std::string(plan::to_string(c)) + ":0-inf:" + alg,
                           "UCG_TUNE");
    REQUIRE(set.ok());
    return Selector(t, std::move(set).value()).select(options(c, bytes));
}

std::string size_name(uint64_t b)
{
    return b >= (1u << 20)   ? std::to_string(b >> 20) + "m"
           : b >= (1u << 10) ? std::to_string(b >> 10) + "k"
                             : std::to_string(b);
}

// Every forced alternative's prediction is checked too, not only the
// choice's.
void sweep(const std::string &text, const std::vector<uint64_t> &sizes)
{
    const bool print = std::getenv("UCG_SWEEP_PRINT") != nullptr;
    const Collective colls[] = {
        Collective::kBcast,     Collective::kReduce,
        Collective::kAllreduce, Collective::kGather,
        Collective::kScatter,   Collective::kAllgather,
        Collective::kAlltoall,  Collective::kReduceScatter,
        Collective::kBarrier};
    {
        auto made = topology::make_synthetic(text);
        REQUIRE(made.ok());
        const topology::Topology &t = *made;
        for (Collective c : colls) {
            for (uint64_t bytes : sizes) {
                if (c == Collective::kBarrier && bytes != 8) {
                    continue;
                }
                const std::string key = std::string(plan::to_string(c)) + " " +
                                        size_name(bytes) + " " + text;
                INFO(key);
                auto d = Selector(t, {}).select(options(c, bytes));
                REQUIRE(d.ok());
                const double chosen = simulate_ns(t, *d);
                std::string best_name = d->chosen.algorithm;
                double best = chosen;
                std::vector<std::string> algs;
                if (algorithms::find_algorithm(c, "hierarchical") ||
                    c == Collective::kGather || c == Collective::kScatter) {
                    algs.push_back("hierarchical");
                }
                for (const Choice &f : d->flat) {
                    algs.push_back(f.algorithm +
                                   ":radix=" + std::to_string(f.radix) +
                                   ",segments=" + std::to_string(f.segments));
                }
                for (const std::string &a : algs) {
                    auto alt = forced(t, c, bytes, a);
                    if (!alt) {
                        continue;
                    }
                    const double s = simulate_ns(t, *alt);
                    const double alt_pred = alt->chosen.predicted_ns / s;
                    INFO(a << ": predicted / simulated " << alt_pred);
                    CHECK(within(alt_pred, 0.75, 1.25));
                    if (std::getenv("UCG_SWEEP_ALL") != nullptr) {
                        std::printf("ALT | %s | %s | %.1f | %.2f |\n",
                                    key.c_str(), a.c_str(), s / 1000,
                                    alt->chosen.predicted_ns / s);
                    }
                    if (s < best) {
                        best = s;
                        best_name = a;
                    }
                }
                const double ratio = chosen / best;
                const double pred = d->chosen.predicted_ns / chosen;
                if (print) {
                    std::printf("| %s | %s | %.1f | %s | %.1f | %.2f | %.2f "
                                "|\n",
                                key.c_str(), d->chosen.algorithm.c_str(),
                                chosen / 1000, best_name.c_str(), best / 1000,
                                ratio, pred);
                }
                CHECK(ratio <= 1.10);
                INFO("predicted / simulated " << pred);
                CHECK(within(pred, 0.75, 1.25));
            }
        }
    }
}

// The decision a tune rule forces on a machine.
Decision forced(const topology::Topology &t, const char *rule,
                const SelectOptions &o)
{
    auto set = parse_rules(rule, "UCG_TUNE");
    REQUIRE(set.ok());
    auto d = Selector(t, std::move(set).value()).select(o);
    REQUIRE(d.ok());
    return *d;
}

// A forced decision's prediction is within 25% of its simulation.
void check_forced(const topology::Topology &t, const char *rule,
                  const SelectOptions &o)
{
    const Decision d = forced(t, rule, o);
    const double pred = d.chosen.predicted_ns / simulate_ns(t, d);
    INFO("predicted / simulated " << pred);
    CHECK(within(pred, 0.75, 1.25));
}
} // namespace

// The 100- and 256-rank machines take minutes to simulate every variant
// (O(P^2) exchanges), 16 MiB on 64 ranks 10 s: UCG_SWEEP_TOPO (and
// UCG_SWEEP_PRINT) sweep one machine by hand.
TEST_CASE("chosen within 10% of the best, predicted within 25%: one host of 8",
          "[accuracy]")
{
    sweep("nodes=1,ppn=8", {8, 64 << 10, 1 << 20, 16 << 20});
}

TEST_CASE("chosen within 10% of the best, predicted within 25%: 8 hosts of 1",
          "[accuracy]")
{
    sweep("nodes=8,ppn=1", {8, 64 << 10, 1 << 20, 16 << 20});
}

TEST_CASE("chosen within 10% of the best, predicted within 25%: 8 hosts of 8",
          "[accuracy]")
{
    sweep("nodes=8,ppn=8", {8, 64 << 10, 1 << 20});
}

// Hosts that do not hold consecutive ranks (rank r on host r % 4): the
// cost functions count each round's messages between hosts from the
// placement (CostInput::hosts), and walk the trees (knomial, binary,
// two-tree) and chains message by message (costs.cpp tree_walk,
// chain_placed): every alternative within 25% (15 of 212 were outside
// before).
TEST_CASE("chosen within 10% of the best, predicted within 25%: 4 hosts of 4 "
          "round robin",
          "[accuracy]")
{
    sweep("nodes=4,ppn=4,order=roundrobin", {8, 64 << 10, 1 << 20, 16 << 20});
}

TEST_CASE("chosen within 10% of the best, predicted within 25%: 4 hosts of 4 "
          "in random order",
          "[accuracy]")
{
    sweep("nodes=4,ppn=4,order=random,seed=7",
          {8, 64 << 10, 1 << 20, 16 << 20});
}

// Hosts of 2 ranks in random order: the hierarchical reduce's binary top
// level sends each chunk once (it was priced sending two: 1.31x).
TEST_CASE("chosen within 10% of the best, predicted within 25%: 16 hosts of "
          "2 in random order",
          "[accuracy]")
{
    sweep("nodes=16,ppn=2,order=random,seed=5",
          {8, 64 << 10, 1 << 20, 16 << 20});
}

// Racks of hosts in random order: each message between hosts at its own
// link (rack switch or top) where the costs follow messages, else the
// mean of host 0's links to the others. One case per size: the three took
// over ctest's 60 s in one case under ASan on a loaded CI machine.
namespace {
const char *const kRacksRandom = "racks=2,nodes=4,ppn=8,order=random,seed=1";
} // namespace

TEST_CASE("chosen within 10% of the best, predicted within 25%: racks of "
          "hosts in random order, 8 B",
          "[accuracy]")
{
    sweep(kRacksRandom, {8});
}

TEST_CASE("chosen within 10% of the best, predicted within 25%: racks of "
          "hosts in random order, 64 KiB",
          "[accuracy]")
{
    sweep(kRacksRandom, {64 << 10});
}

TEST_CASE("chosen within 10% of the best, predicted within 25%: racks of "
          "hosts in random order, 1 MiB",
          "[accuracy]")
{
    sweep(kRacksRandom, {1 << 20});
}

TEST_CASE("the order-preserving reduce is priced for its root", "[accuracy]")
{
    // Root 0: one k-nomial tree of every rank; another root: two trees
    // beside each other and one more message into the root.
    auto made = topology::make_synthetic("nodes=8,ppn=8");
    REQUIRE(made.ok());
    for (int root : {0, 5, 32, 63}) {
        for (uint64_t bytes : {uint64_t{8}, uint64_t{64} << 10}) {
            INFO("root " << root << ", " << bytes << " B");
            SelectOptions o = options(Collective::kReduce, bytes);
            o.root = root;
            check_forced(*made, "reduce:0-inf:ordered_knomial:radix=4", o);
        }
    }
}

TEST_CASE("racks of hosts in any order: forced algorithms are priced within "
          "25%",
          "[accuracy]")
{
    // Random placement under racks: a message between two hosts crosses
    // the top switch or only its rack's, at the mean over the hosts'
    // links (was the top link: k-nomial bcast 1.29-1.50x its simulation,
    // 100 of 212 alternatives outside 25%). The hierarchical exchanges'
    // gather edges follow their levels' shapes (linear: a star; were
    // priced as binomial trees, alltoall 8 B 1.27x on every rack machine).
    // A reduce_scatter's top leaders take the rack level's chunks and the
    // ring's pieces through one NIC (was 0.74x). A linear root's rack
    // mates on other hosts cross only the rack's switch (was 1.27x), and
    // so do recursive k-ing's rounds whose exchanges stay inside racks
    // though their spans (3^j) do not fit them (was 1.51x). The two
    // trees' levels inside racks, and the busiest host's edges but one,
    // cross only the rack's switch (was 1.59x).
    struct Case {
        const char *topo;
        Collective c;
        uint64_t bytes;
        const char *rule;
    };
    const Case cases[] = {
        {"racks=2,nodes=4,ppn=8,order=random,seed=1", Collective::kBcast, 8,
         "bcast:0-inf:knomial:radix=2"},
        {"racks=2,nodes=4,ppn=8,order=random,seed=1", Collective::kBcast, 8,
         "bcast:0-inf:linear"},
        {"racks=2,nodes=4,ppn=8,order=random,seed=2", Collective::kAllreduce,
         64 << 10, "allreduce:0-inf:recursive_doubling"},
        {"racks=2,nodes=4,ppn=8", Collective::kAlltoall, 8,
         "alltoall:0-inf:hierarchical"},
        {"racks=2,nodes=4,ppn=8,order=random,seed=1", Collective::kAlltoall, 8,
         "alltoall:0-inf:hierarchical"},
        {"racks=2,nodes=4,ppn=8", Collective::kReduceScatter, 1 << 20,
         "reduce_scatter:0-inf:hierarchical"},
        {"racks=2,nodes=4,ppn=8", Collective::kGather, 1 << 20,
         "gather:0-inf:linear"},
        {"racks=2,nodes=4,ppn=8", Collective::kAllreduce, 64 << 10,
         "allreduce:0-inf:recursive_k:radix=3"},
        {"racks=2,nodes=4,ppn=8", Collective::kBcast, 1 << 20,
         "bcast:0-inf:two_tree"},
    };
    for (const Case &k : cases) {
        INFO(k.topo << ": " << k.rule << " at " << k.bytes << " B");
        auto made = topology::make_synthetic(k.topo);
        REQUIRE(made.ok());
        check_forced(*made, k.rule, options(k.c, k.bytes));
    }
}

// Two hosts of four: the two-tree bcast's first chunk is walked (its
// closed form took 0.39-0.50x the simulation at 8 B-4 KiB, and was the
// default bcast of 8-256 B there at 1.9x the hierarchical plan).
TEST_CASE("two hosts of four: the two-tree bcast is priced within 25%",
          "[accuracy]")
{
    auto made = topology::make_synthetic("nodes=2,ppn=4");
    REQUIRE(made.ok());
    for (uint64_t bytes : {uint64_t{8}, uint64_t{4096}, uint64_t{1} << 20}) {
        INFO(bytes << " B");
        check_forced(*made, "bcast:0-inf:two_tree",
                     options(Collective::kBcast, bytes));
    }
}

TEST_CASE("racks of consecutive hosts: Bruck's rounds inside racks cross "
          "their switches",
          "[accuracy]")
{
    // Along one rank's chain back through the rounds at distances inside
    // a rack, the rack boundary is crossed once: those rounds are priced
    // on the rack's switch but one. Before, every round between hosts
    // was priced at the top link, and the default alltoall of 8 B took
    // the hierarchical plan (12.0 us simulated) over Bruck (10.9).
    auto made = topology::make_synthetic("racks=2,nodes=4,ppn=8");
    REQUIRE(made.ok());
    auto chosen = Selector(*made, {}).select(options(Collective::kAlltoall, 8));
    REQUIRE(chosen.ok());
    const Decision bruck = forced(*made, "alltoall:0-inf:bruck",
                                  options(Collective::kAlltoall, 8));
    const double best = simulate_ns(*made, bruck);
    INFO("chosen " << chosen->chosen.algorithm);
    CHECK(simulate_ns(*made, *chosen) <= 1.10 * best);
    CHECK(within(bruck.chosen.predicted_ns / best, 0.9, 1.1));
}

TEST_CASE("default within 10% of the best: one machine by hand", "[.sweep]")
{
    const char *one = std::getenv("UCG_SWEEP_TOPO");
    if (one != nullptr) {
        sweep(one, {8, 64 << 10, 1 << 20, 16 << 20});
    }
}
