// SPDX-License-Identifier: BSD-3-Clause
// The engine (engine.h): op states, posting, completion, one-to-many
// posting order, data movement between segments.
#include "exec/engine.h"

#include <ucg/copy.h>

#include <algorithm>
#include <cassert>
#include <cstring>

namespace ucg::exec {

namespace {

using plan::OpKind;

// Op state bits.
enum : std::uint8_t {
    kPosted = 1,   // handed to the fabric
    kArrived = 2,  // the fabric completed it
    kDepsDone = 4, // every dep finished
    kDone = 8,     // finished: dependents released
};

// The wire tag's fields, low bit and width: UCG's bit 63, then the group
// id, the sequence, the sender's rank and the message id (whose top bit,
// kMaxWireMessages, marks answers).
struct TagField {
    unsigned shift;
    std::uint64_t mask; // of the value, before the shift

    constexpr std::uint64_t put(std::uint64_t v) const
    {
        return (v & mask) << shift;
    }
    constexpr std::uint64_t bits() const { return mask << shift; }
};
constexpr std::uint64_t kUcgBit = std::uint64_t{1} << 63;
constexpr TagField kGroupField{48, kMaxGroupIds - 1};
constexpr TagField kSeqField{40, kWireSeqs - 1};
constexpr TagField kSrcField{20, kMaxWireRanks - 1};
constexpr TagField kIdField{0, (std::uint64_t{kMaxWireMessages} << 1) - 1};
static_assert(kGroupField.bits() < kUcgBit &&
              (kGroupField.bits() & kSeqField.bits()) == 0 &&
              (kSeqField.bits() & kSrcField.bits()) == 0 &&
              (kSrcField.bits() & kIdField.bits()) == 0 &&
              kIdField.bits() < (std::uint64_t{1} << kSrcField.shift));

// Walks two segment lists in step: fn(dst, src, n, off) for each run of n
// bytes that lies in one segment of each, off bytes into the walk.
template <class At, class Fn>
void walk_segments(const Segment *d, std::uint32_t nd, const Segment *s,
                   std::uint32_t ns, At at, Fn fn)
{
    std::uint32_t di = 0, si = 0;
    std::uint64_t doff = 0, soff = 0, off = 0;
    while (di < nd && si < ns) {
        const std::uint64_t n =
            std::min(d[di].length - doff, s[si].length - soff);
        fn(at(d[di]) + doff,
           static_cast<const std::uint8_t *>(at(s[si])) + soff, n, off);
        doff += n;
        soff += n;
        off += n;
        if (doff == d[di].length) {
            ++di;
            doff = 0;
        }
        if (soff == s[si].length) {
            ++si;
            soff = 0;
        }
    }
}

} // namespace

std::uint64_t wire_tag(std::uint32_t group_id, std::uint32_t seq, int src,
                       std::uint32_t msg_id)
{
    return kUcgBit | kGroupField.put(group_id) | kSeqField.put(seq) |
           kSrcField.put(static_cast<std::uint32_t>(src)) |
           kIdField.put(msg_id);
}

std::uint64_t answer_tag(std::uint64_t tag, int replier)
{
    return (tag & ~kSrcField.bits()) |
           kSrcField.put(static_cast<std::uint32_t>(replier)) |
           kMaxWireMessages;
}

Instance::Instance(std::shared_ptr<const Program> prog, Fabric *fabric,
                   const Reducer &reducer, std::uint32_t group_id,
                   std::vector<GroupChannel *> channels)
    : prog_(std::move(prog)), fabric_(fabric), reducer_(reducer),
      group_id_(group_id), channels_(std::move(channels))
{
    const std::size_t n = prog_->ops.size();
    scratch_.resize(prog_->scratch_bytes);
    staging_.resize(prog_->staging_bytes);
    base_[static_cast<int>(Buf::kScratch)] = scratch_.data();
    base_[static_cast<int>(Buf::kStaging)] = staging_.data();
    deps_left_.resize(n);
    state_.resize(n);
    comps_.resize(n);
    ready_.reserve(n);
    group_next_.resize(prog_->groups.size());
    std::uint64_t widest = 0;
    stage_iov_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const LOp &o = prog_->ops[i];
        comps_[i].inst = this;
        comps_[i].op = static_cast<std::uint32_t>(i);
        widest = std::max(widest, o.bytes);
        stage_iov_[i] = Iov{staging_.data() + o.staging, o.bytes};
    }
    iov_.resize(prog_->segs.size());
    member_ptrs_.resize(prog_->parts.size());
    if (reducer_.user != nullptr) {
        user_tmp_.resize(widest);
    }
    // The one-to-many messages, group after group in posting order; their
    // buffers come with bind().
    group_first_.resize(prog_->group_ops.size());
    for (std::size_t g = 0; g < prog_->group_ops.size(); ++g) {
        group_first_[g] = static_cast<std::uint32_t>(group_msgs_.size());
        for (std::uint32_t op : prog_->group_ops[g]) {
            group_msgs_.push_back(group_msg(op));
        }
    }
}

