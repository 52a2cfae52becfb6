// SPDX-License-Identifier: BSD-3-Clause
// UCG_SKIP(why): ends the running test case as skipped, not passed. It
// prints "UCG_TEST_SKIPPED: <why>" on stdout, which every test of
// ucg_add_test matches as its SKIP_REGULAR_EXPRESSION (ctest then reports
// "Skipped" and scripts/test lists it with its reason), and returns from
// the test case. Only where the machine lacks what the test needs (a
// device, root, a kernel feature), never to hide a failure.
#pragma once

#include <cstdio>
#include <string>

namespace ucg_test {

inline void print_skip(const std::string &why)
{
    std::printf("UCG_TEST_SKIPPED: %s\n", why.c_str());
    std::fflush(stdout);
}

} // namespace ucg_test

#define UCG_SKIP(why)                                                          \
    do {                                                                       \
        ::ucg_test::print_skip(why);                                           \
        return;                                                                \
    } while (0)
