// SPDX-License-Identifier: BSD-3-Clause
// The registry table: name, description, applicability and builder of
// every algorithm, per collective.
#include "algorithms/costs.h"
#include "algorithms/flat.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace ucg::algorithms {

namespace {

using plan::Collective;

bool always(const Request &)
{
    return true;
}
// One-rank builds of the tree-shaped compositions also take the levels
// pruned to the rank (levels_for_rank()).
bool has_rank_levels(const Request &q)
{
    return q.only_rank ? levels_partial_ok(q.levels, q.nranks)
                       : levels_ok(q.levels, q.nranks);
}
bool has_levels(const Request &q)
{
    return !q.levels.empty();
}
// The multi-level exchanges walk every group (no pruned levels).
bool has_full_levels(const Request &q)
{
    return levels_ok(q.levels, q.nranks);
}

// Order-preserving (Algorithm::preserves_order) or not, for collectives
// with a user operator.
enum Order : bool { kAnyOrder = false, kRankOrder = true };

struct Table {
    std::vector<Algorithm> v;
    void add(Collective c, std::string name, std::string desc,
             std::function<bool(const Request &)> ok,
             std::function<plan::Plan(const Request &, std::string_view)> b,
             Order order = kAnyOrder)
    {
        auto build = [b, name](const Request &q) { return b(q, name); };
        Algorithm a;
        a.collective = c;
        a.name = name;
        a.description = std::move(desc);
        a.applicable = std::move(ok);
        a.build = std::move(build);
        a.preserves_order = order == kRankOrder || !plan::has_operator(c);
        v.push_back(std::move(a));
    }
    // The last entry's cost function, the radices the selector tries and
    // its segment count (null: 1).
    void costed(detail::costs::Fn f, std::vector<int> radices = {2},
                int (*segments)(const CostInput &) = nullptr)
    {
        v.back().cost = f;
        v.back().radices = std::move(radices);
        if (segments) {
            v.back().segments = segments;
        }
    }
    // The last entry reads Request::radix.
    void takes_radix() { v.back().takes_radix = true; }
    // The last entry releases every rank from rank 0.
    void releases_from_root() { v.back().releases_from_root = true; }
};

auto tree(plan::Plan (*f)(const Request &, Shape, std::string_view), Shape s)
{
    return [f, s](const Request &q, std::string_view n) { return f(q, s, n); };
}

void add_rooted(Table &t)
{
    using namespace detail;
    namespace k = detail::costs;
    const Collective b = Collective::kBcast, r = Collective::kReduce;
    t.add(b, "linear", "root sends to every rank", always,
          tree(build_tree_bcast, Shape::kLinear));
    t.costed(k::linear);
    t.add(b, "knomial", "k-nomial tree of radix k", always,
          tree(build_tree_bcast, Shape::kKnomial));
    t.costed(k::knomial, {2, 4, 8});
    t.takes_radix();
    t.add(b, "chain", "pipelined chain, one chunk per segment", always,
          tree(build_tree_bcast, Shape::kChain));
    t.costed(k::chain, {2}, k::chain_segments);
    t.add(b, "binary_tree", "pipelined binary tree", always,
          tree(build_tree_bcast, Shape::kBinary));
    t.costed(k::binary_tree, {2}, k::binary_segments);
    t.add(b, "shm", "one shm one-to-many op per chunk (one node)", always,
          tree(build_tree_bcast, Shape::kShm));
    t.add(b, "scatter_allgather",
          "k-nomial scatter of P pieces, ring allgather (van de Geijn)", always,
          build_scatter_allgather_bcast);
    t.costed(k::scatter_allgather);
    t.takes_radix();
    t.add(b, "two_tree",
          "two complementary binary trees, chunks alternating, coloured "
          "steps (Sanders-Speck-Traeff)",
          always, build_two_tree_bcast);
    t.costed(k::two_tree, {2}, k::two_tree_segments);
    t.add(r, "linear", "every rank sends to the root", always,
          tree(build_tree_reduce, Shape::kLinear));
    t.costed(k::linear_in);
    t.add(r, "knomial", "k-nomial tree of radix k", always,
          tree(build_tree_reduce, Shape::kKnomial));
    t.costed(k::knomial_in, {2, 4, 8});
    t.takes_radix();
    t.add(r, "chain", "pipelined chain, one chunk per segment", always,
          tree(build_tree_reduce, Shape::kChain));
    t.costed(k::chain_in, {2}, k::chain_segments);
    t.add(r, "binary_tree", "pipelined binary tree", always,
          tree(build_tree_reduce, Shape::kBinary));
    t.costed(k::binary_tree_reduce, {2}, k::binary_segments);
    t.add(r, "shm", "one shm many-to-one op per chunk (one node)", always,
          tree(build_tree_reduce, Shape::kShm));
    t.add(r, "rabenseifner",
          "recursive halving reduce-scatter, binomial gather of the pieces",
          always, build_rabenseifner);
    t.costed(k::rabenseifner_reduce);
    t.add(r, "ordered_knomial",
          "k-nomial trees over ranks [root, P) and [0, root), combined in "
          "rank order (non-commutative operators)",
          always, build_ordered_reduce, kRankOrder);
    t.costed(k::ordered_reduce, {2, 4});
    t.takes_radix();
    auto g = [](int radix) {
        return [radix](const Request &q, std::string_view n) {
            return build_knomial_gather(q, radix > 0 ? radix : q.radix, n);
        };
    };
    auto s = [](int radix) {
        return [radix](const Request &q, std::string_view n) {
            return build_knomial_scatter(q, radix > 0 ? radix : q.radix, n);
        };
    };
    t.add(Collective::kGather, "linear", "every rank sends to the root", always,
          [g](const Request &q, std::string_view n) {
              return g(q.nranks + 1)(q, n);
          });
    t.costed(k::linear_in, {2}, k::eager_segments);
    t.add(Collective::kGather, "knomial", "k-nomial tree of radix k", always,
          g(0));
    t.costed(k::binomial_gather);
    t.takes_radix();
    t.add(Collective::kScatter, "linear", "root sends to every rank", always,
          [s](const Request &q, std::string_view n) {
              return s(q.nranks + 1)(q, n);
          });
    t.costed(k::linear);
    t.add(Collective::kScatter, "knomial", "k-nomial tree of radix k", always,
          s(0));
    t.costed(k::binomial_scatter);
    t.takes_radix();
    t.add(Collective::kGather, "hierarchical",
          "per-level gather to leaders, leaders forward their groups' blocks",
          has_levels, build_hier_gather);
    t.takes_radix();
    t.add(Collective::kScatter, "hierarchical",
          "per-level scatter from the root through the leaders", has_levels,
          build_hier_scatter);
    t.takes_radix();
    // Needs levels: the hierarchical path prices it per level
    // (select/decide.cpp) and picks it where no level uses shm.
    for (Collective c : {Collective::kGather, Collective::kScatter}) {
        t.add(c, "leader",
              "per-level point-to-point k-nomial trees (radix per level), "
              "leaders carry their groups' blocks (seed 000)",
              has_full_levels, build_leader_gather);
    }
}

void add_all(Table &t)
{
    using namespace detail;
    namespace k = detail::costs;
    const Collective a = Collective::kAllreduce, br = Collective::kBarrier;
    auto rk = [](int radix) {
        return [radix](const Request &q, std::string_view n) {
            return build_rk_allreduce(q, radix > 0 ? radix : q.radix, n);
        };
    };
    // First of the barriers: it ties recursive doubling and k-ing at
    // powers of k, and the selector keeps the first of equal costs.
    t.add(br, "dissemination", "dissemination of radix k", always,
          build_dissemination_barrier);
    t.costed(k::dissemination);
    t.takes_radix();
    for (Collective c : {a, br}) {
        // Reduced to rank 0 in rank order: children join in ascending
        // order, each subtree an interval.
        t.add(c, "linear", "reduce to rank 0 linearly, bcast back", always,
              tree(build_tree_allreduce, Shape::kLinear), kRankOrder);
        t.costed(k::twice_linear);
        t.releases_from_root();
        t.add(c, "knomial", "k-nomial reduce to rank 0, k-nomial bcast", always,
              tree(build_tree_allreduce, Shape::kKnomial), kRankOrder);
        t.costed(k::twice_knomial, {2, 4});
        t.takes_radix();
        t.releases_from_root();
        t.add(c, "recursive_doubling", "recursive doubling with folding",
              always, rk(2));
        t.costed(k::recursive_k);
        t.add(c, "recursive_k", "recursive k-ing with folding", always, rk(0));
        t.costed(k::recursive_k, {3, 4});
        t.takes_radix();
        t.add(c, "hierarchical", "per-level composition (levels)",
              has_rank_levels, build_hierarchical);
        t.takes_radix();
    }
    t.add(a, "chain", "pipelined chain reduce then chain bcast", always,
          tree(build_tree_allreduce, Shape::kChain), kRankOrder);
    t.costed(k::twice_chain, {2}, k::chain_segments);
    t.releases_from_root();
    t.add(a, "binary_tree", "pipelined binary tree reduce then bcast", always,
          tree(build_tree_allreduce, Shape::kBinary));
    t.costed(k::twice_binary_tree, {2}, k::binary_segments);
    t.releases_from_root();
    t.add(a, "ring", "ring reduce-scatter then ring allgather", always,
          build_ring);
    t.costed(k::ring_allreduce);
    t.add(a, "rabenseifner",
          "recursive halving reduce-scatter, recursive doubling allgather",
          always, build_rabenseifner);
    t.costed(k::rabenseifner_allreduce);
    t.add(Collective::kBcast, "hierarchical", "per-level composition",
          has_rank_levels, build_hierarchical);
    t.takes_radix();
    t.add(Collective::kReduce, "hierarchical", "per-level composition",
          has_rank_levels, build_hierarchical);
    t.takes_radix();
}

void add_exchanges(Table &t)
{
    using namespace detail;
    namespace k = detail::costs;
    const Collective ag = Collective::kAllgather, aa = Collective::kAlltoall,
                     rs = Collective::kReduceScatter;
    t.add(ag, "linear", "every rank sends its block to every rank", always,
          build_direct);
    t.costed(k::direct_exchange);
    t.add(ag, "ring", "ring, P-1 steps", always, build_ring);
    t.costed(k::ring_exchange);
    // Bruck before recursive doubling: without a copy cost they tie at
    // powers of two and the first is kept; Bruck's final rotation
    // (CostInput::copy_ns_per_byte) gives such ties to recursive doubling.
    t.add(ag, "bruck", "Bruck, ceil(log2 P) steps", always, build_bruck);
    t.costed(k::bruck_allgather);
    t.add(ag, "recursive_doubling", "recursive doubling with folding", always,
          [](const Request &q, std::string_view n) {
              return build_rk_allgather(q, 2, n);
          });
    t.costed(k::recursive_k_allgather);
    t.add(ag, "recursive_k", "recursive k-ing with folding", always,
          [](const Request &q, std::string_view n) {
              return build_rk_allgather(q, q.radix, n);
          });
    t.costed(k::recursive_k_allgather, {3, 4});
    t.takes_radix();
    t.add(ag, "hierarchical",
          "gather to the top leaders, allgather among them (top: ring, "
          "bruck, linear, shm, else recursive doubling), bcast down",
          has_full_levels, build_hier_allgather);
    t.add(aa, "linear", "every rank sends every block at once", always,
          build_direct);
    t.costed(k::direct_exchange);
    t.add(aa, "pairwise", "P-1 steps, step t exchanges with r+t and r-t",
          always, build_pairwise_alltoall);
    t.costed(k::pairwise_exchange);
    t.add(aa, "bruck", "Bruck, ceil(log2 P) steps", always, build_bruck);
    t.costed(k::bruck_alltoall);
    t.add(aa, "hierarchical",
          "gather to the top leaders, direct exchange among them, scatter",
          has_full_levels, build_hier_alltoall);
    t.add(rs, "linear", "every rank sends block b to rank b", always,
          build_direct);
    t.costed(k::direct_exchange);
    t.add(rs, "ring", "ring, P-1 steps", always, build_ring);
    t.costed(k::ring_exchange);
    t.add(rs, "recursive_halving",
          "recursive halving with folding, log2 P steps", always,
          build_halving_reduce_scatter);
    t.costed(k::halving_reduce_scatter);
    t.add(rs, "hierarchical",
          "reduce to the top leaders, reduce_scatter among them (top: "
          "linear, else ring), scatter down",
          has_full_levels, build_hier_reduce_scatter);
}

void add_scans(Table &t)
{
    using namespace detail;
    for (Collective c : {Collective::kScan, Collective::kExscan}) {
        t.add(c, "chain", "pipelined chain, rank r passes ranks 0..r on",
              always, build_chain_scan, kRankOrder);
        t.costed(detail::costs::chain, {2}, costs::chain_segments);
        t.add(c, "recursive_doubling",
              "Hillis-Steele: step d adds the value of rank r-d in front",
              always, build_rd_scan, kRankOrder);
        t.costed(detail::costs::recursive_doubling_scan);
    }
}

Table make_table()
{
    Table t;
    add_rooted(t);
    add_all(t);
    add_exchanges(t);
    add_scans(t);
    return t;
}

} // namespace