void *Instance::group_buffer(std::uint32_t op) const
{
    const LOp &o = prog_->ops[op];
    if ((o.flags & kOpStaged) != 0) {
        return base_[static_cast<int>(Buf::kStaging)] + o.staging;
    }
    if (o.kind == OpKind::kIncastRecv) {
        return nullptr; // member_buffers
    }
    const bool send = plan::is_send(o.kind);
    const std::uint32_t seg = send ? o.src : o.dst;
    const std::uint32_t nseg = send ? o.nsrc : o.ndst;
    return nseg != 0 ? at(prog_->segs[seg]) : nullptr;
}

GroupMsg Instance::group_msg(std::uint32_t op) const
{
    const LOp &o = prog_->ops[op];
    const GroupChannel &ch = *channels_[static_cast<std::size_t>(o.group)];
    const auto root =
        std::lower_bound(ch.members.begin(), ch.members.end(), o.peer);
    GroupMsg m;
    m.root = static_cast<unsigned>(root - ch.members.begin());
    m.length = o.bytes;
    m.op = reducer_.op;
    m.dtype = reducer_.dtype;
    const bool staged = (o.flags & kOpStaged) != 0;
    switch (o.kind) {
    case OpKind::kBcastSend:
    case OpKind::kBcastRecv:
        m.coll = GroupColl::kBcast;
        break;
    case OpKind::kIncastGatherSend:
        m.coll = GroupColl::kGather;
        break;
    case OpKind::kIncastRecv:
        m.coll = GroupColl::kGather;
        if (!staged) {
            m.member_buffers = member_ptrs_.data() + o.parts;
        }
        break;
    case OpKind::kIncastSend:
        m.coll = GroupColl::kReduce;
        break;
    default: // kIncastRecvReduce: into dst, or dst = its operand (+) ...
        m.coll = GroupColl::kReduce;
        m.accumulate = !staged && o.nsrc == 0;
        break;
    }
    return m;
}

void Instance::bind(const void *input, void *output)
{
    // The plan never writes the input buffer (plan.h); the const is kept at
    // the API and dropped only for the segment arithmetic.
    base_[static_cast<int>(Buf::kInput)] =
        static_cast<std::uint8_t *>(const_cast<void *>(input));
    base_[static_cast<int>(Buf::kOutput)] = static_cast<std::uint8_t *>(output);
    for (std::size_t i = 0; i < prog_->segs.size(); ++i) {
        iov_[i] = Iov{at(prog_->segs[i]), prog_->segs[i].length};
    }
    for (std::size_t i = 0; i < prog_->parts.size(); ++i) {
        member_ptrs_[i] = at(prog_->parts[i]);
    }
    for (std::size_t g = 0; g < prog_->group_ops.size(); ++g) {
        const std::vector<std::uint32_t> &list = prog_->group_ops[g];
        for (std::size_t k = 0; k < list.size(); ++k) {
            GroupMsg &m = group_msgs_[group_first_[g] + k];
            const LOp &o = prog_->ops[list[k]];
            m.buffer = group_buffer(list[k]);
            // A reduce receive's operand (one segment; staged otherwise).
            if (o.kind == OpKind::kIncastRecvReduce && o.nsrc != 0 &&
                (o.flags & kOpStaged) == 0) {
                m.operand = at(prog_->segs[o.src]);
            }
        }
    }
}

