// SPDX-License-Identifier: BSD-3-Clause
// The per-message mode choice (policy.h).
#include "policy.h"

#include "reduce_ops.h"

namespace uct_mm_incast {
namespace {

using uct_mm_common::Coll;
uct_mm_incast_mode_t auto_gather(std::uint32_t size, const AutoThresholds &t)
{
    if (size <= t.pair_group) {
        return UCT_MM_INCAST_MODE_CENTRALIZED;
    }
    return size <= t.gather_batched_max_group ? UCT_MM_INCAST_MODE_BATCHED
                                              : UCT_MM_INCAST_MODE_CENTRALIZED;
}

uct_mm_incast_mode_t auto_reduce(const uct_mm_common::Message &msg,
                                 std::uint32_t size, const AutoThresholds &t)
{
    if (msg.length <= t.atomic_max_bytes &&
        atomic_is_single_rmw(msg.op, msg.dtype)) {
        return UCT_MM_INCAST_MODE_ATOMIC;
    }
    if (size <= t.pair_group) {
        return msg.length >= t.pair_locked_min_bytes
                   ? UCT_MM_INCAST_MODE_LOCKED
                   : UCT_MM_INCAST_MODE_CENTRALIZED;
    }
    if (msg.length >= t.locked_min_bytes && size >= t.locked_min_group) {
        return UCT_MM_INCAST_MODE_LOCKED;
    }
    return UCT_MM_INCAST_MODE_BATCHED;
}

} // namespace

bool AutoThresholds::valid() const noexcept
{
    const auto in_range = [](std::uint32_t g) {
        return g >= kMinGroup && g <= kMaxGroup;
    };
    return in_range(locked_min_group) && in_range(pair_group) &&
           in_range(gather_batched_max_group);
}

uct_mm_incast_mode_t message_mode(const uct_mm_common::Message &msg,
                                  std::uint32_t group_size,
                                  uct_mm_incast_mode_t configured,
                                  const AutoThresholds &t) noexcept
{
    if (msg.coll == Coll::kGather) {
        return is_slot_mode(configured) ? configured
                                        : auto_gather(group_size, t);
    }
    switch (configured) {
    case UCT_MM_INCAST_MODE_BATCHED:
    case UCT_MM_INCAST_MODE_CENTRALIZED:
    case UCT_MM_INCAST_MODE_LOCKED:
        return configured;
    case UCT_MM_INCAST_MODE_ATOMIC:
        return atomic_reduce_fn(msg.op, msg.dtype) != nullptr
                   ? UCT_MM_INCAST_MODE_ATOMIC
                   : UCT_MM_INCAST_MODE_LOCKED;
    default:
        return auto_reduce(msg, group_size, t);
    }
}

const char *mode_name(uct_mm_incast_mode_t mode) noexcept
{
    static const char *const names[] = {"auto", "batched", "centralized",
                                        "locked", "atomic"};
    return (mode >= 0 && mode < UCT_MM_INCAST_MODE_LAST) ? names[mode]
                                                         : "invalid";
}

} // namespace uct_mm_incast
