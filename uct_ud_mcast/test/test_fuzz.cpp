// SPDX-License-Identifier: BSD-3-Clause
// Fuzzing the packet parser and the session behind it with a seeded
// mutator: random bytes, and valid packets of every type with bits
// flipped, bytes overwritten, truncated or extended, sometimes sealed
// again so that the garbage passes the check and reaches the session. Run
// under ASan+UBSan (asan preset): no crash, no read out of bounds.
#include "group_sim.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <random>

using namespace uct_ud_mcast;
using namespace uct_ud_mcast::test;

namespace {

constexpr uint64_t kKey = 0x1234;
constexpr uint32_t kEpoch = 77;
const MacKey kMac{}; // sim_config's keys: garbage sealed with it passes

// A valid packet of `type` from `src` (bodies random but plausible).
std::vector<uint8_t> make_packet(PacketType type, uint16_t src,
                                 std::mt19937_64 &rng)
{
    const size_t body = body_bytes(type);
    size_t payload = type == PacketType::kData ? rng() % 100 : 0;
    std::vector<uint8_t> buf(sizeof(CommonHeader) + body + payload + kMacBytes);
    CommonHeader h{
        kMagic, kVersion, static_cast<uint8_t>(type), src, 4, kKey, kEpoch, 0,
        0,      0};
    std::memcpy(buf.data(), &h, sizeof(h));
    for (size_t i = sizeof(h); i < buf.size() - kMacBytes; ++i) {
        buf[i] = static_cast<uint8_t>(rng() % 8); // small numbers: in range
    }
    if (type == PacketType::kData) {
        DataBody d{};
        d.psn = static_cast<uint32_t>(rng() % 40);
        d.msg_seq = static_cast<uint32_t>(rng() % 6);
        d.msg_len = static_cast<uint32_t>(payload + rng() % 100);
        d.offset = static_cast<uint32_t>(rng() % (d.msg_len - payload + 1));
        d.root = src;
        std::memcpy(buf.data() + sizeof(h), &d, sizeof(d));
    } else if (type == PacketType::kNack) {
        buf[sizeof(h) + 2] = static_cast<uint8_t>(1 + rng() % 8);
    }
    seal_packet(buf.data(), buf.size(), kMac);
    return buf;
}

void mutate(std::vector<uint8_t> *buf, std::mt19937_64 &rng)
{
    const unsigned edits = 1 + rng() % 4;
    for (unsigned e = 0; e < edits; ++e) {
        switch (rng() % 5) {
        case 0: // flip a bit
            if (!buf->empty()) {
                (*buf)[rng() % buf->size()] ^=
                    static_cast<uint8_t>(1u << (rng() % 8));
            }
            break;
        case 1: // overwrite a byte
            if (!buf->empty()) {
                (*buf)[rng() % buf->size()] = static_cast<uint8_t>(rng());
            }
            break;
        case 2: // truncate
            buf->resize(buf->empty() ? 0 : rng() % buf->size());
            break;
        case 3: // extend
            buf->resize(buf->size() + 1 + rng() % 64,
                        static_cast<uint8_t>(rng()));
            break;
        default: // overwrite a 32-bit field with an extreme value
            if (buf->size() >= 4) {
                const uint32_t v[] = {0, 1, 0x7fffffff, 0xffffffff, 0x10000};
                std::memcpy(buf->data() + (rng() % (buf->size() - 3)),
                            &v[rng() % 5], 4);
            }
            break;
        }
    }
    if (rng() % 2 == 0 && buf->size() >= sizeof(CommonHeader) + kMacBytes) {
        seal_packet(buf->data(), buf->size(), kMac); // reach the session
    }
}

struct Sink final : Transmit {
    bool to_member(uint16_t, const uint8_t *, size_t) noexcept override
    {
        return true;
    }
    bool to_all(const uint8_t *, size_t) noexcept override { return true; }
};

void noop_complete(void *, void *, Status) {}

} // namespace

