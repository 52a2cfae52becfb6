// SPDX-License-Identifier: BSD-3-Clause
// GroupLink: create/attach/join without waiting, attach count and unlink,
// the shared failure word, liveness checks of a stalled member.
#include "uct_mm_common/group_link.h"
#include "uct_mm_common/names.h"

#include "uct_mm_common/backoff.h"
#include "uct_mm_common/liveness.h"
#include "uct_mm_common/log.h"

#include <cstring>
#include <mutex>
#include <new>
#include <sys/mman.h>
#include <vector>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 // Linux 5.14 uapi, absent from old libcs
#endif

namespace uct_mm_common {
namespace {

/// Largest segment an attacher maps (a header claiming more is refused).
constexpr std::size_t kMaxSegmentBytes = std::size_t{1} << 36;
/// First and largest interval between attach attempts.
constexpr std::uint64_t kAttachFirstNs = 20'000;
constexpr std::uint64_t kAttachMaxNs = 2'000'000;
/// Idle polls between two reads of the clock or the failure word.
constexpr std::uint32_t kStallPollMask = 63;

enum Reason : std::uint32_t {
    kReasonDead = 1,
    kReasonTimeout = 2,
    kReasonIo = 3,
    kReasonUntrusted = 4
};

// Faults the mapping in now, not a page per first use on the data path
// (measured on mm_incast's rings; best effort, Linux 5.14+).
void populate(const Segment &seg) noexcept
{
    madvise(seg.data(), seg.size(), MADV_POPULATE_WRITE);
}

// Once per process and family, before its first segment: the names of
// earlier groups that every member was killed away from.
void sweep_family_once(const std::string &name) noexcept
{
    static std::mutex mutex;
    static std::vector<std::string> *swept = new std::vector<std::string>();
    std::string family;
    if (!group_segment_family(name, &family)) {
        return;
    }
    try {
        const std::lock_guard<std::mutex> lock(mutex);
        for (const std::string &f : *swept) {
            if (f == family) {
                return;
            }
        }
        swept->push_back(family);
    } catch (...) {
        return; // no memory to remember it: the next create sweeps
    }
    sweep_abandoned_links(family, g_sweep_min_age_ns);
}

} // namespace

std::uint32_t failure_word(Status st, int member) noexcept
{
    std::uint32_t reason = kReasonIo;
    if (st == Status::kPeerDead) {
        reason = kReasonDead;
    } else if (st == Status::kTimeout) {
        reason = kReasonTimeout;
    } else if (st == Status::kNotTrusted) {
        reason = kReasonUntrusted;
    }
    const std::uint32_t who =
        member < 0 ? 0xffffU : static_cast<std::uint32_t>(member) + 1;
    return (reason << 16) | (who & 0xffffU);
}

Status failure_status(std::uint32_t word) noexcept
{
    switch (word >> 16) {
    case 0:
        // No reason but not zero: a corrupted word is a failure too (kOk
        // here left a member that lost the race unjoined yet "ok").
        return word == 0 ? Status::kOk : Status::kIoError;
    case kReasonDead:
        return Status::kPeerDead;
    case kReasonTimeout:
        return Status::kTimeout;
    case kReasonUntrusted:
        return Status::kNotTrusted;
    default:
        return Status::kIoError;
    }
}

GroupLink::~GroupLink()
{
    leave();
}

LinkHeader *GroupLink::header() const noexcept
{
    return reinterpret_cast<LinkHeader *>(base_);
}

MemberLine *GroupLink::line(std::uint32_t i) const noexcept
{
    return reinterpret_cast<MemberLine *>(base_ + kLinkMembersOffset +
                                          std::size_t{i} * kCacheLine);
}

Status GroupLink::create(const LinkConfig &cfg) noexcept
{
    cfg_ = cfg;
    created_ns_ = now_ns();
    unlink_late_names(created_ns_);
    const std::size_t bytes = link_segment_bytes(cfg.size, cfg.region_bytes);
    if (cfg.memory != nullptr) {
        if (cfg.memory_bytes < bytes) {
            return Status::kInvalidParam;
        }
        base_ = static_cast<std::uint8_t *>(cfg.memory);
    } else {
        sweep_family_once(cfg.name);
        const Status st = Segment::create(cfg.name, bytes, &seg_);
        if (st != Status::kOk) {
            return st; // logged by Segment
        }
        populate(seg_);
        base_ = static_cast<std::uint8_t *>(seg_.data());
    }
    // The mapping is zero-filled: every atomic already holds 0 (attachers
    // may poll the magic while this runs, so nothing is constructed over
    // it); only the constants are written before publish().
    auto *hdr = header();
    hdr->layout = cfg.layout;
    hdr->num_members = cfg.size;
    hdr->segment_bytes = bytes;
    hdr->params_check = link_params_check(cfg.params);
    std::memcpy(base_ + kLinkParamsOffset, &cfg.params, sizeof(LinkParams));
    params_ = cfg.params;
    region_ = base_ + link_region_offset(cfg.size);
    region_bytes_ = cfg.region_bytes;
    return Status::kOk;
}

// SipHash-2-4 (names.h) chained over the eight values under a fixed key:
// a check against stray writes, not a secret (a peer of the same uid can
// recompute it).
std::uint64_t link_params_check(const LinkParams &p) noexcept
{
    Secret k{0x6c696e6b70617261ULL, 0};
    for (const std::uint64_t v : p.value) {
        k.k1 = keyed_hash(k, v);
    }
    return k.k1;
}

void GroupLink::publish() noexcept
{
    header()->magic.store(kLinkMagic, std::memory_order_release);
    join();
}

void GroupLink::prepare(const LinkConfig &cfg) noexcept
{
    cfg_ = cfg;
    created_ns_ = now_ns();
    unlink_late_names(created_ns_);
    attach_wait_ns_ = kAttachFirstNs;
}

Status GroupLink::try_attach() noexcept
{
    if (base_ == nullptr && cfg_.memory != nullptr) {
        base_ = static_cast<std::uint8_t *>(cfg_.memory);
    } else if (base_ == nullptr) {
        const Status st = Segment::attach_whole(
            cfg_.name, link_region_offset(cfg_.size), kMaxSegmentBytes, &seg_);
        if (st != Status::kOk) {
            return st == Status::kNotFound ? Status::kInProgress : st;
        }
        base_ = static_cast<std::uint8_t *>(seg_.data());
    }
    if (header()->magic.load(std::memory_order_acquire) != kLinkMagic) {
        return Status::kInProgress; // member 0 is still formatting
    }
    const Status st = check_header();
    if (st != Status::kOk) {
        return st;
    }
    if (cfg_.memory == nullptr) {
        populate(seg_);
    }
    join();
    return Status::kOk;
}

// Every value of the prefix is read once into a local, checked, and only
// the local used: a peer of the same uid may rewrite it meanwhile.
Status GroupLink::check_header() noexcept
{
    const LinkHeader *hdr = header();
    const std::uint32_t layout =
        __atomic_load_n(&hdr->layout, __ATOMIC_RELAXED);
    const std::uint32_t members =
        __atomic_load_n(&hdr->num_members, __ATOMIC_RELAXED);
    const std::uint64_t segment_bytes =
        __atomic_load_n(&hdr->segment_bytes, __ATOMIC_RELAXED);
    const std::uint64_t params_check =
        __atomic_load_n(&hdr->params_check, __ATOMIC_RELAXED);
    const std::size_t region_off = link_region_offset(cfg_.size);
    const std::size_t mapped =
        cfg_.memory != nullptr ? cfg_.memory_bytes : seg_.size();
    if (layout != cfg_.layout || members != cfg_.size ||
        segment_bytes > mapped || segment_bytes < region_off ||
        (cfg_.memory == nullptr && segment_bytes != mapped)) {
        log(LogLevel::kError,
            "group segment %s: layout %#x, %u members, %llu bytes where "
            "this member expects %#x, %u members and the mapping has %zu",
            cfg_.name.c_str(), layout, members,
            static_cast<unsigned long long>(segment_bytes), cfg_.layout,
            cfg_.size, mapped);
        return Status::kIoError;
    }
    if (g_link_check_probe != nullptr) {
        g_link_check_probe(base_);
    }
    std::memcpy(&params_, base_ + kLinkParamsOffset, sizeof(params_));
    if (link_params_check(params_) != params_check) {
        log(LogLevel::kError,
            "group segment %s: member 0's constants do not match their "
            "check word (written over since)",
            cfg_.name.c_str());
        return Status::kIoError;
    }
    region_ = base_ + region_off;
    region_bytes_ = segment_bytes - region_off;
    if (line(cfg_.member)->state.load(std::memory_order_acquire) !=
        kMemberAbsent) {
        log(LogLevel::kError,
            "group segment %s: member %u joined already (two groups with one "
            "key?)",
            cfg_.name.c_str(), cfg_.member);
        return Status::kIoError;
    }
    if (cfg_.validate != nullptr) {
        return cfg_.validate(cfg_.validate_arg, params_, region_bytes_);
    }
    return Status::kOk;
}

void GroupLink::join() noexcept
{
    MemberLine *me = line(cfg_.member);
    const ProcessId id = self_process_id();
    me->start_time.store(id.start_time, std::memory_order_relaxed);
    me->pid.store(id.pid, std::memory_order_relaxed);
    me->state.store(kMemberIn, std::memory_order_release);
    joined_ = true;
    const std::uint32_t n =
        header()->attached.fetch_add(1, std::memory_order_acq_rel) + 1;
    if (n >= cfg_.size) {
        if (cfg_.memory == nullptr) {
            unlink_segment(cfg_.name); // everyone is in: drop the name
        }
        unlinked_ = true;
        all_attached_ = true;
    }
    if (cfg_.member == 0) {
        seg_.disown(); // the link unlinks it (unlinked_), never Segment
    }
}

Status GroupLink::poll_connect(std::uint64_t now) noexcept
{
    if (state() != Status::kOk) {
        return state_;
    }
    if (!joined_) {
        if (now < next_attach_ns_) {
            return Status::kInProgress;
        }
        const Status st = try_attach();
        if (st != Status::kInProgress) {
            if (st != Status::kOk) {
                fail(st, -1, "cannot attach to the group segment");
            }
            return state(); // joined a group that failed already: its why
        }
        next_attach_ns_ = now + attach_wait_ns_;
        attach_wait_ns_ = attach_wait_ns_ * 2 > kAttachMaxNs
                              ? kAttachMaxNs
                              : attach_wait_ns_ * 2;
    } else if (!all_attached_ && header()->attached.load(
                                     std::memory_order_acquire) >= cfg_.size) {
        all_attached_ = true;
        unlinked_ = true; // the last to join unlinked it: never again (a
                          // new group may reuse the name)
        return Status::kOk;
    }
    if (!all_attached_ &&
        now - created_ns_ > std::uint64_t{cfg_.attach_timeout_ms} * 1'000'000) {
        fail(Status::kTimeout, -1, "members did not join in time");
        return state_;
    }
    return joined_ ? Status::kOk : Status::kInProgress;
}

void GroupLink::set_cursor(std::uint64_t c) noexcept
{
    line(cfg_.member)->cursor.store(c, std::memory_order_release);
}

std::uint64_t GroupLink::cursor_of(std::uint32_t i) const noexcept
{
    return line(i)->cursor.load(std::memory_order_acquire);
}

std::uint64_t GroupLink::min_other_cursor() const noexcept
{
    std::uint64_t min = kCursorLeft;
    for (std::uint32_t i = 0; i < cfg_.size; ++i) {
        if (i != cfg_.member) {
            const std::uint64_t c = cursor_of(i);
            min = c < min ? c : min;
        }
    }
    return min;
}

Status GroupLink::state() noexcept
{
    if (state_ == Status::kOk && base_ != nullptr && joined_) {
        const std::uint32_t w =
            header()->failed.load(std::memory_order_acquire);
        if (w != 0) {
            state_ = failure_status(w); // classified and logged by another
            unlink_if_abandoned();
        }
    }
    return state_;
}

void GroupLink::fail(Status st, int member, const char *why) noexcept
{
    if (state_ != Status::kOk) {
        return;
    }
    state_ = st;
    // A joined member checked the header once and publishes whatever a
    // peer wrote over the magic since (the others would wait on a member
    // that gave up); one not joined yet writes only a formatted header.
    if (base_ != nullptr && (joined_ || header()->magic.load() == kLinkMagic)) {
        std::uint32_t none = 0;
        if (!header()->failed.compare_exchange_strong(
                none, failure_word(st, member), std::memory_order_acq_rel)) {
            state_ = failure_status(none); // another member was first
            unlink_if_abandoned();
            return;
        }
    }
    if (member >= 0) {
        log(LogLevel::kError, "group %s, member %u: %s: member %d (%s)",
            cfg_.name.c_str(), cfg_.member, why, member, status_name(st));
    } else {
        log(LogLevel::kError, "group %s, member %u: %s (%s)", cfg_.name.c_str(),
            cfg_.member, why, status_name(st));
    }
    unlink_if_abandoned();
}

// Only a segment this member mapped (and so trusted); only while members
// are missing (the last to join unlinked it, and a new group may reuse the
// name since); only after the attach deadline (until then late members may
// still come, and learn from the failure word what happened).
void GroupLink::unlink_if_abandoned() noexcept
{
    if (unlinked_ || cfg_.memory != nullptr || base_ == nullptr) {
        return;
    }
    if (header()->attached.load(std::memory_order_acquire) >= cfg_.size) {
        unlinked_ = true;
        return;
    }
    if (now_ns() - created_ns_ >
        std::uint64_t{cfg_.attach_timeout_ms} * 1'000'000) {
        unlink_segment(cfg_.name);
        unlinked_ = true;
    }
}

Status GroupLink::on_stall(int waiting_on) noexcept
{
    if ((++stall_polls_ & kStallPollMask) != 0) {
        return state_;
    }
    if (state() != Status::kOk) {
        return state_;
    }
    const std::uint64_t now = now_ns();
    const std::uint64_t interval =
        std::uint64_t{cfg_.timeout_ms} * 1'000'000 / 4;
    if (stall_since_ns_ == 0) {
        stall_since_ns_ = now;
        next_scan_ns_ = now + interval;
        return state_;
    }
    if (now < next_scan_ns_) {
        return state_;
    }
    next_scan_ns_ = now + interval;
    return scan_members(waiting_on);
}

Status GroupLink::scan_members(int waiting_on) noexcept
{
    const std::uint64_t now = now_ns();
    for (std::uint32_t i = 0; i < cfg_.size; ++i) {
        const MemberLine *m = line(i);
        const std::uint32_t st = m->state.load(std::memory_order_acquire);
        if (st == kMemberAbsent) {
            if (now - created_ns_ >
                std::uint64_t{cfg_.attach_timeout_ms} * 1'000'000) {
                fail(Status::kTimeout, static_cast<int>(i),
                     "member never joined");
            }
            continue;
        }
        if (st == kMemberLeft) {
            if (static_cast<int>(i) == waiting_on) {
                fail(Status::kPeerDead, waiting_on,
                     "left while this member waits for it");
            }
            continue;
        }
        ProcessId id{};
        id.pid = m->pid.load(std::memory_order_relaxed);
        id.start_time = m->start_time.load(std::memory_order_relaxed);
        if (!process_alive(id)) {
            fail(Status::kPeerDead, static_cast<int>(i), "process is gone");
        }
    }
    return state_;
}

void GroupLink::leave() noexcept
{
    if (left_) {
        return;
    }
    left_ = true;
    unlink_late_names(now_ns());
    if (!joined_ && state_ == Status::kOk && cfg_.member != 0 &&
        cfg_.size != 0) {
        // Counted in before leaving, so the last member to come or go
        // unlinks the name even if this one never progressed (one
        // non-waiting attempt; a segment not there yet stays uncounted).
        try_attach();
    }
    if (joined_ && base_ != nullptr) {
        MemberLine *me = line(cfg_.member);
        me->cursor.store(kCursorLeft, std::memory_order_release);
        me->state.store(kMemberLeft, std::memory_order_release);
        joined_ = false;
        // Late members may still come (a root's sends complete before they
        // join): the name stays for them until the attach deadline, then
        // the next link of this process, or its exit, unlinks it.
        unlink_if_abandoned();
        if (!unlinked_ && cfg_.memory == nullptr) {
            keep_for_late_members(
                cfg_.name, created_ns_ + std::uint64_t{cfg_.attach_timeout_ms} *
                                             1'000'000);
            unlinked_ = true;
        }
    } else if (cfg_.member == 0 && base_ != nullptr) {
        unlink_segment(cfg_.name); // created, never published
    }
}

} // namespace uct_mm_common
