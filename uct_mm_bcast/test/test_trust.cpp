// SPDX-License-Identifier: BSD-3-Clause
// mm_bcast's trust boundary (ctest label "trust"): every attach path of the
// core refuses a segment another user pre-created, and a group whose live
// segment gets random values in every control field (link header, params,
// member lines, fragment headers, CMA descriptors) ends each post with a
// named error or correct data: no crash, no out-of-bounds access (run under
// the asan preset), no wait past its bound.
#include "seq_group.h"

#include "uct_mm_common/channel.h"
#include "uct_mm_common/fifo_segment.h"

#include "foreign_shm.h"
#include "fuzz_util.h"

#include "ucg_test/check.h"
#include "ucg_test/shm_names.h"
#include "ucg_test/thread_ranks.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <memory>
#include <ucg_test/skip.h>

using namespace uct_mm_bcast;
using uct_mm_common::Channel;
using uct_mm_common::ChannelConfig;
using uct_mm_common::CmaDescriptor;
using uct_mm_common::Coll;
using uct_mm_common::FifoSegment;
using uct_mm_common::kNoOrigin;
using uct_mm_common::RemoteIov;
using uct_mm_common::Ring;
using uct_mm_common::RingGeometry;
using uct_mm_common::SlotKind;
using namespace uct_mm_common::test;

namespace {

constexpr std::uint32_t kSeg = 256;
constexpr std::uint32_t kSlots = 4;

SeqGroupConfig config(unsigned member, unsigned n)
{
    SeqGroupConfig c;
    c.member = member;
    c.size = n;
    c.geo.num_slots = kSlots;
    c.geo.seg_bytes = kSeg;
    c.cma_min = 8 * kSeg;
    c.max_outstanding = 4;
    c.timeout_ms = 40;
    c.attach_timeout_ms = 500;
    return c;
}

Message bcast(unsigned root, void *buf, std::size_t len, std::uint32_t tag)
{
    Message m;
    m.coll = Coll::kBcast;
    m.root = root;
    m.buffer = buf;
    m.length = len;
    m.tag = tag;
    return m;
}

// Progresses `g` (no posts) until it joined everyone or failed.
Status connect(SeqGroup &g)
{
    uct_mm_common::Backoff backoff;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (g.state() == Status::kOk && g.busy() &&
           std::chrono::steady_clock::now() < deadline) {
        if (g.progress(on_complete, nullptr) == 0) {
            backoff.pause();
        }
    }
    return g.state();
}

// The control fields of a group of n: the link prefix, then every slot's
// fragment header and the CMA descriptor its payload may hold.
std::vector<Field> control_fields(unsigned n)
{
    std::vector<Field> f = link_fields(n);
    SeqGeometry geo;
    geo.num_slots = kSlots;
    geo.seg_bytes = kSeg;
    for (std::uint32_t s = 0; s < kSlots; ++s) {
        const std::size_t h =
            uct_mm_common::link_region_offset(n) + s * geo.slot_bytes();
        const std::size_t d = h + sizeof(FragHeader);
        // A fragment header has no check word: a valid-looking value in
        // any of its fields can deliver wrong data (a sequence word can
        // also hold a reader back).
        auto header = [h](std::size_t at, unsigned width, bool stall = false) {
            return Field{.offset = h + at,
                         .width = width,
                         .forgeable = true,
                         .stall = stall};
        };
        auto payload = [d](std::size_t at, unsigned width) {
            return Field{.offset = d + at, .width = width, .payload = true};
        };
        const Field slot[] = {
            header(offsetof(FragHeader, seq), 8, true),
            header(offsetof(FragHeader, length), 4),
            header(offsetof(FragHeader, root), 2),
            header(offsetof(FragHeader, kind), 1),
            {.offset = h + offsetof(FragHeader, reserved), .width = 1},
            header(offsetof(FragHeader, tag), 4),
            header(offsetof(FragHeader, msg), 4),
            header(offsetof(FragHeader, total), 8),
            payload(offsetof(CmaRef, pid), 4),
            payload(offsetof(CmaRef, reserved), 4),
            payload(offsetof(CmaRef, address), 8),
            payload(offsetof(CmaRef, length), 8),
        };
        f.insert(f.end(), std::begin(slot), std::end(slot));
    }
    return f;
}

} // namespace

