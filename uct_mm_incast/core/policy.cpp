// SPDX-License-Identifier: BSD-3-Clause
// The per-message mode choice (policy.h).
#include "policy.h"

#include "reduce_ops.h"

namespace uct_mm_incast {
namespace {

using uct_mm_common::Coll;
using T = AutoThresholds;

uct_mm_incast_mode_t auto_gather(std::uint32_t size)
{
    if (size <= T::kPairGroup) {
        return UCT_MM_INCAST_MODE_CENTRALIZED;
    }
    return size <= T::kGatherBatchedMaxGroup ? UCT_MM_INCAST_MODE_BATCHED
                                             : UCT_MM_INCAST_MODE_CENTRALIZED;
}

uct_mm_incast_mode_t auto_reduce(const uct_mm_common::Message &msg,
                                 std::uint32_t size)
{
    if (msg.length <= T::kAtomicMaxBytes &&
        atomic_is_single_rmw(msg.op, msg.dtype)) {
        return UCT_MM_INCAST_MODE_ATOMIC;
    }
    if (size <= T::kPairGroup) {
        return UCT_MM_INCAST_MODE_CENTRALIZED;
    }
    if (msg.length >= T::kLockedMinBytes && size >= T::kLockedMinGroup) {
        return UCT_MM_INCAST_MODE_LOCKED;
    }
    return UCT_MM_INCAST_MODE_BATCHED;
}

} // namespace

uct_mm_incast_mode_t message_mode(const uct_mm_common::Message &msg,
                                  std::uint32_t group_size,
                                  uct_mm_incast_mode_t configured) noexcept
{
    if (msg.coll == Coll::kGather) {
        return is_slot_mode(configured) ? configured : auto_gather(group_size);
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
        return auto_reduce(msg, group_size);
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
