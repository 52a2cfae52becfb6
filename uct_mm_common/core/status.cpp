// SPDX-License-Identifier: BSD-3-Clause
// Names of the core status codes.
#include "uct_mm_common/status.h"

namespace uct_mm_common {

const char *status_name(Status s) noexcept
{
    switch (s) {
    case Status::kOk:
        return "ok";
    case Status::kNoResource:
        return "no resource";
    case Status::kInvalidParam:
        return "invalid parameter";
    case Status::kExceedsLimit:
        return "exceeds limit";
    case Status::kTimeout:
        return "timeout";
    case Status::kPeerDead:
        return "peer dead";
    case Status::kNoMemory:
        return "no memory";
    case Status::kIoError:
        return "i/o error";
    case Status::kNotFound:
        return "not found";
    case Status::kInProgress:
        return "in progress";
    case Status::kNotTrusted:
        return "not trusted";
    }
    return "unknown";
}

} // namespace uct_mm_common
