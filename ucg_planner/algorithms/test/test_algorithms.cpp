// SPDX-License-Identifier: BSD-3-Clause
// Targeted algorithm tests: registry lookups, shapes and step counts.
#include "algorithms/common.h"

#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace ucg::algorithms;
using ucg::plan::Collective;

TEST_CASE("registry lists every collective and finds by name",
          "[plan][algorithms]")
{
    for (int c = 0; c < ucg::plan::kNumCollectives; ++c) {
        const auto coll = static_cast<Collective>(c);
        int n = 0;
        for (const auto &a : registry()) {
            n += a.collective == coll ? 1 : 0;
        }
        CHECK(n >= 2);
    }
    CHECK(find_algorithm(Collective::kBcast, "knomial") != nullptr);
    CHECK(find_algorithm(Collective::kBcast, "nope") == nullptr);
    Request q;
    q.collective = Collective::kBcast;
    q.nranks = 4;
    q.root = 4;
    CHECK_FALSE(build("knomial", q).ok());
    q.root = 1;
    CHECK(build("knomial", q).ok());
    CHECK_FALSE(build("hierarchical", q).ok()); // no levels
}

namespace {

// Point-to-point messages between ranks of different groups of four
// (ranks numbered group by group), as (from, to) pairs.
std::vector<std::pair<int, int>> cross_group(const ucg::plan::Plan &plan)
{
    std::vector<std::pair<int, int>> out;
    for (int r = 0; r < plan.nranks; ++r) {
        for (const auto &op : plan.ranks[static_cast<std::size_t>(r)].ops) {
            if (op.kind == ucg::plan::OpKind::kSend &&
                op.peers[0] / 4 != r / 4) {
                out.emplace_back(r, op.peers[0]);
            }
        }
    }
    return out;
}

ucg::plan::Plan hier_plan(Collective c, const std::string &top)
{
    Request q;
    q.collective = c;
    q.nranks = 16;
    q.levels = make_levels(16, {4});
    q.top = top;
    auto plan = build("hierarchical", q);
    REQUIRE(plan.ok());
    return plan.value();
}

} // namespace

TEST_CASE("hierarchical exchanges cross groups only between leaders",
          "[plan][algorithms][allgather][alltoall][reduce_scatter]")
{
    // Four groups of four: 4 top leaders (0, 4, 8, 12).
    struct Case {
        Collective c;
        const char *top;
        std::size_t messages; // between the leaders
    };
    const Case cases[] = {
        {Collective::kAllgather, "ring", 12},
        {Collective::kAllgather, "linear", 12},
        {Collective::kAllgather, "bruck", 8},
        {Collective::kAllgather, "recursive_doubling", 8},
        {Collective::kReduceScatter, "ring", 12},
        {Collective::kReduceScatter, "linear", 12},
        {Collective::kAlltoall, "linear", 12},
    };
    for (const Case &k : cases) {
        INFO(ucg::plan::to_string(k.c) << " top=" << k.top);
        const auto msgs = cross_group(hier_plan(k.c, k.top));
        CHECK(msgs.size() == k.messages);
        std::set<int> senders;
        for (auto [from, to] : msgs) {
            CHECK(from % 4 == 0);
            CHECK(to % 4 == 0);
            senders.insert(from);
        }
        // Every leader sends (no funnel through rank 0).
        CHECK(senders == std::set<int>{0, 4, 8, 12});
    }
}

