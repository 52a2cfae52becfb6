// SPDX-License-Identifier: BSD-3-Clause
// Lowering: one rank's plan program -> byte segments, reverse deps,
// message ids, staging offsets (program.h).
#include "exec/program.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace ucg::exec {

namespace {

using plan::Channel;
using plan::OpKind;
using plan::Range;

constexpr std::uint64_t kStagingAlign = 64;

std::uint64_t align_up(std::uint64_t v, std::uint64_t a)
{
    return (v + a - 1) / a * a;
}

bool is_p2p_message(OpKind k)
{
    return k == OpKind::kSend || k == OpKind::kRecv || k == OpKind::kRecvReduce;
}

class Lowering {
  public:
    Lowering(const plan::Plan &plan, int rank, const Layout &layout)
        : plan_(plan), rank_(rank), layout_(layout)
    {
    }

    /// Lowers `program`, or the plan's program of this rank when null.
    Result<Program> run(const plan::RankProgram *program = nullptr);

  private:
    Result<void> add_ranges(const std::vector<Range> &ranges,
                            std::uint32_t *first, std::uint32_t *count,
                            std::uint64_t *bytes);
    Result<void> add_block(const Range &r, int b, std::uint64_t *bytes);
    Result<void> assign_msg_ids(const plan::RankProgram &rp);
    Result<std::vector<int>> members_of(const plan::Op &op);
    int group_index(plan::Channel ch, std::vector<int> members);
    void stage(LOp &lop, std::uint64_t bytes);
    Result<void> lower_group_op(const plan::Op &op, LOp &lop,
                                std::uint32_t index, std::uint64_t dst_bytes);
    bool split_parts(LOp &lop, const std::vector<int> &group);
    void reverse_deps(const plan::RankProgram &rp);

