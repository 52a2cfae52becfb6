// SPDX-License-Identifier: BSD-3-Clause
// mm_incast group lifecycle: configuration checks, mode choice, the root
// creating and publishing the segment, members attaching (the last one
// unlinks the name), leaving, and the liveness probe of waiting members.
#include "group.h"

#include <sys/mman.h>
#include <unistd.h>

#include <new>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 // Linux 5.14 uapi, absent from old libcs
#endif

namespace uct_mm_incast {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxSegmentBytes = std::size_t{1} << 34;

double seconds_since(Clock::time_point t)
{
    return std::chrono::duration<double>(Clock::now() - t).count();
}

// AUTO: the crossovers in AutoThresholds (group.h).
uct_mm_incast_mode_t resolve_auto(const GroupConfig &cfg, bool gather)
{
    using T = AutoThresholds;
    if (!gather && (cfg.max_bytes <= T::kAtomicMaxBytes) &&
        atomic_is_single_rmw(cfg.op, cfg.dtype)) {
        return UCT_MM_INCAST_MODE_ATOMIC;
    }
    if ((cfg.group_size <= 2) &&
        (cfg.max_bytes <= T::kPairCentralizedMaxBytes)) {
        return UCT_MM_INCAST_MODE_CENTRALIZED;
    }
    if (gather) {
        return (cfg.group_size <= T::kGatherBatchedMaxGroup)
                   ? UCT_MM_INCAST_MODE_BATCHED
                   : UCT_MM_INCAST_MODE_CENTRALIZED;
    }
    return ((cfg.max_bytes >= T::kLockedMinBytes) &&
            (cfg.group_size >= T::kLockedMinGroup))
               ? UCT_MM_INCAST_MODE_LOCKED
               : UCT_MM_INCAST_MODE_BATCHED;
}

} // namespace

