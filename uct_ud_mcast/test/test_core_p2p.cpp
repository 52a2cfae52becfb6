// SPDX-License-Identifier: BSD-3-Clause
// Two-member (point-to-point) sessions as the UCT endpoints use them: one
// side creates its session, the other's is made by the engine on the first
// JOIN; both send single-packet active messages, delivered in order once.
#include "sim_net.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace uct_ud_mcast;
using namespace uct_ud_mcast::test;

namespace {

SessionConfig p2p_config(uint16_t me)
{
    SessionConfig c;
    c.key = 0xabcdef;
    c.my_index = me;
    c.size = 2;
    c.p2p = true;
    c.nonce = 5 + me;
    c.window = 8;
    c.max_payload = 32;
    c.ack_every = 2;
    c.rto_min_ns = 2'000'000;
    return c;
}

struct Side final : SessionHandler, Engine::P2pFactory {
    SimNet *net = nullptr;
    uint16_t me = 0;
    std::unique_ptr<Session> session;
    std::vector<uint32_t> got;
    bool bad_payload = false;

    void open(uint64_t now)
    {
        session = std::make_unique<Session>(p2p_config(me), net->tx(me), this,
                                            &net->engine(me).counters(), now);
        net->engine(me).add(session.get());
    }
    Session *create_p2p(const Packet &join, uint64_t now) override
    {
        if (join.hdr.size != 2 || join.hdr.src != (me ^ 1) || session) {
            return nullptr;
        }
        open(now);
        return session.get();
    }
    bool p2p_rx_key(const Packet &, MacKey *key) override
    {
        *key = MacKey{}; // p2p_config's
        return true;
    }
    bool deliver(uint16_t, const DataBody &d, const uint8_t *payload,
                 uint32_t len) noexcept override
    {
        got.push_back(d.msg_seq);
        bad_payload =
            bad_payload || len != 4 || std::memcmp(payload, &d.msg_seq, 4) != 0;
        return true;
    }
    void sent(void *) noexcept override {}
    bool waiting_for(uint16_t) const noexcept override { return false; }
    void failed(Status, uint16_t) noexcept override {}
};

} // namespace

TEST_CASE("p2p sessions open on JOIN and deliver in order once under faults",
          "[ud_mcast][core]")
{
    for (uint64_t seed = 0; seed < 300; ++seed) {
        SimNet net(2, Faults{0.15, 0.15, 0.15, 0.05}, seed);
        Side side[2];
        for (uint16_t m = 0; m < 2; ++m) {
            side[m].net = &net;
            side[m].me = m;
            net.engine(m).set_p2p_factory(&side[m]);
        }
        // Either side may open first (UCP wireup: the receiver has no ep).
        side[seed % 2].open(net.now());
        constexpr uint32_t kCount = 60;
        uint32_t next[2] = {0, 0};
        for (unsigned step = 0; step < 2'000'000; ++step) {
            for (unsigned m = 0; m < 2; ++m) {
                Session *s = side[m].session.get();
                while (s != nullptr && next[m] < kCount) {
                    MsgHead h;
                    h.seq = next[m];
                    const Status st = s->send_packet(
                        h,
                        [&](uint8_t *dest) {
                            std::memcpy(dest, &next[m], 4);
                            return 4;
                        },
                        net.now());
                    if (st != Status::kOk) {
                        break;
                    }
                    ++next[m];
                }
            }
            if (side[0].got.size() == kCount && side[1].got.size() == kCount) {
                break;
            }
            net.step();
        }
        for (unsigned m = 0; m < 2; ++m) {
            INFO("seed " << seed << " side " << m);
            REQUIRE(side[m].got.size() == kCount);
            for (uint32_t i = 0; i < kCount; ++i) {
                REQUIRE(side[m].got[i] == i);
            }
            CHECK(!side[m].bad_payload);
        }
    }
}