TEST_CASE("bcast trust: a segment another user pre-created is refused",
          "[mm][bcast][trust]")
{
    if (!ForeignSegment::available()) {
        UCG_SKIP("needs root to give a segment to another user");
    }
    ucg_test::ShmSweeper sweeper("ucgt-" + std::to_string(getpid()) + "-");
    SeqGeometry geo;
    geo.num_slots = kSlots;
    geo.seg_bytes = kSeg;
    const std::size_t bytes =
        uct_mm_common::link_segment_bytes(2, geo.region_bytes());
    ForeignSegment evil(ucg_test::unique_shm_name("bcast-evil"), bytes);
    REQUIRE(evil.ok());

    SECTION("a member attaching by name")
    {
        SeqGroupConfig c = config(1, 2);
        c.name = evil.name();
        SeqGroup *raw = nullptr;
        REQUIRE(SeqGroup::create(c, &raw) == Status::kOk);
        std::unique_ptr<SeqGroup> g(raw);
        CHECK(connect(*g) == Status::kNotTrusted);
    }
    SECTION("member 0 creating the name")
    {
        SeqGroupConfig c = config(0, 2);
        c.name = evil.name();
        SeqGroup *raw = nullptr;
        const Status st = SeqGroup::create(c, &raw);
        std::unique_ptr<SeqGroup> g(raw);
        CHECK(st != Status::kOk);
    }
    SECTION("a sender attaching to a p2p FIFO by pid and fd")
    {
        FifoSegment fifo;
        CHECK(FifoSegment::attach(getpid(), evil.fd(), bytes, &fifo) ==
              Status::kNotTrusted);
    }
}

