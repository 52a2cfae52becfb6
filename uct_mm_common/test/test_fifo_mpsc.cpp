// SPDX-License-Identifier: BSD-3-Clause
// The p2p receive FIFO as both transports use it: many producers attached
// by pid and fd, one reader (the owner), in order per producer, flow control
// when full, an oversized packed send never delivered.
#include "fuzz_util.h" // QuietLog

#include "uct_mm_common/backoff.h"
#include "uct_mm_common/channel.h"
#include "uct_mm_common/fifo_segment.h"

#include <ucg_test/check.h>
#include <ucg_test/thread_ranks.h>

#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <vector>

using namespace uct_mm_common;
using uct_mm_common::test::QuietLog;

namespace {

constexpr std::uint8_t kProducers = 3;

struct Owner {
    FifoSegment fifo;
    Channel rx;

    Owner(std::uint32_t slots, std::uint32_t slot_bytes)
    {
        REQUIRE(FifoSegment::create(slots, slot_bytes, &fifo) == Status::kOk);
        rx.init(fifo.ring(), ChannelConfig{});
    }
};

struct Sender {
    FifoSegment fifo;
    Channel tx;

    Status attach(const Owner &o)
    {
        const Status st =
            FifoSegment::attach(getpid(), o.fifo.fd(), o.fifo.bytes(), &fifo);
        if (st == Status::kOk) {
            tx.init(fifo.ring(), ChannelConfig{});
        }
        return st;
    }
    Status send(std::uint8_t am_id, const void *data, std::size_t length)
    {
        std::size_t sent = 0;
        return tx.send_packed(
            am_id,
            [&](std::uint8_t *dest) {
                std::memcpy(dest, data, length);
                return length;
            },
            &sent);
    }
};

} // namespace

TEST_CASE("p2p FIFO delivers every producer's messages in order (threads)",
          "[mm][fifo][threads]")
{
    Owner owner(8, 128);
    constexpr std::uint32_t kMsgs = 3000;
    std::atomic<int> done{0};
    ucg_test::run_thread_ranks(kProducers + 1, [&](int r) {
        Backoff backoff;
        if (r == kProducers) {
            struct Inbox {
                std::vector<std::uint32_t> next =
                    std::vector<std::uint32_t>(kProducers, 0);
                std::uint32_t total = 0;
            } in;
            while (in.total < kProducers * kMsgs) {
                const unsigned n = owner.rx.poll(
                    4,
                    [](void *arg, std::uint8_t id, void *data,
                       std::size_t len) {
                        auto *box = static_cast<Inbox *>(arg);
                        std::uint32_t seq;
                        UCG_CHECK(id < kProducers);
                        UCG_CHECK_EQ(len, std::size_t{4} + id);
                        std::memcpy(&seq, data, sizeof(seq));
                        UCG_CHECK_EQ(seq, box->next[id]);
                        ++box->next[id];
                        ++box->total;
                    },
                    &in);
                if (n == 0) {
                    backoff.pause();
                } else {
                    backoff.reset();
                }
            }
            return;
        }
        Sender s;
        UCG_CHECK(s.attach(owner) == Status::kOk);
        std::uint8_t buf[8] = {};
        for (std::uint32_t i = 0; i < kMsgs; ++i) {
            std::memcpy(buf, &i, sizeof(i));
            while (s.send(static_cast<std::uint8_t>(r), buf,
                          4u + static_cast<std::uint32_t>(r)) ==
                   Status::kNoResource) {
                backoff.pause();
            }
            backoff.reset();
        }
        ++done;
    });
    CHECK(done == kProducers);
}

TEST_CASE("p2p FIFO refuses to send when the reader has not drained",
          "[mm][fifo]")
{
    Owner owner(4, 128);
    Sender s;
    REQUIRE(s.attach(owner) == Status::kOk);
    const std::uint64_t v = 1;
    for (int i = 0; i < 4; ++i) {
        REQUIRE(s.send(1, &v, sizeof(v)) == Status::kOk);
    }
    CHECK_FALSE(s.tx.ring().has_space());
    CHECK(s.send(1, &v, sizeof(v)) == Status::kNoResource);
    const auto ignore = [](void *, std::uint8_t, void *, std::size_t) {};
    CHECK(owner.rx.poll(1, ignore, nullptr) == 1);
    CHECK(s.tx.ring().has_space());
    CHECK(s.send(1, &v, sizeof(v)) == Status::kOk);
}

TEST_CASE("p2p FIFO: a packer that writes past the slot is not delivered",
          "[mm][fifo]")
{
    Owner owner(4, 256);
    Sender s;
    REQUIRE(s.attach(owner) == Status::kOk);
    const std::size_t cap = s.tx.max_inline();
    std::size_t sent = 0;
    // Claims the slot, then reports more than fits: the slot is skipped.
    CHECK(s.tx.send_packed(
              1, [&](std::uint8_t *) { return cap + 1; }, &sent) ==
          Status::kExceedsLimit);
    std::vector<std::uint8_t> full(cap, 0x5a);
    REQUIRE(s.send(2, full.data(), full.size()) == Status::kOk);
    std::vector<std::uint8_t> ids;
    CHECK(owner.rx.poll(
              4,
              [](void *arg, std::uint8_t id, void *, std::size_t) {
                  static_cast<std::vector<std::uint8_t> *>(arg)->push_back(id);
              },
              &ids) == 2);
    CHECK(ids == std::vector<std::uint8_t>{2});
    CHECK(owner.rx.state() == Status::kOk);
    CHECK(s.tx.state() == Status::kOk);
}

TEST_CASE("p2p FIFO: a header whose geometry does not fit is refused at "
          "attach",
          "[mm][fifo][trust]")
{
    const QuietLog quiet;
    Owner owner(4, 256);
    // The owner's header as a corrupted peer maps and rewrites it.
    Segment view;
    REQUIRE(Segment::attach_proc(getpid(), owner.fifo.fd(), owner.fifo.bytes(),
                                 &view) == Status::kOk);
    auto *hdr = static_cast<RingHeader *>(view.data());
    const RingGeometry saved{hdr->num_members, hdr->num_slots, hdr->slot_bytes};
    const int field = GENERATE(0, 1, 2, 3, 4);
    if (field == 0) {
        hdr->slot_bytes = 1U << 30;
    } else if (field == 1) {
        hdr->num_slots = 0;
    } else if (field == 2) {
        hdr->num_slots = 1U << 30;
    } else if (field == 3) {
        hdr->num_members = 0;
    } else {
        hdr->magic.store(0);
    }
    Sender s;
    CHECK(s.attach(owner) == Status::kInvalidParam);
    hdr->num_members = saved.num_members;
    hdr->num_slots = saved.num_slots;
    hdr->slot_bytes = saved.slot_bytes;
    hdr->magic.store(kRingMagic);
    CHECK(s.attach(owner) == Status::kOk);
}
