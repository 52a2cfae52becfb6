// SPDX-License-Identifier: BSD-3-Clause
// ucs_log sink and the exception guard's slow path.
#include "ucx_glue.h"

#include "uct_mm_common/log.h"

#include <exception>
#include <new>
#include <ucs/debug/log_def.h>

namespace uct_mm_common {
namespace {

void ucs_sink(LogLevel level, const char *message)
{
    switch (level) {
    case LogLevel::kError:
        ucs_error("%s", message);
        break;
    case LogLevel::kWarn:
        ucs_warn("%s", message);
        break;
    case LogLevel::kDebug:
        ucs_debug("%s", message);
        break;
    }
}

} // namespace

void install_ucs_log_sink() noexcept
{
    set_log_sink(ucs_sink);
}

ucs_status_t status_from_exception(const char *where) noexcept
{
    try {
        throw;
    } catch (const std::bad_alloc &) {
        ucs_error("%s: out of memory", where);
        return UCS_ERR_NO_MEMORY;
    } catch (const std::exception &e) {
        ucs_error("%s: unexpected exception: %s", where, e.what());
    } catch (...) {
        ucs_error("%s: unexpected exception", where);
    }
    return UCS_ERR_NO_MESSAGE;
}

} // namespace uct_mm_common
