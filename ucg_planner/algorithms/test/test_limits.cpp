// SPDX-License-Identifier: BSD-3-Clause
// Channel limits in the request (issue 13 part 3): one-to-many messages
// stay within their channel's largest message, split to its preferred
// size, and plans are the same for every block size of a size class.
#include "algorithms/registry.h"

#include <catch2/catch.hpp>

#include <string>

using namespace ucg::algorithms;
using ucg::plan::Collective;

namespace {

// Every level shm (the top too), or mcast where `mcast`.
Request with_levels(Collective c, int p, int group, bool mcast)
{
    Request q;
    q.collective = c;
    q.nranks = p;
    q.levels = make_levels(p, {group});
    q.per_level = {{mcast ? Shape::kMcast : Shape::kShm, 2}};
    q.top = "tree";
    return q;
}

// The largest one-to-many message of the plan, in bytes, for blocks of
// `bytes` bytes (one-byte elements).
std::size_t largest_group_message(const ucg::plan::Plan &p, std::size_t bytes)
{
    std::size_t most = 0;
    for (const auto &prog : p.ranks) {
        for (const auto &op : prog.ops) {
            if (ucg::plan::is_one_to_many(op.kind) &&
                ucg::plan::is_send(op.kind)) {
                most = std::max(
                    most, ucg::plan::range_elements(op.src, p.nchunks, bytes));
            }
        }
    }
    return most;
}

} // namespace

TEST_CASE("size classes are powers of two", "[plan][algorithms][limits]")
{
    CHECK(size_class(0) == 0);
    CHECK(size_class(1) == 1);
    CHECK(size_class(3) == 4);
    CHECK(size_class(4096) == 4096);
    CHECK(size_class(4097) == 8192);
}

TEST_CASE("fit_chunks honours the largest and the preferred message",
          "[plan][algorithms][limits]")
{
    Request q;
    q.segments = 2;
    q.block_bytes = 100000; // class 131072
    CHECK(fit_chunks(q, ucg::plan::Channel::kShmBcast, 1) == 2);
    q.shm_bcast.max_bytes = 40000; // pieces of 32768
    CHECK(fit_chunks(q, ucg::plan::Channel::kShmBcast, 1) == 4);
    CHECK(fit_chunks(q, ucg::plan::Channel::kShmBcast, 3) == 16);
    CHECK(fit_chunks(q, ucg::plan::Channel::kShmIncast, 3) == 2);
    q.shm_bcast.seg_bytes = 8192;
    CHECK(fit_chunks(q, ucg::plan::Channel::kShmBcast, 1) == 16);
    q.shm_bcast.seg_bytes = 1;
    CHECK(fit_chunks(q, ucg::plan::Channel::kShmBcast, 1) ==
          kMaxPreferredChunks);
    q.shm_bcast.max_bytes = 16; // never capped
    CHECK(fit_chunks(q, ucg::plan::Channel::kShmBcast, 1) == 8192);
    q.block_bytes = 0; // unknown: segments as asked
    CHECK(fit_chunks(q, ucg::plan::Channel::kShmBcast, 1) == 2);
}

TEST_CASE("one-to-many messages fit their channel for every size of a class",
          "[plan][algorithms][limits]")
{
    struct Case {
        Collective c;
        const char *alg;
        bool mcast;
    };
    const Case cases[] = {
        {Collective::kBcast, "shm", false},
        {Collective::kReduce, "shm", false},
        {Collective::kBcast, "hierarchical", true},
        {Collective::kAllreduce, "hierarchical", false},
        {Collective::kAllreduce, "hierarchical", true},
        {Collective::kReduce, "hierarchical", false},
        {Collective::kAllgather, "hierarchical", false},
        {Collective::kReduceScatter, "hierarchical", true},
        {Collective::kGather, "hierarchical", false},
        {Collective::kAllgather, "hierarchical", true},
    };
    constexpr std::size_t kMax = 1000; // pieces of 512
    for (const Case &k : cases) {
        INFO(ucg::plan::to_string(k.c)
             << "/" << k.alg << (k.mcast ? " mcast" : " shm"));
        Request q = with_levels(k.c, 6, 3, k.mcast);
        for (ChannelLimits *l : {&q.shm_bcast, &q.shm_incast, &q.mcast}) {
            l->max_bytes = kMax;
        }
        ucg::plan::Plan first;
        for (std::size_t bytes : {2049, 3000, 4096}) { // class 4096
            q.block_bytes = bytes;
            const auto p = build(k.alg, q);
            REQUIRE(p.ok());
            CHECK(ucg::plan::validate(p.value()).empty());
            CHECK(ucg::plan::check_symbolic(p.value()).empty());
            const std::size_t most = largest_group_message(p.value(), bytes);
            CHECK(most > 0);
            CHECK(most <= kMax);
            if (bytes == 2049) {
                first = p.value();
            } else {
                CHECK(p.value() == first); // one plan per class
            }
        }
        // The next class needs more chunks.
        q.block_bytes = 4097;
        const auto next = build(k.alg, q);
        REQUIRE(next.ok());
        CHECK(next.value().nchunks > first.nchunks);
        CHECK(largest_group_message(next.value(), 8192) <= kMax);
    }
}

TEST_CASE("one-to-many messages pipeline at the preferred size",
          "[plan][algorithms][limits]")
{
    Request q = with_levels(Collective::kBcast, 4, 4, false);
    q.block_bytes = 1 << 20;
    q.shm_bcast.seg_bytes = 64 << 10;
    const auto p = build("hierarchical", q);
    REQUIRE(p.ok());
    CHECK(p.value().nchunks == 16);
    CHECK(largest_group_message(p.value(), q.block_bytes) == (64u << 10));
    // Point-to-point only: the limits change nothing.
    q.per_level = {{Shape::kKnomial, 2}};
    CHECK(build("hierarchical", q).value().nchunks == 1);
}
