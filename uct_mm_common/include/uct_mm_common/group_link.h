// SPDX-License-Identifier: BSD-3-Clause
// What every mm group segment starts with, and one member's link to it:
// member 0 creates and formats it; the others attach during progress (no
// call waits for another member); the last to attach unlinks the name; a
// shared failure word fails every member at once; a stalled member checks
// the others' liveness (pid + start time). The transport's own region
// (bcast ring, incast elements) follows the prefix.
//
//  offset 0    +------------------------------------------------------+
//              | LinkHeader: magic (member 0, stored last), layout,   |
//              |   members, bytes, attached (+1 each), failed (any)   |
//  64          | LinkParams: 8 transport constants (member 0)         |
//  128         | MemberLine[members], one line each, written by its   |
//              |   owner: cursor (positions it is done with),         |
//              |   identity (pid, start time), state                  |
//  region      +------------------------------------------------------+
//  _offset(n)  | the transport's region (its own layout)              |
//              +------------------------------------------------------+
//
// Trust: an attacher checks the owner and mode (Segment), the magic, the
// layout tag, the member count and that the mapped size is what the
// header and the transport's constants say; the transport validates its
// constants before join(). Nothing read later from the segment may size
// or place a copy without a check against these.
#pragma once

#include "uct_mm_common/cacheline.h"
#include "uct_mm_common/segment.h"
#include "uct_mm_common/status.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace uct_mm_common {

inline constexpr std::uint64_t kLinkMagic = 0x6b6e696c6d6d6775ULL; // "ugmmlink"
/// Cursor of a member that left: it never holds anyone back.
inline constexpr std::uint64_t kCursorLeft = ~std::uint64_t{0};
/// Largest group any mm transport accepts (members, root included).
inline constexpr std::uint32_t kMaxGroupMembers = 256;

struct alignas(kCacheLine) LinkHeader {
    std::atomic<std::uint64_t> magic;    ///< member 0, last: kLinkMagic
    std::uint32_t layout;                ///< member 0: transport layout tag
    std::uint32_t num_members;           ///< member 0
    std::uint64_t segment_bytes;         ///< member 0: whole segment
    std::atomic<std::uint32_t> attached; ///< every member, +1 at join
    std::atomic<std::uint32_t> failed;   ///< any member: failure word, once
    std::uint64_t params_check;          ///< member 0: link_params_check()
};
static_assert(sizeof(LinkHeader) == kCacheLine);
static_assert(offsetof(LinkHeader, attached) == 24);
static_assert(offsetof(LinkHeader, params_check) == 32);

/// Tests only: called by a joining member between its check of the header
/// and its use of the checked values, with the segment's base (where a
/// racing writer may change them).
inline void (*g_link_check_probe)(std::uint8_t *base) = nullptr;

/// Transport constants that every member must agree on (geometry, policy).
struct alignas(kCacheLine) LinkParams {
    std::uint64_t value[8]; ///< member 0
};
static_assert(sizeof(LinkParams) == kCacheLine);

/// The check word of member 0's constants: an attacher that reads
/// constants changed since member 0 wrote them (a peer's stray write)
/// refuses the group instead of deriving, say, another message mode than
/// its peers (the incast fuzz found that: silent wrong sums).
std::uint64_t link_params_check(const LinkParams &p) noexcept;

enum MemberState : std::uint32_t {
    kMemberAbsent = 0,
    kMemberIn = 1,
    kMemberLeft = 2
};

struct alignas(kCacheLine) MemberLine {
    std::atomic<std::uint64_t> cursor;     ///< owner: positions done with
    std::atomic<std::int32_t> pid;         ///< owner, at join
    std::atomic<std::uint32_t> state;      ///< owner: MemberState
    std::atomic<std::uint64_t> start_time; ///< owner, at join (clock ticks)
};
static_assert(sizeof(MemberLine) == kCacheLine);
static_assert(offsetof(MemberLine, pid) == 8);