TEST_CASE("bcast trust: a failure word with no reason fails a member that "
          "cannot join",
          "[mm][bcast][trust]")
{
    using uct_mm_common::LinkHeader;
    using uct_mm_common::MemberLine;
    CHECK(uct_mm_common::failure_status(0) == Status::kOk);
    CHECK(uct_mm_common::failure_status(0x0000'0001) == Status::kIoError);
    SeqGeometry geo;
    geo.num_slots = kSlots;
    geo.seg_bytes = kSeg;
    ucg_test::SharedMapping mem(
        uct_mm_common::link_segment_bytes(2, geo.region_bytes()));
    SeqGroupConfig c0 = config(0, 2);
    c0.name = "/ucgt-bcast-word";
    c0.memory = mem.data();
    c0.memory_bytes = mem.size();
    SeqGroup *raw = nullptr;
    REQUIRE(SeqGroup::create(c0, &raw) == Status::kOk);
    std::unique_ptr<SeqGroup> g0(raw);
    // Corrupted before member 1 attaches: its line says "joined already"
    // (it cannot join) and the failure word has no reason bits.
    auto *base = mem.as<std::uint8_t>();
    reinterpret_cast<LinkHeader *>(base)->failed.store(1);
    reinterpret_cast<MemberLine *>(base + uct_mm_common::kLinkMembersOffset +
                                   kCacheLine)
        ->state.store(uct_mm_common::kMemberIn);
    SeqGroupConfig c1 = c0;
    c1.member = 1;
    REQUIRE(SeqGroup::create(c1, &raw) == Status::kOk);
    std::unique_ptr<SeqGroup> g1(raw);
    std::vector<std::uint8_t> buf(100);
    Pending p;
    const std::atomic<bool> corrupter_done{true};
    const Bound b{&corrupter_done,
                  std::chrono::steady_clock::now() + std::chrono::seconds(2)};
    CHECK(post_wait_bounded(*g1, false, bcast(0, buf.data(), buf.size(), 1), &p,
                            b) == Outcome::kError);
    CHECK(g1->state() == Status::kIoError);
}

TEST_CASE("bcast trust: random control fields in a live segment fail the "
          "group or deliver correct data",
          "[mm][bcast][trust][fuzz]")
{
    const unsigned rounds = fuzz_rounds(700);
    if (rounds == 0) {
        UCG_SKIP(kUnderTsan ? "a fuzz test under TSan (the corrupter races "
                              "by design)"
                            : "UCG_FUZZ_ROUNDS=0");
    }
    const std::uint64_t seed = fuzz_seed();
    const std::vector<std::size_t> lengths = {
        0, 1, kSeg - 1, kSeg + 1, 5 * kSeg + 3, 9 * kSeg}; // 9 * kSeg: CMA
    FuzzTally tally;
    const QuietLog quiet;
    std::string first_wrong; // the first wrong delivery, and what was hit
    std::string wrong_trace;
    std::string first_stuck; // the first stall no field hit explains
    std::string stuck_trace;
    // Every round, forged or not: nothing written past a receive buffer.
    constexpr std::size_t kGuard = 64;
    constexpr std::uint8_t kGuardByte = 0xa5;
    unsigned overflows = 0;
    const unsigned first = fuzz_first_round();
    for (unsigned r = first; r < first + rounds; ++r) {
        const unsigned n = 2 + r % 3;
        SeqGeometry geo;
        geo.num_slots = kSlots;
        geo.seg_bytes = kSeg;
        ucg_test::SharedMapping mem(
            uct_mm_common::link_segment_bytes(n, geo.region_bytes()));
        Corrupter corrupter(mem.as<std::uint8_t>(), control_fields(n),
                            seed * 1'000'003 + r);
        std::atomic<bool> stop{false};
        std::atomic<bool> corrupter_done{false};
        std::atomic<unsigned> members_done{0};
        // Buffers live until every member is gone: a root that gave up must
        // not free what a receiver may still read by CMA.
        std::vector<std::vector<std::vector<std::uint8_t>>> bufs(n);
        ucg_test::run_thread_ranks(static_cast<int>(n + 1), [&](int rank) {
            if (rank == static_cast<int>(n)) {
                corrupter.run(1 + (r * 7) % 24, stop);
                corrupter_done = true;
                return;
            }
            SeqGroupConfig c = config(static_cast<unsigned>(rank), n);
            c.name = "/ucgt-bcast-fuzz";
            c.memory = mem.data();
            c.memory_bytes = mem.size();
            SeqGroup *raw = nullptr;
            UCG_CHECK(SeqGroup::create(c, &raw) == Status::kOk);
            std::unique_ptr<SeqGroup> g(raw);
            const Bound bound{&corrupter_done,
                              std::chrono::steady_clock::now() +
                                  std::chrono::seconds(10),
                              &corrupter};
            for (unsigned k = 0; k < lengths.size(); ++k) {
                const unsigned root = (r + k) % n;
                const bool send = static_cast<unsigned>(rank) == root;
                std::vector<std::uint8_t> &buf =
                    bufs[static_cast<unsigned>(rank)].emplace_back(
                        send ? make_bytes(root, k, lengths[k])
                             : std::vector<std::uint8_t>(lengths[k], 0xee));
                buf.resize(lengths[k] + kGuard, kGuardByte);
                Pending p;
                const Outcome o = post_wait_bounded(
                    *g, send, bcast(root, buf.data(), lengths[k], k + 1), &p,
                    bound);
                if (o == Outcome::kStalled) {
                    ++tally.stalls;
                    if (!bound.stall_excused() && ++tally.stuck == 1) {
                        first_stuck = "round " + std::to_string(r) +
                                      ", member " + std::to_string(rank) +
                                      ", message " + std::to_string(k);
                    }
                    break;
                }
                if (o == Outcome::kError) {
                    ++tally.errors;
                    break;
                }
                if (send) {
                    continue;
                }
                if (first_mismatch(buf.data(), root, k, lengths[k]) ==
                    lengths[k]) {
                    ++tally.ok;
                } else if (corrupter.forged()) {
                    ++tally.unchecked; // a forged value may pass as valid
                } else if (++tally.wrong == 1) {
                    first_wrong = "round " + std::to_string(r) + ", member " +
                                  std::to_string(rank) + ", message " +
                                  std::to_string(k) + " of " +
                                  std::to_string(lengths[k]) +
                                  " bytes, first wrong byte " +
                                  std::to_string(first_mismatch(
                                      buf.data(), root, k, lengths[k]));
                }
            }
            if (++members_done == n) {
                stop = true;
            }
            g.reset(); // leaves while the others may still run
        });
        tally.hits += corrupter.hits();
        if (tally.stuck.load() != 0) {
            break; // a stall waits the round's deadline: one is enough
        }
        if (!first_wrong.empty() && wrong_trace.empty()) {
            wrong_trace = first_wrong + ": " + corrupter.trace();
        }
        if (!first_stuck.empty() && stuck_trace.empty()) {
            stuck_trace = first_stuck + ": " + corrupter.trace();
        }
        for (const auto &member : bufs) {
            for (const std::vector<std::uint8_t> &b : member) {
                overflows +=
                    std::any_of(b.end() - kGuard, b.end(),
                                [](std::uint8_t x) { return x != kGuardByte; });
            }
        }
    }
    INFO("rounds " << rounds << ", fields hit " << tally.hits.load()
                   << ": correct " << tally.ok.load() << ", unchecked "
                   << tally.unchecked.load() << ", errors "
                   << tally.errors.load() << ", stalls " << tally.stalls.load()
                   << ", log lines " << QuietLog::lines());
    INFO(wrong_trace);
    CHECK(tally.wrong.load() == 0);
    INFO(stuck_trace);
    CHECK(tally.stuck.load() == 0);
    CHECK(overflows == 0);
    if (rounds >= 100) {
        CHECK(tally.ok.load() > 0);
        CHECK(tally.errors.load() > 0);
    }
    WARN("bcast fuzz: rounds "
         << rounds << ", hits " << tally.hits.load() << ", correct "
         << tally.ok.load() << ", unchecked " << tally.unchecked.load()
         << ", errors " << tally.errors.load() << ", stalls "
         << tally.stalls.load() << " (" << tally.stuck.load()
         << " unexplained), overflows " << overflows << ", log lines "
         << QuietLog::lines());
}

namespace {

// A one-member p2p ring (the receiver) and a producer that writes raw slots
// into it, as a corrupted sender could.
struct P2pRing {
    RingGeometry geo;
    std::unique_ptr<ucg_test::SharedMapping> mem;
    Ring rx_ring;
    Ring tx;
    Channel rx;
    unsigned delivered = 0;

    P2pRing()
    {
        geo.num_members = 1;
        geo.num_slots = 4;
        geo.slot_bytes = 512;
        mem = std::make_unique<ucg_test::SharedMapping>(geo.segment_bytes());
        Ring::format(mem->data(), geo);
        REQUIRE(rx_ring.open(mem->data(), mem->size(), 0, false) ==
                Status::kOk);
        rx_ring.join();
        ChannelConfig cfg;
        cfg.max_zcopy = 4096;
        rx.init(rx_ring, cfg);
        REQUIRE(tx.open(mem->data(), mem->size(), kNoOrigin, false) ==
                Status::kOk);
    }
    // Publishes `bytes` of payload as `kind` with header length `length`.
    void publish(const void *payload, std::size_t bytes, std::uint32_t length,
                 SlotKind kind)
    {
        std::uint64_t pos = 0;
        REQUIRE(tx.claim(&pos) == Status::kOk);
        std::memcpy(tx.payload(pos), payload, bytes);
        tx.publish(pos, length, 1, kind);
    }
    Status poll()
    {
        rx.poll(
            4,
            [](void *arg, std::uint8_t, void *, std::size_t) {
                ++static_cast<P2pRing *>(arg)->delivered;
            },
            this);
        return rx.state();
    }
};

// A CMA descriptor with `iovs` buffers of `each` bytes (of this process).
std::vector<std::uint8_t> cma_payload(std::uint32_t iovcnt, std::uint32_t iovs,
                                      std::uint64_t each, std::uint64_t total,
                                      std::uint32_t hdr_bytes, const void *src)
{
    CmaDescriptor d{static_cast<std::int32_t>(getpid()), iovcnt, hdr_bytes, 0,
                    total};
    std::vector<std::uint8_t> p(sizeof(d) + iovs * sizeof(RemoteIov));
    std::memcpy(p.data(), &d, sizeof(d));
    for (std::uint32_t i = 0; i < iovs; ++i) {
        const RemoteIov v{reinterpret_cast<std::uint64_t>(src), each};
        std::memcpy(p.data() + sizeof(d) + i * sizeof(v), &v, sizeof(v));
    }
    return p;
}

} // namespace

TEST_CASE("bcast trust: a p2p slot that does not fit is refused, never read",
          "[mm][bcast][trust]")
{
    const QuietLog quiet;
    P2pRing r;
    const std::size_t cap = r.geo.payload_capacity();
    std::vector<std::uint8_t> src(1024, 0x5a);
    SECTION("well formed: delivered")
    {
        r.publish(src.data(), 100, 100, SlotKind::kInline);
        auto d = cma_payload(2, 2, 300, 600, 0, src.data());
        r.publish(d.data(), d.size(), static_cast<std::uint32_t>(d.size()),
                  SlotKind::kCma);
        CHECK(r.poll() == Status::kOk);
        CHECK(r.delivered == 2);
    }
    SECTION("inline length past the slot")
    {
        r.publish(src.data(), 8, static_cast<std::uint32_t>(cap + 1),
                  SlotKind::kInline);
        CHECK(r.poll() == Status::kIoError);
        CHECK(r.delivered == 0);
    }
    SECTION("unknown kind")
    {
        r.publish(src.data(), 8, 8, static_cast<SlotKind>(7));
        CHECK(r.poll() == Status::kIoError);
    }
    SECTION("CMA: more iovs than the slot holds")
    {
        auto d = cma_payload(100000, 1, 8, 8, 0, src.data());
        r.publish(d.data(), d.size(), 0, SlotKind::kCma);
        CHECK(r.poll() == Status::kOk);
        CHECK(r.tx.sender_failed());
    }
    SECTION("CMA: a header past the slot")
    {
        auto d = cma_payload(1, 1, 8, 8, static_cast<std::uint32_t>(cap),
                             src.data());
        r.publish(d.data(), d.size(), 0, SlotKind::kCma);
        CHECK(r.poll() == Status::kOk);
        CHECK(r.tx.sender_failed());
    }
    SECTION("CMA: iovs that add up to more than the total")
    {
        auto d = cma_payload(3, 3, 300, 600, 0, src.data());
        r.publish(d.data(), d.size(), 0, SlotKind::kCma);
        CHECK(r.poll() == Status::kOk);
        CHECK(r.tx.sender_failed());
    }
    SECTION("CMA: iovs that add up to less than the total")
    {
        auto d = cma_payload(1, 1, 300, 600, 0, src.data());
        r.publish(d.data(), d.size(), 0, SlotKind::kCma);
        CHECK(r.poll() == Status::kOk);
        CHECK(r.tx.sender_failed());
    }
    SECTION("CMA: a total over max_zcopy")
    {
        auto d = cma_payload(1, 1, std::uint64_t{1} << 40,
                             std::uint64_t{1} << 40, 0, src.data());
        r.publish(d.data(), d.size(), 0, SlotKind::kCma);
        CHECK(r.poll() == Status::kOk);
        CHECK(r.tx.sender_failed());
    }
    // A refused CMA message is dropped: the sender named in it is recorded
    // and fails its own sends (issue 29), the FIFO goes on for others.
    CHECK(r.delivered ==
          (r.rx.state() == Status::kOk && !r.tx.sender_failed() ? 2u : 0u));
}

TEST_CASE("bcast trust: a slot past the receiver's position fails the group",
          "[mm][bcast][trust]")
{
    const QuietLog quiet;
    SeqGeometry geo;
    geo.num_slots = kSlots;
    geo.seg_bytes = kSeg;
    ucg_test::SharedMapping mem(
        uct_mm_common::link_segment_bytes(2, geo.region_bytes()));
    std::unique_ptr<SeqGroup> g[2];
    for (unsigned m = 0; m < 2; ++m) {
        SeqGroupConfig c = config(m, 2);
        c.name = "/ucgt-bcast-past";
        c.memory = mem.data();
        c.memory_bytes = mem.size();
        SeqGroup *raw = nullptr;
        REQUIRE(SeqGroup::create(c, &raw) == Status::kOk);
        g[m].reset(raw);
    }
    REQUIRE(connect(*g[1]) == Status::kOk);
    // Position 0's slot claims a later position (no root ever wrote it).
    auto *h = reinterpret_cast<FragHeader *>(
        mem.as<std::uint8_t>() + uct_mm_common::link_region_offset(2));
    h->seq.store(kSlots + 1);
    std::vector<std::uint8_t> buf(kSeg);
    Pending p;
    const std::atomic<bool> corrupter_done{true};
    const Bound b{&corrupter_done,
                  std::chrono::steady_clock::now() + std::chrono::seconds(2)};
    CHECK(post_wait_bounded(*g[1], false, bcast(0, buf.data(), buf.size(), 1),
                            &p, b) == Outcome::kError);
    CHECK(g[1]->state() == Status::kIoError);
}