TEST_CASE("the parser and session survive random and mutated packets",
          "[ud_mcast][core][fuzz]")
{
    Sink sink;
    Engine engine;
    SessionConfig cfg = sim_config(4, kKey);
    cfg.my_index = 1;
    std::mt19937_64 rng(20261123);
    uint64_t now = 1;
    std::unique_ptr<GroupChannel> chp;
    unsigned sessions = 0;
    // A fresh session, made ready by a READY from member 0, whenever the
    // garbage failed the previous one.
    auto fresh = [&] {
        if (chp) {
            engine.remove(&chp->session());
        }
        chp = std::make_unique<GroupChannel>(cfg, 4, &sink, &engine.counters(),
                                             noop_complete, nullptr, now);
        engine.add(&chp->session());
        std::vector<uint8_t> ready = make_packet(PacketType::kReady, 0, rng);
        engine.on_packet(ready.data(), ready.size(), now);
        REQUIRE(chp->session().ready());
        ++sessions;
    };
    fresh();
    std::vector<uint8_t> recv_buf(4096);
    for (unsigned i = 0; i < 200'000; ++i) {
        std::vector<uint8_t> pkt;
        if (rng() % 8 == 0) {
            pkt.resize(rng() % 200);
            for (auto &b : pkt) {
                b = static_cast<uint8_t>(rng());
            }
        } else {
            // ABORT ends a session: rare, so the others get deep.
            auto type = static_cast<PacketType>(1 + rng() % 7);
            if (rng() % 64 == 0) {
                type = PacketType::kAbort;
            }
            pkt = make_packet(type, static_cast<uint16_t>(rng() % 4), rng);
            if (rng() % 4 != 0) {
                mutate(&pkt, rng);
            }
        }
        // Exact-size heap copy: ASan flags any read past the end.
        auto exact = std::make_unique<uint8_t[]>(pkt.size() + 1);
        if (!pkt.empty()) {
            std::memcpy(exact.get(), pkt.data(), pkt.size());
        }
        engine.on_packet(exact.get(), pkt.size(), now);
        if (chp->state() != Status::kOk) {
            fresh();
        }
        GroupChannel &ch = *chp;
        if (i % 64 == 0 && ch.outstanding() < 4) {
            GroupMsg msg{static_cast<uint16_t>(rng() % 4),
                         static_cast<uint32_t>(rng() % 200), 0,
                         recv_buf.data()};
            bool done;
            if (msg.root != 1) {
                ch.post_recv(msg, nullptr, &done, now);
            }
        }
        now += 1000;
        engine.progress(now);
    }
    const Counters &c = engine.counters();
    CHECK(c.drop_malformed + c.drop_bad_check > 10'000);
    CHECK(c.rx_packets == 200'000 + sessions);
    CHECK(c.rx_delivered > 20); // garbage reached delivery too
    CHECK(c.rx_out_of_order > 1000);
}

TEST_CASE("stale packets (old epoch, outside the window) are counted",
          "[ud_mcast][core]")
{
    Sink sink;
    Engine engine;
    SessionConfig cfg = sim_config(4, kKey);
    cfg.my_index = 1;
    GroupChannel ch(cfg, 4, &sink, &engine.counters(), noop_complete, nullptr,
                    1);
    engine.add(&ch.session());
    std::mt19937_64 rng(1);
    std::vector<uint8_t> ready = make_packet(PacketType::kReady, 0, rng);
    engine.on_packet(ready.data(), ready.size(), 1);
    REQUIRE(ch.session().ready());
    // DATA from member 2 of an older incarnation of the group.
    std::vector<uint8_t> old = make_packet(PacketType::kData, 2, rng);
    CommonHeader h;
    std::memcpy(&h, old.data(), sizeof(h));
    h.epoch = kEpoch - 1;
    std::memcpy(old.data(), &h, sizeof(h));
    seal_packet(old.data(), old.size(), kMac);
    engine.on_packet(old.data(), old.size(), 2);
    CHECK(engine.counters().drop_stale == 1);
    // DATA far beyond the receive window.
    std::vector<uint8_t> far = make_packet(PacketType::kData, 2, rng);
    DataBody d;
    std::memcpy(&d, far.data() + sizeof(CommonHeader), sizeof(d));
    d.psn = 100000;
    std::memcpy(far.data() + sizeof(CommonHeader), &d, sizeof(d));
    seal_packet(far.data(), far.size(), kMac);
    engine.on_packet(far.data(), far.size(), 3);
    CHECK(engine.counters().drop_stale == 2);
    CHECK(engine.counters().rx_delivered == 0);
}
