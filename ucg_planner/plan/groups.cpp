// SPDX-License-Identifier: BSD-3-Clause
// The validator's group check: the transports match a group's messages by
// their position in one sequence every member posts in list order
// (docs/decisions/0005), so the k-th group op of every member must be its
// part of the same message, the one key matching pairs it with.
#include "plan/engine.h"

#include <algorithm>

namespace ucg::plan::detail {

namespace {

constexpr std::size_t kMaxErrors = 32;

// The member-side kind of a message whose root op is `root`.
OpKind member_kind(OpKind root)
{
    switch (root) {
    case OpKind::kBcastSend:
        return OpKind::kBcastRecv;
    case OpKind::kIncastRecvReduce:
        return OpKind::kIncastSend;
    default:
        return OpKind::kIncastGatherSend;
    }
}

struct GroupSeqs {
    // Per group, per member (index into the group): its ops in list order.
    std::vector<std::vector<std::vector<int>>> ops;
};

GroupSeqs collect(const Plan &plan)
{
    GroupSeqs s;
    s.ops.resize(plan.groups.size());
    for (std::size_t g = 0; g < plan.groups.size(); ++g) {
        s.ops[g].resize(plan.groups[g].size());
    }
    for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
        const auto &ops = plan.ranks[r].ops;
        for (std::size_t i = 0; i < ops.size(); ++i) {
            if (ops[i].group < 0) {
                continue;
            }
            const auto g = static_cast<std::size_t>(ops[i].group);
            const auto &m = plan.groups[g];
            const auto at =
                std::lower_bound(m.begin(), m.end(), static_cast<int>(r)) -
                m.begin();
            s.ops[g][static_cast<std::size_t>(at)].push_back(
                static_cast<int>(i));
        }
    }
    return s;
}

class Checker {
  public:
    Checker(const Plan &plan, const Matching &m,
            std::vector<std::string> &errors)
        : plan_(plan), m_(m), errors_(errors)
    {
    }
    void run()
    {
        const GroupSeqs s = collect(plan_);
        for (std::size_t g = 0; g < s.ops.size() && room(); ++g) {
            check_group(g, s.ops[g]);
        }
    }

  private:
    bool room() const { return errors_.size() < kMaxErrors; }
    const Op &op(int rank, int i) const
    {
        return plan_.ranks[static_cast<std::size_t>(rank)]
            .ops[static_cast<std::size_t>(i)];
    }
    std::string head(std::size_t g, std::size_t k) const
    {
        return "group " + std::to_string(g) + " message " + std::to_string(k);
    }
    void check_group(std::size_t g, const std::vector<std::vector<int>> &seq)
    {
        const auto &members = plan_.groups[g];
        for (std::size_t j = 1; j < seq.size(); ++j) {
            if (seq[j].size() != seq[0].size()) {
                errors_.push_back("group " + std::to_string(g) + ": rank " +
                                  std::to_string(members[j]) + " lists " +
                                  std::to_string(seq[j].size()) +
                                  " of its ops, rank " +
                                  std::to_string(members[0]) + " " +
                                  std::to_string(seq[0].size()));
                return;
            }
        }
        for (std::size_t k = 0; k < seq[0].size() && room(); ++k) {
            check_message(g, k, seq);
        }
    }
    void check_message(std::size_t g, std::size_t k,
                       const std::vector<std::vector<int>> &seq)
    {
        const auto &members = plan_.groups[g];
        std::size_t root = members.size();
        for (std::size_t j = 0; j < members.size(); ++j) {
            if (is_group_root(op(members[j], seq[j][k]).kind)) {
                if (root < members.size()) {
                    errors_.push_back(head(g, k) + ": two roots, ranks " +
                                      std::to_string(members[root]) + " and " +
                                      std::to_string(members[j]));
                    return;
                }
                root = j;
            }
        }
        if (root == members.size()) {
            errors_.push_back(head(g, k) + ": no member is its root (" +
                              where(plan_, members[0], seq[0][k]) + ")");
            return;
        }
        const int rr = members[root], ri = seq[root][k];
        const Op &ro = op(rr, ri);
        for (std::size_t j = 0, pos = 0; j < members.size(); ++j) {
            if (j == root) {
                continue;
            }
            const int mr = members[j], mi = seq[j][k];
            const Op &mo = op(mr, mi);
            const int id = m_.msgs_of[static_cast<std::size_t>(rr)]
                                     [static_cast<std::size_t>(ri)][pos++];
            const bool same = mo.kind == member_kind(ro.kind) &&
                              mo.channel == ro.channel && mo.tag == ro.tag &&
                              mo.peers[0] == rr &&
                              m_.msgs_of[static_cast<std::size_t>(mr)]
                                        [static_cast<std::size_t>(mi)][0] == id;
            if (!same) {
                errors_.push_back(head(g, k) + ": " + where(plan_, mr, mi) +
                                  " is not its part of " +
                                  where(plan_, rr, ri) +
                                  " (members list the group's ops in "
                                  "different orders)");
                return;
            }
        }
    }

    const Plan &plan_;
    const Matching &m_;
    std::vector<std::string> &errors_;
};

} // namespace

void check_groups(const Plan &plan, const Matching &m,
                  std::vector<std::string> &errors)
{
    Checker(plan, m, errors).run();
}

} // namespace ucg::plan::detail
