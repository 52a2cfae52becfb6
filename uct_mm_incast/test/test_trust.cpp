// SPDX-License-Identifier: BSD-3-Clause
// mm_incast's trust boundary (ctest label "trust"): every attach path of
// the core refuses a segment another user pre-created, and a group whose
// live segment gets random values in every control field (link header,
// params, member lines, element control lines, slot trailers) ends each
// post with a named error or correct data, in every mode: no crash, no
// out-of-bounds access (run under the asan preset), no wait past its
// bound. The LOCKED mode's lock word is left alone: a peer holding it
// stalls the senders as a stopped peer would, which no check can tell.
#include "direct_script.h"
#include "fuzz_util.h"

#include "foreign_shm.h"
#include "fuzz_util.h"

#include "ucg_test/check.h"
#include "ucg_test/shm_names.h"
#include "ucg_test/thread_ranks.h"

#include <catch2/catch.hpp>
#include <memory>
#include <ucg_test/skip.h>

using namespace incast_test;
using namespace uct_mm_common::test;
using uct_mm_incast::ElementCtrl;
using uct_mm_incast::IncastGeometry;
using uct_mm_incast::SlotTrailer;

namespace {

constexpr std::uint32_t kSeg = 256;

IncastGroupConfig config(unsigned member, unsigned n, uct_mm_incast_mode_t mode)
{
    IncastGroupConfig c;
    c.member = member;
    c.size = n;
    c.elements = 4;
    c.seg_bytes = kSeg;
    c.mode = mode;
    c.max_outstanding = 4;
    c.timeout_ms = 40;
    c.attach_timeout_ms = 500;
    return c;
}

std::size_t segment_bytes(unsigned n)
{
    return uct_mm_common::link_segment_bytes(
        n, uct_mm_incast::geometry_of(config(0, n, UCT_MM_INCAST_MODE_AUTO))
               .region_bytes());
}

// Progresses `g` (no posts) until it joined everyone or failed.
Status connect(IncastGroup &g)
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

// The control fields of a group of n: the link prefix, then every
// element's control line and every slot's trailer.
std::vector<Field> control_fields(unsigned n)
{
    std::vector<Field> f = link_fields(n);
    const IncastGeometry geo =
        uct_mm_incast::geometry_of(config(0, n, UCT_MM_INCAST_MODE_AUTO));
    for (std::uint32_t e = 0; e < geo.elements; ++e) {
        const std::size_t el =
            uct_mm_common::link_region_offset(n) + e * geo.element_bytes();
        // A counter rolled back hides arrivals: the root waits as for a
        // sender not yet there (a stall, not an error it can tell). No
        // check word covers either: `pending` moved on makes the root take
        // a partial reduction, `first` rolled back to "free" makes a later
        // sender copy over the earlier ones' chunks (seeds 1 and 3 found
        // both), so a value that looks valid may deliver wrong data.
        f.push_back({.offset = el + offsetof(ElementCtrl, pending),
                     .width = 4,
                     .forgeable = true,
                     .stall = true});
        f.push_back({.offset = el + offsetof(ElementCtrl, first),
                     .width = 4,
                     .forgeable = true,
                     .stall = true});
        f.push_back({el + offsetof(ElementCtrl, length), 4});
        f.push_back({el + offsetof(ElementCtrl, check), 4});
        for (std::uint32_t m = 0; m < n; ++m) {
            const std::size_t t = el + geo.slots_offset() +
                                  (m + 1) * geo.slot_stride() -
                                  sizeof(SlotTrailer);
            f.push_back({t + offsetof(SlotTrailer, length), 4});
            f.push_back({t + offsetof(SlotTrailer, check), 4});
            f.push_back({.offset = t + offsetof(SlotTrailer, seq),
                         .width = 8,
                         .stall = true}); // rolled back: "not yet"
        }
    }
    return f;
}

// A round's messages: reductions of one element and of several chunks,
// a gather of several chunks, roots changing.
std::vector<Spec> round_script(unsigned r, unsigned n)
{
    std::vector<Spec> script;
    const std::size_t counts[] = {1, kSeg / 4 + 3, 3 * kSeg + 5, 40};
    for (unsigned k = 0; k < 4; ++k) {
        Spec s;
        s.root = (r + k) % n;
        s.tag = k + 1;
        s.count = counts[k];
        if (k == 2) {
            s.coll = Coll::kGather;
            s.member_buffers = (r & 1) != 0;
        } else if (k == 3) {
            s.dtype = UCG_DTYPE_DOUBLE;
            s.op = UCG_OP_MAX;
            s.accumulate = true;
        }
        script.push_back(s);
    }
    return script;
}

// A fuzz test's verdict: no wrong delivery outside forged rounds, no
// stall in a round that hit no field that may stall a group, and with
// enough rounds some correct ones and some failed groups; the tally is
// printed either way.
void check_tally(const char *name, unsigned rounds, const FuzzTally &tally,
                 const std::string &wrong_trace, const std::string &stuck)
{
    INFO(wrong_trace);
    CHECK(tally.wrong.load() == 0);
    INFO(stuck);
    CHECK(tally.stuck.load() == 0);
    if (rounds >= 100) {
        CHECK(tally.ok.load() > 0);
        CHECK(tally.errors.load() > 0);
    }
    WARN(name << ": rounds " << rounds << ", hits " << tally.hits.load()
              << ", correct " << tally.ok.load() << ", unchecked "
              << tally.unchecked.load() << ", errors " << tally.errors.load()
              << ", stalls " << tally.stalls.load() << " ("
              << tally.stuck.load() << " unexplained), log lines "
              << QuietLog::lines());
}

} // namespace