TEST_CASE("the registry says which algorithms keep rank order",
          "[plan][algorithms][order]")
{
    using Names = std::set<std::string>;
    const std::map<Collective, Names> ordered = {
        {Collective::kReduce, {"ordered_knomial"}},
        {Collective::kAllreduce, {"linear", "knomial", "chain"}},
        {Collective::kReduceScatter, {}},
        {Collective::kScan, {"chain", "recursive_doubling"}},
        {Collective::kExscan, {"chain", "recursive_doubling"}},
    };
    for (const Algorithm &a : registry()) {
        INFO(ucg::plan::to_string(a.collective) << "/" << a.name);
        const auto it = ordered.find(a.collective);
        if (it == ordered.end()) {
            CHECK(a.preserves_order); // no user operator
            continue;
        }
        CHECK(a.preserves_order == (it->second.count(a.name) == 1));
        if (a.preserves_order) {
            continue;
        }
        // The others combine out of rank order somewhere at 7 ranks.
        Request q;
        q.collective = a.collective;
        q.nranks = 7;
        q.root = 2;
        q.levels = make_levels(7, {3});
        const auto p = build(a.name, q);
        REQUIRE(p.ok());
        REQUIRE(ucg::plan::check_symbolic(p.value()).empty());
        CHECK_FALSE(
            ucg::plan::check_symbolic(p.value(), ucg::plan::Combine::kOrdered)
                .empty());
    }
}

TEST_CASE("scan and exscan combine in rank order", "[plan][algorithms][order]")
{
    for (Collective c : {Collective::kScan, Collective::kExscan}) {
        for (const char *alg : {"chain", "recursive_doubling"}) {
            for (int p : {1, 2, 6, 9}) {
                INFO(ucg::plan::to_string(c) << "/" << alg << " P=" << p);
                Request q;
                q.collective = c;
                q.nranks = p;
                q.segments = 2;
                const auto plan = build(alg, q);
                REQUIRE(plan.ok());
                CHECK(ucg::plan::validate(plan.value()).empty());
                CHECK(ucg::plan::check_symbolic(plan.value(),
                                                ucg::plan::Combine::kOrdered)
                          .empty());
                // Exscan never writes rank 0's output.
                for (const auto &op : plan.value().ranks[0].ops) {
                    for (const auto &r : op.dst) {
                        CHECK((c == Collective::kScan ||
                               r.buf != ucg::plan::Buffer::kOutput));
                    }
                }
            }
        }
    }
}

TEST_CASE("builds refuse shm between hosts and mcast without multicast",
          "[plan][algorithms][placement]")
{
    Request q;
    q.collective = Collective::kBcast;
    q.nranks = 4;
    q.placement.host = {0, 0, 1, 1};
    auto flat = build("shm", q);
    REQUIRE_FALSE(flat.ok());
    CHECK_THAT(flat.error().message,
               Catch::Contains("algorithm 'shm' for bcast does not fit the "
                               "machine: rank 0 op 1 (bcast_send): shm_bcast "
                               "with rank 2 on another host"));
    // Hierarchical: shm inside the hosts is fine, across them is not.
    q.levels = make_levels(4, {2});
    q.per_level = {{Shape::kShm, 2}, {Shape::kKnomial, 2}};
    CHECK(build("hierarchical", q).ok());
    q.per_level = {{Shape::kShm, 2}};
    CHECK_FALSE(build("hierarchical", q).ok());
    q.per_level = {{Shape::kShm, 2}, {Shape::kMcast, 2}};
    CHECK_FALSE(build("hierarchical", q).ok());
    q.placement.mcast_domain = {0, 0, 0, 0};
    CHECK(build("hierarchical", q).ok());
    // A one-rank build checks its own groups.
    q.placement.host = {0, 0, 1, 2};
    q.only_rank = 0;
    CHECK(build("hierarchical", q).ok());
    q.only_rank = 2;
    CHECK_FALSE(build("hierarchical", q).ok());
}

TEST_CASE("one-rank exchanges ask for the full levels", "[plan][algorithms]")
{
    Request q;
    q.collective = Collective::kAllgather;
    q.nranks = 8;
    q.levels = make_levels(8, {4});
    q.only_rank = 5;
    CHECK(build("hierarchical", q).ok());
    q.levels = levels_for_rank(q.levels, 5, -1);
    const auto pruned = build("hierarchical", q);
    REQUIRE_FALSE(pruned.ok());
    CHECK_THAT(pruned.error().message,
               Catch::Contains("needs the full levels"));
}

