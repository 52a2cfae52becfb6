// SPDX-License-Identifier: BSD-3-Clause
// mm_bcast group protocol (seq_layout.h). Idea: the group's messages form
// one sequence every member posts in the same order, so message k's
// fragments sit at positions every member computes; the root copies each
// fragment into its slot once all cursors allow, each receiver copies it
// out into its own posted buffer. Cost per message of L bytes: the root
// writes L bytes once (or a 24-byte descriptor from cma_min: receivers
// then read the root's buffer with process_vm_readv), each receiver reads
// L bytes once; an idle poll of a posted receive reads one slot line.
#include "seq_group.h"

#include "uct_mm_common/backoff.h"
#include "uct_mm_common/group_post.h"
#include "uct_mm_common/log.h"
#include <ucg/copy.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <sys/uio.h>
#include <unistd.h>

namespace uct_mm_bcast {

using uct_mm_common::CompleteFn;
using uct_mm_common::kCursorLeft;
using uct_mm_common::LinkConfig;
using uct_mm_common::LinkParams;

namespace {

bool geometry_ok(std::uint64_t slots, std::uint64_t seg) noexcept
{
    return uct_mm_common::is_pow2(slots) && slots >= kMinSlots &&
           slots <= kMaxSlots && seg % kCacheLine == 0 && seg >= kMinSegBytes &&
           seg <= kMaxSegBytes;
}

} // namespace

SeqGroup::SeqGroup(const SeqGroupConfig &cfg)
    : cfg_(cfg), ops_(cfg.max_outstanding), cma_(cfg.max_outstanding)
{
    pid_ = static_cast<std::int32_t>(getpid());
}

Status SeqGroup::create(const SeqGroupConfig &cfg, SeqGroup **group_p)
{
    if (cfg.size == 0 || cfg.member >= cfg.size ||
        cfg.size > uct_mm_common::kMaxGroupMembers ||
        cfg.max_outstanding == 0 ||
        !geometry_ok(cfg.geo.num_slots, cfg.geo.seg_bytes)) {
        return Status::kInvalidParam;
    }
    std::unique_ptr<SeqGroup> g(new (std::nothrow) SeqGroup(cfg));
    if (g == nullptr) {
        return Status::kNoMemory;
    }
    LinkConfig lc;
    lc.name = cfg.name;
    lc.layout = kSeqLayout;
    lc.member = cfg.member;
    lc.size = cfg.size;
    lc.region_bytes = cfg.geo.region_bytes();
    lc.params.value[kParamSlots] = cfg.geo.num_slots;
    lc.params.value[kParamSegBytes] = cfg.geo.seg_bytes;
    lc.params.value[kParamCmaMin] = cfg.cma_min;
    lc.params.value[kParamCmaMax] = cfg.cma_max;
    lc.timeout_ms = cfg.timeout_ms;
    lc.attach_timeout_ms = cfg.attach_timeout_ms;
    lc.validate = validate;
    lc.validate_arg = g.get();
    lc.memory = cfg.memory;
    lc.memory_bytes = cfg.memory_bytes;
    if (cfg.member == 0) {
        const Status st = g->link_.create(lc);
        if (st != Status::kOk) {
            return st;
        }
        // A zero-filled ring needs no formatting: seq 0 is no position's.
        g->adopt_params();
        g->link_.publish();
    } else {
        g->link_.prepare(lc);
    }
    *group_p = g.release();
    return Status::kOk;
}

// Attachers: member 0's constants, checked before they are used.
Status SeqGroup::validate(void *arg, const LinkParams &p,
                          std::size_t region_bytes)
{
    auto *g = static_cast<SeqGroup *>(arg);
    SeqGeometry geo;
    geo.num_slots = static_cast<std::uint32_t>(p.value[kParamSlots]);
    geo.seg_bytes = static_cast<std::uint32_t>(p.value[kParamSegBytes]);
    if (!geometry_ok(p.value[kParamSlots], p.value[kParamSegBytes]) ||
        geo.region_bytes() > region_bytes) {
        uct_mm_common::log(uct_mm_common::LogLevel::kError,
                           "mm_bcast group %s: ring of %llu slots x %llu "
                           "bytes does not fit its segment",
                           g->cfg_.name.c_str(),
                           static_cast<unsigned long long>(p.value[0]),
                           static_cast<unsigned long long>(p.value[1]));
        return Status::kIoError;
    }
    g->geo_ = geo;
    g->cma_min_ = p.value[kParamCmaMin];
    g->cma_max_ = p.value[kParamCmaMax];
    g->slot_bytes_ = geo.slot_bytes();
    return Status::kOk;
}

void SeqGroup::adopt_params()
{
    geo_ = cfg_.geo;
    cma_min_ = cfg_.cma_min;
    cma_max_ = cfg_.cma_max;
    slot_bytes_ = geo_.slot_bytes();
}

Status SeqGroup::check(bool send, const Message &msg,
                       const char **why) const noexcept
{
    return uct_mm_common::check_common(send, msg, cfg_.member, cfg_.size,
                                       limits(), why);
}

uct_mm_common::GroupLimits
SeqGroup::limits_of(const SeqGroupConfig &cfg) noexcept
{
    uct_mm_common::GroupLimits l;
    l.caps = uct_mm_common::kCapBcast | uct_mm_common::kCapHostLocal;
    l.max_group_size = cfg.max_group_size;
    l.max_outstanding = cfg.max_outstanding;
    l.max_length = cfg.max_length;
    // Half the ring: a plan's next message fills one half while the
    // receivers drain the other.
    l.seg_length = std::size_t{cfg.geo.seg_bytes} * cfg.geo.num_slots / 2;
    return l;
}

void SeqGroup::start(Op &op) noexcept
{
    const std::size_t len = op.msg.length;
    op.cma = len != 0 && !op.msg.no_cma && len >= cma_min_ && len < cma_max_;
    op.frag = frag_bytes(len, geo_.seg_bytes);
    op.nfrag = op.cma ? 1 : (len == 0 ? 1 : (len - 1) / op.frag + 1);
    op.first = next_pos_;
    op.msg_no = next_msg_++;
    next_pos_ += op.nfrag;
    op.started = true;
}

std::size_t SeqGroup::frag_length(const Op &op, std::uint64_t f) const noexcept
{
    if (op.cma) {
        return sizeof(CmaRef);
    }
    const std::size_t off = f * op.frag;
    const std::size_t left = op.msg.length - off;
    return left < op.frag ? left : op.frag;
}

FragHeader *SeqGroup::slot(std::uint64_t pos) const noexcept
{
    return reinterpret_cast<FragHeader *>(
        link_.region() + (pos & (geo_.num_slots - 1)) * slot_bytes_);
}

// The root may fill position pos once every other member is done with
// pos - num_slots; the cursors are rescanned only when the cache says no.
bool SeqGroup::room_for(std::uint64_t pos) noexcept
{
    if (pos < cached_min_ + geo_.num_slots) {
        return true;
    }
    std::uint64_t min = kCursorLeft;
    for (std::uint32_t i = 0; i < cfg_.size; ++i) {
        if (i == cfg_.member) {
            continue;
        }
        const std::uint64_t c = link_.cursor_of(i);
        if (c != kCursorLeft && c > pos) {
            link_.fail(Status::kIoError, static_cast<int>(i),
                       "cursor past what was published");
            return false;
        }
        min = c < min ? c : min;
    }
    cached_min_ = min == kCursorLeft ? pos : min; // all others left
    return pos < cached_min_ + geo_.num_slots;
}

void SeqGroup::advance_cursor(std::uint64_t pos) noexcept
{
    cursor_ = pos + 1;
    link_.set_cursor(cursor_);
    ++moved_;
}

bool SeqGroup::push(Op &op) noexcept
{
    const auto *src = static_cast<const std::uint8_t *>(op.msg.buffer);
    for (; op.done < op.nfrag; ++op.done) {
        const std::uint64_t pos = op.first + op.done;
        if (!room_for(pos)) {
            return false;
        }
        FragHeader *h = slot(pos);
        auto *payload = reinterpret_cast<std::uint8_t *>(h + 1);
        const std::size_t len = frag_length(op, op.done);
        if (op.cma) {
            const CmaRef d{pid_, 0, reinterpret_cast<std::uint64_t>(src),
                           op.msg.length};
            std::memcpy(payload, &d, sizeof(d));
        } else if (len != 0) {
            const std::uint8_t *from = src + op.done * op.frag;
            if (op.msg.length >= cfg_.stream_min) {
                ucg_copy_to_peer(payload, from, len); // decision 0047
                ++streamed_;
            } else {
                ucg_copy(payload, from, len);
            }
        }
        h->length = static_cast<std::uint32_t>(len);
        h->root = static_cast<std::uint16_t>(cfg_.member);
        h->kind = op.cma ? FragKind::kCma : FragKind::kInline;
        h->reserved = 0;
        h->tag = op.msg.tag;
        h->msg = op.msg_no;
        h->total = op.msg.length;
        h->seq.store(pos + 1, std::memory_order_release);
        advance_cursor(pos);
    }
    return true;
}

bool SeqGroup::frag_matches(const FragHeader *h, const Op &op,
                            std::uint64_t f) noexcept
{
    const FragKind kind = op.cma ? FragKind::kCma : FragKind::kInline;
    if (h->root == op.msg.root && h->msg == op.msg_no &&
        h->total == op.msg.length && h->tag == op.msg.tag && h->kind == kind &&
        h->length == frag_length(op, f)) {
        return true;
    }
    link_.fail(Status::kIoError, static_cast<int>(op.msg.root),
               "a fragment does not match this member's post (root, order, "
               "length or tag differ)");
    return false;
}

// Reads the root's buffer into the posted one; sizes come from the post.
bool SeqGroup::read_cma(const FragHeader *h, const Op &op) noexcept
{
    CmaRef d;
    std::memcpy(&d, h + 1, sizeof(d));
    if (d.length != op.msg.length) {
        link_.fail(Status::kIoError, static_cast<int>(op.msg.root),
                   "CMA descriptor length differs from the post");
        return false;
    }
    auto *dst = static_cast<std::uint8_t *>(op.msg.buffer);
    std::size_t off = 0;
    while (off < op.msg.length) {
        iovec local{dst + off, op.msg.length - off};
        iovec remote{reinterpret_cast<void *>(d.address + off),
                     op.msg.length - off};
        const ssize_t n = process_vm_readv(d.pid, &local, 1, &remote, 1, 0);
        if (n <= 0) {
            const bool gone = n < 0 && errno == ESRCH;
            link_.fail(gone ? Status::kPeerDead : Status::kIoError,
                       static_cast<int>(op.msg.root),
                       "process_vm_readv from the root failed");
            return false;
        }
        off += static_cast<std::size_t>(n);
    }
    return true;
}

bool SeqGroup::pull(Op &op) noexcept
{
    auto *dst = static_cast<std::uint8_t *>(op.msg.buffer);
    for (; op.done < op.nfrag; ++op.done) {
        const std::uint64_t pos = op.first + op.done;
        const FragHeader *h = slot(pos);
        const std::uint64_t seq = h->seq.load(std::memory_order_acquire);
        if (seq != pos + 1) {
            // Past this position: the root cannot have reused the slot
            // before this member read it, so the word is corrupt.
            if (seq > pos + 1) {
                link_.fail(Status::kIoError, static_cast<int>(op.msg.root),
                           "a slot is past this member's position");
            }
            return false;
        }
        if (!frag_matches(h, op, op.done)) {
            return false;
        }
        if (op.cma) {
            if (!read_cma(h, op)) {
                return false;
            }
        } else if (const std::size_t len = frag_length(op, op.done)) {
            ucg_copy(dst + op.done * op.frag, h + 1, len);
        }
        advance_cursor(pos);
    }
    return true;
}

bool SeqGroup::run_front() noexcept
{
    Op &op = ops_.front();
    if (!op.started) {
        start(op);
    }
    return op.send ? push(op) : pull(op);
}

Status SeqGroup::post(bool send, const Message &msg, void *cookie) noexcept
{
    Op op{};
    op.msg = msg;
    op.cookie = cookie;
    op.send = send;
    Op done{};
    const Status st = uct_mm_common::post_in_order(
        link_, ops_, ops_.size() + cma_.size() < cfg_.max_outstanding, op,
        moved_, [this] { return run_front(); }, &done);
    if (st == Status::kOk && done.cma && done.send) {
        cma_.push() = CmaWait{done.first, cookie};
        return Status::kInProgress; // until every receiver has read it
    }
    return st;
}

unsigned SeqGroup::advance(CompleteFn fn, void *arg) noexcept
{
    unsigned n = 0;
    while (!ops_.empty() && !link_.failed() && run_front()) {
        const Op op = ops_.front();
        ops_.pop(); // before fn: it may post again
        if (op.cma && op.send) {
            cma_.push() = CmaWait{op.first, op.cookie};
        } else {
            fn(arg, op.cookie, Status::kOk);
            ++n;
        }
    }
    return n;
}

unsigned SeqGroup::finish_cma(CompleteFn fn, void *arg) noexcept
{
    unsigned n = 0;
    while (!cma_.empty() && !link_.failed()) {
        const CmaWait w = cma_.front();
        if (link_.min_other_cursor() <= w.pos) {
            break;
        }
        cma_.pop();
        fn(arg, w.cookie, Status::kOk);
        ++n;
    }
    return n;
}

void SeqGroup::fail_all(CompleteFn fn, void *arg) noexcept
{
    const Status st = link_.state();
    while (!ops_.empty()) {
        void *cookie = ops_.front().cookie;
        ops_.pop();
        fn(arg, cookie, st);
    }
    while (!cma_.empty()) {
        void *cookie = cma_.front().cookie;
        cma_.pop();
        fn(arg, cookie, st);
    }
}

int SeqGroup::waiting_on() noexcept
{
    if (!ops_.empty() && !ops_.front().send) {
        return static_cast<int>(ops_.front().msg.root);
    }
    return -1;
}

unsigned SeqGroup::progress(CompleteFn fn, void *arg) noexcept
{
    if (!link_.failed() && (!link_.joined() || !link_.all_attached())) {
        const Status st = link_.poll_connect(uct_mm_common::now_ns());
        if (st == Status::kInProgress) {
            return 0; // not attached yet (poll_connect keeps the deadline)
        }
    }
    if (link_.failed()) {
        const bool any = !ops_.empty() || !cma_.empty();
        fail_all(fn, arg);
        return any ? 1 : 0;
    }
    unsigned n = advance(fn, arg);
    n += finish_cma(fn, arg);
    if (moved_ != 0 || n != 0) {
        link_.on_activity();
    } else if (!ops_.empty() || !cma_.empty()) {
        link_.on_stall(waiting_on());
    }
    n += moved_;
    moved_ = 0;
    if (link_.failed()) {
        fail_all(fn, arg);
        ++n;
    }
    return n;
}

bool SeqGroup::busy() const noexcept
{
    return !ops_.empty() || !cma_.empty() ||
           (!link_.failed() && (!link_.joined() || !link_.all_attached()));
}

} // namespace uct_mm_bcast