TEST_CASE("incast trust: a segment another user pre-created is refused",
          "[mm][incast][trust]")
{
    if (!ForeignSegment::available()) {
        UCG_SKIP("needs root to give a segment to another user");
    }
    ucg_test::ShmSweeper sweeper("ucgt-" + std::to_string(getpid()) + "-");
    const std::size_t bytes = segment_bytes(2);
    ForeignSegment evil(ucg_test::unique_shm_name("incast-evil"), bytes);
    REQUIRE(evil.ok());

    SECTION("a member attaching by name")
    {
        IncastGroupConfig c = config(1, 2, UCT_MM_INCAST_MODE_AUTO);
        c.name = evil.name();
        IncastGroup *raw = nullptr;
        REQUIRE(IncastGroup::create(c, &raw) == Status::kOk);
        std::unique_ptr<IncastGroup> g(raw);
        CHECK(connect(*g) == Status::kNotTrusted);
    }
    SECTION("member 0 creating the name")
    {
        IncastGroupConfig c = config(0, 2, UCT_MM_INCAST_MODE_AUTO);
        c.name = evil.name();
        IncastGroup *raw = nullptr;
        const Status st = IncastGroup::create(c, &raw);
        std::unique_ptr<IncastGroup> g(raw);
        CHECK(st != Status::kOk);
    }
}