ucs_status_t Instance::start(std::uint32_t seq)
{
    if (in_flight() || outstanding_ != 0) {
        return UCS_ERR_BUSY;
    }
    const Program &p = *prog_;
    seq_ = seq;
    remaining_ = static_cast<std::uint32_t>(p.ops.size());
    status_ = remaining_ == 0 ? UCS_OK : UCS_INPROGRESS;
    if (remaining_ == 0) {
        return UCS_OK;
    }
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
        deps_left_[i] = p.ops[i].ndeps;
        state_[i] = 0;
    }
    ready_.clear();
    std::fill(group_next_.begin(), group_next_.end(), 0);
    for (std::size_t g = 0; g < channels_.size(); ++g) {
        if (!p.group_ops[g].empty()) {
            channels_[g]->fifo.push_back(
                ChannelTurn{this, static_cast<std::uint32_t>(g)});
        }
    }
    for (std::uint32_t op : p.early) {
        const ucs_status_t st = post_p2p(op);
        if (st != UCS_OK && st != UCS_INPROGRESS) {
            return status_;
        }
    }
    for (std::uint32_t op : p.roots) {
        ready(op);
    }
    drain();
    return UCS_OK;
}

void Instance::ready(std::uint32_t op)
{
    ready_.push_back(op);
}

unsigned Instance::drain()
{
    if (draining_) {
        return 0; // a completion inside a post: the outer loop runs it
    }
    draining_ = true;
    unsigned count = 0;
    // FIFO, so chunks go out in program order (pipelining).
    for (std::size_t i = 0; i < ready_.size() && status_ == UCS_INPROGRESS;
         ++i) {
        run(ready_[i]);
        ++count;
    }
    ready_.clear();
    draining_ = false;
    return count;
}

void Instance::run(std::uint32_t op)
{
    const LOp &o = prog_->ops[op];
    state_[op] |= kDepsDone;
    switch (o.kind) {
    case OpKind::kCopy:
    case OpKind::kReduce:
        zip(o.dst, o.ndst, o.src, o.nsrc, o.kind == OpKind::kReduce,
            (o.flags & kOpSrcFirst) != 0);
        finish(op);
        return;
    case OpKind::kSend:
        post_p2p(op);
        return;
    case OpKind::kRecv:
    case OpKind::kRecvReduce:
        if (!(o.flags & kOpEarly)) {
            post_p2p(op);
        } else if (state_[op] & kArrived) {
            apply_received(op);
            finish(op);
        }
        return;
    default:
        assert(plan::is_one_to_many(o.kind));
        post_channel(*channels_[static_cast<std::size_t>(o.group)]);
        return;
    }
}

std::uint8_t *Instance::at(const Segment &s) const
{
    return base_[static_cast<int>(s.buf)] + s.offset;
}

ucs_status_t Instance::post_p2p(std::uint32_t op)
{
    const LOp &o = prog_->ops[op];
    ++outstanding_;
    state_[op] |= kPosted;
    ucs_status_t st;
    if (o.kind == OpKind::kSend) {
        st = fabric_->send(o.peer,
                           wire_tag(group_id_, seq_, prog_->rank, o.msg_id),
                           iov_.data() + o.src, o.nsrc, &comps_[op]);
    } else {
        const bool staged = (o.flags & kOpStaged) != 0;
        st = fabric_->recv(o.peer, wire_tag(group_id_, seq_, o.peer, o.msg_id),
                           staged ? &stage_iov_[op] : iov_.data() + o.dst,
                           staged ? 1 : o.ndst, &comps_[op]);
    }
    on_posted(op, st);
    return st;
}

void Instance::on_posted(std::uint32_t op, ucs_status_t st)
{
    if (st == UCS_INPROGRESS) {
        return;
    }
    Completion *c = &comps_[op];
    complete(c, st);
}

void Instance::complete(Completion *c, ucs_status_t status)
{
    Instance *self = c->inst;
    const std::uint32_t op = c->op;
    --self->outstanding_;
    if (plan::is_one_to_many(self->prog_->ops[op].kind)) {
        --self->group_outstanding_;
    }
    ++self->events_;
    self->state_[op] |= kArrived; // the fabric holds it no more
    if (self->status_ != UCS_INPROGRESS) {
        return; // failed earlier: only the count matters now
    }
    if (status != UCS_OK) {
        self->fail(status);
        return;
    }
    const LOp &o = self->prog_->ops[op];
    const bool waits_deps =
        (o.flags & kOpEarly) && !(self->state_[op] & kDepsDone);
    if (waits_deps) {
        return; // applied once its deps are done (run())
    }
    if (!plan::is_send(o.kind) && (o.flags & kOpStaged)) {
        self->apply_received(op);
    }
    self->finish(op);
}

