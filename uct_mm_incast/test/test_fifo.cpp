// SPDX-License-Identifier: BSD-3-Clause
// The per-iface receive FIFO: many producers, one consumer, in order per
// producer, flow control when full.
#include "fifo.h"

#include "uct_mm_common/backoff.h"

#include <ucg_test/check.h>
#include <ucg_test/thread_ranks.h>

#include <catch2/catch.hpp>

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <vector>

using namespace uct_mm_incast;
using uct_mm_common::Backoff;

TEST_CASE("FIFO delivers every producer's messages in order (threads)",
          "[mm_incast][fifo][threads]")
{
    FifoReceiver rx;
    REQUIRE(rx.init(8, 100) == UCS_OK);
    constexpr int kProducers = 3;
    constexpr uint32_t kMsgs = 3000;
    std::atomic<int> done{0};
    ucg_test::run_thread_ranks(kProducers + 1, [&](int r) {
        Backoff backoff;
        if (r == kProducers) {
            std::vector<uint32_t> next(kProducers, 0);
            uint32_t total = 0;
            while (total < kProducers * kMsgs) {
                unsigned n =
                    rx.poll(4, [&](uint8_t id, std::byte *data, uint32_t len) {
                        uint32_t seq;
                        UCG_CHECK(id < kProducers);
                        UCG_CHECK_EQ(len, 4u + id);
                        std::memcpy(&seq, data, sizeof(seq));
                        UCG_CHECK_EQ(seq, next[id]);
                        ++next[id];
                    });
                total += n;
                if (n == 0) {
                    backoff.pause();
                } else {
                    backoff.reset();
                }
            }
            return;
        }
        FifoSender tx;
        UCG_CHECK_EQ(static_cast<int>(tx.attach(getpid(), rx.fd(), rx.bytes())),
                     0);
        for (uint32_t i = 0; i < kMsgs; ++i) {
            uint64_t index;
            std::byte *p;
            while ((p = tx.claim(&index)) == nullptr) {
                backoff.pause();
            }
            backoff.reset();
            std::memcpy(p, &i, sizeof(i));
            tx.publish(index, static_cast<uint8_t>(r),
                       4u + static_cast<uint32_t>(r));
        }
        ++done;
    });
    CHECK(done == kProducers);
}

TEST_CASE("FIFO refuses to claim when the consumer has not drained",
          "[mm_incast][fifo]")
{
    FifoReceiver rx;
    REQUIRE(rx.init(4, 64) == UCS_OK);
    FifoSender tx;
    REQUIRE(tx.attach(getpid(), rx.fd(), rx.bytes()) == UCS_OK);
    uint64_t index;
    for (int i = 0; i < 4; ++i) {
        REQUIRE(tx.claim(&index) != nullptr);
        tx.publish(index, 1, 0);
    }
    CHECK(tx.full());
    CHECK(tx.claim(&index) == nullptr);
    CHECK(rx.poll(1, [](uint8_t, std::byte *, uint32_t) {}) == 1);
    CHECK_FALSE(tx.full());
    CHECK(tx.claim(&index) != nullptr);
}
