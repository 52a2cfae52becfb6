// SPDX-License-Identifier: BSD-3-Clause
// Test helpers for GroupCore implementations (both transports' core tests):
// post and wait with progress and backoff, and byte patterns.
#pragma once

#include "uct_mm_common/backoff.h"
#include "uct_mm_common/group_core.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace uct_mm_common::test {

/// The cookie tests post: set by the completion.
struct Pending {
    bool done = false;
    Status status = Status::kOk;
};

inline void on_complete(void *, void *cookie, Status st)
{
    auto *p = static_cast<Pending *>(cookie);
    p->done = true;
    p->status = st;
}

/// Posts (retrying after progress while kNoResource) without waiting.
inline Status post(GroupCore &g, bool send, const Message &m, Pending *p)
{
    Backoff backoff;
    for (;;) {
        const Status st = g.post(send, m, p);
        if (st != Status::kNoResource) {
            if (st != Status::kInProgress) {
                p->done = true;
                p->status = st;
            }
            return st;
        }
        if (g.progress(on_complete, nullptr) == 0) {
            backoff.pause();
        }
    }
}

/// Progresses until `p` completes; returns its status.
inline Status wait(GroupCore &g, Pending *p)
{
    Backoff backoff;
    while (!p->done) {
        if (g.progress(on_complete, nullptr) == 0) {
            backoff.pause();
        } else {
            backoff.reset();
        }
    }
    return p->status;
}

/// Posts and waits.
inline Status post_wait(GroupCore &g, bool send, const Message &m)
{
    Pending p;
    post(g, send, m, &p);
    return wait(g, &p);
}

/// Byte i of message `msg` from member `member`.
inline std::uint8_t pattern(unsigned member, unsigned msg, std::size_t i)
{
    return static_cast<std::uint8_t>(member * 131 + msg * 7 + i * 13 + 1);
}

inline std::vector<std::uint8_t> make_bytes(unsigned member, unsigned msg,
                                            std::size_t n)
{
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i) {
        v[i] = pattern(member, msg, i);
    }
    return v;
}

/// Index of the first byte that differs from the pattern, or n.
inline std::size_t first_mismatch(const std::uint8_t *p, unsigned member,
                                  unsigned msg, std::size_t n)
{
    for (std::size_t i = 0; i < n; ++i) {
        if (p[i] != pattern(member, msg, i)) {
            return i;
        }
    }
    return n;
}

} // namespace uct_mm_common::test