namespace {

int count_kind(const ucg::plan::Plan &p, ucg::plan::OpKind k)
{
    int n = 0;
    for (const auto &prog : p.ranks) {
        for (const auto &op : prog.ops) {
            n += op.kind == k ? 1 : 0;
        }
    }
    return n;
}

// The hierarchical plan of `c` over groups of `sizes` with shm at every
// level and a ring on top, checked by the validator and symbolically.
ucg::plan::Plan checked_shm_hierarchical(Request &q, Collective c, int nranks,
                                         int root,
                                         const std::vector<int> &sizes)
{
    q.collective = c;
    q.nranks = nranks;
    q.root = root;
    q.levels = make_levels(nranks, sizes);
    q.per_level = {{Shape::kShm, 2}};
    q.top = "ring";
    auto p = build("hierarchical", q);
    REQUIRE(p.ok());
    REQUIRE(ucg::plan::validate(p.value()).empty());
    REQUIRE(ucg::plan::check_symbolic(p.value()).empty());
    return p.value();
}

} // namespace

TEST_CASE("hierarchical gathers use the shm incast where holdings are even",
          "[plan][algorithms][gather][allgather]")
{
    using ucg::plan::OpKind;
    for (Collective c : {Collective::kGather, Collective::kAllgather}) {
        INFO(ucg::plan::to_string(c));
        Request q;
        q.segments = 2;
        const ucg::plan::Plan plan = checked_shm_hierarchical(
            q, c, 12, c == Collective::kGather ? 4 : 0, {3, 2});
        // Per chunk: four groups of three, two pairs of leaders holding
        // three blocks each and, for gather, the top pair holding six;
        // allgather's top pair runs its ring point to point.
        const bool gather = c == Collective::kGather;
        CHECK(count_kind(plan, OpKind::kIncastRecv) == 2 * (gather ? 7 : 6));
        CHECK(count_kind(plan, OpKind::kSend) == (gather ? 0 : 4));
        // Uneven holdings above the first level: the leaders' tree.
        q.nranks = 7;
        q.root = 0;
        q.levels = make_levels(7, {3});
        auto p = build("hierarchical", q);
        REQUIRE(p.ok());
        CHECK(ucg::plan::validate(p.value()).empty());
        CHECK(ucg::plan::check_symbolic(p.value()).empty());
        CHECK(count_kind(p.value(), OpKind::kIncastRecv) == 2 * 2);
        // Not at a point-to-point level.
        q.per_level = {{Shape::kKnomial, 2}};
        p = build("hierarchical", q);
        REQUIRE(p.ok());
        CHECK(count_kind(p.value(), OpKind::kIncastRecv) == 0);
    }
}

TEST_CASE("a hierarchical gather, scatter or allgather leaf sends from its "
          "input or receives into its output, with no scratch and no copy",
          "[plan][algorithms][gather][scatter][allgather]")
{
    using ucg::plan::Buffer;
    using ucg::plan::OpKind;
    for (Collective c :
         {Collective::kGather, Collective::kScatter, Collective::kAllgather}) {
        // Two ranks on shm (the np=2 incast gather), and twelve on two
        // levels whose inner leaders relay.
        for (int nranks : {2, 12}) {
            INFO(ucg::plan::to_string(c) << " P=" << nranks);
            Request q;
            const ucg::plan::Plan plan = checked_shm_hierarchical(
                q, c, nranks, c == Collective::kAllgather ? 0 : 1,
                nranks == 2 ? std::vector<int>{2} : std::vector<int>{3, 2});
            const bool scatter = c == Collective::kScatter;
            // The leaves: P=2, the rank beside the root (allgather: none,
            // both ranks lead the top); P=12, every rank but the first of
            // each group of three (the root leads its group).
            std::vector<int> leaves;
            if (nranks == 2) {
                if (c != Collective::kAllgather) {
                    leaves = {0};
                }
            } else {
                const int lead0 = c == Collective::kAllgather ? 0 : q.root;
                for (int r = 0; r < nranks; ++r) {
                    if (r != (r < 3 ? lead0 : r - r % 3)) {
                        leaves.push_back(r);
                    }
                }
            }
            for (int r : leaves) {
                INFO("rank " << r);
                const auto &rp = plan.ranks[static_cast<size_t>(r)];
                REQUIRE_FALSE(rp.ops.empty());
                // Its first op moves its own block up (or takes it down).
                const auto &first = rp.ops[0];
                const auto &own = scatter ? first.dst : first.src;
                REQUIRE(own.size() == 1);
                CHECK(own[0].buf ==
                      (scatter ? Buffer::kOutput : Buffer::kInput));
                CHECK(rp.scratch_blocks == 0);
                for (const auto &op : rp.ops) {
                    CHECK(op.kind != OpKind::kCopy);
                }
            }
        }
    }
}

