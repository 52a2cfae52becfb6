// SPDX-License-Identifier: BSD-3-Clause
// Status codes of the UCX-free shared-memory core; the ucx/ glue maps them to
// ucs_status_t (one place: uct_mm_common/ucx/ucx_glue.h).
#pragma once

namespace uct_mm_common {

/// Outcome of a core operation. Recoverable failures only; bugs assert.
enum class Status {
    kOk,
    kNoResource,   ///< ring full / nothing to do now; retry after progress
    kInvalidParam, ///< bad argument from the caller
    kExceedsLimit, ///< size or group size over an advertised limit
    kTimeout,      ///< a bounded wait expired with every peer alive
    kPeerDead,     ///< a member's process is gone
    kNoMemory,     ///< mmap/allocation failed
    kIoError,      ///< shm_open/ftruncate/open failed (errno logged)
    kNotFound,     ///< segment does not exist (yet)
    kInProgress,   ///< posted; completes later (from progress)
    kNotTrusted,   ///< a segment not owned by this user or not mode 0600
};

/// Short name for logs and test messages.
const char *status_name(Status s) noexcept;

} // namespace uct_mm_common