ucs_status_t check_config(const GroupConfig &cfg, const char **why)
{
    *why = "";
    if (cfg.name.empty() || (cfg.name[0] != '/') || (cfg.name.size() > 200)) {
        *why = "name must start with '/' and be under 200 characters";
        return UCS_ERR_INVALID_PARAM;
    }
    if (cfg.group_size > UCT_MM_INCAST_MAX_GROUP_SIZE) {
        *why = "group size over UCT_MM_INCAST_MAX_GROUP_SIZE";
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    if ((cfg.group_size == 0) || (cfg.member >= cfg.group_size) ||
        (cfg.root >= cfg.group_size)) {
        *why = "group size, member index or root out of range";
        return UCS_ERR_INVALID_PARAM;
    }
    if ((cfg.elements == 0) || (cfg.elements > 4096) ||
        (cfg.max_bytes > (std::size_t{1} << 30)) || (cfg.mode < 0) ||
        (cfg.mode >= UCT_MM_INCAST_MODE_LAST)) {
        *why = "elements, max_bytes or mode out of range";
        return UCS_ERR_INVALID_PARAM;
    }
    ucs_status_t status = check_op(cfg.op, cfg.dtype);
    if (status != UCS_OK) {
        *why = "operator not defined for this datatype";
        return status;
    }
    if ((cfg.op == UCT_MM_INCAST_OP_GATHER) &&
        ((cfg.mode == UCT_MM_INCAST_MODE_LOCKED) ||
         (cfg.mode == UCT_MM_INCAST_MODE_ATOMIC))) {
        *why = "gather needs a slot mode (batched or centralized)";
        return UCS_ERR_UNSUPPORTED;
    }
    if ((cfg.op != UCT_MM_INCAST_OP_GATHER) &&
        (cfg.max_bytes % dtype_size(cfg.dtype) != 0)) {
        *why = "max_bytes not a multiple of the datatype size";
        return UCS_ERR_INVALID_PARAM;
    }
    const bool slots = is_slot_mode(resolve_mode(cfg));
    if (compute_layout(cfg.group_size, cfg.elements, cfg.max_bytes, slots)
            .total_bytes > kMaxSegmentBytes) {
        *why = "segment would exceed 16 GiB";
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    return UCS_OK;
}

uct_mm_incast_mode_t resolve_mode(const GroupConfig &cfg)
{
    const bool gather = (cfg.op == UCT_MM_INCAST_OP_GATHER);
    switch (cfg.mode) {
    case UCT_MM_INCAST_MODE_ATOMIC:
        return (atomic_reduce_fn(cfg.op, cfg.dtype) != nullptr)
                   ? UCT_MM_INCAST_MODE_ATOMIC
                   : UCT_MM_INCAST_MODE_LOCKED;
    case UCT_MM_INCAST_MODE_AUTO:
        return resolve_auto(cfg, gather);
    default:
        return cfg.mode;
    }
}

ucs_status_t Group::create(const GroupConfig &cfg, std::unique_ptr<Group> *out)
{
    const char *why = nullptr;
    ucs_status_t status = check_config(cfg, &why);
    if (status != UCS_OK) {
        return status;
    }
    std::unique_ptr<Group> g(new Group());
    g->name_ = cfg.name;
    g->member_ = cfg.member;
    g->timeout_sec_ = cfg.timeout_sec;
    g->hooks_ = cfg.hooks;
    g->created_at_ = Clock::now();
    g->last_probe_ = g->created_at_;
    status = (cfg.member == cfg.root) ? g->init_as_root(cfg) : g->attach(cfg);
    if (status != UCS_OK) {
        return status;
    }
    *out = std::move(g);
    return UCS_OK;
}

ucs_status_t Group::init_as_root(const GroupConfig &cfg)
{
    const uct_mm_incast_mode_t mode = resolve_mode(cfg);
    const LayoutSizes sz = compute_layout(cfg.group_size, cfg.elements,
                                          cfg.max_bytes, is_slot_mode(mode));
    ucs_status_t status =
        Mapping::create_named(cfg.name, sz.total_bytes, &map_);
    if (status != UCS_OK) {
        return status;
    }
    base_ = static_cast<std::byte *>(map_.data());
    hdr_ = new (base_) SegmentHeader{};
    hdr_->version = kLayoutVersion;
    hdr_->group_size = cfg.group_size;
    hdr_->root = cfg.root;
    hdr_->elements = cfg.elements;
    hdr_->buffers = sz.buffers;
    hdr_->mode = mode;
    hdr_->op = cfg.op;
    hdr_->dtype = cfg.dtype;
    hdr_->max_bytes = cfg.max_bytes;
    hdr_->slot_stride = sz.slot_stride;
    hdr_->element_bytes = sz.element_bytes;
    hdr_->elements_offset = sz.elements_offset;
    new (base_ + kAttachOffset) AttachLine{};
    new (base_ + kReceiverOffset) ReceiverLine{};
    auto *members = reinterpret_cast<MemberLine *>(base_ + kMembersOffset);
    for (uint32_t i = 0; i < cfg.group_size; ++i) {
        new (&members[i]) MemberLine{};
        if (ucs_lock_init(&members[i].liveness, UCS_LOCK_KIND_MUTEX) !=
            UCS_OK) {
            unlink_named(cfg.name);
            return UCS_ERR_IO_ERROR;
        }
    }
    status = adopt_header(cfg);
    for (uint32_t k = 0; (status == UCS_OK) && (k < buffers_); ++k) {
        std::byte *el = element(k);
        new (el) ElementCtrl{};
        new (el + sizeof(ElementCtrl)) ElementLock{};
        const ucs_lock_kind_t kind =
            (max_bytes_ <= 4096) ? UCS_LOCK_KIND_SPIN : UCS_LOCK_KIND_MUTEX;
        if (ucs_lock_init(
                &reinterpret_cast<ElementLock *>(el + sizeof(ElementCtrl))
                     ->lock,
                kind) != UCS_OK) {
            status = UCS_ERR_IO_ERROR;
        } else if (mode_ == UCT_MM_INCAST_MODE_ATOMIC) {
            fill_identity(el + kElementDataOffset, max_bytes_ / dtype_size_,
                          op_, dtype_);
        } else if (is_slot_mode(mode_)) {
            for (uint32_t s = 0; s < num_senders(); ++s) {
                new (progress(slot(el, s))) SlotProgress{};
                new (trailer(slot(el, s))) SlotTrailer{};
            }
        }
    }
    if (status != UCS_OK) {
        unlink_named(name_);
        return status;
    }
    join();
    hdr_->magic.store(kSegmentMagic, std::memory_order_release);
    return UCS_OK;
}

ucs_status_t Group::attach(const GroupConfig &cfg)
{
    Backoff backoff;
    for (;;) {
        ucs_status_t status =
            Mapping::open_named(cfg.name, kMembersOffset, &map_);
        if (status == UCS_OK) {
            const auto *hdr = static_cast<SegmentHeader *>(map_.data());
            if (hdr->magic.load(std::memory_order_acquire) == kSegmentMagic) {
                // Published: map all of it (the name stays until we join).
                const std::size_t total =
                    hdr->elements_offset + hdr->buffers * hdr->element_bytes;
                Mapping full;
                status = Mapping::open_named(cfg.name, total, &full);
                if (status != UCS_OK) {
                    return status;
                }
                map_ = std::move(full);
                base_ = static_cast<std::byte *>(map_.data());
                hdr_ = reinterpret_cast<SegmentHeader *>(base_);
                break;
            }
            map_.reset();
        } else if (status != UCS_ERR_NO_ELEM) {
            return status;
        }
        if (seconds_since(created_at_) > cfg.timeout_sec) {
            // The root died or never came: do not leave its name behind.
            unlink_named(cfg.name);
            return UCS_ERR_TIMED_OUT;
        }
        backoff.pause();
    }
    if ((hdr_->version != kLayoutVersion) ||
        (hdr_->group_size != cfg.group_size) || (hdr_->root != cfg.root) ||
        (hdr_->op != static_cast<uint32_t>(cfg.op)) ||
        ((cfg.op != UCT_MM_INCAST_OP_GATHER) &&
         (hdr_->dtype != static_cast<uint32_t>(cfg.dtype)))) {
        return UCS_ERR_INVALID_PARAM;
    }
    ucs_status_t status = adopt_header(cfg);
    if (status != UCS_OK) {
        return status;
    }
    join();
    return UCS_OK;
}

ucs_status_t Group::adopt_header(const GroupConfig &cfg)
{
    group_size_ = hdr_->group_size;
    root_ = hdr_->root;
    elements_ = hdr_->elements;
    buffers_ = hdr_->buffers;
    mode_ = static_cast<uct_mm_incast_mode_t>(hdr_->mode);
    op_ = static_cast<uct_mm_incast_op_t>(hdr_->op);
    dtype_ = static_cast<uct_mm_incast_dtype_t>(hdr_->dtype);
    dtype_size_ = dtype_size(dtype_);
    max_bytes_ = hdr_->max_bytes;
    slot_stride_ = hdr_->slot_stride;
    element_bytes_ = hdr_->element_bytes;
    elements_offset_ = hdr_->elements_offset;
    const LayoutSizes sz =
        compute_layout(group_size_, elements_, max_bytes_, is_slot_mode(mode_));
    if ((sz.total_bytes > map_.size()) || (sz.buffers != buffers_) ||
        (sz.slot_stride != slot_stride_) ||
        (sz.element_bytes != element_bytes_) || (cfg.group_size == 0)) {
        return UCS_ERR_INVALID_PARAM;
    }
    attach_ = reinterpret_cast<AttachLine *>(base_ + kAttachOffset);
    recv_line_ = reinterpret_cast<ReceiverLine *>(base_ + kReceiverOffset);
    members_ = reinterpret_cast<MemberLine *>(base_ + kMembersOffset);
    my_slot_ = (member_ < root_) ? member_ : member_ - 1;
    reduce_ = reduce_fn(op_, dtype_);
    atomic_reduce_ = atomic_reduce_fn(op_, dtype_);
    if ((member_ == root_) && (op_ != UCT_MM_INCAST_OP_GATHER)) {
        scratch_.resize(max_bytes_ / sizeof(uint64_t) + 1);
    }
    // Fault the whole ring into this process's page tables now, not one
    // page per first use on the data path (a 4 MiB ring is 1000 faults: at
    // 32 KiB they made the median 7x p2p). Best effort (Linux 5.14+).
    madvise(map_.data(), map_.size(), MADV_POPULATE_WRITE);
    chunked_ = is_slot_mode(mode_) && (max_bytes_ > kChunkBytes);
    if ((member_ == root_) && chunked_) {
        seen_.resize(num_senders());
    }
    return UCS_OK;
}

void Group::join()
{
    MemberLine &me = members_[member_];
    ucs_lock_acquire(&me.liveness);
    me.pid = static_cast<uint32_t>(getpid());
    me.state.store(kMemberIn, std::memory_order_release);
    joined_ = true;
    if (attach_->attached.fetch_add(1, std::memory_order_acq_rel) + 1 ==
        group_size_) {
        unlink_named(name_); // everyone is in: the name is no longer needed
        unlinked_ = true;
    }
}

Group::~Group()
{
    if (joined_) {
        MemberLine &me = members_[member_];
        me.state.store(kMemberLeft, std::memory_order_release);
        ucs_lock_release(&me.liveness);
    }
    if (!unlinked_ && (member_ == root_) && (hdr_ != nullptr) &&
        (attach_ != nullptr) &&
        (attach_->attached.load(std::memory_order_acquire) < group_size_)) {
        unlink_named(name_); // not everyone came: do not leave the name
    }
}

ucs_status_t Group::probe_members()
{
    bool absent = false;
    for (uint32_t i = 0; i < group_size_; ++i) {
        if (i == member_) {
            continue;
        }
        MemberLine &m = members_[i];
        const uint32_t st = m.state.load(std::memory_order_acquire);
        if (st == kMemberAbsent) {
            absent = true;
            continue;
        }
        if ((st == kMemberLeft) && (i == root_)) {
            return UCS_ERR_CONNECTION_RESET; // nobody will drain the ring
        }
        if (st != kMemberIn) {
            continue;
        }
        const ucs_status_t r = ucs_lock_try_acquire(&m.liveness);
        if (r == UCS_LOCK_ERR_OWNER_DEAD) {
            // Release it inconsistent: every later prober sees the death.
            attach_->broken.store(1, std::memory_order_release);
            ucs_lock_release(&m.liveness);
            return UCS_ERR_CONNECTION_RESET;
        }
        if (r == UCS_OK) {
            ucs_lock_release(&m.liveness); // it is leaving right now
        }
    }
    if (absent && (seconds_since(created_at_) > timeout_sec_)) {
        return UCS_ERR_TIMED_OUT; // a member never attached
    }
    return UCS_OK;
}

} // namespace uct_mm_incast
