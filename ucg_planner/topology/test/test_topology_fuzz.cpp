// SPDX-License-Identifier: BSD-3-Clause
// Seeded mutants of every topology input (synthetic strings, switch files,
// ibnetdiscover output, locality records) under ASan+UBSan in the CI: each
// is refused with a message or gives a topology whose queries answer, and
// nothing overflows. UCG_FUZZ_ROUNDS sets the number of mutants.
#include "topology/synthetic.h"
#include "topology/topo_file.h"
#include "topology/topology.h"

#include <catch2/catch.hpp>

#include <climits>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace ucg::topology;

namespace {

int rounds()
{
    const char *v = std::getenv("UCG_FUZZ_ROUNDS");
    return v != nullptr && *v != '\0' ? std::atoi(v) : 3000;
}

const char *const kSeeds[] = {
    "racks=2,nodes=4,ppn=8,sockets=2,numa=2,order=roundrobin",
    "nodes=3,ppn=5",
    "switch leaf0 n0 n1 # rack\nswitch leaf1 n2\n",
    "Switch\t36 \"S-0002c90200412ab0\"\t\t# \"leaf-a\" enhanced port 0\n"
    "[1]\t\"H-0002c9030004a2f0\"[1](2c9030004a2f1) \t\t# \"node01 HCA-1\"\n"
    "Ca\t2 \"H-0002c9030004a300\"\t\t# \"node02 HCA-1\"\n"
    "[1](2c9030004a301) \t\"S-0002c90200412ab0\"[3]\t\t# \"leaf-a\"\n",
};

const char *const kNasty[] = {"0",           "-1",         "2147483647",
                              "-2147483648", "4294967296", "65536",
                              "99999999999", "",           "1"};

std::string mutate(std::string s, std::mt19937_64 &rng)
{
    auto pick = [&rng](std::size_t n) {
        return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
    };
    const int n = 1 + static_cast<int>(pick(3));
    for (int k = 0; k < n && !s.empty(); ++k) {
        const std::size_t at = pick(s.size());
        switch (pick(5)) {
        case 0: { // a number becomes a nasty one
            std::size_t b = at;
            while (b < s.size() && (s[b] < '0' || s[b] > '9')) {
                ++b;
            }
            std::size_t e = b;
            while (e < s.size() && s[e] >= '0' && s[e] <= '9') {
                ++e;
            }
            s.replace(b, e - b, kNasty[pick(std::size(kNasty))]);
            break;
        }
        case 1:
            s.erase(at, pick(8) + 1);
            break;
        case 2:
            s.insert(at, s.substr(pick(s.size()), pick(12) + 1));
            break;
        case 3: {
            static const char kChars[] = "=,:#\"[]()\n\t 0-9az";
            s[at] = kChars[pick(sizeof(kChars) - 1)];
            break;
        }
        default:
            s.resize(at);
            break;
        }
    }
    return s;
}

// Queries a built topology answers for any pair of ranks.
void exercise(const Topology &t)
{
    REQUIRE(t.size() > 0);
    const int last = t.size() - 1;
    (void)t.link(0, last);
    (void)t.host_of(last);
    (void)t.switch_of(last);
    for (const Level &l : t.levels()) {
        CHECK(l.domain_of_rank.size() == static_cast<std::size_t>(t.size()));
    }
}

} // namespace

TEST_CASE("mutated topology texts are refused or build a usable topology",
          "[topology][fuzz]")
{
    const int n = rounds();
    int built = 0, refused = 0;
    for (int round = 0; round < n; ++round) {
        std::mt19937_64 rng(0x70b0000u + static_cast<std::uint64_t>(round));
        const std::size_t which =
            static_cast<std::size_t>(round) % std::size(kSeeds);
        const std::string text = mutate(kSeeds[which], rng);
        INFO("round " << round << ": " << text);
        if (which < 2) {
            // Synthetic strings: keep the rank count testable.
            auto spec = parse_synthetic(text);
            if (!spec) {
                ++refused;
                CHECK_FALSE(spec.error().message.empty());
                continue;
            }
            if (spec->ranks() > 4096) {
                // Large machines build too (ucg_plan_bench: 65,536 ranks);
                // under the sanitizers one takes seconds, so the fuzz
                // keeps to what it can repeat thousands of times.
                CHECK(spec->ranks() > 0);
                continue;
            }
            auto t = make_synthetic(text);
            if (!t) {
                ++refused;
                CHECK_FALSE(t.error().message.empty());
                continue;
            }
            ++built;
            exercise(*t);
            continue;
        }
        auto map = parse_topology_file(text);
        if (!map) {
            ++refused;
            CHECK_FALSE(map.error().message.empty());
            continue;
        }
        ++built;
        std::vector<Locality> locs;
        for (const auto &[host, sw] : *map) {
            locs.push_back({host, 0, 0, {}});
        }
        if (!locs.empty()) {
            auto t = Topology::from_localities(locs, &*map);
            REQUIRE(t);
            exercise(*t);
        }
    }
    CHECK(built > n / 20);
    CHECK(refused > n / 20);
}

TEST_CASE("locality records with extreme ids are refused or kept apart",
          "[topology][fuzz]")
{
    const int values[] = {-1, 0, 1, INT_MAX, INT_MIN, INT_MAX - 1, -2};
    std::mt19937_64 rng(0x10c);
    for (int round = 0; round < rounds() / 10; ++round) {
        std::vector<Locality> locs(1 + rng() % 6);
        for (auto &l : locs) {
            l.host = "h" + std::to_string(rng() % 3);
            l.socket = values[rng() % std::size(values)];
            l.numa = values[rng() % std::size(values)];
        }
        auto t = Topology::from_localities(locs, nullptr);
        bool bad = false;
        for (const auto &l : locs) {
            bad = bad || l.socket < -1 || l.numa < -1 ||
                  l.socket >= kMaxLocalityId || l.numa >= kMaxLocalityId;
        }
        INFO("round " << round);
        CHECK(t.ok() == !bad);
        if (t) {
            exercise(*t);
        }
    }
}

TEST_CASE("a rank whose host no switch lists is refused by name", "[topology]")
{
    const SwitchMap map{{"n0", "leaf0"}, {"n9", "leaf1"}};
    auto t =
        Topology::from_localities({{"n0", 0, 0, {}}, {"n1", 0, 0, {}}}, &map);
    REQUIRE_FALSE(t);
    CHECK_THAT(t.error().message, Catch::Contains("n1"));
    // Hosts of the file that no rank runs on are fine (a cluster's file).
    t = Topology::from_localities({{"n0", 0, 0, {}}}, &map);
    CHECK(t);
}
