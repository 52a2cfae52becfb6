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

// A copy of input slots onto the same slots of another buffer: what it
// writes may be read from the input instead, while nothing overwrote it.
bool RankBuilder::forwardable(const Op &op) const
{
    if (forward_ == Forward::kNone || op.kind != OpKind::kCopy ||
        op.src.size() != 1 || op.dst.size() != 1) {
        return false;
    }
    const Range &s = op.src[0], &d = op.dst[0];
    return s.buf == Buffer::kInput && d.buf != Buffer::kInput &&
           (forward_ == Forward::kAll || d.buf == Buffer::kScratch) &&
           s.block == d.block && s.nblocks == d.nblocks && s.chunk == d.chunk &&
           s.nchunks == d.nchunks;
}

// Each range whose every slot holds an unchanged copy of the input's same
// slot reads the input instead (the plan never writes the input).
void RankBuilder::forward(std::vector<Range> &ranges)
{
    for (Range &r : ranges) {
        bool copied = r.buf != Buffer::kInput && r.nblocks > 0 && r.nchunks > 0;
        for (int b = r.block; copied && b < r.block + r.nblocks; ++b) {
            for (int c = r.chunk; copied && c < r.chunk + r.nchunks; ++c) {
                copied = slot(r.buf, b, c).from_input;
            }
        }
        if (copied) {
            r.buf = Buffer::kInput;
        }
    }
}

int RankBuilder::add(Op op)
{
    const int self = static_cast<int>(out_->ops.size());
    if (forward_ != Forward::kNone) {
        forward(op.src);
        // A receive that reduces into a copy of the input reduces the input
        // itself (its operand) into dst instead.
        if ((op.kind == OpKind::kRecvReduce ||
             op.kind == OpKind::kIncastRecvReduce) &&
            op.src.empty() && !op.src_first) {
            std::vector<Range> operand = op.dst;
            forward(operand);
            if (std::all_of(operand.begin(), operand.end(), [](const Range &r) {
                    return r.buf == Buffer::kInput;
                })) {
                op.src = std::move(operand);
            }
        }
    }
    const bool from_input = forwardable(op);
    // Reductions into dst read it too, but for a receive with its operand.
    const bool dst_read =
        (op.kind == OpKind::kRecvReduce && op.src.empty()) ||
        op.kind == OpKind::kReduce ||
        (op.kind == OpKind::kIncastRecvReduce && op.src.empty());
    std::vector<int> deps;
    auto visit = [&](const std::vector<Range> &ranges, bool write) {
        for (const Range &r : ranges) {
            for (int b = r.block; b < r.block + r.nblocks; ++b) {
                for (int c = r.chunk; c < r.chunk + r.nchunks; ++c) {
                    SlotState &s = slot(r.buf, b, c);
                    if (s.last_write >= 0) {
                        deps.push_back(s.last_write);
                        if (!write || dst_read) {
                            read_[static_cast<std::size_t>(s.last_write)] = 1;
                        }
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
                        s.from_input = from_input;
                    } else {
                        s.reads.push_back(self);
                    }
                }
            }
        }
    };
    read_.push_back(0);
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
    // One-block reductions: input, output and scratch blocks are alike;
    // reduce_scatter: input and scratch blocks are (its output block 0 is
    // the rank's own block).
    const RankBuilder::Forward forward =
        c == Collective::kReduce || c == Collective::kAllreduce ||
                c == Collective::kScan || c == Collective::kExscan
            ? RankBuilder::Forward::kAll
        : c == Collective::kReduceScatter ? RankBuilder::Forward::kToScratch
                                          : RankBuilder::Forward::kNone;
    if (only_) { // a one-rank build keeps one builder, not P
        if (*only_ >= 0 && *only_ < nranks) {
            builders_.emplace_back(
                nchunks, &plan_.ranks[static_cast<std::size_t>(*only_)],
                forward);
        }
        return;
    }
    builders_.reserve(static_cast<std::size_t>(nranks));
    for (auto &p : plan_.ranks) {
        builders_.emplace_back(nchunks, &p, forward);
    }
}

RankBuilder &PlanBuilder::rb(int rank)
{
    assert(rank >= 0 && rank < plan_.nranks && active(rank));
    return builders_[only_ ? 0 : static_cast<std::size_t>(rank)];
}

int PlanBuilder::send(int from, int to, int tag, std::vector<Range> src)
{
    Op op{OpKind::kSend, Channel::kP2p, {to}, tag, std::move(src), {}, {}};
    return add(from, std::move(op));
}

int PlanBuilder::recv(int at, int from, int tag, std::vector<Range> dst,
                      bool reduce, bool src_first)
{
    const OpKind k = reduce ? OpKind::kRecvReduce : OpKind::kRecv;
    Op op{k, Channel::kP2p, {from}, tag, {}, std::move(dst), {}};
    op.src_first = reduce && src_first;
    return add(at, std::move(op));
}

void PlanBuilder::xfer(int from, int to, int tag, std::vector<Range> src,
                       std::vector<Range> dst, bool reduce)
{
    send(from, to, tag, std::move(src));
    recv(to, from, tag, std::move(dst), reduce);
}