const std::vector<Algorithm> &registry()
{
    static const std::vector<Algorithm> v = make_table().v;
    return v;
}

const Algorithm *find_algorithm(plan::Collective c, std::string_view name)
{
    for (const Algorithm &a : registry()) {
        if (a.collective == c && a.name == name) {
            return &a;
        }
    }
    return nullptr;
}

Result<plan::Plan> build(std::string_view name, const Request &req)
{
    const Algorithm *a = find_algorithm(req.collective, name);
    const std::string what = "algorithm '" + std::string(name) + "' for " +
                             std::string(plan::to_string(req.collective));
    if (!a) {
        return fail("no " + what);
    }
    if (req.nranks < 1 || req.root < 0 || req.root >= req.nranks ||
        req.radix < 2 || req.segments < 1 ||
        (req.only_rank &&
         (*req.only_rank < 0 || *req.only_rank >= req.nranks))) {
        return fail("bad request (ranks, root, radix, segments)");
    }
    if (!a->applicable(req)) {
        if (req.only_rank && levels_partial_ok(req.levels, req.nranks) &&
            !levels_ok(req.levels, req.nranks)) {
            return fail(what + " needs the full levels, not those pruned "
                               "to one rank");
        }
        return fail(what + " does not apply");
    }
    plan::Plan p = a->build(req);
    for (int r = 0; r < p.nranks && req.placement.known(); ++r) {
        if (req.only_rank && r != *req.only_rank) {
            continue;
        }
        if (std::string e = plan::check_placement(p, r, req.placement);
            !e.empty()) {
            return fail(what + " does not fit the machine: " + e);
        }
    }
    return p;
}

