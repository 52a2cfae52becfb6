// SPDX-License-Identifier: BSD-3-Clause
// Internal to select/: what the selector knows per level and the
// hierarchical decision (per-level shapes and segment count, or the leader
// gather/scatter radixes).
#pragma once

#include "cost/formulas.h"
#include "select/selector.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ucg::select::detail {

struct LevelInfo {
    topology::LevelKind kind;
    int groups;
    int max_group;
    int participants;
    cost::AlphaBeta ab;
    cost::AlphaBeta shm_down; ///< one shm_bcast op (channel cost, else ab)
    cost::AlphaBeta shm_up;   ///< one shm_incast op (channel cost, else ab)
    bool one_host;            ///< every group on one host: shm reaches it
    bool mcast;               ///< every group in one multicast domain
    double per_msg_ns; ///< max(o, g): a receiver's cost per extra message
    double reduce_ns_per_byte = 0; ///< gamma: combining one received byte
    double copy_ns_per_byte = 0;   ///< one local copy of a byte
    /// One mcast op (the mcast channel's cost, else ab); offered by the
    /// cost model for bcast where `mcast` holds.
    cost::AlphaBeta mcast_down{};
    /// A level of a group across hosts whose ranks share their cores with
    /// other hosts' (oversubscribed, nic_scale > 1): a chunk's work at
    /// every level, and a level root's up and down, run on the same cores:
    /// in a pipeline they add instead of overlapping (decision 0034).
    /// Hosts with cores of their own overlap them, as one host does.
    bool shares_cores = false;
    /// More ranks than cores on the hosts (SelectOptions::oversubscribed):
    /// a leader's steps at different levels run on its host's cores one
    /// after another, not beside each other.
    bool takes_turns = false;
    /// Where `shares_cores`: the hosts a core serves (the selector's
    /// nic_scale). The alltoall's top leaders, who all talk at once, pay
    /// it on their bytes as a flat direct exchange does (decision 0041).
    int nic_scale = 1;
};

/// Each level's figures; the shm channels' costs where `bcast`/`incast`
/// give them, the mcast channel's where `mcast` does.
std::vector<LevelInfo>
level_infos(const topology::Topology &topo,
            const std::vector<topology::Partition> &parts,
            const algorithms::ChannelLimits &bcast = {},
            const algorithms::ChannelLimits &incast = {},
            double reduce_ns_per_byte = 0, double copy_ns_per_byte = 0,
            const algorithms::ChannelLimits &mcast = {});

/// First matching rule of the user's set, then of the built-in set; its
/// origin and text go to *reason.
const Rule *find_rule(const RuleSet &user, plan::Collective c,
                      std::optional<topology::LevelKind> l, uint64_t bytes,
                      int n, std::string *reason);

/// The exchanges (recursive_doubling, rabenseifner) only the top group of
/// a hierarchical allreduce takes, where the other levels take shapes.
bool is_top_exchange(std::string_view name);

/// The top leaders' exchange (Request::top) of a hierarchical allgather
/// (recursive doubling for a power-of-two top group, else Bruck) or
/// reduce_scatter (ring); `top` unchanged for the other collectives.
std::string exchange_top(plan::Collective c,
                         const std::vector<LevelInfo> &infos, std::string top);

/// Fills d.levels, d.request (per_level, top, segments) and the predicted
/// time; `whole` is the rule that asked for hierarchical (may be null).
/// `from_root`: every level releases down a tree from its leader (no
/// exchange at the top), so rank 0 releases every rank.
Result<void> decide_hierarchical(const std::vector<LevelInfo> &infos,
                                 const RuleSet &user, const Rule *whole,
                                 Decision &d, bool from_root = false);

} // namespace ucg::select::detail