int PlanBuilder::copy(int at, std::vector<Range> src, std::vector<Range> dst,
                      bool reduce, bool src_first)
{
    const OpKind k = reduce ? OpKind::kReduce : OpKind::kCopy;
    Op op{k, Channel::kP2p, {}, 0, std::move(src), std::move(dst), {}};
    op.src_first = reduce && src_first;
    return add(at, std::move(op));
}

int PlanBuilder::group(int root, const std::vector<int> &members)
{
    std::vector<int> all = members;
    all.push_back(root);
    std::sort(all.begin(), all.end());
    const auto [it, fresh] =
        group_ids_.try_emplace(all, static_cast<int>(plan_.groups.size()));
    if (fresh) {
        plan_.groups.push_back(std::move(all));
    }
    return it->second;
}

namespace {

std::vector<int> sorted(std::vector<int> v)
{
    std::sort(v.begin(), v.end());
    return v;
}

Op group_op(OpKind k, Channel ch, std::vector<int> peers, int tag, int group)
{
    Op op{k, ch, std::move(peers), tag, {}, {}, {}};
    op.group = group;
    return op;
}

} // namespace

void PlanBuilder::bcast(const GroupMsg &m, Channel ch, std::vector<Range> src,
                        std::vector<Range> dst)
{
    const int g = group(m.root, m.members);
    const std::vector<int> to = sorted(m.members);
    if (active(m.root)) {
        Op op = group_op(OpKind::kBcastSend, ch, to, m.tag, g);
        op.src = std::move(src);
        rb(m.root).add(std::move(op));
    }
    for (int r : to) {
        if (active(r)) {
            Op op = group_op(OpKind::kBcastRecv, ch, {m.root}, m.tag, g);
            op.dst = dst;
            rb(r).add(std::move(op));
        }
    }
}

void PlanBuilder::incast(const GroupMsg &m, std::vector<Range> src,
                         std::vector<Range> dst)
{
    const int g = group(m.root, m.members);
    const std::vector<int> from = sorted(m.members);
    for (int r : from) {
        if (active(r)) {
            Op op = group_op(OpKind::kIncastSend, Channel::kShmIncast, {m.root},
                             m.tag, g);
            op.src = src;
            rb(r).add(std::move(op));
        }
    }
    if (active(m.root)) {
        Op op = group_op(OpKind::kIncastRecvReduce, Channel::kShmIncast, from,
                         m.tag, g);
        op.dst = std::move(dst);
        rb(m.root).add(std::move(op));
    }
}

void PlanBuilder::gather(const GroupMsg &m,
                         const std::function<std::vector<Range>(int)> &src,
                         const std::function<std::vector<Range>(int)> &dst)
{
    const int g = group(m.root, m.members);
    const std::vector<int> from = sorted(m.members);
    for (int r : from) {
        if (active(r)) {
            Op op = group_op(OpKind::kIncastGatherSend, Channel::kShmIncast,
                             {m.root}, m.tag, g);
            op.src = src(r);
            rb(r).add(std::move(op));
        }
    }
    if (active(m.root)) {
        Op op =
            group_op(OpKind::kIncastRecv, Channel::kShmIncast, from, m.tag, g);
        for (int r : from) {
            const auto d = dst(r);
            op.dst.insert(op.dst.end(), d.begin(), d.end());
        }
        rb(m.root).add(std::move(op));
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

void RankBuilder::finish()
{
    if (forward_ == Forward::kNone) {
        return;
    }
    std::vector<Op> &ops = out_->ops;
    std::vector<char> drop(ops.size(), 0);
    for (std::size_t i = 0; i < ops.size(); ++i) {
        drop[i] = forwardable(ops[i]) && read_[i] == 0;
    }
    // A copy still the last write of an output slot is the result.
    for (const SlotState &s :
         slots_[static_cast<std::size_t>(Buffer::kOutput)]) {
        if (s.last_write >= 0) {
            drop[static_cast<std::size_t>(s.last_write)] = 0;
        }
    }
    if (std::find(drop.begin(), drop.end(), 1) == drop.end()) {
        return;
    }
    std::vector<int> index(ops.size(), -1);
    std::vector<std::vector<int>> inherited(ops.size());
    std::vector<Op> kept;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        std::vector<int> deps;
        for (int d : ops[i].deps) {
            const auto j = static_cast<std::size_t>(d);
            if (drop[j]) {
                deps.insert(deps.end(), inherited[j].begin(),
                            inherited[j].end());
            } else {
                deps.push_back(index[j]);
            }
        }
        std::sort(deps.begin(), deps.end());
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        if (drop[i]) {
            inherited[i] = std::move(deps);
            continue;
        }
        ops[i].deps = std::move(deps);
        index[i] = static_cast<int>(kept.size());
        kept.push_back(std::move(ops[i]));
    }
    ops = std::move(kept);
}

Plan PlanBuilder::take(std::string algorithm)
{
    plan_.algorithm = std::move(algorithm);
    for (RankBuilder &b : builders_) {
        b.finish();
    }
    builders_.clear();
    if (only_) {
        keep_rank(plan_, *only_);
    }
    return std::move(plan_);
}

} // namespace ucg::plan
