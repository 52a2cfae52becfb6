// SPDX-License-Identifier: BSD-3-Clause
// RankBuilder and PlanBuilder: emit ops in program order and derive the
// same-rank dependencies from slot hazards and message FIFO order.
#include "plan/plan.h"

#include <algorithm>
#include <cassert>

namespace ucg::plan {

RankBuilder::SlotState &RankBuilder::slot(Buffer b, int block, int chunk)
{
    auto &v = slots_[static_cast<std::size_t>(b)];
    const auto i = static_cast<std::size_t>(block * nchunks_ + chunk);
    if (v.size() <= i) {
        v.resize(i + 1);
    }
    return v[i];
}

int RankBuilder::ensure_scratch(int nblocks)
{
    out_->scratch_blocks = std::max(out_->scratch_blocks, nblocks);
    return out_->scratch_blocks;
}

int RankBuilder::last_message(const Op &op, int self)
{
    if (op.peers.size() == 1) {
        const auto u = [](int x) {
            return static_cast<std::uint64_t>(static_cast<std::uint32_t>(x));
        };
        const std::uint64_t key = u(op.tag) << 32 | u(op.peers[0]) << 8 |
                                  u(static_cast<int>(op.kind)) << 4 |
                                  u(static_cast<int>(op.channel));
        auto [it, fresh] = last_p2p_.try_emplace(key, self);
        const int prev = fresh ? -1 : it->second;
        it->second = self;
        return prev;
    }
    auto [it, fresh] = last_multi_.try_emplace({static_cast<int>(op.kind),
                                                static_cast<int>(op.channel),
                                                op.tag, op.peers},
                                               self);
    const int prev = fresh ? -1 : it->second;
    it->second = self;
    return prev;
}

int RankBuilder::add(Op op)
{
    const int self = static_cast<int>(out_->ops.size());
    std::vector<int> deps;
    auto visit = [&](const std::vector<Range> &ranges, bool write) {
        for (const Range &r : ranges) {
            for (int b = r.block; b < r.block + r.nblocks; ++b) {
                for (int c = r.chunk; c < r.chunk + r.nchunks; ++c) {
                    SlotState &s = slot(r.buf, b, c);
                    if (s.last_write >= 0) {
                        deps.push_back(s.last_write);
                    }
                    if (write) {
                        deps.insert(deps.end(), s.reads.begin(), s.reads.end());
                    }
                }
            }
        }
    };
    auto record = [&](const std::vector<Range> &ranges, bool write) {
        for (const Range &r : ranges) {
            for (int b = r.block; b < r.block + r.nblocks; ++b) {
                for (int c = r.chunk; c < r.chunk + r.nchunks; ++c) {
                    SlotState &s = slot(r.buf, b, c);
                    if (write) {
                        s.last_write = self;
                        s.reads.clear();
                    } else {
                        s.reads.push_back(self);
                    }
                }
            }
        }
    };
    visit(op.src, false);
    visit(op.dst, true);
    // Messages with the same key are matched in list order: keep them so.
    if (is_send(op.kind) || is_recv(op.kind)) {
        const int prev = last_message(op, self);
        if (prev >= 0) {
            deps.push_back(prev);
        }
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    op.deps = std::move(deps);
    record(op.src, false);
    record(op.dst, true);
    out_->ops.push_back(std::move(op));
    return self;
}

PlanBuilder::PlanBuilder(Collective c, int nranks, int root, int nchunks,
                         std::optional<int> only_rank)
    : only_(only_rank)
{
    plan_.collective = c;
    plan_.nranks = nranks;
    plan_.root = root;
    plan_.nchunks = nchunks;
    plan_.ranks.resize(static_cast<std::size_t>(nranks));
    builders_.reserve(static_cast<std::size_t>(nranks));
    for (auto &p : plan_.ranks) {
        builders_.emplace_back(nchunks, &p);
    }
}

RankBuilder &PlanBuilder::rb(int rank)
{
    assert(rank >= 0 && rank < plan_.nranks);
    return builders_[static_cast<std::size_t>(rank)];
}

int PlanBuilder::send(int from, int to, int tag, std::vector<Range> src)
{
    Op op{OpKind::kSend, Channel::kP2p, {to}, tag, std::move(src), {}, {}};
    return add(from, std::move(op));
}

int PlanBuilder::recv(int at, int from, int tag, std::vector<Range> dst,
                      bool reduce)
{
    const OpKind k = reduce ? OpKind::kRecvReduce : OpKind::kRecv;
    return add(at, Op{k, Channel::kP2p, {from}, tag, {}, std::move(dst), {}});
}

void PlanBuilder::xfer(int from, int to, int tag, std::vector<Range> src,
                       std::vector<Range> dst, bool reduce)
{
    send(from, to, tag, std::move(src));
    recv(to, from, tag, std::move(dst), reduce);
}

int PlanBuilder::copy(int at, std::vector<Range> src, std::vector<Range> dst,
                      bool reduce)
{
    const OpKind k = reduce ? OpKind::kReduce : OpKind::kCopy;
    return add(at,
               Op{k, Channel::kP2p, {}, 0, std::move(src), std::move(dst), {}});
}

void PlanBuilder::bcast(int from, const std::vector<int> &to, int tag,
                        Channel ch, std::vector<Range> src,
                        std::vector<Range> dst)
{
    if (active(from)) {
        rb(from).add(
            Op{OpKind::kBcastSend, ch, to, tag, std::move(src), {}, {}});
    }
    for (int r : to) {
        if (active(r)) {
            rb(r).add(Op{OpKind::kBcastRecv, ch, {from}, tag, {}, dst, {}});
        }
    }
}

void PlanBuilder::incast(const std::vector<int> &from, int to, int tag,
                         std::vector<Range> src, std::vector<Range> dst)
{
    for (int r : from) {
        if (active(r)) {
            rb(r).add(Op{OpKind::kIncastSend,
                         Channel::kShmIncast,
                         {to},
                         tag,
                         src,
                         {},
                         {}});
        }
    }
    if (active(to)) {
        rb(to).add(Op{OpKind::kIncastRecvReduce,
                      Channel::kShmIncast,
                      from,
                      tag,
                      {},
                      std::move(dst),
                      {}});
    }
}

void PlanBuilder::scratch(int rank, int nblocks)
{
    if (active(rank)) {
        rb(rank).ensure_scratch(nblocks);
    }
}

int PlanBuilder::add(int rank, Op op)
{
    return active(rank) ? rb(rank).add(std::move(op)) : -1;
}

void PlanBuilder::depend(int rank, int op, int on)
{
    if (!active(rank) || op < 0 || on < 0) {
        return;
    }
    assert(on < op);
    auto &deps = plan_.ranks[static_cast<std::size_t>(rank)]
                     .ops[static_cast<std::size_t>(op)]
                     .deps;
    const auto it = std::lower_bound(deps.begin(), deps.end(), on);
    if (it == deps.end() || *it != on) {
        deps.insert(it, on);
    }
}

Plan PlanBuilder::take(std::string algorithm)
{
    plan_.algorithm = std::move(algorithm);
    builders_.clear();
    return std::move(plan_);
}

} // namespace ucg::plan
