// SPDX-License-Identifier: BSD-3-Clause
// One log line where a core error is classified. The core has no UCX; the
// glue installs ucs_log as the sink, tests and tools keep the stderr default.
#pragma once

namespace uct_mm_common {

enum class LogLevel { kError, kWarn, kDebug };

using LogSink = void (*)(LogLevel level, const char *message);

/// Replaces the sink (nullptr restores the stderr default). Not thread-safe:
/// call once at load time.
void set_log_sink(LogSink sink) noexcept;

/// printf-style; never throws, never allocates above a fixed buffer.
void log(LogLevel level, const char *fmt, ...) noexcept
    __attribute__((format(printf, 2, 3)));

} // namespace uct_mm_common
