// SPDX-License-Identifier: BSD-3-Clause
// mm_incast group: creation, posts in sequence order, progress and failure
// (the chunk protocol is in incast_chunks.cpp; layout in seq_layout.h).
// Idea: every member posts the group's messages in one order, so message
// k's chunks sit at positions all members compute; senders write their
// chunk of a position once every cursor allows, the root consumes a
// position once its chunks are complete, straight into the posted buffer.
// Cost per message of L bytes: each sender writes L bytes once; the root
// reads (N-1) x L (slot modes) or L (buffer modes) once; an idle poll of a
// posted receive reads one line (a count or a slot's sequence word).
#include "incast_group.h"

#include "uct_mm_common/backoff.h"
#include "uct_mm_common/group_post.h"
#include "uct_mm_common/log.h"

#include <memory>
#include <new>

namespace uct_mm_incast {

using uct_mm_common::Coll;
using uct_mm_common::CompleteFn;
using uct_mm_common::kCursorLeft;
using uct_mm_common::LinkConfig;
using uct_mm_common::LinkParams;

namespace {

bool geometry_ok(std::uint64_t elements, std::uint64_t seg,
                 std::uint64_t mode) noexcept
{
    return elements >= 1 && elements <= kMaxElements && seg % kCacheLine == 0 &&
           seg >= kMinSegBytes && seg <= kMaxSegBytes &&
           mode < UCT_MM_INCAST_MODE_LAST;
}

std::uint64_t pack_group_sizes(const AutoThresholds &t) noexcept
{
    return std::uint64_t{t.locked_min_group} |
           (std::uint64_t{t.pair_group} << kGroupSizeBits) |
           (std::uint64_t{t.gather_batched_max_group} << (2 * kGroupSizeBits));
}

// Member 0's word into t; a field out of range reads 0, which valid()
// refuses (as do bits above the three fields).
bool unpack_group_sizes(std::uint64_t word, AutoThresholds *t) noexcept
{
    constexpr std::uint64_t kField = (std::uint64_t{1} << kGroupSizeBits) - 1;
    const auto field = [word](unsigned i) {
        const std::uint64_t v = (word >> (i * kGroupSizeBits)) & kField;
        return v <= AutoThresholds::kMaxGroup ? static_cast<std::uint32_t>(v)
                                              : 0;
    };
    t->locked_min_group = field(0);
    t->pair_group = field(1);
    t->gather_batched_max_group = field(2);
    return (word >> (3 * kGroupSizeBits)) == 0 && t->valid();
}

// What every member's chunks of one message carry (the agreement check).
std::uint32_t message_check(const Message &m, std::uint32_t msg_no) noexcept
{
    const bool reduce = m.coll == Coll::kReduce;
    std::uint64_t h = 0xcbf29ce484222325ULL;
    const std::uint64_t fields[] = {
        msg_no,
        m.root,
        static_cast<std::uint64_t>(m.coll),
        reduce ? static_cast<std::uint64_t>(m.op) : 0,
        reduce ? static_cast<std::uint64_t>(m.dtype) : 0,
        m.tag,
        m.length};
    for (std::uint64_t f : fields) {
        h = (h ^ f) * 0x100000001b3ULL;
    }
    return static_cast<std::uint32_t>(h ^ (h >> 32));
}

// The direct slot bytes member 0 publishes for a group of its size.
std::uint32_t direct_bytes_of(const IncastGroupConfig &cfg) noexcept
{
    return cfg.size >= 2 && cfg.size <= cfg.direct_max_group ? cfg.direct_bytes
                                                             : 0;
}

} // namespace

std::uint32_t auto_seg_bytes(std::uint32_t members,
                             std::uint32_t locked_min_group) noexcept
{
    if (members >= locked_min_group) {
        return kAutoSegMin;
    }
    IncastGeometry geo;
    geo.members = members;
    for (geo.seg_bytes = kAutoSegMax; geo.seg_bytes > kAutoSegMin;
         geo.seg_bytes /= 2) {
        if (geo.element_bytes() * kAutoRingPositions <= kAutoRingBytes) {
            break;
        }
    }
    return geo.seg_bytes;
}

std::size_t message_chunk(uct_mm_common::Coll coll, std::size_t length,
                          std::uint32_t seg_bytes) noexcept
{
    if (coll != uct_mm_common::Coll::kGather) {
        return seg_bytes;
    }
    const std::size_t quarter =
        align_up((length + 3) / 4, uct_mm_common::kCacheLine);
    const std::size_t floor = std::min<std::size_t>(kAutoSegMin, seg_bytes);
    return std::min<std::size_t>(seg_bytes, std::max(floor, quarter));
}

IncastGeometry geometry_of(const IncastGroupConfig &cfg) noexcept
{
    IncastGeometry geo;
    geo.members = cfg.size;
    geo.seg_bytes =
        cfg.seg_bytes != 0
            ? cfg.seg_bytes
            : auto_seg_bytes(cfg.size, cfg.thresholds.locked_min_group);
    geo.elements = cfg.elements;
    if (geo.elements == 0) {
        const std::size_t fit = kAutoRingBytes / geo.element_bytes();
        geo.elements =
            static_cast<std::uint32_t>(fit < 8 ? 8 : (fit > 256 ? 256 : fit));
    }
    return geo;
}

IncastGroup::IncastGroup(const IncastGroupConfig &cfg)
    : cfg_(cfg), limits_(limits_of(cfg)), ops_(cfg.max_outstanding),
      srcs_(cfg.size)
{
}

Status IncastGroup::create(const IncastGroupConfig &cfg, IncastGroup **group_p)
{
    const IncastGeometry geo = geometry_of(cfg);
    if (cfg.size == 0 || cfg.member >= cfg.size ||
        cfg.size > uct_mm_common::kMaxGroupMembers ||
        cfg.max_outstanding == 0 || !cfg.thresholds.valid() ||
        !geometry_ok(geo.elements, geo.seg_bytes, cfg.mode) ||
        !DirectGeometry::valid(cfg.direct_bytes)) {
        return Status::kInvalidParam;
    }
    std::unique_ptr<IncastGroup> g(new (std::nothrow) IncastGroup(cfg));
    if (g == nullptr) {
        return Status::kNoMemory;
    }
    LinkConfig lc;
    lc.name = cfg.name;
    lc.layout = kIncastLayout;
    lc.member = cfg.member;
    lc.size = cfg.size;
    const DirectGeometry dgeo{cfg.size, direct_bytes_of(cfg)};
    lc.region_bytes = geo.region_bytes() + dgeo.region_bytes();
    lc.params.value[kParamElements] = geo.elements;
    lc.params.value[kParamSegBytes] = geo.seg_bytes;
    lc.params.value[kParamMode] = static_cast<std::uint64_t>(cfg.mode);
    lc.params.value[kParamAtomicMax] = cfg.thresholds.atomic_max_bytes;
    lc.params.value[kParamLockedMin] = cfg.thresholds.locked_min_bytes;
    lc.params.value[kParamGroupSizes] = pack_group_sizes(cfg.thresholds);
    lc.params.value[kParamPairLockedMin] = cfg.thresholds.pair_locked_min_bytes;
    lc.params.value[kParamDirectBytes] = dgeo.slot_bytes;
    lc.timeout_ms = cfg.timeout_ms;
    lc.attach_timeout_ms = cfg.attach_timeout_ms;
    lc.validate = validate;
    lc.validate_arg = g.get();
    lc.memory = cfg.memory;
    lc.memory_bytes = cfg.memory_bytes;
    if (cfg.member != 0) {
        g->link_.prepare(lc);
        *group_p = g.release();
        return Status::kOk;
    }
    Status st = g->link_.create(lc);
    if (st != Status::kOk) {
        return st;
    }
    g->geo_ = geo;
    g->mode_ = cfg.mode;
    g->thresholds_ = cfg.thresholds;
    g->element_bytes_ = geo.element_bytes();
    g->seen_.resize(geo.elements);
    g->direct_geo_ = dgeo;
    g->known_ = true;
    st = g->format();
    if (st != Status::kOk) {
        return st;
    }
    g->link_.publish();
    *group_p = g.release();
    return Status::kOk;
}

// Member 0: the locks of LOCKED (everything else starts at zero).
Status IncastGroup::format() noexcept
{
    const ucs_lock_kind_t kind =
        geo_.seg_bytes <= 4096 ? UCS_LOCK_KIND_SPIN : UCS_LOCK_KIND_MUTEX;
    for (std::uint32_t e = 0; e < geo_.elements; ++e) {
        auto *lk =
            reinterpret_cast<ElementLock *>(element(e) + geo_.lock_offset());
        if (ucs_lock_init(&lk->lock, kind) != UCS_OK) {
            uct_mm_common::log(uct_mm_common::LogLevel::kError,
                               "mm_incast group %s: cannot set up its locks",
                               cfg_.name.c_str());
            return Status::kIoError;
        }
    }
    return Status::kOk;
}

// Attachers: member 0's constants, checked before they are used.
Status IncastGroup::validate(void *arg, const LinkParams &p,
                             std::size_t region_bytes)
{
    auto *g = static_cast<IncastGroup *>(arg);
    IncastGeometry geo;
    geo.members = g->cfg_.size;
    geo.elements = static_cast<std::uint32_t>(p.value[kParamElements]);
    geo.seg_bytes = static_cast<std::uint32_t>(p.value[kParamSegBytes]);
    const std::uint64_t direct_bytes = p.value[kParamDirectBytes];
    const DirectGeometry dgeo{g->cfg_.size,
                              static_cast<std::uint32_t>(direct_bytes)};
    if (!geometry_ok(p.value[kParamElements], p.value[kParamSegBytes],
                     p.value[kParamMode]) ||
        !DirectGeometry::valid(direct_bytes) ||
        geo.region_bytes() + dgeo.region_bytes() > region_bytes) {
        uct_mm_common::log(uct_mm_common::LogLevel::kError,
                           "mm_incast group %s: %llu elements of %llu-byte "
                           "chunks (mode %llu) and %llu-byte direct slots do "
                           "not fit its segment",
                           g->cfg_.name.c_str(),
                           static_cast<unsigned long long>(p.value[0]),
                           static_cast<unsigned long long>(p.value[1]),
                           static_cast<unsigned long long>(p.value[2]),
                           static_cast<unsigned long long>(direct_bytes));
        return Status::kIoError;
    }
    AutoThresholds t;
    t.atomic_max_bytes = static_cast<std::size_t>(p.value[kParamAtomicMax]);
    t.locked_min_bytes = static_cast<std::size_t>(p.value[kParamLockedMin]);
    t.pair_locked_min_bytes =
        static_cast<std::size_t>(p.value[kParamPairLockedMin]);
    if (!unpack_group_sizes(p.value[kParamGroupSizes], &t)) {
        uct_mm_common::log(uct_mm_common::LogLevel::kError,
                           "mm_incast group %s: member 0's AUTO group-size "
                           "thresholds are out of range",
                           g->cfg_.name.c_str());
        return Status::kIoError;
    }
    try {
        g->seen_.resize(geo.elements);
    } catch (...) {
        return Status::kNoMemory;
    }
    g->geo_ = geo;
    g->mode_ = static_cast<uct_mm_incast_mode_t>(p.value[kParamMode]);
    g->thresholds_ = t;
    g->element_bytes_ = geo.element_bytes();
    g->direct_geo_ = dgeo;
    g->known_ = true;
    return Status::kOk;
}

DirectArea *IncastGroup::direct() noexcept
{
    if (!link_.joined() || direct_geo_.slot_bytes == 0) {
        return nullptr;
    }
    if (!direct_.attached() &&
        direct_.attach(link_.region() + geo_.region_bytes(), direct_geo_,
                       cfg_.member, &link_) != Status::kOk) {
        return nullptr;
    }
    return &direct_;
}

uct_mm_common::GroupLimits
IncastGroup::limits_of(const IncastGroupConfig &cfg) noexcept
{
    uct_mm_common::GroupLimits l;
    l.caps = uct_mm_common::kCapGather | uct_mm_common::kCapReduce |
             uct_mm_common::kCapHostLocal;
    l.max_group_size = cfg.max_group_size;
    l.max_outstanding = cfg.max_outstanding;
    l.max_length = cfg.max_length;
    // Half the ring, as mm_bcast: one message fills while the root drains.
    const IncastGeometry geo = geometry_of(cfg);
    l.seg_length = std::size_t{geo.seg_bytes} * geo.elements / 2;
    return l;
}

Status IncastGroup::check(bool send, const Message &msg,
                          const char **why) const noexcept
{
    Status st = uct_mm_common::check_common(send, msg, cfg_.member, cfg_.size,
                                            limits_, why);
    if (st != Status::kOk) {
        return st;
    }
    if (msg.coll == Coll::kReduce) {
        if (check_pair(msg.op, msg.dtype) != Status::kOk) {
            *why = "operator not defined for this datatype";
            return Status::kInvalidParam;
        }
        if (msg.length % dtype_bytes(msg.dtype) != 0) {
            *why = "length not a multiple of the datatype size";
            return Status::kInvalidParam;
        }
    } else if (!send && msg.member_buffers != nullptr && msg.length != 0) {
        for (std::uint32_t m = 0; m < cfg_.size; ++m) {
            if (m != msg.root && msg.member_buffers[m] == nullptr) {
                *why = "a member buffer is missing";
                return Status::kInvalidParam;
            }
        }
    }
    return Status::kOk;
}

uct_mm_incast_mode_t IncastGroup::mode_of(const Message &msg) const noexcept
{
    return known_ ? message_mode(msg, cfg_.size, mode_, thresholds_)
                  : UCT_MM_INCAST_MODE_LAST;
}

void IncastGroup::start(Op &op) noexcept
{
    const std::size_t len = op.msg.length;
    op.mode = message_mode(op.msg, cfg_.size, mode_, thresholds_);
    op.chunk = message_chunk(op.msg.coll, len, geo_.seg_bytes);
    op.nelem = len == 0 ? 1 : (len - 1) / op.chunk + 1;
    op.first = next_pos_;
    next_pos_ += op.nelem;
    op.check = message_check(op.msg, next_msg_++);
    if (op.mode == UCT_MM_INCAST_MODE_ATOMIC) {
        op.atomic = atomic_reduce_fn(op.msg.op, op.msg.dtype);
    }
    op.started = true;
}

std::size_t IncastGroup::chunk_length(const Op &op,
                                      std::uint64_t c) const noexcept
{
    const std::size_t left = op.msg.length - c * op.chunk;
    return left < op.chunk ? left : op.chunk;
}

// A sender may write position pos once every other member is done with
// pos - elements; the cursors are rescanned only when the cache says no.
bool IncastGroup::room_for(std::uint64_t pos) noexcept
{
    if (pos < cached_min_ + geo_.elements) {
        return true;
    }
    std::uint64_t min = kCursorLeft;
    for (std::uint32_t i = 0; i < cfg_.size; ++i) {
        if (i == cfg_.member) {
            continue;
        }
        const std::uint64_t c = link_.cursor_of(i);
        if (c != kCursorLeft && c > pos + geo_.elements) {
            link_.fail(Status::kIoError, static_cast<int>(i),
                       "cursor past what flow control allows");
            return false;
        }
        min = c < min ? c : min;
    }
    cached_min_ = min == kCursorLeft ? pos : min; // all others left
    return pos < cached_min_ + geo_.elements;
}

void IncastGroup::advance_cursor(std::uint64_t pos) noexcept
{
    cursor_ = pos + 1;
    link_.set_cursor(cursor_);
    ++moved_;
}

bool IncastGroup::run_front() noexcept
{
    Op &op = ops_.front();
    if (!op.started) {
        start(op);
    }
    return op.send ? put(op) : take(op);
}

Status IncastGroup::post(bool send, const Message &msg, void *cookie) noexcept
{
    Op op{};
    op.msg = msg;
    op.cookie = cookie;
    op.send = send;
    Op done{};
    return uct_mm_common::post_in_order(
        link_, ops_, !ops_.full(), op, moved_, [this] { return run_front(); },
        &done);
}

unsigned IncastGroup::advance(CompleteFn fn, void *arg) noexcept
{
    unsigned n = 0;
    while (!ops_.empty() && !link_.failed() && run_front()) {
        void *cookie = ops_.front().cookie;
        ops_.pop(); // before fn: it may post again
        fn(arg, cookie, Status::kOk);
        ++n;
    }
    return n;
}

void IncastGroup::fail_all(CompleteFn fn, void *arg) noexcept
{
    const Status st = link_.state();
    while (!ops_.empty()) {
        void *cookie = ops_.front().cookie;
        ops_.pop();
        fn(arg, cookie, st);
    }
}

int IncastGroup::waiting_on() noexcept
{
    if (ops_.empty() || ops_.front().send || !ops_.front().started) {
        return -1;
    }
    const Op &op = ops_.front();
    if (!is_slot_mode(op.mode) || op.done >= op.nelem) {
        return -1;
    }
    return first_missing(op.first + op.done, op.msg.root);
}

unsigned IncastGroup::progress(CompleteFn fn, void *arg) noexcept
{
    if (!link_.failed() && (!link_.joined() || !link_.all_attached())) {
        const Status st = link_.poll_connect(uct_mm_common::now_ns());
        if (st == Status::kInProgress) {
            return 0; // not attached yet (poll_connect keeps the deadline)
        }
    }
    if (link_.failed()) {
        const bool any = !ops_.empty();
        fail_all(fn, arg);
        return any ? 1 : 0;
    }
    unsigned n = advance(fn, arg);
    if (moved_ != 0 || n != 0) {
        link_.on_activity();
    } else if (!ops_.empty()) {
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

bool IncastGroup::busy() const noexcept
{
    return !ops_.empty() ||
           (!link_.failed() && (!link_.joined() || !link_.all_attached()));
}

} // namespace uct_mm_incast
