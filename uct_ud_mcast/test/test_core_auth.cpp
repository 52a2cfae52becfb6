// SPDX-License-Identifier: BSD-3-Clause
// Packet authentication in the core (issue 29): an attacker that sees
// every packet of a group and sends its own versions first (data with
// other bytes, ACKs that claim everything, READY with another epoch,
// ABORT) without the group's key changes nothing a member delivers or
// does; only the drop counters move. A captured packet sent again later
// is a duplicate or stale.
#include "forge.h"
#include "group_sim.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace uct_ud_mcast;
using namespace uct_ud_mcast::test;

namespace {

MacKey key_of(uint8_t fill)
{
    MacKey k;
    k.fill(fill);
    return k;
}

} // namespace

TEST_CASE("auth: packets without the group's key change nothing a member "
          "delivers or does",
          "[ud_mcast][core][trust]")
{
    SimNet net(4, Faults{0.02, 0.01, 0.05, 0}, 7);
    SessionConfig cfg = sim_config(4, 0xa11ce);
    cfg.tx_key = cfg.rx_key = key_of(0x42);
    const MacKey guess = key_of(0x43); // the attacker's: not the group's
    GroupSim sim(net, cfg, 4, random_script(4, 60, cfg.max_payload, 5));
    uint64_t forged = 0;
    net.filter = [&](unsigned from, unsigned to, const uint8_t *p, size_t n) {
        if (forged < 20000) {
            for (auto &f : forgeries(p, n, guess)) {
                net.inject(from, to, std::move(f), 1'000); // arrives first
                ++forged;
            }
        }
        return false;
    };
    REQUIRE(sim.run(120'000'000'000ull));
    for (int i = 0; i < 1000; ++i) {
        net.step(); // what is still on the wire
    }
    CHECK(sim.verify().empty());
    uint64_t bad_mac = 0;
    for (unsigned m = 0; m < 4; ++m) {
        bad_mac += net.engine(m).counters().drop_bad_mac;
        CHECK(sim.channel(m).session().state() == Status::kOk);
    }
    CHECK(forged > 100);
    CHECK(bad_mac == forged);
}

TEST_CASE("auth: a packet sealed with the group's key passes (the check is "
          "the key, not the bytes)",
          "[ud_mcast][core][trust]")
{
    // The same attack with the key: the forged data is taken (what the
    // MAC prevents above), so the test above fails if it is not checked.
    SimNet net(3, Faults{}, 9);
    SessionConfig cfg = sim_config(3, 0xb0b);
    cfg.tx_key = cfg.rx_key = key_of(0x42);
    GroupSim sim(net, cfg, 4, std::vector<ScriptMsg>(40, ScriptMsg{0, 40}));
    net.filter = [&](unsigned from, unsigned to, const uint8_t *p, size_t n) {
        if (to == 1 && p[3] == static_cast<uint8_t>(PacketType::kData)) {
            net.inject(from, to, forgeries(p, n, cfg.tx_key)[0], 1'000);
        }
        return false;
    };
    sim.run(10'000'000'000ull);
    const Counters &c = net.engine(1).counters();
    INFO("bad mac " << c.drop_bad_mac << ", duplicates " << c.rx_duplicate
                    << ", early " << c.drop_early << ", delivered "
                    << c.rx_delivered);
    CHECK(!sim.verify().empty());
}

namespace {

// Runs 4 members over a loss-free wire; with `replay`, every DATA packet
// of the first 200 is sent again, unchanged (MAC included), 20 ms after
// the original. Returns each member's counters; requires the data right.
std::vector<Counters> run_with_replays(bool replay, uint64_t *replayed)
{
    SimNet net(4, Faults{}, 11);
    SessionConfig cfg = sim_config(4, 0xcafe);
    cfg.tx_key = cfg.rx_key = key_of(0x42);
    GroupSim sim(net, cfg, 4, random_script(4, 60, cfg.max_payload, 3));
    *replayed = 0;
    net.filter = [&](unsigned from, unsigned to, const uint8_t *p, size_t n) {
        if (replay && *replayed < 200 &&
            p[3] == static_cast<uint8_t>(PacketType::kData)) {
            net.inject(from, to, std::vector<uint8_t>(p, p + n), 20'000'000);
            ++*replayed;
        }
        return false;
    };
    REQUIRE(sim.run(120'000'000'000ull));
    for (int i = 0; i < 2000; ++i) {
        net.step(); // the replays still on the wire
    }
    CHECK(sim.verify().empty());
    std::vector<Counters> out;
    for (unsigned m = 0; m < 4; ++m) {
        out.push_back(net.engine(m).counters());
    }
    return out;
}

} // namespace

TEST_CASE("auth: a captured packet sent again later is dropped, not "
          "delivered",
          "[ud_mcast][core][trust]")
{
    // The MAC is right (it is the genuine packet): what stops a replay is
    // the PSN window and the epoch, and it shows as a duplicate.
    uint64_t none = 0, replayed = 0;
    const std::vector<Counters> plain = run_with_replays(false, &none);
    const std::vector<Counters> again = run_with_replays(true, &replayed);
    REQUIRE(replayed == 200);
    uint64_t extra_drops = 0;
    for (unsigned m = 0; m < 4; ++m) {
        CHECK(again[m].rx_delivered == plain[m].rx_delivered);
        CHECK(again[m].drop_bad_mac == 0);
        extra_drops += (again[m].rx_duplicate + again[m].drop_stale) -
                       (plain[m].rx_duplicate + plain[m].drop_stale);
    }
    CHECK(extra_drops == replayed);
}
