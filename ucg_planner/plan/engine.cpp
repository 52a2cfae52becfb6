// SPDX-License-Identifier: BSD-3-Clause
// Message matching and event-driven execution of a plan.
#include "plan/engine.h"

#include <array>
#include <deque>
#include <map>

namespace ucg::plan::detail {

namespace {

using Key = std::array<int, 4>; // sender, receiver, channel, tag

struct Queues {
    std::vector<std::pair<OpRef, int>> sends; // op and peer position
    std::vector<std::pair<OpRef, int>> recvs;
};

bool compatible(OpKind send, OpKind recv)
{
    switch (send) {
    case OpKind::kSend:
        return recv == OpKind::kRecv || recv == OpKind::kRecvReduce;
    case OpKind::kBcastSend:
        return recv == OpKind::kBcastRecv;
    case OpKind::kIncastSend:
        return recv == OpKind::kIncastRecvReduce;
    default:
        return false;
    }
}

const Op &op_at(const Plan &plan, OpRef r)
{
    return plan.ranks[static_cast<std::size_t>(r.rank)]
        .ops[static_cast<std::size_t>(r.op)];
}

} // namespace

std::string where(const Plan &plan, int rank, int op)
{
    const Op &o = op_at(plan, OpRef{rank, op});
    return "rank " + std::to_string(rank) + " op " + std::to_string(op) + " (" +
           std::string(to_string(o.kind)) + ")";
}

std::vector<int> chunk_sequence(const std::vector<Range> &ranges)
{
    std::vector<int> seq;
    for (const Range &r : ranges) {
        for (int b = 0; b < r.nblocks; ++b) {
            for (int c = r.chunk; c < r.chunk + r.nchunks; ++c) {
                seq.push_back(c);
            }
        }
    }
    return seq;
}

Matching match_messages(const Plan &plan, std::vector<std::string> &errors)
{
    Matching m;
    std::map<Key, Queues> queues;
    m.msgs_of.resize(plan.ranks.size());
    for (int r = 0; r < plan.nranks; ++r) {
        const auto &ops = plan.ranks[static_cast<std::size_t>(r)].ops;
        m.msgs_of[static_cast<std::size_t>(r)].resize(ops.size());
        for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
            const Op &o = ops[static_cast<std::size_t>(i)];
            const int ch = static_cast<int>(o.channel);
            for (int k = 0; k < static_cast<int>(o.peers.size()); ++k) {
                const int p = o.peers[static_cast<std::size_t>(k)];
                if (is_send(o.kind)) {
                    queues[Key{r, p, ch, o.tag}].sends.push_back({{r, i}, k});
                } else if (is_recv(o.kind)) {
                    queues[Key{p, r, ch, o.tag}].recvs.push_back({{r, i}, k});
                }
            }
        }
    }
    for (auto &[key, q] : queues) {
        const std::size_t n = std::min(q.sends.size(), q.recvs.size());
        for (std::size_t j = 0; j < n; ++j) {
            const auto [s, sk] = q.sends[j];
            const auto [v, vk] = q.recvs[j];
            const Op &so = op_at(plan, s);
            const Op &ro = op_at(plan, v);
            if (!compatible(so.kind, ro.kind)) {
                errors.push_back(where(plan, s.rank, s.op) + " is matched by " +
                                 where(plan, v.rank, v.op) +
                                 " of an incompatible kind");
            } else if (chunk_sequence(so.src) != chunk_sequence(ro.dst)) {
                errors.push_back(where(plan, s.rank, s.op) + " and " +
                                 where(plan, v.rank, v.op) +
                                 " disagree on the message size (slices)");
            }
            const int id = static_cast<int>(m.messages.size());
            m.messages.push_back(Message{s, v});
            auto &so_ids = m.msgs_of[static_cast<std::size_t>(s.rank)]
                                    [static_cast<std::size_t>(s.op)];
            auto &ro_ids = m.msgs_of[static_cast<std::size_t>(v.rank)]
                                    [static_cast<std::size_t>(v.op)];
            so_ids.resize(so.peers.size(), -1);
            ro_ids.resize(ro.peers.size(), -1);
            so_ids[static_cast<std::size_t>(sk)] = id;
            ro_ids[static_cast<std::size_t>(vk)] = id;
        }
        const std::string tail =
            " to rank " + std::to_string(key[1]) + " on " +
            std::string(to_string(static_cast<Channel>(key[2]))) + " tag " +
            std::to_string(key[3]);
        for (std::size_t j = n; j < q.sends.size(); ++j) {
            const OpRef s = q.sends[j].first;
            errors.push_back(where(plan, s.rank, s.op) +
                             " has no matching receive" + tail);
        }
        for (std::size_t j = n; j < q.recvs.size(); ++j) {
            const OpRef v = q.recvs[j].first;
            errors.push_back(
                where(plan, v.rank, v.op) + " has no matching send from rank " +
                std::to_string(key[0]) + " tag " + std::to_string(key[3]));
        }
    }
    return m;
}

std::vector<OpRef> execution_order(const Plan &plan, const Matching &m)
{
    // waiting[r][i]: deps not yet done plus messages not yet sent.
    std::vector<std::vector<int>> waiting(plan.ranks.size());
    std::vector<std::vector<std::vector<int>>> users(plan.ranks.size());
    std::deque<OpRef> ready;
    for (int r = 0; r < plan.nranks; ++r) {
        const auto &ops = plan.ranks[static_cast<std::size_t>(r)].ops;
        auto &w = waiting[static_cast<std::size_t>(r)];
        auto &u = users[static_cast<std::size_t>(r)];
        w.assign(ops.size(), 0);
        u.resize(ops.size());
        for (std::size_t i = 0; i < ops.size(); ++i) {
            w[i] = static_cast<int>(ops[i].deps.size());
            for (int d : ops[i].deps) {
                u[static_cast<std::size_t>(d)].push_back(static_cast<int>(i));
            }
            if (is_recv(ops[i].kind)) {
                for (int id : m.msgs_of[static_cast<std::size_t>(r)][i]) {
                    w[i] += id >= 0 ? 1 : 0;
                }
            }
            if (w[i] == 0) {
                ready.push_back(OpRef{r, static_cast<int>(i)});
            }
        }
    }
    std::vector<OpRef> order;
    auto release = [&](OpRef x) {
        if (--waiting[static_cast<std::size_t>(x.rank)]
                     [static_cast<std::size_t>(x.op)] == 0) {
            ready.push_back(x);
        }
    };
    while (!ready.empty()) {
        const OpRef x = ready.front();
        ready.pop_front();
        order.push_back(x);
        for (int u : users[static_cast<std::size_t>(x.rank)]
                          [static_cast<std::size_t>(x.op)]) {
            release(OpRef{x.rank, u});
        }
        if (is_send(op_at(plan, x).kind)) {
            for (int id : m.msgs_of[static_cast<std::size_t>(x.rank)]
                                   [static_cast<std::size_t>(x.op)]) {
                if (id >= 0) {
                    release(m.messages[static_cast<std::size_t>(id)].recv);
                }
            }
        }
    }
    return order;
}

} // namespace ucg::plan::detail
