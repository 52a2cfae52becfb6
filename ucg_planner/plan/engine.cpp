// SPDX-License-Identifier: BSD-3-Clause
// Message matching and event-driven execution of a plan.
#include "plan/engine.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>

namespace ucg::plan::detail {

namespace {

using Key = std::array<int, 4>; // sender, receiver, channel, tag

bool compatible(OpKind send, OpKind recv)
{
    switch (send) {
    case OpKind::kSend:
        return recv == OpKind::kRecv || recv == OpKind::kRecvReduce;
    case OpKind::kBcastSend:
        return recv == OpKind::kBcastRecv;
    case OpKind::kIncastSend:
        return recv == OpKind::kIncastRecvReduce;
    case OpKind::kIncastGatherSend:
        return recv == OpKind::kIncastRecv;
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

std::pair<int, int> recv_part(const Op &op, int pos)
{
    const int n = range_slots(op.dst);
    if (op.kind != OpKind::kIncastRecv || op.peers.empty()) {
        return {0, n};
    }
    const int each = n / static_cast<int>(op.peers.size());
    return {pos * each, each};
}

namespace {

// Walks the chunk indices of ranges' slots in message order.
class ChunkCursor {
  public:
    ChunkCursor(const std::vector<Range> &v, int skip) : v_(v)
    {
        while (i_ < v_.size() && skip >= slots(v_[i_])) {
            skip -= slots(v_[i_++]);
        }
        if (i_ < v_.size()) {
            k_ = skip % v_[i_].nchunks;
        }
    }
    int next()
    {
        const Range &r = v_[i_];
        const int c = r.chunk + k_;
        if (++k_ == r.nchunks) {
            k_ = 0;
            if (++b_ == r.nblocks) {
                b_ = 0;
                ++i_;
            }
        }
        return c;
    }

  private:
    static int slots(const Range &r) { return r.nblocks * r.nchunks; }
    const std::vector<Range> &v_;
    std::size_t i_ = 0;
    int b_ = 0, k_ = 0;
};

} // namespace

bool same_chunks(const std::vector<Range> &a, int a_first,
                 const std::vector<Range> &b, int b_first, int n)
{
    ChunkCursor x(a, a_first), y(b, b_first);
    for (int i = 0; i < n; ++i) {
        if (x.next() != y.next()) {
            return false;
        }
    }
    return true;
}

namespace {

struct End {
    std::uint64_t who;  // sender, receiver, channel
    std::uint64_t when; // tag, then discovery order (list order per rank)
    OpRef op;
    int pos; // position in Op::peers
    bool operator<(const End &o) const
    {
        return who != o.who ? who < o.who : when < o.when;
    }
    bool same_key(const End &o) const
    {
        return who == o.who && (when >> 32) == (o.when >> 32);
    }
    Key key() const
    {
        return Key{static_cast<int>(who >> 24),
                   static_cast<int>((who >> 4) & 0xFFFFF),
                   static_cast<int>(who & 0xF),
                   static_cast<int>(static_cast<std::uint32_t>(when >> 32) ^
                                    0x80000000U)};
    }
};

End make_end(Key k, std::size_t seq, OpRef op, int pos)
{
    const auto u = [](int x) { return static_cast<std::uint64_t>(x); };
    const std::uint64_t tag = static_cast<std::uint32_t>(k[3]) ^ 0x80000000U;
    return End{u(k[0]) << 24 | u(k[1]) << 4 | u(k[2]),
               tag << 32 | static_cast<std::uint32_t>(seq), op, pos};
}

void collect(const Plan &plan, std::vector<End> &sends, std::vector<End> &recvs)
{
    for (int r = 0; r < plan.nranks; ++r) {
        const auto &ops = plan.ranks[static_cast<std::size_t>(r)].ops;
        for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
            const Op &o = ops[static_cast<std::size_t>(i)];
            const int ch = static_cast<int>(o.channel);
            for (int k = 0; k < static_cast<int>(o.peers.size()); ++k) {
                const int p = o.peers[static_cast<std::size_t>(k)];
                if (is_send(o.kind)) {
                    sends.push_back(make_end(Key{r, p, ch, o.tag}, sends.size(),
                                             {r, i}, k));
                } else if (is_recv(o.kind)) {
                    recvs.push_back(make_end(Key{p, r, ch, o.tag}, recvs.size(),
                                             {r, i}, k));
                }
            }
        }
    }
    std::sort(sends.begin(), sends.end());
    std::sort(recvs.begin(), recvs.end());
}

std::string unmatched(const Plan &plan, const End &end, bool send)
{
    const Key k = end.key();
    const OpRef e = end.op;
    const std::string tail =
        " on " + std::string(to_string(static_cast<Channel>(k[2]))) + " tag " +
        std::to_string(k[3]);
    if (send) {
        return where(plan, e.rank, e.op) + " has no matching receive at rank " +
               std::to_string(k[1]) + tail;
    }
    return where(plan, e.rank, e.op) + " has no matching send from rank " +
           std::to_string(k[0]) + tail;
}

bool same_slices(const Op &send, const Op &recv, int pos)
{
    const auto [first, n] = recv_part(recv, pos);
    return range_slots(send.src) == n &&
           same_chunks(send.src, 0, recv.dst, first, n);
}

} // namespace

Matching match_messages(const Plan &plan, std::vector<std::string> &errors)
{
    Matching m;
    m.msgs_of.resize(plan.ranks.size());
    for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
        m.msgs_of[r].resize(plan.ranks[r].ops.size());
        for (std::size_t i = 0; i < plan.ranks[r].ops.size(); ++i) {
            m.msgs_of[r][i].assign(plan.ranks[r].ops[i].peers.size(), -1);
        }
    }
    std::vector<End> sends, recvs;
    collect(plan, sends, recvs);
    std::size_t i = 0, j = 0;
    while (i < sends.size() || j < recvs.size()) {
        const bool both = i < sends.size() && j < recvs.size();
        if (!both || !sends[i].same_key(recvs[j])) {
            if (j == recvs.size() || (both && sends[i] < recvs[j])) {
                errors.push_back(unmatched(plan, sends[i++], true));
            } else {
                errors.push_back(unmatched(plan, recvs[j++], false));
            }
            continue;
        }
        const End &s = sends[i++];
        const End &v = recvs[j++];
        const Op &so = op_at(plan, s.op);
        const Op &ro = op_at(plan, v.op);
        if (!compatible(so.kind, ro.kind)) {
            errors.push_back(
                where(plan, s.op.rank, s.op.op) + " is matched by " +
                where(plan, v.op.rank, v.op.op) + " of an incompatible kind");
        } else if (!same_slices(so, ro, v.pos)) {
            errors.push_back(where(plan, s.op.rank, s.op.op) + " and " +
                             where(plan, v.op.rank, v.op.op) +
                             " disagree on the message size (slices)");
        }
        const int id = static_cast<int>(m.messages.size());
        m.messages.push_back(Message{s.op, v.op});
        m.msgs_of[static_cast<std::size_t>(s.op.rank)][static_cast<std::size_t>(
            s.op.op)][static_cast<std::size_t>(s.pos)] = id;
        m.msgs_of[static_cast<std::size_t>(v.op.rank)][static_cast<std::size_t>(
            v.op.op)][static_cast<std::size_t>(v.pos)] = id;
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
