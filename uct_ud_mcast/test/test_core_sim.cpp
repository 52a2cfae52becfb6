// SPDX-License-Identifier: BSD-3-Clause
// The reliability core under injected faults: in order, exactly once, to
// every member, for thousands of seeds; failures reported in bounded
// (virtual) time; the join barrier; flow control; ACK aggregation; NACK
// suppression.
#include "group_sim.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <set>

using namespace uct_ud_mcast;
using namespace uct_ud_mcast::test;

namespace {

constexpr uint64_t kSec = 1'000'000'000;

// Sanitized builds run a tenth of the seeds (10x slower per seed); the
// optimized builds run them all, and the slow test ten times more.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr uint64_t kSeeds = 200;
#else
constexpr uint64_t kSeeds = 2000;
#endif

} // namespace

TEST_CASE("every message reaches every member in order once over 2000 seeds",
          "[ud_mcast][core]")
{
    Counters g_total;
    for (uint64_t seed = 0; seed < kSeeds; ++seed) {
        const std::string err = run_random_seed(seed, &g_total);
        INFO(err);
        REQUIRE(err.empty());
    }
    INFO("delivered " << g_total.rx_delivered << " resent " << g_total.tx_resent
                      << " dup " << g_total.rx_duplicate << " ooo "
                      << g_total.rx_out_of_order << " nacks "
                      << g_total.tx_nacks);
    CHECK(g_total.tx_resent > kSeeds);
    CHECK(g_total.rx_duplicate > kSeeds);
    CHECK(g_total.rx_out_of_order > kSeeds);
    CHECK(g_total.tx_nacks > kSeeds);
}

TEST_CASE("nobody sends data before every member joined", "[ud_mcast][core]")
{
    SimNet net(4, Faults{0.1, 0.1, 0.1, 0}, 7);
    const SessionConfig cfg = sim_config(4, 99);
    GroupSim sim(net, cfg, 4, random_script(4, 10, cfg.max_payload, 7));
    // Members post at once, but member 0 (which releases the barrier)
    // only answers after 50 ms of virtual time.
    net.filter = [&](unsigned, unsigned to, const uint8_t *, size_t) {
        return to == 0 && net.now() < 50'000'000;
    };
    REQUIRE(sim.run(60 * kSec));
    CHECK(sim.verify().empty());
    CHECK(net.first_data_ns >= 50'000'000);
}

TEST_CASE("a member that never joins fails the group with a timeout",
          "[ud_mcast][core]")
{
    SimNet net(3, Faults{}, 3);
    SessionConfig cfg = sim_config(3, 5);
    cfg.attach_timeout_ns = 2 * kSec;
    GroupSim sim(net, cfg, 4, random_script(3, 4, cfg.max_payload, 3));
    net.kill(2);
    REQUIRE(sim.run(10 * kSec));
    CHECK(sim.channel(0).state() == Status::kTimeout);
    CHECK(sim.channel(0).session().culprit() == 2);
    CHECK(sim.channel(1).state() == Status::kTimeout);
}

TEST_CASE("a killed member is reported to the others in bounded time",
          "[ud_mcast][core]")
{
    for (unsigned victim : {0u, 1u, 3u}) {
        SimNet net(5, Faults{0.05, 0, 0.05, 0}, victim);
        SessionConfig cfg = sim_config(5, 11 + victim);
        cfg.timeout_ns = 2 * kSec;
        cfg.probe_ns = 200'000'000;
        GroupSim sim(net, cfg, 4, random_script(5, 400, cfg.max_payload, 1));
        sim.run(20'000'000); // some traffic first
        net.kill(victim);
        const uint64_t killed = net.now();
        REQUIRE(sim.run(30 * kSec));
        for (unsigned m = 0; m < 5; ++m) {
            if (m != victim) {
                INFO("victim " << victim << " member " << m);
                CHECK(sim.channel(m).state() == Status::kPeerDead);
            }
        }
        // Bounded: the timeout, plus the liveness scan and ABORT spread.
        CHECK(net.now() - killed < 4 * kSec);
    }
}

TEST_CASE("a slow receiver holds the sender back without loss",
          "[ud_mcast][core]")
{
    SimNet net(3, Faults{}, 1);
    const SessionConfig cfg = sim_config(3, 77);
    std::vector<ScriptMsg> script(40, ScriptMsg{0, 200});
    GroupSim sim(net, cfg, 8, script);
    sim.paused[2] = true;
    sim.run(500'000'000);
    Session &root = sim.channel(0).session();
    // The window is full, the rest waits at the root; nothing was dropped.
    CHECK(root.next_psn() - root.acked_psn() == cfg.window);
    CHECK(sim.channel(0).outstanding() == 8);
    CHECK(net.engine(2).counters().drop_stale == 0);
    sim.paused[2] = false;
    REQUIRE(sim.run(60 * kSec));
    CHECK(sim.verify().empty());
}

