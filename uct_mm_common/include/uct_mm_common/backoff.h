// SPDX-License-Identifier: BSD-3-Clause
// Bounded spin, then sched_yield: every wait loop on shared memory uses it,
// because tests run more ranks than cores. Deadline: a monotonic timeout.
#pragma once

#include <chrono>
#include <cstdint>
#include <sched.h>

namespace uct_mm_common {

/// Spins `spin_limit` times (pause), then yields the CPU on every call.
class Backoff {
  public:
    explicit Backoff(unsigned spin_limit = 128) noexcept : limit_(spin_limit) {}
    void pause() noexcept
    {
        if (spins_ < limit_) {
            ++spins_;
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#elif defined(__aarch64__)
            asm volatile("yield" ::: "memory");
#endif
        } else {
            sched_yield();
        }
    }
    void reset() noexcept
    {
        spins_ = 0;
    }

  private:
    unsigned limit_;
    unsigned spins_ = 0;
};

/// A point in monotonic time after which a wait gives up.
class Deadline {
  public:
    using Clock = std::chrono::steady_clock;
    explicit Deadline(std::chrono::milliseconds timeout) noexcept
        : at_(Clock::now() + timeout)
    {
    }
    bool expired() const noexcept { return Clock::now() >= at_; }

  private:
    Clock::time_point at_;
};

/// Monotonic nanoseconds (for stall detection in progress paths).
inline std::uint64_t now_ns() noexcept
{
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

} // namespace uct_mm_common
