// SPDX-License-Identifier: BSD-3-Clause
// The shared body of both transports' GroupCore::post: posts run in order,
// one at a time from the front of a PostRing, and a post that finds the
// queue empty and the link joined runs at once.
#pragma once

#include "uct_mm_common/group_core.h"
#include "uct_mm_common/group_link.h"

#include <cstdint>

namespace uct_mm_common {

/// Queues `op` (its fields set) behind the posts before it. Returns the
/// link's failure, kNoResource when `has_room` is false (nothing queued),
/// kInProgress (queued: progress runs it), or kOk: it ran to the end at
/// once and was popped into *done_p. `run_front()` runs the front post and
/// returns whether it is done; `moved` counts what it moved, reported to
/// the link as activity and zeroed here.
template <class Op, class RunFront>
Status post_in_order(GroupLink &link, PostRing<Op> &ops, bool has_room,
                     const Op &op, std::uint32_t &moved, RunFront &&run_front,
                     Op *done_p) noexcept
{
    const Status st = link.state();
    if (st != Status::kOk) {
        return st;
    }
    if (!has_room) {
        return Status::kNoResource;
    }
    const bool alone = ops.empty();
    ops.push() = op;
    if (!alone || !link.joined()) {
        return Status::kInProgress; // after the posts before it
    }
    const bool done = run_front();
    if (link.failed()) {
        ops.pop();
        return link.state();
    }
    if (moved != 0) {
        link.on_activity();
        moved = 0;
    }
    if (!done) {
        return Status::kInProgress;
    }
    *done_p = ops.front();
    ops.pop();
    return Status::kOk;
}

} // namespace uct_mm_common
