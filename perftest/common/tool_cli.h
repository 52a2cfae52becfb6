// SPDX-License-Identifier: BSD-3-Clause
// One command-line behaviour for every tool (CLI11): --help and --version
// print on stdout and exit 0; a bad command line prints one line naming the
// flag on stderr and exits kUsageError; a failure of the work itself exits
// 1. UCG_VERSION is the project version (perftest/CMakeLists.txt).
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <new>
#include <optional>
#include <string>

namespace ucg::tools {

/// Runs a tool's main body; an allocation failure or any other escaping
/// std::exception ends it with one line "<tool>: ..." and status 1.
template <class Body> int guarded_main(const char *tool, Body &&body)
{
    try {
        return body();
    } catch (const std::bad_alloc &) {
        std::fprintf(stderr,
                     "%s: out of memory (try fewer ranks or smaller "
                     "messages)\n",
                     tool);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: %s\n", tool, e.what());
    }
    return 1;
}

/// Exit status of every tool for a command line it refuses.
inline constexpr int kUsageError = 2;

/// "--version" prints "<tool> <project version>".
inline void add_version(CLI::App &app)
{
    app.set_version_flag("--version", app.get_name() + " " UCG_VERSION);
}

/// Parses argv into app. Returns the exit status when the tool should stop
/// (0 after --help or --version, kUsageError after a refusal, which prints
/// "<tool>: <message>" on stderr), std::nullopt when it should go on.
inline std::optional<int> parse(CLI::App &app, int argc, char **argv)
{
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        if (e.get_exit_code() == 0) {
            return app.exit(e); // help or version, on stdout
        }
        std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), e.what());
        return kUsageError;
    }
    return std::nullopt;
}

/// A refusal found after parsing (values that depend on each other).
inline int usage_error(const CLI::App &app, const std::string &message)
{
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), message.c_str());
    return kUsageError;
}

/// Integer values >= min.
inline CLI::Validator at_least(long long min)
{
    return CLI::Validator(
        [min](std::string &text) -> std::string {
            long long v = 0;
            if (!CLI::detail::lexical_cast(text, v) || v < min) {
                return "expected an integer >= " + std::to_string(min) +
                       ", got '" + text + "'";
            }
            return {};
        },
        "INT>=" + std::to_string(min));
}

/// Floating-point values: finite and >= 0 (refuses nan, inf, negatives).
inline CLI::Validator non_negative_finite()
{
    return CLI::Validator(
        [](std::string &text) -> std::string {
            double v = 0;
            if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v) ||
                v < 0) {
                return "expected a finite number >= 0, got '" + text + "'";
            }
            return {};
        },
        "FLOAT>=0");
}

/// Floating-point values: finite and > 0.
inline CLI::Validator positive_finite()
{
    return CLI::Validator(
        [](std::string &text) -> std::string {
            double v = 0;
            if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v) ||
                v <= 0) {
                return "expected a finite number > 0, got '" + text + "'";
            }
            return {};
        },
        "FLOAT>0");
}

} // namespace ucg::tools
