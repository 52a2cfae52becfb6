// SPDX-License-Identifier: BSD-3-Clause
// UCG_CHECK: an assertion for code running inside a rank (thread or forked
// child), where Catch2's REQUIRE cannot report. It throws RankFailure with
// the file, line and expression; the harness reports it with the rank.
#pragma once

#include <stdexcept>
#include <string>

namespace ucg_test {

struct RankFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

[[noreturn]] void fail_check(const char *file, int line, const char *expr,
                             const std::string &detail);

} // namespace ucg_test

#define UCG_CHECK(cond)                                                        \
    do {                                                                       \
        if (!(cond)) {                                                         \
            ::ucg_test::fail_check(__FILE__, __LINE__, #cond, "");             \
        }                                                                      \
    } while (0)

// UCG_CHECK_EQ(a, b): like UCG_CHECK(a == b) but reports both values.
#define UCG_CHECK_EQ(a, b)                                                     \
    do {                                                                       \
        const auto &ucg_check_a_ = (a);                                        \
        const auto &ucg_check_b_ = (b);                                        \
        if (!(ucg_check_a_ == ucg_check_b_)) {                                 \
            ::ucg_test::fail_check(__FILE__, __LINE__, #a " == " #b,           \
                                   std::to_string(ucg_check_a_) + " vs " +     \
                                       std::to_string(ucg_check_b_));          \
        }                                                                      \
    } while (0)
