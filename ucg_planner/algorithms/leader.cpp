// SPDX-License-Identifier: BSD-3-Clause
// Seed 000's topology-aware gather (or scatter, its mirror image): level
// by level, innermost first, each group gathers its members' blocks at its
// leader over a k-nomial tree of that level's radix (Request::per_level;
// 2: binomial, at least the group size: linear); the leaders carry them
// up. One level holding all ranks with radix 2 is the flat binomial
// gather. Every transfer is point to point (the registry's hierarchical
// gather adds the shm incast).
// Cost: per level ceil(log_k n_l) rounds of k-1 messages into each parent;
// the inter-switch link carries each rank's block once (R-1 leader
// messages at the top) instead of on every binomial step crossing racks.
// A rank's own block moves from its input (gather) or into its output
// (scatter), never through its scratch: a leaf holds no scratch and makes
// no copy (np=2 scatter of 16 MiB had copied the received block again).
#include "algorithms/flat.h"

#include <algorithm>

namespace ucg::algorithms::detail {

namespace {

/// Runs of consecutive block ids as ranges of one chunk each, in
/// ascending block order: block `own` at `own_range`, the others at their
/// own index of `buf`.
std::vector<Range> block_ranges(Buffer buf, std::vector<int> blocks, int own,
                                const Range &own_range)
{
    std::sort(blocks.begin(), blocks.end());
    std::vector<Range> out;
    for (size_t i = 0; i < blocks.size();) {
        if (blocks[i] == own) {
            out.push_back(own_range);
            ++i;
            continue;
        }
        size_t j = i + 1;
        while (j < blocks.size() && blocks[j] == blocks[j - 1] + 1 &&
               blocks[j] != own) {
            ++j;
        }
        out.push_back(Range{buf, blocks[i], int(j - i), 0, 1});
        i = j;
    }
    return out;
}

/// One k-nomial step inside a group: members[child] -> members[parent].
struct Step {
    int level, round, parent, child; // indices into the group's members
    const Group *group;
};

/// k-nomial steps, gather order: innermost level first, then by round
/// (distance 1, k, k^2...); in round j child v (digit d = v/k^j % k != 0)
/// sends its subtree [v, v + k^j) to v - d k^j.
std::vector<Step> gather_steps(const Levels &levels,
                               const std::vector<int> &radix)
{
    std::vector<Step> steps;
    for (size_t l = 0; l < levels.size(); ++l) {
        const int64_t k = l < radix.size() ? std::max(radix[l], 2) : 2;
        for (const Group &g : levels[l]) {
            const int64_t n = int64_t(g.size());
            int round = 0;
            for (int64_t dist = 1; dist < n; dist *= k, ++round) {
                for (int64_t v = dist; v < n; v += dist) {
                    int64_t digit = (v / dist) % k;
                    if (digit != 0) {
                        steps.push_back(
                            {int(l), round, int(v - digit * dist), int(v), &g});
                    }
                }
            }
        }
    }
    return steps;
}

} // namespace

Plan build_leader_gather(const Request &q, std::string_view name)
{
    const bool gather = q.collective == Collective::kGather;
    const int nranks = q.nranks, root = q.root;
    // The root leads every group holding it (identity for the selector's
    // levels, which already put it first).
    // The root leads every group holding it (the selector's levels
    // already put it first), the implicit top group made explicit.
    const Levels levels = lead_by_root(with_top(q.levels), root);
    std::vector<int> radix_per_level;
    for (size_t l = 0; l < levels.size() && !q.per_level.empty(); ++l) {
        radix_per_level.push_back(
            q.per_level[std::min(l, q.per_level.size() - 1)].radix);
    }
    PlanBuilder pb(q.collective, nranks, root, 1, q.only_rank);
    // Rank r keeps block b at the root's output (gather) / input (scatter),
    // elsewhere in scratch block b; its own block r stays in its input
    // (gather) / output (scatter) block 0.
    const Buffer root_buf = gather ? Buffer::kOutput : Buffer::kInput;
    const Range own =
        plan::chunks(gather ? Buffer::kInput : Buffer::kOutput, 0, 0);
    auto ranges_at = [&](int r, const std::vector<int> &blocks) {
        return r == root ? block_ranges(root_buf, blocks, -1, own)
                         : block_ranges(Buffer::kScratch, blocks, r, own);
    };
    // held[r]: blocks r holds once the gather reached it (built forward).
    std::vector<std::vector<int>> held(static_cast<size_t>(nranks));
    for (int r = 0; r < nranks; ++r) {
        held[size_t(r)] = {r};
    }
    const std::vector<Step> steps = gather_steps(levels, radix_per_level);
    std::vector<std::vector<int>> moved(steps.size()); // blocks per step
    for (size_t i = 0; i < steps.size(); ++i) {
        const Step &s = steps[i];
        int from = (*s.group)[size_t(s.child)],
            to = (*s.group)[size_t(s.parent)];
        moved[i] = held[size_t(from)];
        auto &dst = held[size_t(to)];
        dst.insert(dst.end(), moved[i].begin(), moved[i].end());
    }
    // Scratch for the ranks that hold other ranks' blocks on the way.
    for (int r = 0; r < nranks; ++r) {
        if (r != root && held[size_t(r)].size() > 1 && pb.active(r)) {
            pb.scratch(r, nranks);
        }
    }
    auto emit = [&](size_t i) {
        const Step &s = steps[i];
        int child = (*s.group)[size_t(s.child)];
        int parent = (*s.group)[size_t(s.parent)];
        int from = gather ? child : parent, to = gather ? parent : child;
        int tag = 64 * s.level + s.round;
        pb.xfer(from, to, tag, ranges_at(from, moved[i]),
                ranges_at(to, moved[i]));
    };
    // The root's own block, input to output.
    const Range root_block{Buffer::kInput, gather ? 0 : root, 1, 0, 1};
    const Range root_out{Buffer::kOutput, gather ? root : 0, 1, 0, 1};
    if (gather) {
        pb.copy(root, {root_block}, {root_out});
        for (size_t i = 0; i < steps.size(); ++i) {
            emit(i);
        }
    } else {
        for (size_t i = steps.size(); i-- > 0;) {
            emit(i);
        }
        pb.copy(root, {root_block}, {root_out});
    }
    return pb.take(describe(name, q) +
                   " levels=" + std::to_string(levels.size()));
}

} // namespace ucg::algorithms::detail