void Instance::apply_received(std::uint32_t op)
{
    const LOp &o = prog_->ops[op];
    const std::uint8_t *from = staging_.data() + o.staging;
    const bool reduce =
        o.kind == OpKind::kRecvReduce || o.kind == OpKind::kIncastRecvReduce;
    const bool src_first = (o.flags & kOpSrcFirst) != 0;
    if (reduce && o.nsrc != 0) {
        reduce_operand(op, from);
        return;
    }
    std::uint64_t off = 0;
    for (std::uint32_t i = 0; i < o.ndst; ++i) {
        const Segment &d = prog_->segs[o.dst + i];
        if (reduce) {
            reduce_into(at(d), from + off, d.length, src_first);
        } else if (d.length != 0) {
            ucg_copy(at(d), from + off, d.length);
        }
        off += d.length;
    }
}

// dst = src (+) received, segment by segment: the op's own operand is
// read once, with no copy of it in dst first (plan.h).
void Instance::reduce_operand(std::uint32_t op, const std::uint8_t *received)
{
    const LOp &o = prog_->ops[op];
    // Block by block, so each block of dst is still in cache when the
    // received one is reduced into it (as ucg_reduce_multi).
    const std::uint64_t unit = reducer_.unit_bytes;
    const std::uint64_t block = std::max<std::uint64_t>(1, 4096 / unit) * unit;
    walk_segments(
        prog_->segs.data() + o.dst, o.ndst, prog_->segs.data() + o.src, o.nsrc,
        [this](const Segment &x) { return at(x); },
        [&](std::uint8_t *dp, const std::uint8_t *sp, std::uint64_t n,
            std::uint64_t off) {
            for (std::uint64_t b = 0; b < n; b += block) {
                const std::uint64_t len = std::min(block, n - b);
                if (dp + b != sp + b) {
                    std::memmove(dp + b, sp + b, len);
                }
                reduce_into(dp + b, received + off + b, len, false);
            }
        });
}

void Instance::finish(std::uint32_t op)
{
    state_[op] |= kDone;
    ++events_;
    const LOp &o = prog_->ops[op];
    for (std::uint32_t i = 0; i < o.nnext; ++i) {
        const std::uint32_t n = prog_->next[o.next + i];
        if (--deps_left_[n] == 0) {
            ready(n);
        }
    }
    if (--remaining_ == 0) {
        status_ = UCS_OK;
    }
}

void Instance::fail(ucs_status_t status)
{
    if (status_ != UCS_INPROGRESS) {
        return;
    }
    status_ = status;
    ready_.clear();
    fabric_->cancel(*this);
}

void Instance::outstanding_p2p(std::vector<Completion *> *out)
{
    for (std::size_t i = 0; i < comps_.size(); ++i) {
        const LOp &o = prog_->ops[i];
        const bool p2p = o.kind == OpKind::kSend || o.kind == OpKind::kRecv ||
                         o.kind == OpKind::kRecvReduce;
        if (p2p && (state_[i] & kPosted) && !(state_[i] & kArrived)) {
            out->push_back(&comps_[i]);
        }
    }
}

Instance::Pending Instance::pending(const std::vector<bool> &far) const
{
    if (group_outstanding_ != 0 || has_ready()) {
        return Pending::kOther;
    }
    for (const GroupChannel *ch : channels_) {
        if (ch->blocked) {
            return Pending::kOther;
        }
    }
    for (std::size_t i = 0; i < comps_.size(); ++i) {
        const LOp &o = prog_->ops[i];
        if ((state_[i] & kPosted) && !(state_[i] & kArrived) &&
            !plan::is_one_to_many(o.kind) &&
            static_cast<std::size_t>(o.peer) < far.size() && far[o.peer]) {
            return Pending::kFar;
        }
    }
    return Pending::kNear;
}

