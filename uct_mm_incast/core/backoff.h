// SPDX-License-Identifier: BSD-3-Clause
// Cache-line constant, CPU pause and the spin-then-yield backoff that every
// wait loop of mm_incast uses (ranks may outnumber cores).
#pragma once

#include <sched.h>

#include <cstddef>
#include <cstdint>

namespace uct_mm_incast {

inline constexpr std::size_t kCacheLine = 64;

constexpr std::size_t align_up(std::size_t v, std::size_t a)
{
    return (v + a - 1) / a * a;
}

inline void cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

/// Spins `kSpins` times, then yields the CPU on every further call.
class Backoff {
  public:
    void pause()
    {
        if (spins_ < kSpins) {
            ++spins_;
            cpu_relax();
        } else {
            sched_yield();
        }
    }
    void reset() { spins_ = 0; }

  private:
    static constexpr uint32_t kSpins = 256;
    uint32_t spins_ = 0;
};

} // namespace uct_mm_incast