const ChannelLimits &channel_limits(const Request &req, plan::Channel ch)
{
    static const ChannelLimits none;
    switch (ch) {
    case plan::Channel::kShmBcast:
        return req.shm_bcast;
    case plan::Channel::kShmIncast:
        return req.shm_incast;
    case plan::Channel::kMcast:
        return req.mcast;
    default:
        return none;
    }
}

std::size_t size_class(std::size_t bytes)
{
    constexpr std::size_t kTop = std::numeric_limits<std::size_t>::max() / 2;
    return bytes <= 1 || bytes > kTop ? bytes : std::bit_ceil(bytes);
}

namespace {

// The fewest power-of-two chunks that cut `bytes` into pieces of at most
// `limit` (rounded down to a power of two).
std::size_t chunks_within(std::size_t bytes, std::size_t limit)
{
    const std::size_t piece = std::bit_floor(limit);
    std::size_t n = 1;
    while (bytes / n > piece) {
        n *= 2;
    }
    return n;
}

} // namespace

int fit_chunks(const Request &req, plan::Channel ch, int blocks)
{
    const ChannelLimits &l = channel_limits(req, ch);
    const std::size_t bytes =
        size_class(req.block_bytes) * static_cast<std::size_t>(blocks);
    std::size_t n = static_cast<std::size_t>(std::max(req.segments, 1));
    if (bytes > 0 && l.seg_bytes > 0) {
        n = std::max(n, std::min(chunks_within(bytes, l.seg_bytes),
                                 std::size_t{kMaxPreferredChunks}));
    }
    if (bytes > 0 && l.max_bytes > 0) {
        n = std::max(n, chunks_within(bytes, l.max_bytes));
    }
    return static_cast<int>(
        std::min<std::size_t>(n, std::numeric_limits<int>::max()));
}

} // namespace ucg::algorithms