void Instance::pack(std::uint32_t src, std::uint32_t nsrc,
                    std::uint8_t *to) const
{
    for (std::uint32_t i = 0; i < nsrc; ++i) {
        const Segment &s = prog_->segs[src + i];
        if (s.length != 0) {
            ucg_copy(to, at(s), s.length);
            to += s.length;
        }
    }
}

void Instance::reduce_into(std::uint8_t *dst, const std::uint8_t *src,
                           std::size_t bytes, bool src_first)
{
    const std::size_t count = bytes / reducer_.unit_bytes;
    if (reducer_.user == nullptr) {
        // Predefined operators are commutative: operand order cannot
        // change a result (IEEE a + b == b + a).
        reducer_.kernel(dst, src, count);
        return;
    }
    if (src_first) { // dst = src (+) dst: MPI's (in, inout) as is
        reducer_.user(src, dst, count, reducer_.user_arg);
        return;
    }
    std::memcpy(user_tmp_.data(), src, bytes); // dst = dst (+) src
    reducer_.user(dst, user_tmp_.data(), count, reducer_.user_arg);
    std::memcpy(dst, user_tmp_.data(), bytes);
}

void Instance::zip(std::uint32_t dst, std::uint32_t ndst, std::uint32_t src,
                   std::uint32_t nsrc, bool reduce, bool src_first)
{
    walk_segments(
        prog_->segs.data() + dst, ndst, prog_->segs.data() + src, nsrc,
        [this](const Segment &x) { return at(x); },
        [&](std::uint8_t *dp, const std::uint8_t *sp, std::uint64_t n,
            std::uint64_t) {
            if (reduce) {
                reduce_into(dp, sp, n, src_first);
            } else if (dp + n <= sp || sp + n <= dp) {
                ucg_copy(dp, sp, n);
            } else if (dp != sp) { // in-place aliasing: onto itself
                std::memmove(dp, sp, n);
            }
        });
}

ucs_status_t Instance::post_group(std::uint32_t g, std::uint32_t k)
{
    const std::uint32_t op = prog_->group_ops[g][k];
    const LOp &o = prog_->ops[op];
    GroupChannel &ch = *channels_[g];
    const GroupMsg &m = group_msgs_[group_first_[g] + k];
    const bool send = plan::is_send(o.kind);
    if (send && (o.flags & kOpStaged) != 0) {
        pack(o.src, o.nsrc, staging_.data() + o.staging);
    }
    if (m.coll == GroupColl::kReduce && reducer_.user != nullptr) {
        fail(UCS_ERR_UNSUPPORTED); // plans for user operators avoid incasts
        return UCS_ERR_UNSUPPORTED;
    }
    ++outstanding_;
    ++group_outstanding_;
    state_[op] |= kPosted;
    const ucs_status_t st = send ? fabric_->group_send(ch, m, &comps_[op])
                                 : fabric_->group_recv(ch, m, &comps_[op]);
    if (st == UCS_ERR_NO_RESOURCE) {
        --outstanding_;
        --group_outstanding_;
        state_[op] &= static_cast<std::uint8_t>(~kPosted);
        return st;
    }
    on_posted(op, st);
    return st == UCS_INPROGRESS ? UCS_OK : st;
}

void Instance::post_channel(GroupChannel &ch)
{
    ch.blocked = false;
    while (ch.head < ch.fifo.size()) {
        Instance *inst = ch.fifo[ch.head].inst;
        const std::uint32_t g = ch.fifo[ch.head].group;
        const std::vector<std::uint32_t> &list = inst->prog_->group_ops[g];
        std::uint32_t &next = inst->group_next_[g];
        if (inst->status_ != UCS_INPROGRESS || next == list.size()) {
            ++ch.head; // done posting (or failed: the group is lost)
            continue;
        }
        const std::uint32_t op = list[next];
        if (!(inst->state_[op] & kDepsDone)) {
            break;
        }
        const ucs_status_t st = inst->post_group(g, next);
        if (st == UCS_ERR_NO_RESOURCE) {
            ch.blocked = true;
            break;
        }
        ++next;
    }
    if (ch.head == ch.fifo.size()) {
        ch.fifo.clear();
        ch.head = 0;
    }
}

} // namespace ucg::exec
