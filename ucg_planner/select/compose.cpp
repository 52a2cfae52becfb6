// SPDX-License-Identifier: BSD-3-Clause
// Topology -> Levels, and the leader gather/scatter for tools and tests.
#include "select/compose.h"

#include <algorithm>

namespace ucg::select {

algorithms::Levels levels_from_topology(const topology::Topology &topo,
                                        int root)
{
    return levels_from_partitions(topo.hierarchy({root, false}), topo.size(),
                                  root);
}

algorithms::Levels
levels_from_partitions(const std::vector<topology::Partition> &parts,
                       int nranks, int root)
{
    algorithms::Levels levels;
    for (const topology::Partition &p : parts) {
        algorithms::Level level;
        for (const topology::Group &g : p.groups) {
            algorithms::Group members{g.leader};
            for (int r : g.ranks) {
                if (r != g.leader) {
                    members.push_back(r);
                }
            }
            level.push_back(std::move(members));
        }
        levels.push_back(std::move(level));
    }
    if (levels.empty()) { // one rank, or every level trivial
        algorithms::Group all;
        for (int r = 0; r < nranks; ++r) {
            all.push_back(r);
        }
        std::swap(all[0], all[size_t(std::max(root, 0))]);
        levels.push_back({all});
    }
    return levels;
}

algorithms::Levels prune_levels(const algorithms::Levels &levels, int rank)
{
    algorithms::Levels out;
    int me = rank;
    for (const algorithms::Level &level : levels) {
        out.emplace_back();
        for (const algorithms::Group &g : level) {
            if (std::find(g.begin(), g.end(), me) != g.end()) {
                out.back().push_back(g);
                me = g[0]; // the leader speaks for us above
                break;
            }
        }
    }
    return out;
}

plan::Plan build_leader_gather(plan::Collective collective, int nranks,
                               int root, const algorithms::Levels &levels,
                               const std::vector<int> &radix_per_level,
                               std::optional<int> only_rank)
{
    algorithms::Request q;
    q.collective = collective;
    q.nranks = nranks;
    q.root = root;
    q.only_rank = only_rank;
    q.levels = levels;
    for (int k : radix_per_level) {
        q.per_level.push_back({algorithms::Shape::kKnomial, std::max(k, 2)});
    }
    return algorithms::find_algorithm(collective, "leader")->build(q);
}

} // namespace ucg::select
