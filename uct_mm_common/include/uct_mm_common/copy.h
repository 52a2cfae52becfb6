// SPDX-License-Identifier: BSD-3-Clause
// The byte copy of every mm payload (bcast fragments, incast slots):
// memcpy, except where glibc's `rep movsb` path is pathological.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace uct_mm_common {

/// memcpy(dst, src, n). glibc (2.36 here) copies 2 KiB and more with `rep
/// movsb`, which on the AMD EPYC this was measured on runs at 2-4 GB/s
/// instead of 50-100 GB/s when dst is 1..255 bytes past src modulo 4 KiB
/// (store/load 4 KiB aliasing). Such copies go in 1 KiB pieces, which glibc
/// moves with vector loads and stores (50-65 GB/s measured).
inline void copy_bytes(void *dst, const void *src, std::size_t n)
{
    constexpr std::size_t kPage = 4096;
    constexpr std::size_t kNearBytes = 256;
    constexpr std::size_t kPieceBytes = 1024;
    const std::size_t delta =
        (reinterpret_cast<uintptr_t>(dst) - reinterpret_cast<uintptr_t>(src)) %
        kPage;
    if ((n <= 2 * kPieceBytes) || (delta == 0) || (delta >= kNearBytes)) {
        std::memcpy(dst, src, n);
        return;
    }
    auto *d = static_cast<std::byte *>(dst);
    const auto *s = static_cast<const std::byte *>(src);
    for (std::size_t off = 0; off < n; off += kPieceBytes) {
        std::memcpy(d + off, s + off,
                    (n - off < kPieceBytes) ? n - off : kPieceBytes);
    }
}

} // namespace uct_mm_common
