// SPDX-License-Identifier: BSD-3-Clause
// Multi-level composition (bcast, reduce, allreduce, barrier).
//
// Idea (seed 001): reduce inside the innermost groups to their leaders,
// then among the leaders of the next level, and so on; at the top the
// leaders run an allreduce (or the root's reduce); then bcast back down
// level by level. Each level picks its shape (k-nomial, chain, binary,
// linear, shm, mcast). Everything runs chunk by chunk, so a leader works on
// chunk c at level l+1 while its group reduces chunk c+1.
// Vocabulary: level, group, leader, top group (the leaders of the last
// level when it has several groups).
// Cost: the sum of the per-level costs with m/C-byte messages plus C-1
// pipeline stages of the slowest level.
#include "algorithms/flat.h"

#include <algorithm>
#include <set>

namespace ucg::algorithms {

bool levels_ok(const Levels &levels, int nranks)
{
    std::set<int> expect;
    for (int r = 0; r < nranks; ++r) {
        expect.insert(r);
    }
    for (const Level &level : levels) {
        std::set<int> seen, leaders;
        std::size_t count = 0;
        for (const Group &g : level) {
            if (g.empty()) {
                return false;
            }
            leaders.insert(g[0]);
            seen.insert(g.begin(), g.end());
            count += g.size();
        }
        if (seen != expect || count != seen.size()) {
            return false;
        }
        expect = std::move(leaders);
    }
    return !levels.empty();
}

// The implicit top group (the last level's leaders) made explicit.
Levels detail::with_top(Levels levels)
{
    if (!levels.empty() && levels.back().size() > 1) {
        Group top;
        for (const Group &g : levels.back()) {
            top.push_back(g[0]);
        }
        levels.push_back({top});
    }
    return levels;
}

Levels lead_by_root(Levels levels, int root)
{
    for (std::size_t l = 0; l < levels.size() && root >= 0; ++l) {
        for (Group &g : levels[l]) {
            const auto it = std::find(g.begin(), g.end(), root);
            if (it == g.end() || it == g.begin()) {
                continue;
            }
            const int old = g[0];
            std::iter_swap(g.begin(), it);
            for (std::size_t m = l + 1; m < levels.size(); ++m) {
                for (Group &h : levels[m]) {
                    std::replace(h.begin(), h.end(), old, root);
                }
            }
        }
    }
    return levels;
}

bool levels_partial_ok(const Levels &levels, int nranks)
{
    for (const Level &level : levels) {
        std::set<int> seen;
        for (const Group &g : level) {
            for (int r : g) {
                if (r < 0 || r >= nranks || !seen.insert(r).second) {
                    return false;
                }
            }
            if (g.empty()) {
                return false;
            }
        }
        if (level.empty()) {
            return false;
        }
    }
    return !levels.empty();
}

Levels levels_for_rank(const Levels &full, int rank, int root)
{
    const Levels levels = lead_by_root(detail::with_top(full), root);
    Levels out;
    int me = rank;
    for (const Level &level : levels) {
        out.emplace_back();
        for (const Group &g : level) {
            if (std::find(g.begin(), g.end(), me) != g.end()) {
                out.back().push_back(g);
                me = g[0];
                break;
            }
        }
    }
    return out;
}

Levels make_levels(int nranks, const std::vector<int> &group_sizes)
{
    Levels levels;
    std::vector<int> members(static_cast<std::size_t>(nranks));
    for (int r = 0; r < nranks; ++r) {
        members[static_cast<std::size_t>(r)] = r;
    }
    for (int size : group_sizes) {
        Level level;
        std::vector<int> leaders;
        for (std::size_t i = 0; i < members.size();
             i += static_cast<std::size_t>(size)) {
            const std::size_t end =
                std::min(members.size(), i + static_cast<std::size_t>(size));
            level.emplace_back(members.begin() + static_cast<long>(i),
                               members.begin() + static_cast<long>(end));
            leaders.push_back(members[i]);
        }
        levels.push_back(std::move(level));
        members = std::move(leaders);
    }
    return levels;
}

namespace detail {

namespace {

constexpr int kTagStride = 64;

} // namespace

// Teams per level (innermost first, the top group last), each with the
// root (when given) as the leader of every group it belongs to.
std::vector<std::vector<Team>> level_teams(Levels levels, int root)
{
    levels = lead_by_root(with_top(std::move(levels)), root);
    std::vector<std::vector<Team>> teams;
    for (const Level &level : levels) {
        teams.emplace_back();
        for (const Group &g : level) {
            teams.back().push_back(Team{g, 0});
        }
    }
    return teams;
}

int level_chunks(const Request &q, std::size_t nlevels, bool up, bool down,
                 int blocks)
{
    int n = q.segments;
    for (std::size_t l = 0; l < nlevels; ++l) {
        const Shape s = level_choice(q, l).shape;
        if (s != Shape::kShm && s != Shape::kMcast) {
            continue;
        }
        if (up) {
            n = std::max(n, fit_chunks(q, plan::Channel::kShmIncast, blocks));
        }
        if (down) {
            const auto ch = s == Shape::kShm ? plan::Channel::kShmBcast
                                             : plan::Channel::kMcast;
            n = std::max(n, fit_chunks(q, ch, blocks));
        }
    }
    return n;
}

LevelChoice level_choice(const Request &q, std::size_t l)
{
    if (q.per_level.empty()) {
        return LevelChoice{Shape::kKnomial, q.radix};
    }
    return q.per_level[std::min(l, q.per_level.size() - 1)];
}

Plan build_hierarchical(const Request &q, std::string_view name)
{
    const Collective c = q.collective;
    const bool rooted = c == Collective::kBcast || c == Collective::kReduce;
    const int root = rooted ? q.root : 0;
    const auto teams = level_teams(q.levels, rooted ? root : -1);
    const bool up = c != Collective::kBcast;
    const bool down = c != Collective::kReduce;
    const std::size_t top = teams.size() - 1;
    // A Rabenseifner top cuts each segment into a piece per leader.
    const bool halving = up && down && q.top == "rabenseifner";
    const int per = halving ? largest_power(teams[top][0].size(), 2) : 1;
    const int segs = c == Collective::kBarrier
                         ? 1
                         : level_chunks(q, teams.size(), up, down, 1);
    const int nc = segs * per;
    PlanBuilder pb(c, q.nranks, root, nc, q.only_rank);
    const PlaceFn place =
        c == Collective::kReduce ? reduce_place(pb, root) : PlaceFn(out0);
    // A one-rank build visits only its rank (no O(P) vectors).
    for (int r : visit(pb, q.nranks, {pb.only_rank().value_or(0)})) {
        if (c != Collective::kBcast || r == root) {
            pb.copy(r, {plan::chunks(Buffer::kInput, 0, 0, nc)},
                    {at(place(r), Span{0, nc})});
        }
    }
    const auto ntags = static_cast<int>(teams.size());
    for (int k = 0; k < segs; ++k) {
        const Span one{k * per, per};
        for (std::size_t l = 0; up && l < top; ++l) {
            for (const Team &t : teams[l]) {
                level_reduce(pb, t, level_choice(q, l),
                             kTagStride * static_cast<int>(l), one, place,
                             halving);
            }
        }
        const Team &tt = teams[top][0];
        const int tag = kTagStride * static_cast<int>(top);
        if (halving) {
            team_allreduce_halving(pb, tt, tag, one, place);
        } else if (up && down && q.top.rfind("recursive_", 0) == 0) {
            const int radix = q.top == "recursive_doubling" ? 2 : q.radix;
            team_allreduce_rk(pb, tt, radix, tag, one, place);
        } else {
            if (up) {
                level_reduce(pb, tt, level_choice(q, top), tag, one, place);
            }
            if (down) {
                level_bcast(pb, tt, level_choice(q, top), tag + kTagStride / 2,
                            one, place);
            }
        }
        for (std::size_t l = top; down && l-- > 0;) {
            for (const Team &t : teams[l]) {
                level_bcast(pb, t, level_choice(q, l),
                            kTagStride * (ntags + static_cast<int>(l)), one,
                            place, halving);
            }
        }
    }
    return pb.take(describe(name, q));
}

} // namespace detail

} // namespace ucg::algorithms