inline constexpr std::size_t kLinkParamsOffset = kCacheLine;
inline constexpr std::size_t kLinkMembersOffset = 2 * kCacheLine;

/// Offset of the transport region of a segment of `members` members.
constexpr std::size_t link_region_offset(std::uint32_t members) noexcept
{
    return kLinkMembersOffset + std::size_t{members} * kCacheLine;
}

/// Checks a transport's constants and region size before a member joins;
/// kOk or a failure (logged by the checker).
using LinkValidateFn = Status (*)(void *arg, const LinkParams &params,
                                  std::size_t region_bytes);

struct LinkConfig {
    std::string name;                ///< segment name, the same everywhere
    std::uint32_t layout = 0;        ///< transport layout tag (and version)
    std::uint32_t member = 0;        ///< this member's index
    std::uint32_t size = 1;          ///< members
    std::size_t region_bytes = 0;    ///< member 0: transport region size
    LinkParams params{};             ///< member 0: transport constants
    std::uint32_t timeout_ms = 2000; ///< stall before liveness checks
    std::uint32_t attach_timeout_ms = 10000; ///< wait for every member
    LinkValidateFn validate = nullptr;       ///< attachers: the region
    void *validate_arg = nullptr;
    /// Threads of one process as members (tests under TSan, which tracks
    /// memory by address): a zero-filled mapping every member passes
    /// instead of a named segment; no owner check applies.
    void *memory = nullptr;
    std::size_t memory_bytes = 0;
};

/// Bytes of a segment with `members` members and a region of `region`.
constexpr std::size_t link_segment_bytes(std::uint32_t members,
                                         std::size_t region) noexcept
{
    return (2 + std::size_t{members}) * kCacheLine + region;
}

class GroupLink {
  public:
    GroupLink() = default;
    ~GroupLink();
    GroupLink(const GroupLink &) = delete;
    GroupLink &operator=(const GroupLink &) = delete;

    /// Member 0: creates the segment (0600, exclusive) zero-filled, writes
    /// the prefix; the caller formats region() and then calls publish().
    Status create(const LinkConfig &cfg) noexcept;
    /// Member 0: stores the magic and joins.
    void publish() noexcept;
    /// Others: records the configuration; poll_connect() attaches.
    void prepare(const LinkConfig &cfg) noexcept;

    /// Advances the connection: an attach attempt (rate limited; the
    /// name is not found until member 0 created it), the attach count, the
    /// attach deadline. kOk once joined; kInProgress before; a failure.
    Status poll_connect(std::uint64_t now_ns) noexcept;
    bool joined() const noexcept { return joined_; }
    /// True once every member has joined (seen by this member).
    bool all_attached() const noexcept { return all_attached_; }

    std::uint8_t *region() const noexcept { return region_; }
    std::size_t region_bytes() const noexcept { return region_bytes_; }
    const LinkParams &params() const noexcept { return params_; }
    std::uint32_t member() const noexcept { return cfg_.member; }
    std::uint32_t size() const noexcept { return cfg_.size; }

    /// This member's cursor (release store to its own line).
    void set_cursor(std::uint64_t c) noexcept;
    /// Member i's cursor (acquire).
    std::uint64_t cursor_of(std::uint32_t i) const noexcept;
    /// Smallest cursor of the members other than this one; kCursorLeft
    /// when alone.
    std::uint64_t min_other_cursor() const noexcept;

    /// kOk, or this member's failure for good (sticky; also adopts a
    /// failure another member published: reads the header line).
    Status state() noexcept;
    /// Whether this member knows of a failure (no shared read).
    bool failed() const noexcept { return state_ != Status::kOk; }
    /// Fails the group for every member (the first failure wins the shared
    /// word); logs one line naming `member` (-1: none) and `why`.
    void fail(Status st, int member, const char *why) noexcept;

