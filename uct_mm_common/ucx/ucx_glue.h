// SPDX-License-Identifier: BSD-3-Clause
// Glue shared by the mm transports: core Status -> ucs_status_t, the core's
// log sink routed to ucs_log, and the one guard every UCT callback runs in.
#pragma once

#include "uct_mm_common/status.h"

#include <ucs/type/status.h>

namespace uct_mm_common {

/// The one mapping from core status to UCX status.
inline ucs_status_t to_ucs_status(Status s) noexcept
{
    switch (s) {
    case Status::kOk:
        return UCS_OK;
    case Status::kNoResource:
        return UCS_ERR_NO_RESOURCE;
    case Status::kInvalidParam:
        return UCS_ERR_INVALID_PARAM;
    case Status::kExceedsLimit:
        return UCS_ERR_EXCEEDS_LIMIT;
    case Status::kTimeout:
        return UCS_ERR_ENDPOINT_TIMEOUT;
    case Status::kPeerDead:
        return UCS_ERR_CONNECTION_RESET;
    case Status::kNoMemory:
        return UCS_ERR_NO_MEMORY;
    case Status::kIoError:
        return UCS_ERR_IO_ERROR;
    case Status::kNotFound:
        return UCS_ERR_NO_ELEM;
    case Status::kInProgress:
        return UCS_INPROGRESS;
    case Status::kNotTrusted:
        return UCS_ERR_REJECTED;
    }
    return UCS_ERR_NO_MESSAGE;
}

/// Routes uct_mm_common::log to ucs_log (call from the plugin constructor).
void install_ucs_log_sink() noexcept;

/// Logs a stray exception once (where it was caught) and maps it to a status.
ucs_status_t status_from_exception(const char *where) noexcept;

} // namespace uct_mm_common

/// Runs `body` (an expression returning ucs_status_t / ssize_t) so that no
/// exception crosses into UCX: every ops callback and extern "C" entry.
#define UCT_MM_GUARD(_where, _body)                                            \
    try {                                                                      \
        return (_body);                                                        \
    } catch (...) {                                                            \
        return ::uct_mm_common::status_from_exception(_where);                 \
    }