TEST_CASE("incast trust: random control fields in a live segment fail the "
          "group or deliver correct data",
          "[mm][incast][trust][fuzz]")
{
    const unsigned rounds = fuzz_rounds(700);
    if (rounds == 0) {
        UCG_SKIP(kUnderTsan ? "a fuzz test under TSan (the corrupter races "
                              "by design)"
                            : "UCG_FUZZ_ROUNDS=0");
    }
    const std::uint64_t seed = fuzz_seed();
    const uct_mm_incast_mode_t modes[] = {
        UCT_MM_INCAST_MODE_BATCHED, UCT_MM_INCAST_MODE_CENTRALIZED,
        UCT_MM_INCAST_MODE_LOCKED, UCT_MM_INCAST_MODE_ATOMIC,
        UCT_MM_INCAST_MODE_AUTO};
    FuzzTally tally;
    const QuietLog quiet;
    std::string first_wrong; // the first wrong delivery, and what was hit
    std::string wrong_trace;
    std::string first_stuck; // the first stall no field hit explains
    const unsigned first = fuzz_first_round();
    for (unsigned r = first; r < first + rounds; ++r) {
        const unsigned n = 2 + r % 3;
        const uct_mm_incast_mode_t mode = modes[(r / 3) % 5];
        ucg_test::SharedMapping mem(segment_bytes(n));
        Corrupter corrupter(mem.as<std::uint8_t>(), control_fields(n),
                            seed * 1'000'003 + r);
        std::atomic<bool> stop{false};
        std::atomic<bool> corrupter_done{false};
        std::atomic<unsigned> members_done{0};
        const std::vector<Spec> script = round_script(r, n);
        ucg_test::run_thread_ranks(static_cast<int>(n + 1), [&](int rank) {
            if (rank == static_cast<int>(n)) {
                corrupter.run(1 + (r * 7) % 24, stop);
                corrupter_done = true;
                return;
            }
            const auto me = static_cast<std::uint32_t>(rank);
            IncastGroupConfig c = config(me, n, mode);
            c.name = "/ucgt-incast-fuzz";
            c.memory = mem.data();
            c.memory_bytes = mem.size();
            auto g = open_group(c);
            const Bound bound{&corrupter_done,
                              std::chrono::steady_clock::now() +
                                  std::chrono::seconds(10),
                              &corrupter};
            for (std::uint32_t k = 0; k < script.size(); ++k) {
                const Spec &s = script[k];
                Buffers b;
                const Message m = prepare(s, me, n, k, &b);
                Pending p;
                const Outcome o =
                    post_wait_bounded(*g, me != s.root, m, &p, bound);
                if (o == Outcome::kStalled) {
                    ++tally.stalls;
                    if (!bound.stall_excused() && ++tally.stuck == 1) {
                        first_stuck = "round " + std::to_string(r) +
                                      ", member " + std::to_string(rank) +
                                      ", message " + std::to_string(k) + ": " +
                                      corrupter.trace();
                    }
                    break;
                }
                if (o == Outcome::kError) {
                    ++tally.errors;
                    break;
                }
                if (me != s.root) {
                    continue;
                }
                std::string why;
                try {
                    check_root(s, n, k, g->mode_of(m), b);
                } catch (const ucg_test::RankFailure &e) {
                    why = e.what();
                }
                if (why.empty()) {
                    ++tally.ok;
                } else if (corrupter.forged()) {
                    ++tally.unchecked; // a forged value may pass as valid
                } else if (++tally.wrong == 1) {
                    first_wrong = "round " + std::to_string(r) + ", mode " +
                                  uct_mm_incast::mode_name(mode) +
                                  ", message " + std::to_string(k) + ": " + why;
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
    }
    check_tally("incast fuzz", rounds, tally, wrong_trace, first_stuck);
}

TEST_CASE("incast trust: a slot past the root's position fails the group",
          "[mm][incast][trust]")
{
    const QuietLog quiet;
    const unsigned n = 2;
    ucg_test::SharedMapping mem(segment_bytes(n));
    std::unique_ptr<IncastGroup> g[2];
    for (unsigned m = 0; m < n; ++m) {
        IncastGroupConfig c = config(m, n, UCT_MM_INCAST_MODE_CENTRALIZED);
        c.name = "/ucgt-incast-past";
        c.memory = mem.data();
        c.memory_bytes = mem.size();
        g[m] = open_group(c);
    }
    REQUIRE(connect(*g[1]) == Status::kOk);
    // Member 1's slot of position 0 claims a later position.
    const IncastGeometry geo =
        uct_mm_incast::geometry_of(config(0, n, UCT_MM_INCAST_MODE_AUTO));
    auto *t = reinterpret_cast<SlotTrailer *>(
        mem.as<std::uint8_t>() + uct_mm_common::link_region_offset(n) +
        geo.slots_offset() + 2 * geo.slot_stride() - sizeof(SlotTrailer));
    t->seq.store(geo.elements + 1);
    Spec s;
    s.coll = Coll::kGather;
    s.count = 16;
    Buffers b;
    const Message m = prepare(s, 0, n, 0, &b);
    Pending p;
    const std::atomic<bool> corrupter_done{true};
    const Bound bound{&corrupter_done, std::chrono::steady_clock::now() +
                                           std::chrono::seconds(2)};
    CHECK(post_wait_bounded(*g[0], false, m, &p, bound) == Outcome::kError);
    CHECK(g[0]->state() == Status::kIoError);
}

namespace {

constexpr std::uint32_t kDirect = 256;

IncastGroupConfig direct_config(unsigned member, unsigned n)
{
    IncastGroupConfig c = config(member, n, UCT_MM_INCAST_MODE_AUTO);
    c.direct_bytes = kDirect;
    c.direct_max_group = 8;
    return c;
}

std::size_t direct_segment_bytes(unsigned n)
{
    return segment_bytes(n) +
           uct_mm_incast::DirectGeometry{n, kDirect}.region_bytes();
}

// The direct area's fields: every member's done line and slot headers.
std::vector<Field> direct_fields(unsigned n)
{
    using uct_mm_incast::DirectLine;
    using uct_mm_incast::DirectSlotHeader;
    std::vector<Field> f = link_fields(n);
    const uct_mm_incast::DirectGeometry geo{n, kDirect};
    const std::size_t area =
        uct_mm_common::link_region_offset(n) +
        uct_mm_incast::geometry_of(direct_config(0, n)).region_bytes();
    for (std::uint32_t m = 0; m < n; ++m) {
        const std::size_t line = area + m * geo.member_bytes();
        // A done counter or a sequence word may hold a member back.
        f.push_back({.offset = line + offsetof(DirectLine, done),
                     .width = 8,
                     .stall = true});
        for (std::uint32_t s = 0; s < uct_mm_incast::kDirectDepth; ++s) {
            const std::size_t h = line + sizeof(DirectLine) + s * geo.stride();
            f.push_back({.offset = h + offsetof(DirectSlotHeader, seq),
                         .width = 8,
                         .stall = true});
            f.push_back({h + offsetof(DirectSlotHeader, check), 4});
            f.push_back({h + offsetof(DirectSlotHeader, length), 4});
        }
    }
    return f;
}

// Posts (retrying while the queue is full) and tests until message `m`
// completes, the group fails or the member gives up.
Outcome direct_wait_bounded(DirectArea &d, const DirectMsg &m, const Bound &b)
{
    using clock = std::chrono::steady_clock;
    uct_mm_common::Backoff backoff;
    auto last_move = clock::now();
    std::uint64_t id = 0;
    Status st;
    bool posted = false;
    for (;;) {
        st = posted ? d.test(id) : d.post(m, &id);
        posted = posted || st != Status::kNoResource;
        if (posted && st != Status::kInProgress) {
            break;
        }
        if (d.progress()) {
            backoff.reset();
            last_move = clock::now();
            continue;
        }
        if (b.gives_up(last_move)) {
            return Outcome::kStalled;
        }
        backoff.pause();
    }
    return st == Status::kOk ? Outcome::kOk : Outcome::kError;
}

} // namespace

TEST_CASE("incast trust: random direct-area fields fail the group or "
          "deliver correct data",
          "[mm][incast][trust][fuzz]")
{
    const unsigned rounds = fuzz_rounds(300);
    if (rounds == 0) {
        UCG_SKIP(kUnderTsan ? "a fuzz test under TSan (the corrupter races "
                              "by design)"
                            : "UCG_FUZZ_ROUNDS=0");
    }
    const std::uint64_t seed = fuzz_seed();
    FuzzTally tally;
    const QuietLog quiet;
    std::string wrong_trace;
    std::string first_stuck; // the first stall no field hit explains
    const unsigned first = fuzz_first_round();
    for (unsigned r = first; r < first + rounds; ++r) {
        const unsigned n = 2 + r % 3;
        ucg_test::SharedMapping mem(direct_segment_bytes(n));
        Corrupter corrupter(mem.as<std::uint8_t>(), direct_fields(n),
                            seed * 1'000'033 + r);
        std::atomic<bool> stop{false};
        std::atomic<bool> corrupter_done{false};
        std::atomic<unsigned> members_done{0};
        // More messages than slots, so slots are reused under the fuzz.
        std::vector<DirectSpec> script;
        for (unsigned k = 0; k < 16; ++k) {
            const DirectColl kinds[] = {
                DirectColl::kAllreduce, DirectColl::kBcast,
                DirectColl::kAllgather, DirectColl::kReduce,
                DirectColl::kAlltoall,  DirectColl::kBarrier,
                DirectColl::kGather,    DirectColl::kScatter};
            script.push_back({.coll = kinds[k % 8],
                              .root = (r + k) % n,
                              .count = 1 + (k * 13) % 50});
        }
        std::string first_wrong;
        ucg_test::run_thread_ranks(static_cast<int>(n + 1), [&](int rank) {
            if (rank == static_cast<int>(n)) {
                corrupter.run(1 + (r * 7) % 24, stop);
                corrupter_done = true;
                return;
            }
            const auto me = static_cast<std::uint32_t>(rank);
            IncastGroupConfig c = direct_config(me, n);
            c.name = "/ucgt-incast-dfuzz";
            c.memory = mem.data();
            c.memory_bytes = mem.size();
            auto g = open_group(c);
            DirectArea *d = connect(*g) == Status::kOk ? g->direct() : nullptr;
            const Bound bound{&corrupter_done,
                              std::chrono::steady_clock::now() +
                                  std::chrono::seconds(10),
                              &corrupter};
            for (std::uint32_t k = 0; d != nullptr && k < script.size(); ++k) {
                DirectBuffers b;
                const DirectMsg m = prepare_direct(script[k], me, n, k, &b);
                const Outcome o = direct_wait_bounded(*d, m, bound);
                if (o != Outcome::kOk) {
                    ++(o == Outcome::kStalled ? tally.stalls : tally.errors);
                    if (o == Outcome::kStalled && !bound.stall_excused() &&
                        ++tally.stuck == 1) {
                        first_stuck = "round " + std::to_string(r) +
                                      ", message " + std::to_string(k) + ": " +
                                      corrupter.trace();
                    }
                    break;
                }
                std::string why;
                try {
                    check_direct(script[k], me, n, k, b);
                } catch (const ucg_test::RankFailure &e) {
                    why = e.what();
                }
                if (why.empty()) {
                    ++tally.ok;
                } else if (corrupter.forged()) {
                    ++tally.unchecked;
                } else if (++tally.wrong == 1) {
                    first_wrong = "round " + std::to_string(r) + ", message " +
                                  std::to_string(k) + ": " + why;
                }
            }
            if (++members_done == n) {
                stop = true;
            }
            g.reset();
        });
        tally.hits += corrupter.hits();
        if (tally.stuck.load() != 0) {
            break; // a stall waits the round's deadline: one is enough
        }
        if (!first_wrong.empty() && wrong_trace.empty()) {
            wrong_trace = first_wrong + ": " + corrupter.trace();
        }
    }
    check_tally("incast direct fuzz", rounds, tally, wrong_trace, first_stuck);
}
