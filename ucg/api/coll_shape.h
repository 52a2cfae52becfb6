// SPDX-License-Identifier: BSD-3-Clause
// What one collective call means for this rank: the planner's collective,
// the layouts of the input and output buffers in the plan's blocks, the
// size the selector sees (the same on every member), and in-place copies.
#pragma once

#include "exec/program.h"
#include "ucg/ucg.h"

#include <cstdint>
#include <string>

namespace ucg::rt {

struct CollShape {
    plan::Collective collective = plan::Collective::kBarrier;
    int root = 0;
    bool reducing = false;
    bool trivial = false;           ///< moves nothing: complete at start
    const char *forced = nullptr;   ///< algorithm the call needs (v variants)
    std::uint64_t select_bytes = 0; ///< what the selector sees (per member)
    exec::Layout layout;
    const void *input = nullptr;
    void *output = nullptr;
    std::uint64_t copy_bytes = 0; ///< in place: output bytes to copy first
};

/// Checks the arguments (one log line and a named status on error) and
/// computes the shape. `rank` and `size` are the group's.
ucs_status_t coll_shape(const ucg_coll_args_t &args, int rank, int size,
                        CollShape *shape);

/// Bytes of one element of a datatype (0 when its base is out of range).
std::size_t datatype_bytes(const ucg_datatype_t &dt);

} // namespace ucg::rt
