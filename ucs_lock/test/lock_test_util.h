// SPDX-License-Identifier: BSD-3-Clause
// Helpers of the ucs_lock tests: kind names, polling with a deadline, and
// capturing what the library writes to stderr.
#pragma once

#include "ucs_lock/ucs_lock.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <unistd.h>

namespace ucs_lock_test {

inline const char *kind_name(ucs_lock_kind_t kind)
{
    return kind == UCS_LOCK_KIND_SPIN ? "spin" : "mutex";
}

/// Waits until `flag` reaches `value` (polling, yielding the CPU).
inline void wait_for(const std::atomic<int> &flag, int value)
{
    while (flag.load() < value) {
        std::this_thread::yield();
    }
}

inline void sleep_ms(int ms)
{
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

/// Redirects fd 2 to a temporary file until finish(), which returns what
/// was written there.
class StderrCapture {
  public:
    StderrCapture() : file_(std::tmpfile()), saved_(dup(STDERR_FILENO))
    {
        std::fflush(stderr);
        dup2(fileno(file_), STDERR_FILENO);
    }
    ~StderrCapture()
    {
        if (file_ != nullptr) {
            finish();
        }
    }
    StderrCapture(const StderrCapture &) = delete;
    StderrCapture &operator=(const StderrCapture &) = delete;

    std::string finish()
    {
        std::fflush(stderr);
        dup2(saved_, STDERR_FILENO);
        close(saved_);
        std::string text;
        std::rewind(file_);
        char buf[512];
        std::size_t n;
        while ((n = std::fread(buf, 1, sizeof(buf), file_)) > 0) {
            text.append(buf, n);
        }
        std::fclose(file_);
        file_ = nullptr;
        return text;
    }

  private:
    std::FILE *file_;
    int saved_;
};

inline int count_lines(const std::string &text)
{
    int lines = 0;
    for (char c : text) {
        lines += c == '\n';
    }
    return lines;
}

} // namespace ucs_lock_test