    /// Called when this member has posts outstanding and moved nothing:
    /// rate limited, reads the shared failure word, and after a stall of
    /// timeout/4 checks every member's liveness (and `waiting_on`, -1 for
    /// none, for having left). Returns state().
    Status on_stall(int waiting_on) noexcept;
    /// Called when something moved: ends the stall.
    void on_activity() noexcept
    {
        stall_polls_ = 0;
        stall_since_ns_ = 0;
    }

    /// Leaves (destroy): cursor = kCursorLeft, state kMemberLeft; unlinks
    /// the name if not everyone came. Once: later calls do nothing. A
    /// member that never attached attaches here to count itself in, which
    /// calls the region's validator: its owner calls leave() from its own
    /// destructor, while the validator's object is whole, and ~GroupLink
    /// calls it again.
    void leave() noexcept;

  private:
    Status try_attach() noexcept;
    Status check_header() noexcept;
    void join() noexcept;
    LinkHeader *header() const noexcept;
    MemberLine *line(std::uint32_t i) const noexcept;
    void unlink_if_abandoned() noexcept;
    Status scan_members(int waiting_on) noexcept;

    LinkConfig cfg_;
    Segment seg_;
    std::uint8_t *base_ = nullptr;
    std::uint8_t *region_ = nullptr;
    std::size_t region_bytes_ = 0;
    LinkParams params_{}; ///< local copy, checked once
    Status state_ = Status::kOk;
    bool joined_ = false;
    bool left_ = false; ///< leave() ran
    bool all_attached_ = false;
    bool unlinked_ = false;
    std::uint64_t created_ns_ = 0;     ///< this member's create call
    std::uint64_t next_attach_ns_ = 0; ///< rate limit of attach attempts
    std::uint64_t attach_wait_ns_ = 0; ///< current attach interval
    std::uint64_t stall_since_ns_ = 0; ///< 0: not stalled
    std::uint64_t next_scan_ns_ = 0;   ///< next liveness scan
    std::uint32_t stall_polls_ = 0;
};

/// Remembers `name`, a group segment its members left before every
/// member attached and before the attach deadline `deadline_ns` (late
/// members may still come for what was sent): it is unlinked once the
/// deadline has passed, by the next group link this process creates,
/// prepares or leaves, or when the process exits, whichever comes first;
/// only if the name still names the same segment (a new group may have
/// taken it since the last member to join unlinked it).
void keep_for_late_members(const std::string &name,
                           std::uint64_t deadline_ns) noexcept;
/// Unlinks the remembered names whose deadline is at or before `now_ns`
/// (UINT64_MAX: all); returns how many it unlinked.
int unlink_late_names(std::uint64_t now_ns) noexcept;

/// How old a group segment must be before sweep_abandoned_links() may
/// unlink it: past the attach deadline of every member that could still
/// come (10 s by default), so a late member of a group whose creator died
/// still finds the segment and fails fast with its liveness check.
inline constexpr std::uint64_t kSweepMinAgeNs = 30'000'000'000ULL;
/// Tests only: the age the once-per-process sweep of create() uses.
inline std::uint64_t g_sweep_min_age_ns = kSweepMinAgeNs;

/// Unlinks the group segments of `family` (names "/<family>-<16 hex>",
/// names.h) that nobody can use any more: owned by this user with mode
/// 0600, changed at least `min_age_ns` ago, and either never published by
/// member 0 (a zero magic) or with no member line naming a live process
/// (liveness.h). Such a name is left when every member was killed
/// (SIGKILL, an OOM kill) before the last one attached, so no one saw the
/// attach deadline pass. Logs one line per name; returns how many it
/// unlinked. create() runs it once per process for its own name's family.
int sweep_abandoned_links(const std::string &family,
                          std::uint64_t min_age_ns) noexcept;

/// Failure word of the shared header: (reason << 16) | (member + 1).
std::uint32_t failure_word(Status st, int member) noexcept;
Status failure_status(std::uint32_t word) noexcept;

} // namespace uct_mm_common
