// SPDX-License-Identifier: BSD-3-Clause
// The algorithm registry: every plan builder with its name, description and
// applicability, and the inputs they take (Request, Levels).
#pragma once

#include "cost/formulas.h"
#include "plan/plan.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ucg::algorithms {

/*
 * Levels for multi-level composition, innermost first (e.g. socket, node,
 * rack). levels[0] partitions all ranks into groups; levels[l + 1]
 * partitions the leaders of levels[l]. The first rank of a group is its
 * leader (the builder swaps in the root where the root is a member). If the
 * last level has several groups, their leaders form one implicit top group.
 */
using Group = std::vector<int>;
using Level = std::vector<Group>;
using Levels = std::vector<Level>;

/* The shape used inside the groups of one level. */
enum class Shape : std::uint8_t {
    kLinear,  // flat: the leader talks to every member
    kKnomial, // k-nomial tree of `radix`
    kChain,   // pipelined chain (per chunk)
    kBinary,  // pipelined binary tree (per chunk)
    kShm,     // one shm_bcast / shm_incast op per chunk
    kMcast,   // mcast for one-to-many, shm_incast for many-to-one
};

struct LevelChoice {
    Shape shape = Shape::kKnomial;
    int radix = 2;
};

/* What one one-to-many channel carries well (uct_group_attr_t's
 * max_length and seg_length of the transport behind it) and what one of
 * its ops costs (from uct_iface_attr_t); a cost of 0 prices the op as one
 * point-to-point message of the level it serves. */
struct ChannelLimits {
    std::size_t max_bytes = 0; // largest message; 0: any
    std::size_t seg_bytes = 0; // preferred message size; 0: no preference
    double alpha_ns = 0;       // one op's latency; 0: the level link's
    double alpha_scale = 1;    // with alpha_ns 0: the level link's times this
    double ns_per_byte = 0;    // each byte, end to end; 0: the level link's
};

struct Request {
    plan::Collective collective = plan::Collective::kBcast;
    int nranks = 1;
    int root = 0;
    int radix = 2;    // k of k-nomial trees and recursive k-ing
    int segments = 1; // pipeline depth; plans hold segments or P*segments
                      // chunks (see plan.h)
    std::optional<int> only_rank;       // build one rank's program only
    Levels levels;                      // hierarchical only
    std::vector<LevelChoice> per_level; // hierarchical: one per level (the
                                        // last entry is reused); top level
                                        // uses `top`
    // Hierarchical allreduce/barrier among the top group: "recursive_doubling"
    // or "recursive_k" (radix), anything else: reduce then bcast with the
    // top group's LevelChoice (per_level at its level index, else the
    // last entry). Hierarchical allgather among the top leaders: "ring",
    // "bruck", "linear", "shm" (each leader in turn bcasts its piece
    // through the top group's shm ring: a top group on one host),
    // anything else recursive doubling; reduce_scatter:
    // "linear", anything else ring (hier_exchange.cpp).
    std::string top = "recursive_doubling";
    // Where the ranks run (host, multicast domain); build() refuses a plan
    // whose shm groups span hosts or whose mcast groups leave a multicast
    // domain. Empty: not known, not checked.
    plan::Placement placement;
    // Bytes of one block (one rank's message); 0: unknown, and the
    // builders keep `segments` chunks. Known, a builder whose one-to-many
    // messages would exceed their channel's max_bytes, or pass its
    // seg_bytes, splits into more chunks (fit_chunks()).
    std::size_t block_bytes = 0;
    ChannelLimits shm_bcast;  // kShmBcast
    ChannelLimits shm_incast; // kShmIncast
    ChannelLimits mcast;      // kMcast
};

/* The limits of `ch` in the request (p2p: none). */
const ChannelLimits &channel_limits(const Request &req, plan::Channel ch);

/*
 * Size classes: block sizes in (2^(k-1), 2^k] share the class 2^k (0 and 1
 * their own). Chunk counts follow the class, never the exact size, so a
 * plan built for one size serves every size of its class and a runtime
 * caches one plan per class.
 */
std::size_t size_class(std::size_t bytes);

/*
 * Chunks for one-to-many messages of `blocks` blocks on `ch`: at least
 * `segments`; enough that a message of the class's largest size fits in
 * max_bytes; and, up to kMaxPreferredChunks, enough that it is at most
 * seg_bytes (so the transport pipelines at its preferred size; beyond
 * that it fragments the rest). Counts are powers of two of the class and
 * limits rounded down to powers of two, so element sizes that are powers
 * of two up to the limit never make a chunk exceed it.
 */
inline constexpr int kMaxPreferredChunks = 1024;
int fit_chunks(const Request &req, plan::Channel ch, int blocks);

/* What the cost model knows when it prices a flat algorithm: alpha-beta,
 * and gamma for the bytes a rank combines. */