TEST_CASE("a leader gather or scatter moves each rank's own block from its "
          "input or into its output, copied only at the root",
          "[plan][algorithms][gather][scatter]")
{
    using ucg::plan::Buffer;
    using ucg::plan::OpKind;
    for (Collective c : {Collective::kGather, Collective::kScatter}) {
        for (int nranks : {2, 8}) {
            INFO(ucg::plan::to_string(c) << " P=" << nranks);
            Request q;
            q.collective = c;
            q.nranks = nranks;
            q.root = 1;
            q.levels = make_levels(nranks, {2});
            q.per_level = {{Shape::kKnomial, 2}};
            auto p = build("leader", q);
            REQUIRE(p.ok());
            REQUIRE(ucg::plan::validate(p.value()).empty());
            REQUIRE(ucg::plan::check_symbolic(p.value()).empty());
            const bool gather = c == Collective::kGather;
            const Buffer own = gather ? Buffer::kInput : Buffer::kOutput;
            for (int r = 0; r < nranks; ++r) {
                INFO("rank " << r);
                const auto &rp = p.value().ranks[static_cast<size_t>(r)];
                int copies = 0, relays = 0;
                bool own_moved = false;
                for (const auto &op : rp.ops) {
                    copies += op.kind == OpKind::kCopy ? 1 : 0;
                    const auto &ranges =
                        op.kind == OpKind::kSend ? op.src : op.dst;
                    for (const auto &range : ranges) {
                        own_moved |= range.buf == own;
                    }
                    // A relay moves more than its own block.
                    relays +=
                        op.kind == (gather ? OpKind::kRecv : OpKind::kSend) ? 1
                                                                            : 0;
                }
                CHECK(copies == (r == q.root ? 1 : 0));
                if (r != q.root) {
                    CHECK(own_moved);
                    CHECK((rp.scratch_blocks == 0) == (relays == 0));
                }
            }
        }
    }
}

TEST_CASE("a gather with segments sends each edge chunk by chunk",
          "[plan][algorithms][gather]")
{
    using ucg::plan::OpKind;
    for (const char *name : {"linear", "knomial"}) {
        INFO(name);
        Request q;
        q.collective = Collective::kGather;
        q.nranks = 6;
        q.root = 4;
        q.radix = 2;
        q.segments = 4;
        const auto p = build(name, q);
        REQUIRE(p.ok());
        CHECK(ucg::plan::validate(p.value()).empty());
        CHECK(ucg::plan::check_symbolic(p.value()).empty());
        int sends = 0;
        for (const auto &rp : p.value().ranks) {
            for (const auto &op : rp.ops) {
                if (op.kind != OpKind::kSend && op.kind != OpKind::kRecv) {
                    continue;
                }
                sends += op.kind == OpKind::kSend;
                // One chunk of each block a message carries.
                for (const auto &r :
                     op.kind == OpKind::kSend ? op.src : op.dst) {
                    CHECK(r.nchunks == 1);
                }
            }
        }
        // Each of the P-1 edges of the tree, in four messages.
        CHECK(sends == 4 * (q.nranks - 1));
    }
}
