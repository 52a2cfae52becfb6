// SPDX-License-Identifier: BSD-3-Clause
// Scripts of direct messages (direct.h) for mm_incast core tests: one
// member runs a list of DirectSpecs through a group's DirectArea, posting
// a window at a time, and checks every result against a member-order
// reference (the same bits on every member).
#pragma once

#include "incast_script.h"

#include "uct_mm_common/backoff.h"

#include <ucg_test/barrier_witness.h>

namespace incast_test {

using uct_mm_incast::DirectArea;
using uct_mm_incast::DirectColl;
using uct_mm_incast::DirectMsg;

/// The group's direct area once this member has joined (progress drives
/// the attach), or nullptr when member 0 configured none.
inline DirectArea *direct_of(IncastGroup &g)
{
    uct_mm_common::Backoff backoff;
    while (g.busy() && g.direct() == nullptr) {
        g.progress(uct_mm_common::test::on_complete, nullptr);
        backoff.pause();
    }
    return g.direct();
}

/// Posts, retrying while the queue is full; returns the post's status.
inline Status direct_post(DirectArea &d, const DirectMsg &m, std::uint64_t *id)
{
    uct_mm_common::Backoff backoff;
    Status st;
    while ((st = d.post(m, id)) == Status::kNoResource) {
        backoff.pause();
    }
    return st;
}

/// Tests until message `id` completes; returns its status.
inline Status direct_wait(DirectArea &d, std::uint64_t id)
{
    uct_mm_common::Backoff backoff;
    Status st;
    while ((st = d.test(id)) == Status::kInProgress) {
        backoff.pause();
    }
    return st;
}

struct DirectSpec {
    DirectColl coll = DirectColl::kAllreduce;
    uint32_t root = 0;
    ucg_op_t op = UCG_OP_SUM;
    ucg_dtype_t dtype = UCG_DTYPE_INT32;
    std::size_t count = 1; ///< elements (bytes but for reductions)
    bool in_place = false; ///< src inside dst (gather, scatter: the root's)
};

inline std::size_t elem_bytes(const DirectSpec &s)
{
    const bool reduce =
        s.coll == DirectColl::kReduce || s.coll == DirectColl::kAllreduce;
    return reduce ? uct_mm_incast::dtype_bytes(s.dtype) : 1;
}

/// One member's buffers for message k: src, and dst with one guard byte.
struct DirectBuffers {
    std::vector<uint8_t> src, dst;
};

inline DirectMsg prepare_direct(const DirectSpec &s, uint32_t me, uint32_t n,
                                uint64_t k, DirectBuffers *b)
{
    const std::size_t bytes = s.count * elem_bytes(s);
    const bool all = s.coll == DirectColl::kAllgather;
    const bool a2a = s.coll == DirectColl::kAlltoall;
    const bool gather = s.coll == DirectColl::kGather;
    const bool scatter = s.coll == DirectColl::kScatter;
    const std::size_t in = (a2a || scatter ? n : 1) * bytes; // src bytes
    DirectMsg m;
    m.coll = s.coll;
    m.root = s.root;
    m.op = s.op;
    m.dtype = s.dtype;
    m.length = s.coll == DirectColl::kBarrier ? 0 : bytes;
    b->src.assign(in + 1, 0);
    b->dst.assign((all || a2a || gather ? n : 1) * bytes + 1, 0xee);
    if (s.coll == DirectColl::kBcast || all || a2a || gather || scatter) {
        for (std::size_t i = 0; i < in; ++i) {
            b->src[i] = byte_value(me, k, i);
        }
    } else if (s.coll != DirectColl::kBarrier) {
        with_dtype(s.dtype, [&](auto t) {
            using T = decltype(t);
            for (std::size_t i = 0; i < s.count; ++i) {
                const T v = value<T>(me, k, i);
                std::memcpy(b->src.data() + i * sizeof(T), &v, sizeof(T));
            }
            return 0;
        });
    }
    m.src = b->src.data();
    m.dst = b->dst.data();
    if (s.in_place && scatter) {
        // The root's block stays in its src.
        if (me == s.root) {
            m.dst = b->src.data() + me * bytes;
        }
    } else if (s.in_place && (!gather || me == s.root)) {
        uint8_t *mine = b->dst.data() + (all || gather ? me * bytes : 0);
        std::memcpy(mine, b->src.data(), in);
        m.src = mine;
    }
    return m;
}

/// This member's checks of message k.
inline void check_direct(const DirectSpec &s, uint32_t me, uint32_t n,
                         uint64_t k, const DirectBuffers &b)
{
    const std::size_t bytes = s.count * elem_bytes(s);
    const uint8_t *got = b.dst.data();
    if (s.coll == DirectColl::kBarrier ||
        (s.coll == DirectColl::kBcast && me == s.root) ||
        ((s.coll == DirectColl::kReduce || s.coll == DirectColl::kGather) &&
         me != s.root)) {
        if (!s.in_place) {
            UCG_CHECK_EQ(int{got[0]}, 0xee); // untouched
        }
        return;
    }
    if (s.coll == DirectColl::kAlltoall) {
        for (uint32_t m = 0; m < n; ++m, got += bytes) {
            for (std::size_t i = 0; i < bytes; ++i) {
                UCG_CHECK_EQ(int{got[i]},
                             int{byte_value(m, k, me * bytes + i)});
            }
        }
        UCG_CHECK_EQ(int{*got}, 0xee);
        return;
    }
    if (s.coll == DirectColl::kScatter) {
        if (s.in_place && me == s.root) {
            return; // its src was spoiled after the post: nothing to read
        }
        for (std::size_t i = 0; i < bytes; ++i) {
            UCG_CHECK_EQ(int{got[i]},
                         int{byte_value(s.root, k, me * bytes + i)});
        }
        UCG_CHECK_EQ(int{got[bytes]}, 0xee);
        return;
    }
    if (s.coll == DirectColl::kBcast || s.coll == DirectColl::kAllgather ||
        s.coll == DirectColl::kGather) {
        const uint32_t from = s.coll == DirectColl::kBcast ? s.root : 0;
        const uint32_t to = s.coll == DirectColl::kBcast ? s.root + 1 : n;
        for (uint32_t m = from; m < to; ++m, got += bytes) {
            for (std::size_t i = 0; i < bytes; ++i) {
                UCG_CHECK_EQ(int{got[i]}, int{byte_value(m, k, i)});
            }
        }
        UCG_CHECK_EQ(int{*got}, 0xee); // nothing past the result
        return;
    }
    with_dtype(s.dtype, [&](auto t) {
        using T = decltype(t);
        for (std::size_t i = 0; i < s.count; ++i) {
            T ref = value<T>(0, k, i);
            for (uint32_t m = 1; m < n; ++m) {
                ref = ref_apply(s.op, ref, value<T>(m, k, i));
            }
            UCG_CHECK(std::memcmp(got + i * sizeof(T), &ref, sizeof(T)) == 0);
        }
        return 0;
    });
    UCG_CHECK_EQ(int{got[bytes]}, 0xee);
}

/// A barrier's witness stamps (ucg_test/barrier_witness.h) around message
/// k: arrive before its post, leave after its completion.
inline void witness_arrive(ucg_test::BarrierWitness *w, const DirectSpec &s,
                           uint32_t me, std::size_t k)
{
    if (w != nullptr && s.coll == DirectColl::kBarrier) {
        w->arrive(static_cast<int>(me), k);
    }
}

inline void witness_left(const ucg_test::BarrierWitness *w, const DirectSpec &s,
                         uint32_t me, std::size_t k)
{
    if (w != nullptr && s.coll == DirectColl::kBarrier) {
        const std::string early = w->left(static_cast<int>(me), k);
        if (!early.empty()) {
            ucg_test::fail_check(__FILE__, __LINE__, "barrier", early);
        }
    }
}

/// Runs `script` as member `me` of `n`, `window` posts before the tests;
/// its barriers are witnessed by `witness` (made for `n` ranks) when given.
inline void run_direct_script(DirectArea &d, uint32_t me, uint32_t n,
                              const std::vector<DirectSpec> &script,
                              unsigned window,
                              ucg_test::BarrierWitness *witness = nullptr)
{
    std::vector<DirectBuffers> bufs(window);
    std::vector<std::uint64_t> ids(window);
    for (std::size_t base = 0; base < script.size(); base += window) {
        const std::size_t w =
            std::min<std::size_t>(window, script.size() - base);
        for (std::size_t i = 0; i < w; ++i) {
            const DirectMsg m =
                prepare_direct(script[base + i], me, n, base + i, &bufs[i]);
            witness_arrive(witness, script[base + i], me, base + i);
            const Status st = direct_post(d, m, &ids[i]);
            UCG_CHECK(st == Status::kOk || st == Status::kInProgress);
            // The post took src: spoil it, as a caller may reuse it.
            std::fill(bufs[i].src.begin(), bufs[i].src.end(), 0x5a);
        }
        for (std::size_t i = 0; i < w; ++i) {
            UCG_CHECK(direct_wait(d, ids[i]) == Status::kOk);
            witness_left(witness, script[base + i], me, base + i);
            check_direct(script[base + i], me, n, base + i, bufs[i]);
        }
    }
}

/// Every kind: a barrier, bcast and reduce from every root, allreduce of
/// every operator of every dtype class (in place every other), allgather,
/// alltoall, gather and scatter from every root (in place and not);
/// `max` bytes (an alltoall's and a scatter's blocks: their share) and a
/// small size each.
inline std::vector<DirectSpec> direct_script(uint32_t n, std::size_t max)
{
    std::vector<DirectSpec> script;
    script.push_back({DirectColl::kBarrier});
    for (uint32_t root = 0; root < n; ++root) {
        for (std::size_t bytes : {std::size_t{1}, max}) {
            script.push_back(
                {.coll = DirectColl::kBcast, .root = root, .count = bytes});
            script.push_back({.coll = DirectColl::kReduce,
                              .root = root,
                              .op = UCG_OP_MAX,
                              .dtype = UCG_DTYPE_INT16,
                              .count = bytes < 2 ? 1 : bytes / 2});
        }
    }
    bool in_place = false;
    for (ucg_dtype_t dt : dtype_classes()) {
        for (ucg_op_t op : ops_for(dt)) {
            for (std::size_t c :
                 {std::size_t{1}, max / uct_mm_incast::dtype_bytes(dt)}) {
                script.push_back({.coll = DirectColl::kAllreduce,
                                  .op = op,
                                  .dtype = dt,
                                  .count = c,
                                  .in_place = in_place});
                in_place = !in_place;
            }
        }
    }
    for (std::size_t bytes : {std::size_t{0}, std::size_t{3}, max}) {
        script.push_back({.coll = DirectColl::kAllgather, .count = bytes});
        script.push_back(
            {.coll = DirectColl::kAllgather, .count = bytes, .in_place = true});
    }
    for (std::size_t bytes : {std::size_t{1}, max / n}) {
        for (bool inside : {false, true}) {
            script.push_back({.coll = DirectColl::kAlltoall,
                              .count = bytes,
                              .in_place = inside});
        }
    }
    for (uint32_t root = 0; root < n; ++root) {
        for (bool inside : {false, true}) {
            for (std::size_t bytes : {std::size_t{1}, max}) {
                script.push_back({.coll = DirectColl::kGather,
                                  .root = root,
                                  .count = bytes,
                                  .in_place = inside});
            }
            for (std::size_t bytes : {std::size_t{1}, max / n}) {
                script.push_back({.coll = DirectColl::kScatter,
                                  .root = root,
                                  .count = bytes,
                                  .in_place = inside});
            }
        }
    }
    script.push_back({DirectColl::kBarrier});
    return script;
}

} // namespace incast_test
