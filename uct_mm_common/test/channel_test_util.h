// SPDX-License-Identifier: BSD-3-Clause
// Helpers for the p2p FIFO channel tests: message patterns, a receive loop.
#pragma once

#include "uct_mm_common/channel.h"

#include "ucg_test/check.h"
#include "uct_mm_common/backoff.h"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

namespace uct_mm_common::test {

/// Byte `i` of the message (origin, seq): checkable by every receiver.
inline std::uint8_t pattern_byte(unsigned origin, unsigned seq, std::size_t i)
{
    return static_cast<std::uint8_t>(origin * 131 + seq * 7 + i * 13 + 1);
}

/// Message: [origin u32][seq u32][pattern...] (at least 8 bytes on the
/// wire; a message "of size s < 8" carries only the header).
inline std::vector<std::uint8_t> make_message(unsigned origin, unsigned seq,
                                              std::size_t size)
{
    std::vector<std::uint8_t> m(size < 8 ? 8 : size);
    std::memcpy(m.data(), &origin, 4);
    std::memcpy(m.data() + 4, &seq, 4);
    for (std::size_t i = 8; i < m.size(); ++i) {
        m[i] = pattern_byte(origin, seq, i);
    }
    return m;
}

struct Received {
    unsigned origin = 0;
    unsigned seq = 0;
    std::size_t length = 0;
    bool pattern_ok = true;
    std::uint8_t am_id = 0;
};

inline void record(void *arg, std::uint8_t am_id, void *data, std::size_t len)
{
    auto *out = static_cast<std::vector<Received> *>(arg);
    Received r;
    r.am_id = am_id;
    r.length = len;
    const auto *b = static_cast<const std::uint8_t *>(data);
    if (len >= 8) {
        std::memcpy(&r.origin, b, 4);
        std::memcpy(&r.seq, b + 4, 4);
        for (std::size_t i = 8; i < len; ++i) {
            if (b[i] != pattern_byte(r.origin, r.seq, i)) {
                r.pattern_ok = false;
                break;
            }
        }
    }
    out->push_back(r);
}

/// Sends one message (inline or CMA by size) and waits until the root may
/// reuse its buffer; progresses `ch` as a receiver meanwhile.
inline Status send_message(Channel &ch, const std::vector<std::uint8_t> &m,
                           std::vector<Received> *inbox)
{
    uct_mm_common::Backoff backoff;
    for (;;) {
        Status st;
        bool cma = m.size() > ch.max_inline();
        if (!cma) {
            std::size_t len = 0;
            st = ch.send_packed(
                1,
                [&](std::uint8_t *d) {
                    std::memcpy(d, m.data(), m.size());
                    return m.size();
                },
                &len);
        } else {
            RemoteIov iov{reinterpret_cast<std::uint64_t>(m.data()), m.size()};
            st = ch.send_cma(2, nullptr, 0, &iov, 1, nullptr);
        }
        if (st == Status::kOk) {
            if (!cma) {
                return st;
            }
            Status done = Status::kNoResource;
            auto cb = [](void *arg, void *, Status s) {
                *static_cast<Status *>(arg) = s;
            };
            while (done == Status::kNoResource) {
                ch.progress_completions(cb, &done);
                ch.poll(16, record, inbox);
                backoff.pause();
            }
            return done;
        }
        if (st != Status::kNoResource) {
            return st;
        }
        ch.poll(16, record, inbox);
        backoff.pause();
    }
}

/// Polls until `inbox` holds `count` messages or the channel fails.
inline Status receive(Channel &ch, std::vector<Received> *inbox,
                      std::size_t count)
{
    uct_mm_common::Backoff backoff;
    while (inbox->size() < count) {
        if (ch.poll(16, record, inbox) == 0) {
            if (ch.state() != Status::kOk) {
                return ch.state();
            }
            ch.check_health();
            backoff.pause();
        }
    }
    return Status::kOk;
}

} // namespace uct_mm_common::test
