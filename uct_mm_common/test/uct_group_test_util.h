// SPDX-License-Identifier: BSD-3-Clause
// Helpers for the UCT-level group tests of both mm transports: address
// exchange and barriers between forked ranks, group creation through a
// transport's uct_<tl>_group_create, post-and-wait through uct_group.h,
// and the count of worker progress callbacks alive (progress_counter.cpp
// interposes uct_worker_progress_register_safe in the test executable).
#pragma once

#include "uct_mm_common/backoff.h"

#include "ucg_test/check.h"

#include <atomic>
#include <cstdint>
#include <uct_group.h>
#include <utility>
#include <vector>

namespace uct_group_test {

inline constexpr unsigned kMaxRanks = 8;
inline constexpr std::size_t kAddrBytes = 64;
inline constexpr unsigned kPhases = 16;

/// In a shared mapping: iface addresses and barrier counters.
struct Board {
    std::atomic<unsigned> arrived[kPhases];
    unsigned char addr[kMaxRanks][kAddrBytes];
};

inline void barrier(Board *b, unsigned phase, unsigned n)
{
    b->arrived[phase].fetch_add(1);
    uct_mm_common::Backoff backoff;
    while (b->arrived[phase].load() < n) {
        backoff.pause();
    }
}

using CreateFn = ucs_status_t (*)(uct_iface_h, const uct_group_params_t *,
                                  uct_group_h *);

/// Puts this rank's iface address on the board.
inline void publish_address(uct_iface_h iface, Board *b, int rank)
{
    UCG_CHECK(uct_iface_get_address(iface, reinterpret_cast<uct_iface_addr_t *>(
                                               b->addr[rank])) == UCS_OK);
}

/// Group parameters of member `rank` whose member i has the address the
/// board holds for rank `from[i]`.
struct GroupParams {
    GroupParams(const Board *b, std::vector<unsigned> from, int rank,
                std::uint64_t key)
    {
        for (unsigned r : from) {
            addrs.push_back(
                reinterpret_cast<const uct_iface_addr_t *>(b->addr[r]));
        }
        params.field_mask = UCT_GROUP_PARAM_FIELD_KEY |
                            UCT_GROUP_PARAM_FIELD_MEMBER_INDEX |
                            UCT_GROUP_PARAM_FIELD_GROUP_SIZE |
                            UCT_GROUP_PARAM_FIELD_MEMBER_ADDRS;
        params.group_key = key;
        params.member_index = static_cast<unsigned>(rank);
        params.group_size = static_cast<unsigned>(addrs.size());
        params.member_addrs = addrs.data();
    }
    GroupParams(const GroupParams &) = delete;
    GroupParams &operator=(const GroupParams &) = delete;

    std::vector<const uct_iface_addr_t *> addrs;
    uct_group_params_t params{};
};

/// Publishes this rank's iface address, waits for all (barrier phase 0),
/// creates the group (which does not wait for the others).
inline uct_group_h make_group(CreateFn create, uct_iface_h iface, Board *b,
                              int rank, unsigned n, std::uint64_t key)
{
    publish_address(iface, b, rank);
    barrier(b, 0, n);
    std::vector<unsigned> from(n);
    for (unsigned i = 0; i < n; ++i) {
        from[i] = i;
    }
    GroupParams p(b, std::move(from), rank, key);
    uct_group_h g = nullptr;
    UCG_CHECK(create(iface, &p.params, &g) == UCS_OK);
    return g;
}

/// A completion tests can wait on.
struct Done {
    uct_completion_t comp;
    explicit Done() : comp{on_done, 1, UCS_OK} {}
    bool done() const { return comp.count == 0; }
    static void on_done(uct_completion_t *) {}
};

/// Posts (retrying after progress while no resource); UCS_INPROGRESS
/// leaves `d` to complete from uct_worker_progress.
inline ucs_status_t post(uct_worker_h worker, uct_group_h g, bool send,
                         const uct_group_msg_t &msg, Done *d)
{
    uct_mm_common::Backoff backoff;
    for (;;) {
        const ucs_status_t st = send ? uct_group_send(g, &msg, &d->comp)
                                     : uct_group_recv(g, &msg, &d->comp);
        if (st != UCS_ERR_NO_RESOURCE) {
            if (st != UCS_INPROGRESS) {
                d->comp.count = 0;
                d->comp.status = st;
            }
            return st;
        }
        uct_worker_progress(worker);
        backoff.pause();
    }
}

inline ucs_status_t wait(uct_worker_h worker, Done *d)
{
    uct_mm_common::Backoff backoff;
    while (!d->done()) {
        if (uct_worker_progress(worker) == 0) {
            backoff.pause();
        }
    }
    return d->comp.status;
}

inline ucs_status_t post_wait(uct_worker_h worker, uct_group_h g, bool send,
                              const uct_group_msg_t &msg)
{
    Done d;
    post(worker, g, send, msg, &d);
    return wait(worker, &d);
}

/// Progresses until the group is idle (every member joined, nothing
/// posted): a fixed number of calls after that change nothing.
inline void settle(uct_worker_h worker, int calls = 2000)
{
    uct_mm_common::Backoff backoff;
    for (int i = 0; i < calls; ++i) {
        uct_worker_progress(worker);
        backoff.pause();
    }
}

/// Worker progress callbacks registered and not removed, counted by the
/// interposer in this executable (every registration, any caller).
int live_progress_callbacks();

} // namespace uct_group_test
