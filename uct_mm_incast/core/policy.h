// SPDX-License-Identifier: BSD-3-Clause
// The mode of each mm_incast message: one function of (kind, operator,
// datatype, length, group size, member 0's configured mode) that every
// member computes alike, so all agree on how the chunks meet.
#pragma once

#include "uct_mm_common/group_core.h"

#include <uct_mm_incast.h>

#include <cstddef>
#include <cstdint>

namespace uct_mm_incast {

/// Crossovers of AUTO, member 0's UCX_MM_INCAST_AUTO_* (every member uses
/// them). Defaults measured with ucg_mm_perftest (incast latency, every
/// mode interleaved with N-1 posix p2p sends; perftest/mm/RESULTS.md,
/// 2-core VM, 2026-11-22 and, for this element ring, 2026-11-23);
/// `ucg_mm_perftest --calibrate` measures them on another machine. An
/// explicit UCX_MM_INCAST_MODE always wins over these.
struct AutoThresholds {
    /// Reductions up to this size with a one-RMW pair run ATOMIC: at par
    /// with batched at 8 B, slower from 64 B (AUTO_ATOMIC_MAX).
    std::size_t atomic_max_bytes = 8;
    /// Reductions from this size and group run LOCKED (senders reduce each
    /// element in parallel under its own lock, the root reads one buffer):
    /// 0.77-0.80x p2p at N=4, 64 KiB, 0.60-0.64x at 1 MiB (slot modes
    /// 0.83-0.95x) (AUTO_LOCKED_MIN, AUTO_LOCKED_MIN_GROUP).
    std::size_t locked_min_bytes = 32768;
    std::uint32_t locked_min_group = 4;
    /// Groups up to this size (a pair: one sender) run CENTRALIZED at every
    /// size: polling the one slot's sequence word saves the count's cache
    /// line (0.69-0.89x p2p from 8 B to 1 MiB, batched 0.81-1.02x)
    /// (AUTO_PAIR_GROUP).
    std::uint32_t pair_group = 2;
    /// Reductions in those groups from this size run LOCKED instead (the
    /// sender reduces into the root's buffer; gathers stay CENTRALIZED):
    /// never by default, a calibration sets it where a machine's pairs
    /// reduce faster locked (AUTO_PAIR_LOCKED_MIN).
    std::size_t pair_locked_min_bytes = SIZE_MAX;
    /// Gather in bigger groups runs CENTRALIZED, smaller ones BATCHED
    /// (AUTO_GATHER_BATCHED_MAX_GROUP).
    std::uint32_t gather_batched_max_group = 4;

    /// Range of the group-size thresholds (members).
    static constexpr std::uint32_t kMinGroup = 1;
    static constexpr std::uint32_t kMaxGroup = 256;
    /// Whether every value is in range (sizes: any, "inf" included).
    bool valid() const noexcept;
};

/// The mode message `msg` runs in (never AUTO). GATHER runs in a slot
/// mode whatever is configured (LOCKED/ATOMIC have no slots: AUTO's
/// choice); ATOMIC for a pair without lock-free atomics runs LOCKED.
/// AUTO's choice follows `t` (member 0's).
uct_mm_incast_mode_t message_mode(const uct_mm_common::Message &msg,
                                  std::uint32_t group_size,
                                  uct_mm_incast_mode_t configured,
                                  const AutoThresholds &t = {}) noexcept;

inline bool is_slot_mode(uct_mm_incast_mode_t mode) noexcept
{
    return mode == UCT_MM_INCAST_MODE_BATCHED ||
           mode == UCT_MM_INCAST_MODE_CENTRALIZED;
}

const char *mode_name(uct_mm_incast_mode_t mode) noexcept;

} // namespace uct_mm_incast