struct CostInput {
    int64_t nranks = 1;
    double block_bytes = 0;    // one rank's block (0 for barrier)
    cost::AlphaBeta link;      // any pair (beta shared where all ranks talk)
    cost::AlphaBeta neighbour; // the r -> r+1 links (ring, chain): means
    // The slowest r -> r+1 link's beta: a pipeline's pace (chain).
    double neighbour_slowest_ns_per_byte = 0;
    // Ranks of a host sharing its NIC; an algorithm whose ranks all talk
    // at once (recursive doubling, Bruck, direct exchanges, Rabenseifner,
    // two trees) shares it itself (costs.cpp shared()), a tree does not.
    int ranks_per_nic = 1;
    // Where hosts share one machine's cores (emulated hosts, containers),
    // more ranks than a host's talk through those cores at once: each
    // message of a round that leaves a host costs them this many times
    // (the host NIC counts of the algorithms whose ranks all talk, as
    // ranks_per_nic does for the closed forms; decision 0034).
    int64_t nic_scale = 1;
    // Where each host holds `local_ranks` consecutive ranks (> 1), the
    // steps among them use `local`, the link inside a host (recursive
    // doubling's and k-nomial's first rounds).
    cost::AlphaBeta local;
    int64_t local_ranks = 1;
    // Gamma: ns to combine one received byte (0 where the collective has
    // no operator). A function charges what its busiest rank combines.
    double reduce_ns_per_byte = 0;
    // ns to copy one byte inside a rank's memory: the local copies an
    // algorithm makes besides its messages (Bruck's final rotation).
    double copy_ns_per_byte = 0;
    // The root, for the algorithms whose shape depends on it (the
    // order-preserving reduce); the others rotate ranks.
    int64_t root = 0;
    // Where known, the mean of one rank's links to every other, a remote
    // peer's gap and bytes shared by the ranks per NIC: the link of the
    // exchanges that talk to every peer (direct, pairwise); else
    // link.shared_by(ranks_per_nic).
    std::optional<cost::AlphaBeta> all_pairs;
    // The root's host's other ranks, whatever the placement: a linear
    // tree's root reaches them over `local`, beside its NIC.
    int64_t host_peers = 0;
    // Where hosts do not hold consecutive ranks (local_ranks 1), each
    // rank's host (0 .. hosts-1), in the algorithms' rank order from
    // rank 0 (a rooted tree's rank v is rank (v + root) % P): the
    // algorithms that count what leaves a host use it. Null: unknown.
    const std::vector<int> *hosts = nullptr;
    int64_t num_hosts = 1;
    // Where those hosts sit in racks: each host's rack, and the links
    // between two hosts of one rack (`mid`) and of two racks (`top`);
    // `link` is then the mean of host 0's links to the others (for the
    // functions that do not follow each message).
    const std::vector<int> *host_rack = nullptr;
    cost::AlphaBeta top;
    // Where hosts of consecutive ranks sit in racks of `mid_ranks`
    // consecutive ranks (> 0): the link between two hosts of one rack
    // (`link` is the one between racks).
    cost::AlphaBeta mid;
    int64_t mid_ranks = 0;
    // Where hosts of consecutive ranks sit in racks in any order: the
    // root's peers on the other hosts of its rack, which a root's fan
    // reaches over `mid` (the rest over `link`, the one between racks).
    // -1: not known (racks of mid_ranks, or none).
    int64_t root_rack_peers = -1;
    // Where messages between hosts go by rendezvous from a size (UCG's own
    // UCP context over sockets: kSocketRndvBytes), that size; 0: none.
    // A gather's messages are cut below it (eager_segments, decision 0065).
    double eager_bytes = 0;
};

/* One variant of an algorithm: the parameters the selector passes on. */
struct Variant {
    int radix = 2;
    int segments = 1;
};

/* Predicted ns of one variant. */
using CostFn = std::function<double(const CostInput &, Variant)>;
/* The segment count a pipelined algorithm runs at for this input. */
using SegmentsFn = std::function<int(const CostInput &)>;

struct Algorithm {
    plan::Collective collective = plan::Collective::kBcast;
    std::string name;
    std::string description;
    std::function<bool(const Request &)> applicable;
    std::function<plan::Plan(const Request &)> build;
    // Every output combines the inputs in rank order (each (+) keeps its
    // operands in plan order, plan.h), so the plan is right for a
    // non-commutative operator. True for every collective without a
    // user operator (bcast, gather, scatter, allgather, alltoall,
    // barrier).
    bool preserves_order = false;
    // The builder reads Request::radix (k-nomial trees, recursive k-ing,
    // dissemination, the hierarchical top).
    bool takes_radix = false;
    // Barrier and allreduce: a reduce to rank 0, then a bcast from it, so
    // rank 0 finishes first and every other rank only once rank 0 has
    // released it (the exchanges release each rank at its own turn).
    bool releases_from_root = false;
    // The cost model: `cost` prices a variant; the selector tries every
    // radix in `radices` with `segments`' count (null: 1). A null `cost`
    // marks an algorithm that needs levels or one host (hierarchical,
    // leader, shm): the hierarchical path prices those per level
    // (select/decide.cpp).
    CostFn cost;
    std::vector<int> radices{2};
    SegmentsFn segments;
};

/* Every algorithm, grouped by collective. */
const std::vector<Algorithm> &registry();

/* The algorithm `name` for `c`, or nullptr. */
const Algorithm *find_algorithm(plan::Collective c, std::string_view name);

/* Checks applicability, builds, and refuses shm and mcast groups beyond
 * their reach (Request::placement). */
Result<plan::Plan> build(std::string_view name, const Request &req);

/* Whether `levels` is a valid chain of partitions for `nranks` ranks. */
bool levels_ok(const Levels &levels, int nranks);

/* Only the groups holding `rank` (above level 0: holding its leader), with
 * an implicit top group made explicit and, for root >= 0, the root made
 * the leader of every group holding it (pass the root of bcast and reduce,
 * -1 for allreduce and barrier). A one-rank build (only_rank = rank)
 * of a hierarchical bcast, reduce, allreduce or barrier gives the same
 * program from these levels as from the full ones, in O(levels x group)
 * instead of O(P). Gather, scatter, allgather, alltoall and reduce_scatter
 * need the full levels. */
Levels levels_for_rank(const Levels &levels, int rank, int root);

/* `levels` with `root` (when >= 0) leading every group holding it. */
Levels lead_by_root(Levels levels, int root);

/* Levels from a fixed number of ranks per group at each level (innermost
 * first), ranks numbered group by group; a helper for tests and tools. */
Levels make_levels(int nranks, const std::vector<int> &group_sizes);

} // namespace ucg::algorithms
