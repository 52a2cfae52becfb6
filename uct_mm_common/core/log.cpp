// SPDX-License-Identifier: BSD-3-Clause
// The core's log sink (stderr unless the glue installs ucs_log).
#include "uct_mm_common/log.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace uct_mm_common {
namespace {

void stderr_sink(LogLevel level, const char *message)
{
    if (level == LogLevel::kDebug && std::getenv("UCG_MM_DEBUG") == nullptr) {
        return;
    }
    const char *tag = level == LogLevel::kError  ? "error"
                      : level == LogLevel::kWarn ? "warn"
                                                 : "debug";
    std::fprintf(stderr, "[ucg mm %s] %s\n", tag, message);
}

LogSink g_sink = stderr_sink;

} // namespace

void set_log_sink(LogSink sink) noexcept
{
    g_sink = sink != nullptr ? sink : stderr_sink;
}

void log(LogLevel level, const char *fmt, ...) noexcept
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    g_sink(level, buf);
}

} // namespace uct_mm_common
