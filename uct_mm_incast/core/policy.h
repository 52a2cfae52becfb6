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

/// Crossovers of AUTO, measured with ucg_mm_perftest (incast latency,
/// every mode interleaved with N-1 posix p2p sends; perftest/mm/RESULTS.md,
/// 2-core VM, 2026-11-22 and, for this element ring, 2026-11-23). An
/// explicit UCX_MM_INCAST_MODE always wins over these.
struct AutoThresholds {
    /// Reductions up to this size with a one-RMW pair run ATOMIC: at par
    /// with batched at 8 B, slower from 64 B.
    static constexpr std::size_t kAtomicMaxBytes = 8;
    /// Reductions from this size and group run LOCKED (senders reduce each
    /// element in parallel under its own lock, the root reads one buffer):
    /// 0.77-0.80x p2p at N=4, 64 KiB, 0.60-0.64x at 1 MiB (slot modes
    /// 0.83-0.95x).
    static constexpr std::size_t kLockedMinBytes = 32768;
    static constexpr std::uint32_t kLockedMinGroup = 4;
    /// A pair (one sender) runs CENTRALIZED at every size: polling the one
    /// slot's sequence word saves the count's cache line (0.69-0.89x p2p
    /// from 8 B to 1 MiB, batched 0.81-1.02x).
    static constexpr std::uint32_t kPairGroup = 2;
    /// Gather in bigger groups runs CENTRALIZED, smaller ones BATCHED.
    static constexpr std::uint32_t kGatherBatchedMaxGroup = 4;
};

/// The mode message `msg` runs in (never AUTO). GATHER runs in a slot
/// mode whatever is configured (LOCKED/ATOMIC have no slots: AUTO's
/// choice); ATOMIC for a pair without lock-free atomics runs LOCKED.
uct_mm_incast_mode_t message_mode(const uct_mm_common::Message &msg,
                                  std::uint32_t group_size,
                                  uct_mm_incast_mode_t configured) noexcept;

inline bool is_slot_mode(uct_mm_incast_mode_t mode) noexcept
{
    return mode == UCT_MM_INCAST_MODE_BATCHED ||
           mode == UCT_MM_INCAST_MODE_CENTRALIZED;
}

const char *mode_name(uct_mm_incast_mode_t mode) noexcept;

} // namespace uct_mm_incast
