// SPDX-License-Identifier: BSD-3-Clause
// ucg_copy: every byte of every size lands, whatever the two addresses'
// offset modulo 4 KiB (the pieces path included), and nothing around dst
// is touched; also from C. ucg_copy_to_peer alike, at every alignment of
// dst within a cache line.
#include "c_caller.h"

#include <ucg/copy.h>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <vector>

namespace {

constexpr std::size_t kGuard = 64;

enum class Copier { kCopy, kFromC, kToPeer };

void check_copy(std::size_t n, std::size_t delta, Copier copier)
{
    std::vector<std::uint8_t> src(n + 4096), dst(n + 4096 + 2 * kGuard);
    for (std::size_t i = 0; i < src.size(); ++i) {
        src[i] = static_cast<std::uint8_t>(i * 131 + 7);
    }
    std::fill(dst.begin(), dst.end(), std::uint8_t{0xee});
    const std::uint8_t *s = src.data();
    // dst lands `delta` bytes past src modulo 4 KiB.
    const auto sa = reinterpret_cast<std::uintptr_t>(s);
    const auto da = reinterpret_cast<std::uintptr_t>(dst.data() + kGuard);
    const std::size_t shift = (sa + delta - da) % 4096;
    std::uint8_t *d = dst.data() + kGuard + shift;
    switch (copier) {
    case Copier::kCopy:
        ucg_copy(d, s, n);
        break;
    case Copier::kFromC:
        c_caller_copy(d, s, n);
        break;
    case Copier::kToPeer:
        ucg_copy_to_peer(d, s, n);
        break;
    }
    REQUIRE((reinterpret_cast<std::uintptr_t>(d) - sa) % 4096 == delta);
    for (std::size_t i = 0; i < n; ++i) {
        if (d[i] != s[i]) {
            FAIL("byte " << i << " of " << n << " differs (delta " << delta
                         << ")");
        }
    }
    for (std::uint8_t *p = dst.data(); p < d; ++p) {
        REQUIRE(*p == 0xee);
    }
    for (std::uint8_t *p = d + n; p < dst.data() + dst.size(); ++p) {
        REQUIRE(*p == 0xee);
    }
}

} // namespace

TEST_CASE("ucg_copy moves every byte at every 4 KiB offset", "[copy]")
{
    for (std::size_t n :
         {0UL, 1UL, 63UL, 2048UL, 2049UL, 3071UL, 4096UL, 65536UL + 3}) {
        for (std::size_t delta :
             {0UL, 1UL, 16UL, 255UL, 256UL, 2048UL, 4095UL}) {
            INFO("n " << n << " delta " << delta);
            check_copy(n, delta, Copier::kCopy);
        }
    }
    check_copy(65536 + 5, 16, Copier::kFromC);
}

TEST_CASE("ucg_copy_to_peer moves every byte at every alignment of dst",
          "[copy]")
{
    for (std::size_t n :
         {0UL, 1UL, 127UL, 128UL, 129UL, 191UL, 1000UL, 8192UL + 7}) {
        for (std::size_t delta = 0; delta < 128; ++delta) {
            INFO("n " << n << " delta " << delta);
            check_copy(n, delta, Copier::kToPeer);
        }
    }
}
