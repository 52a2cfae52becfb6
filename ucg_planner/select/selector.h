// SPDX-License-Identifier: BSD-3-Clause
// Selection: per collective and message size, the algorithm and, per
// topology level, the shape, radix and segment count, by the analytic cost
// model (fast) and optionally checked by simulating the plan. Rules
// (tune.h) override the cost model.
#pragma once

#include "cost/simulator.h"

#include "algorithms/registry.h"
#include "select/tune.h"
#include "topology/topology.h"

#include <string>
#include <vector>

namespace ucg::select {

/// One costed option: a whole-collective algorithm or a level's shape.
struct Choice {
    std::string algorithm; ///< registry name or level shape name
    int radix = 2;
    int segments = 1;
    double predicted_ns = 0;
    std::string reason;       ///< "cost model", "simulated" or the rule
    double simulated_ns = -1; ///< when simulated (SelectOptions::simulate)
};

struct LevelDecision {
    topology::LevelKind kind = topology::LevelKind::kWorld;
    int groups = 0;
    int max_group = 0;
    Choice choice; ///< shape for this level
};

struct Decision {
    plan::Collective collective = plan::Collective::kBcast;
    uint64_t bytes = 0;
    int root = 0;
    Choice chosen;                     ///< what runs
    std::vector<LevelDecision> levels; ///< when hierarchical
    std::vector<Choice> flat;          ///< flat alternatives, costed
    Choice hierarchical;         ///< when simulated and not chosen: its figures
    algorithms::Request request; ///< ready for algorithms::build
    bool custom_builder =
        false; ///< runs the registry's "leader" gather/scatter
    std::vector<std::string> notes; ///< e.g. candidates too large to simulate
};

inline constexpr double kDefaultReduceNsPerByte = 0.03;
inline constexpr double kDefaultCopyNsPerByte = 0.03;
/// What a dependent step adds where ranks outnumber the cores: the wait
/// for the peers' turns (four ranks on two cores here: one step of three
/// messages 4.4-5.3 us, two steps 5.6-5.7, perftest/RESULTS.md).
inline constexpr double kSchedulingTurnNs = 1000;

/// Gather and scatter: a flat plan runs linear where linear's prediction
/// is at most this factor above the best flat plan's (selector.cpp,
/// direct_blocks).
inline constexpr double kDirectBlocksTie = 1.02;

struct SelectOptions {
    plan::Collective collective = plan::Collective::kBcast;
    uint64_t bytes = 0; ///< per rank's block (see plan.h)
    int root = 0;
    /// Where the cost model decides: simulate the hierarchical plan and
    /// the `candidates` best flat ones and take the fastest (groups of at
    /// most `max_simulated_ranks`; larger ones stay analytic).
    bool simulate = false;
    int candidates = 3;
    int max_simulated_ranks = 4096;
    /// Candidates whose simulation_bytes() exceed this are skipped, with a
    /// note in the decision.
    std::int64_t max_simulation_bytes = cost::kMaxSimBytes;
    /// One-to-many channel limits (uct_group_attr_t of the transports),
    /// passed with `bytes` to the builders (algorithms::Request).
    algorithms::ChannelLimits shm_bcast{}, shm_incast{}, mcast{};
    /// Gamma: ns to combine one received byte into a result (the float
    /// sum kernel of ucg_reduce streams at about 0.03 ns per byte on the
    /// development machine, perftest/RESULTS.md).
    double reduce_ns_per_byte = kDefaultReduceNsPerByte;
    /// One local copy of a byte (memcpy streams at 0.02-0.04 ns per byte
    /// here, perftest/reduce/RESULTS.md): what staging through scratch
    /// adds to a plan.
    double copy_ns_per_byte = kDefaultCopyNsPerByte;
    /// More ranks than CPUs on a host (the runtime knows): a rank that
    /// waits yields its core, so every dependent step also waits for its
    /// peers' turns on the cores (kSchedulingTurnNs more per alpha);
    /// the messages of one step still overlap.
    bool oversubscribed = false;
    /// The most ranks of one machine per core it lets them run on (1 or
    /// more; hosts posed on one machine count together). Between hosts
    /// over sockets a message's bytes are the cores' work (the kernel's
    /// TCP): the algorithms whose ranks all move bytes at once share the
    /// cores as they share a host's NIC (decision 0034).
    int ranks_per_core = 1;
    /// Where messages between hosts go by rendezvous from this size (the
    /// runtime's own UCP context over sockets, decision 0028; 0: none):
    /// the flat gather cuts its messages below it (decision 0065).
    /// Alike on every member.
    uint64_t eager_bytes = 0;
};

/// Level shape names used in rules: linear, knomial, chain, binary_tree,
/// shm, mcast.
const char *shape_name(algorithms::Shape shape);

class Selector {
  public:
    /// A user rule naming a level the topology lacks can never apply:
    /// rules_fit() names it and the levels there are; select() matches
    /// no level to it (the runtime warns, the tool refuses).
    Selector(const topology::Topology &topo, RuleSet user);

    Result<Decision> select(const SelectOptions &opts) const;

    /// Whether every user rule can apply on this topology, for tools
    /// that check the rules up front.
    Result<void> rules_fit() const;

    /// Builds the decided plan (all ranks, or one with only_rank).
    Result<plan::Plan> build(const Decision &d,
                             std::optional<int> only_rank) const;

    /// Memory that building all ranks' plan and simulating it would take,
    /// in bytes, estimated from one-rank builds of a few sampled ranks
    /// (the root counted once, the others' mean for the rest) before the
    /// whole plan exists: O(P) where the full plan may be O(P^2).
    Result<std::int64_t> simulation_bytes(const Decision &d) const;

    /// The whole plan's size and what checking it would hold
    /// (plan::check_bytes()), in bytes, estimated the same way from
    /// sampled one-rank builds, so a tool refuses a plan too large to
    /// print or check before building it.
    struct PlanBytes {
        std::int64_t plan = 0;
        std::int64_t check = 0;
    };
    Result<PlanBytes> plan_bytes(const Decision &d) const;

  private:
    Result<Decision> select_with(const RuleSet &user,
                                 const SelectOptions &opts) const;
    Result<Decision> refine(Decision d, const SelectOptions &opts) const;

    const topology::Topology &topo_;
    RuleSet user_;
    std::string bad_rule_; ///< why a user rule never applies here
};

/// One line per level plus the flat alternatives, for the tool.
std::string format_decision(const Decision &d);

} // namespace ucg::select
