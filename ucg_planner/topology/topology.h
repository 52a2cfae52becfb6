// SPDX-License-Identifier: BSD-3-Clause
// The topology model: levels (NUMA, socket, host, switch, world), where each
// rank sits, the cost of a link at each level, and the per-level partition
// of ranks into groups with a leader that the multi-level planner composes.
#pragma once

#include "ucg/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ucg::topology {

/// Levels, innermost first. Two ranks talk over the link class of the
/// innermost level whose domain holds both.
enum class LevelKind : uint8_t { kNuma, kSocket, kHost, kSwitch, kWorld };
constexpr int kNumLevels = 5;

const char *level_name(LevelKind kind);
Result<LevelKind> parse_level(std::string_view name);

/// LogGP cost of one message on a link class. The alpha-beta view of the
/// same link is alpha = L + 2o, beta = G.
struct LinkCost {
    double latency_ns = 0;  ///< L: wire and switch latency
    double overhead_ns = 0; ///< o: CPU time to send or receive a message
    double gap_ns = 0;      ///< g: minimum interval between injections
    double ns_per_byte = 0; ///< G: per-byte time (1 / bandwidth)

    double alpha_ns() const { return latency_ns + 2 * overhead_ns; }
};

/// Defaults per level, in the ratios of seed 000 (intra-node < intra-switch
/// < inter-switch); calibration from perftest replaces them.
LinkCost default_link_cost(LevelKind kind);

/// A level's link cost given by a user: "LEVEL=L,o,g,G" (ns, ns, ns, ns
/// per byte), as ucg_plan's --link and UCG_LINKS take it.
struct LinkOverride {
    std::string text; ///< as given, for messages
    LevelKind kind = LevelKind::kWorld;
    LinkCost cost;
};
/// "LEVEL=L,o,g,G": a known level and four finite numbers >= 0.
Result<LinkOverride> parse_link(const std::string &text);
/// Several, separated by ';' (UCG_LINKS; a level given twice is an error).
Result<std::vector<LinkOverride>> parse_links(const std::string &text);

/// Where one rank sits, as each rank reports it at group creation. Unknown
/// socket or NUMA ids are -1 (the process is not bound to one).
/// Socket and NUMA ids are below this (-1: not known).
inline constexpr int kMaxLocalityId = 1 << 20;

struct Locality {
    std::string host;
    int socket = -1;
    int numa = -1;
    std::string switch_name; ///< empty: take it from a SwitchMap, if any
};

/// host name -> leaf switch name (from a topology file).
using SwitchMap = std::unordered_map<std::string, std::string>;

/// Ranks (ascending) that share a domain, and the one that speaks for them.
struct Group {
    std::vector<int> ranks;
    int leader = -1;
};

/// One level of the machine: every rank's domain at that level.
struct Level {
    LevelKind kind = LevelKind::kWorld;
    LinkCost link;
    std::vector<int> domain_of_rank; ///< rank -> index into domains
    std::vector<Group> domains;      ///< leaders: lowest rank
};

/// The planner's view of one level: the ranks taking part at that level
/// (all ranks at the innermost, the leaders of the level below above it)
/// split into groups that run one collective each.
struct Partition {
    LevelKind kind = LevelKind::kWorld;
    LinkCost link;
    std::vector<Group> groups;
    int participants = 0;
};

struct HierarchyOptions {
    int root = -1;             ///< when >= 0, leads every group holding it
    bool keep_trivial = false; ///< keep levels whose groups are all size 1
};

class Topology {
  public:
    /// Levels whose domains repeat the level below are dropped, so a
    /// machine without NUMA or switch information has fewer levels.
    static Result<Topology> from_localities(const std::vector<Locality> &ranks,
                                            const SwitchMap *switches);

    int size() const { return size_; }
    const std::vector<Level> &levels() const { return levels_; }
    const Level *level(LevelKind kind) const;
    /// Innermost level whose domain holds both ranks.
    const Level &link_level(int a, int b) const;
    const LinkCost &link(int a, int b) const { return link_level(a, b).link; }
    void set_link_cost(LevelKind kind, const LinkCost &cost);

    /// Physical host and leaf switch of each rank (dense ids), whatever
    /// levels were merged: the simulator's NICs and uplinks.
    int host_of(int rank) const { return host_of_rank_[size_t(rank)]; }
    const std::vector<int> &host_of_rank() const { return host_of_rank_; }
    int switch_of(int rank) const { return switch_of_rank_[size_t(rank)]; }
    int num_hosts() const { return nhosts_; }
    int num_switches() const { return nswitches_; }

    /// Multicast: the ranks of one domain of an enabled level reach each
    /// other by multicast (the outermost enabled level wins). No level has
    /// it until enabled (ud_mcast is not built yet); a level the topology
    /// lacks changes nothing.
    void enable_mcast(LevelKind kind);
    /// The rank's multicast domain (dense per enabled level), -1: none.
    int mcast_domain_of(int rank) const
    {
        return mcast_of_rank_.empty() ? -1 : mcast_of_rank_[size_t(rank)];
    }

    /// Per level, innermost first: the participants split into groups.
    std::vector<Partition> hierarchy(const HierarchyOptions &opts) const;

    /// One line per level: name, domain count, sizes, link parameters.
    std::string describe() const;

  private:
    int size_ = 0;
    std::vector<Level> levels_;
    std::vector<int> host_of_rank_;
    std::vector<int> switch_of_rank_;
    std::vector<int> mcast_of_rank_; ///< empty: no multicast
    int mcast_level_ = -1;           ///< index into levels_
    int nhosts_ = 0;
    int nswitches_ = 0;
};

} // namespace ucg::topology
