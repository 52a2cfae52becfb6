// SPDX-License-Identifier: BSD-3-Clause
// Cache-line constants and helpers for shared-memory layouts.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace uct_mm_common {

/// Line size the layouts are built for (x86-64 and most aarch64).
inline constexpr std::size_t kCacheLine = 64;

/// Rounds `bytes` up to a multiple of `align` (a power of two).
constexpr std::size_t align_up(std::size_t bytes, std::size_t align) noexcept
{
    return (bytes + align - 1) & ~(align - 1);
}

constexpr bool is_pow2(std::uint64_t v) noexcept
{
    return v != 0 && (v & (v - 1)) == 0;
}

/// Shared state must be lock-free atomics (usable across processes).
template <typename T> constexpr bool shared_atomic_ok() noexcept
{
    return std::atomic<T>::is_always_lock_free &&
           sizeof(std::atomic<T>) == sizeof(T);
}

static_assert(shared_atomic_ok<std::uint64_t>());
static_assert(shared_atomic_ok<std::uint32_t>());
static_assert(shared_atomic_ok<std::int32_t>());

} // namespace uct_mm_common