    const plan::Plan &plan_;
    int rank_;
    const Layout &layout_;
    Program out_;
};

Result<void> Lowering::add_block(const Range &r, int b, std::uint64_t *bytes)
{
    const std::size_t es = layout_.elem_bytes;
    const Buf buf = r.buf == plan::Buffer::kInput    ? Buf::kInput
                    : r.buf == plan::Buffer::kOutput ? Buf::kOutput
                                                     : Buf::kScratch;
    // Input, output and a scratch with blocks of its own (Layout::scratch)
    // list their blocks; any other scratch has blocks of scratch_count.
    const BufferLayout *bl = buf == Buf::kInput              ? &layout_.input
                             : buf == Buf::kOutput           ? &layout_.output
                             : layout_.scratch.count.empty() ? nullptr
                                                             : &layout_.scratch;
    std::uint64_t count = layout_.scratch_count;
    std::uint64_t base = static_cast<std::uint64_t>(b) * count * es;
    if (bl != nullptr) {
        if (b < 0 || static_cast<std::size_t>(b) >= bl->count.size()) {
            return fail("op reads or writes block " + std::to_string(b) +
                        " of " + std::string(plan::to_string(r.buf)) +
                        ", which has " + std::to_string(bl->count.size()));
        }
        count = bl->count[static_cast<std::size_t>(b)];
        base = bl->offset[static_cast<std::size_t>(b)];
    }
    const int nch = plan_.nchunks;
    if (r.chunk < 0 || r.nchunks < 0 || r.chunk + r.nchunks > nch) {
        return fail("range past the plan's chunks");
    }
    const std::uint64_t begin = plan::chunk_begin(count, nch, r.chunk);
    const std::uint64_t end =
        plan::chunk_begin(count, nch, r.chunk + r.nchunks);
    const Segment seg{base + begin * es, (end - begin) * es, buf};
    *bytes += seg.length;
    if (seg.length == 0) {
        return {};
    }
    Segment &last = out_.segs.back();
    if (!out_.segs.empty() && last.buf == seg.buf &&
        last.offset + last.length == seg.offset) {
        last.length += seg.length; // adjacent: one segment
    } else {
        out_.segs.push_back(seg);
    }
    return {};
}

Result<void> Lowering::add_ranges(const std::vector<Range> &ranges,
                                  std::uint32_t *first, std::uint32_t *count,
                                  std::uint64_t *bytes)
{
    *first = static_cast<std::uint32_t>(out_.segs.size());
    // A sentinel keeps add_block's merge from joining the previous op's
    // last segment; it is removed below.
    out_.segs.push_back(Segment{~0ULL, 0, Buf::kStaging});
    for (const Range &r : ranges) {
        for (int b = r.block; b < r.block + r.nblocks; ++b) {
            auto res = add_block(r, b, bytes);
            if (!res) {
                return res;
            }
        }
    }
    out_.segs.erase(out_.segs.begin() + *first);
    *count = static_cast<std::uint32_t>(out_.segs.size()) - *first;
    return {};
}

// Dense message ids: the messages between this rank and a peer, in each
// direction, sorted by (tag, k-th of that tag in op-list order). Both
// sides list the same set, so both number it alike. The ids must fit the
// wire tag's field (kMaxWireMessages).
Result<void> Lowering::assign_msg_ids(const plan::RankProgram &rp)
{
    using Key = std::tuple<int, bool, int, int>; // peer, send, tag, k
    std::map<std::tuple<int, bool, int>, int> kth;
    std::map<Key, std::uint32_t> order;
    std::vector<Key> keys(rp.ops.size());
    for (std::size_t i = 0; i < rp.ops.size(); ++i) {
        const plan::Op &op = rp.ops[i];
        if (!is_p2p_message(op.kind) || op.channel != Channel::kP2p) {
            continue;
        }
        const bool send = op.kind == OpKind::kSend;
        const int k = kth[{op.peers[0], send, op.tag}]++;
        keys[i] = Key{op.peers[0], send, op.tag, k};
        order.emplace(keys[i], 0);
    }
    std::map<std::pair<int, bool>, std::uint32_t> next_id;
    for (auto &[key, id] : order) {
        id = next_id[{std::get<0>(key), std::get<1>(key)}]++;
        if (id >= kMaxWireMessages) {
            return fail("more than " + std::to_string(kMaxWireMessages) +
                        " messages between rank " + std::to_string(rank_) +
                        " and rank " + std::to_string(std::get<0>(key)));
        }
    }
    for (std::size_t i = 0; i < rp.ops.size(); ++i) {
        const plan::Op &op = rp.ops[i];
        if (is_p2p_message(op.kind) && op.channel == Channel::kP2p) {
            out_.ops[i].msg_id = order[keys[i]];
        }
    }
    return {};
}

// The members of a one-to-many op's group (Plan::groups, 0005 item 3).
Result<std::vector<int>> Lowering::members_of(const plan::Op &op)
{
    if (op.group < 0 ||
        static_cast<std::size_t>(op.group) >= plan_.groups.size()) {
        return fail("a one-to-many op names no group of the plan");
    }
    const std::vector<int> &g =
        plan_.groups[static_cast<std::size_t>(op.group)];
    if (!std::binary_search(g.begin(), g.end(), rank_)) {
        return fail("a one-to-many op's group does not hold its rank");
    }
    return g;
}

int Lowering::group_index(plan::Channel ch, std::vector<int> members)
{
    for (std::size_t g = 0; g < out_.groups.size(); ++g) {
        if (out_.groups[g].channel == ch && out_.groups[g].members == members) {
            return static_cast<int>(g);
        }
    }
    out_.groups.push_back(ProgramGroup{ch, std::move(members)});
    out_.group_ops.emplace_back();
    return static_cast<int>(out_.groups.size()) - 1;
}

// A one-to-many op: its group and root, per-sender bytes, and where the
// data goes when it cannot go straight to or from one segment.
Result<void> Lowering::lower_group_op(const plan::Op &op, LOp &lop,
                                      std::uint32_t index,
                                      std::uint64_t dst_bytes)
{
    lop.peer = plan::is_group_root(op.kind) ? rank_ : op.peers[0];
    auto members = members_of(op);
    if (!members) {
        return members.error();
    }
    lop.group = group_index(op.channel, std::move(members.value()));
    const std::vector<int> &group =
        out_.groups[static_cast<std::size_t>(lop.group)].members;
    lop.npeers = static_cast<std::uint32_t>(group.size() - 1);
    out_.group_ops[static_cast<std::size_t>(lop.group)].push_back(index);
    if (op.kind != OpKind::kIncastRecv) {
        const std::uint32_t nseg = plan::is_send(op.kind) ? lop.nsrc : lop.ndst;
        // A reduce receive's operand goes to the transport as one pointer.
        if (nseg > 1 || lop.nsrc > 1) {
            stage(lop, lop.bytes);
        }
        return {};
    }
    // Gather: dst lists the senders' messages back to back, equal sizes.
    if (lop.npeers == 0 || dst_bytes % lop.npeers != 0) {
        return fail("a gather incast's bytes do not split evenly among its "
                    "senders");
    }
    lop.bytes = dst_bytes / lop.npeers;
    if (!split_parts(lop, group)) {
        stage(lop, dst_bytes);
    }
    return {};
}

// Member m's destination of a gather, when every sender's part is one
// segment; false otherwise.
bool Lowering::split_parts(LOp &lop, const std::vector<int> &group)
{
    std::vector<Segment> parts(group.size());
    std::uint32_t seg = lop.dst;
    std::uint64_t off = 0; // into segs[seg]
    for (std::size_t m = 0; m < group.size(); ++m) {
        if (group[m] == rank_) {
            continue; // the root sends nothing
        }
        if (lop.bytes == 0) {
            parts[m] = Segment{0, 0, Buf::kStaging};
            continue;
        }
        if (seg >= lop.dst + lop.ndst) {
            return false;
        }
        const Segment &s = out_.segs[seg];
        if (s.length - off < lop.bytes) {
            return false; // a part spans segments
        }
        parts[m] = Segment{s.offset + off, lop.bytes, s.buf};
        off += lop.bytes;
        if (off == s.length) {
            ++seg;
            off = 0;
        }
    }
    lop.parts = static_cast<std::uint32_t>(out_.parts.size());
    out_.parts.insert(out_.parts.end(), parts.begin(), parts.end());
    return true;
}

void Lowering::stage(LOp &lop, std::uint64_t bytes)
{
    lop.flags |= kOpStaged;
    lop.staging = out_.staging_bytes;
    out_.staging_bytes += align_up(bytes, kStagingAlign);
}

void Lowering::reverse_deps(const plan::RankProgram &rp)
{
    std::vector<std::uint32_t> fan(rp.ops.size(), 0);
    for (const plan::Op &op : rp.ops) {
        for (int d : op.deps) {
            ++fan[static_cast<std::size_t>(d)];
        }
    }
    std::uint32_t at = 0;
    for (std::size_t i = 0; i < rp.ops.size(); ++i) {
        out_.ops[i].next = at;
        at += fan[i];
        fan[i] = out_.ops[i].next;
    }
    out_.next.resize(at);
    for (std::size_t i = 0; i < rp.ops.size(); ++i) {
        for (int d : rp.ops[i].deps) {
            auto &slot = fan[static_cast<std::size_t>(d)];
            out_.next[slot++] = static_cast<std::uint32_t>(i);
            ++out_.ops[static_cast<std::size_t>(d)].nnext;
        }
        out_.ops[i].ndeps = static_cast<std::uint32_t>(rp.ops[i].deps.size());
        if (rp.ops[i].deps.empty()) {
            out_.roots.push_back(static_cast<std::uint32_t>(i));
        }
    }
}

Result<Program> Lowering::run(const plan::RankProgram *program)
{
    if (rank_ < 0 || rank_ >= plan_.nranks ||
        static_cast<std::size_t>(rank_) >= plan_.ranks.size()) {
        return fail("rank " + std::to_string(rank_) + " is not in the plan");
    }
    const plan::RankProgram &rp =
        program != nullptr ? *program
                           : plan_.ranks[static_cast<std::size_t>(rank_)];
    out_.rank = rank_;
    out_.ops.resize(rp.ops.size());
    if (const BufferLayout &sl = layout_.scratch; !sl.count.empty()) {
        const auto n = static_cast<std::size_t>(rp.scratch_blocks);
        if (n > sl.count.size()) {
            return fail("the plan's " + std::to_string(n) +
                        " scratch blocks exceed the layout's " +
                        std::to_string(sl.count.size()));
        }
        out_.scratch_bytes = sl.extent(layout_.elem_bytes, n);
    } else {
        out_.scratch_bytes = static_cast<std::uint64_t>(rp.scratch_blocks) *
                             layout_.scratch_count * layout_.elem_bytes;
    }
    const std::vector<char> early = plan::early_receives(rp);
    for (std::size_t i = 0; i < rp.ops.size(); ++i) {
        const plan::Op &op = rp.ops[i];
        LOp &lop = out_.ops[i];
        lop.kind = op.kind;
        lop.channel = op.channel;
        std::uint64_t src_bytes = 0, dst_bytes = 0;
        auto res = add_ranges(op.src, &lop.src, &lop.nsrc, &src_bytes);
        if (res) {
            res = add_ranges(op.dst, &lop.dst, &lop.ndst, &dst_bytes);
        }
        if (!res) {
            return fail("op " + std::to_string(i) + ": " + res.error().message);
        }
        lop.bytes = plan::is_send(op.kind) ? src_bytes : dst_bytes;
        if (op.src_first) {
            lop.flags |= kOpSrcFirst;
        }
        if ((op.kind == OpKind::kCopy || op.kind == OpKind::kReduce) &&
            src_bytes != dst_bytes) {
            return fail("op " + std::to_string(i) + ": copies " +
                        std::to_string(src_bytes) + " bytes into " +
                        std::to_string(dst_bytes));
        }
        if (plan::is_one_to_many(op.kind)) {
            auto res2 = lower_group_op(op, lop, static_cast<std::uint32_t>(i),
                                       dst_bytes);
            if (!res2) {
                return fail("op " + std::to_string(i) + ": " +
                            res2.error().message);
            }
        } else if (op.kind != OpKind::kCopy && op.kind != OpKind::kReduce) {
            lop.peer = op.peers[0];
            if (early[i]) {
                lop.flags |= kOpEarly;
                out_.early.push_back(static_cast<std::uint32_t>(i));
            }
            // A message of no bytes (a barrier's) has nothing to stage:
            // it completes its op as it lands.
            if (lop.bytes != 0 &&
                (op.kind == OpKind::kRecvReduce || early[i])) {
                stage(lop, lop.bytes);
            }
        }
    }
    if (auto ids = assign_msg_ids(rp); !ids) {
        return fail(ids.error().message);
    }
    reverse_deps(rp);
    return std::move(out_);
}

bool is_empty_local(const LOp &op)
{
    return (op.kind == OpKind::kCopy || op.kind == OpKind::kReduce) &&
           op.bytes == 0;
}

// `rp` without the ops `lowered` found to copy or reduce no bytes (a
// barrier's copies, an empty block's): an op that waited for one waits
// for what that one waited for. They did nothing, but each cost a run, a
// finish and its dependents' bookkeeping on every start.
plan::RankProgram without_empty_local(const plan::RankProgram &rp,
                                      const Program &lowered)
{
    plan::RankProgram out;
    out.scratch_blocks = rp.scratch_blocks;
    std::vector<int> index(rp.ops.size(), -1);          // old -> new
    std::vector<std::vector<int>> waits(rp.ops.size()); // new deps
    for (std::size_t i = 0; i < rp.ops.size(); ++i) {
        std::vector<int> &deps = waits[i];
        for (int d : rp.ops[i].deps) {
            const auto old = static_cast<std::size_t>(d);
            if (index[old] >= 0) {
                deps.push_back(index[old]);
            } else {
                deps.insert(deps.end(), waits[old].begin(), waits[old].end());
            }
        }
        std::sort(deps.begin(), deps.end());
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        if (is_empty_local(lowered.ops[i])) {
            continue; // its dependents inherit `deps`
        }
        index[i] = static_cast<int>(out.ops.size());
        out.ops.push_back(rp.ops[i]);
        out.ops.back().deps = deps;
    }
    return out;
}

} // namespace