TEST_CASE("a message's packets leave in runs, a run per free stretch of "
          "the window",
          "[ud_mcast][core]")
{
    SimNet net(3, Faults{}, 5);
    SessionConfig cfg = sim_config(3, 91);
    cfg.window = 64;
    // 20 full packets and a short one: one run while the window is free.
    const uint32_t len = 20 * cfg.max_payload + 7;
    GroupSim sim(net, cfg, 4, {ScriptMsg{0, len}, ScriptMsg{0, 3}});
    REQUIRE(sim.run(60 * kSec));
    CHECK(sim.verify().empty());
    REQUIRE(!net.runs.empty());
    CHECK(net.runs.front() == 21);
    // A run never spans a short packet or the store's wrap: every packet
    // went out once, in runs that add up.
    uint64_t sent = 0;
    for (uint32_t r : net.runs) {
        sent += r;
    }
    CHECK(sent == net.engine(0).counters().tx_data);
    CHECK(sent == 22);
}

TEST_CASE("the root hears ACKs from at most fan-in members", "[ud_mcast][core]")
{
    for (unsigned n : {8u, 32u}) {
        SimNet net(n, Faults{}, n);
        SessionConfig cfg = sim_config(n, 1000 + n);
        cfg.ack_fanin = 4;
        std::vector<ScriptMsg> script(50, ScriptMsg{0, 100});
        GroupSim sim(net, cfg, 4, script);
        std::set<unsigned> sources;
        net.filter = [&](unsigned from, unsigned to, const uint8_t *p, size_t) {
            if (to == 0 && p[3] == static_cast<uint8_t>(PacketType::kAck)) {
                sources.insert(from);
            }
            return false;
        };
        REQUIRE(sim.run(60 * kSec));
        CHECK(sim.verify().empty());
        CHECK(sources.size() <= 4);
        CHECK(!sources.empty());
    }
}

TEST_CASE("one resend serves every receiver that lost a packet",
          "[ud_mcast][core]")
{
    SimNet net(8, Faults{}, 5);
    const SessionConfig cfg = sim_config(8, 4242);
    std::vector<ScriptMsg> script(10, ScriptMsg{0, 64});
    GroupSim sim(net, cfg, 4, script);
    bool dropped_once = false;
    net.filter = [&](unsigned from, unsigned, const uint8_t *p, size_t n) {
        if (from != 0 || p[3] != static_cast<uint8_t>(PacketType::kData) ||
            n < kDataHeaderBytes) {
            return false;
        }
        DataBody d;
        std::memcpy(&d, p + sizeof(CommonHeader), sizeof(d));
        if (d.psn == 3 && !dropped_once) {
            return true; // every receiver loses the first copy
        }
        return false;
    };
    // Drop psn 3 for all receivers of that one multicast, then let it be.
    net.filter = [&, inner = net.filter](unsigned from, unsigned to,
                                         const uint8_t *p, size_t n) {
        const bool drop = inner(from, to, p, n);
        if (drop && to == 7) {
            dropped_once = true;
        }
        return drop;
    };
    REQUIRE(sim.run(60 * kSec));
    CHECK(sim.verify().empty());
    const Counters &root = net.engine(0).counters();
    CHECK(root.tx_resent == 1);
    uint64_t nacks = 0;
    for (unsigned m = 1; m < 8; ++m) {
        nacks += net.engine(m).counters().tx_nacks;
    }
    CHECK(nacks >= 2); // several asked, one resend answered them all
}

TEST_CASE("a stall of the whole host does not trigger resends",
          "[ud_mcast][core]")
{
    SimNet net(3, Faults{}, 9);
    const SessionConfig cfg = sim_config(3, 321);
    std::vector<ScriptMsg> script(2000, ScriptMsg{0, 300});
    GroupSim sim(net, cfg, 8, script);
    sim.run(1'000'000); // the join; then packets always in flight
    for (int i = 0; i < 5; ++i) {
        sim.run(300'000);
        REQUIRE(net.engine(0).counters().tx_data > 0);
        net.stall(4 * cfg.rto_min_ns); // descheduled, packets unanswered
    }
    REQUIRE(sim.run(60 * kSec));
    CHECK(sim.verify().empty());
    CHECK(net.engine(0).counters().tx_resent == 0);
}