BufferLayout BufferLayout::uniform(int nblocks, std::uint64_t count,
                                   std::size_t elem_bytes)
{
    BufferLayout bl;
    for (int b = 0; b < nblocks; ++b) {
        bl.count.push_back(count);
        bl.offset.push_back(static_cast<std::uint64_t>(b) * count * elem_bytes);
    }
    return bl;
}

BufferLayout BufferLayout::vector(const std::vector<std::uint64_t> &counts,
                                  const std::vector<std::uint64_t> &displs,
                                  std::size_t elem_bytes)
{
    BufferLayout bl;
    bl.count = counts;
    for (std::uint64_t d : displs) {
        bl.offset.push_back(d * elem_bytes);
    }
    return bl;
}

std::uint64_t BufferLayout::extent(std::size_t elem_bytes,
                                   std::size_t nblocks) const
{
    std::uint64_t end = 0;
    for (std::size_t b = 0; b < std::min(nblocks, count.size()); ++b) {
        if (count[b] != 0) {
            end = std::max(end, offset[b] + count[b] * elem_bytes);
        }
    }
    return end;
}

Result<Program> lower(const plan::Plan &plan, int rank, const Layout &layout)
{
    Lowering l(plan, rank, layout);
    auto prog = l.run();
    if (prog &&
        std::any_of(prog->ops.begin(), prog->ops.end(), is_empty_local)) {
        const plan::RankProgram pruned = without_empty_local(
            plan.ranks[static_cast<std::size_t>(rank)], prog.value());
        Lowering again(plan, rank, layout);
        prog = again.run(&pruned);
    }
    if (prog) {
        prog->input_bytes = layout.input.extent(layout.elem_bytes);
        prog->output_bytes = layout.output.extent(layout.elem_bytes);
    }
    return prog;
}

} // namespace ucg::exec
