// SPDX-License-Identifier: BSD-3-Clause
// Iface secrets and the keyed hash (SipHash-2-4) that names group segments.
#include "uct_mm_common/names.h"

#include <cinttypes>
#include <cstdio>
#include <random>
#include <sys/random.h>

namespace uct_mm_common {
namespace {

constexpr std::uint64_t rotl(std::uint64_t x, int b) noexcept
{
    return (x << b) | (x >> (64 - b));
}

struct SipState {
    std::uint64_t v0, v1, v2, v3;

    void round() noexcept
    {
        v0 += v1;
        v1 = rotl(v1, 13);
        v1 ^= v0;
        v0 = rotl(v0, 32);
        v2 += v3;
        v3 = rotl(v3, 16);
        v3 ^= v2;
        v0 += v3;
        v3 = rotl(v3, 21);
        v3 ^= v0;
        v2 += v1;
        v1 = rotl(v1, 17);
        v1 ^= v2;
        v2 = rotl(v2, 32);
    }

    void compress(std::uint64_t m) noexcept
    {
        v3 ^= m;
        round();
        round();
        v0 ^= m;
    }
};

} // namespace

Secret random_secret() noexcept
{
    Secret s;
    if (getrandom(&s, sizeof(s), 0) == static_cast<ssize_t>(sizeof(s))) {
        return s;
    }
    try {
        std::random_device rd;
        s.k0 = (std::uint64_t{rd()} << 32) ^ rd();
        s.k1 = (std::uint64_t{rd()} << 32) ^ rd();
    } catch (...) {
        // No entropy source at all: names stay unique but guessable; the
        // owner and mode checks at attach still refuse foreign segments.
        s.k0 = reinterpret_cast<std::uintptr_t>(&s);
    }
    return s;
}

std::uint64_t keyed_hash(const Secret &key, std::uint64_t value) noexcept
{
    SipState st{key.k0 ^ 0x736f6d6570736575ULL, key.k1 ^ 0x646f72616e646f6dULL,
                key.k0 ^ 0x6c7967656e657261ULL, key.k1 ^ 0x7465646279746573ULL};
    st.compress(value);                  // the one 8-byte block
    st.compress(std::uint64_t{8} << 56); // the final block: length 8
    st.v2 ^= 0xff;
    for (int i = 0; i < 4; ++i) {
        st.round();
    }
    return st.v0 ^ st.v1 ^ st.v2 ^ st.v3;
}

std::string group_segment_name(const char *prefix, const Secret &secret,
                               std::uint64_t group_key)
{
    char buf[96];
    std::snprintf(buf, sizeof(buf), "/%s-%016" PRIx64, prefix,
                  keyed_hash(secret, group_key));
    return buf;
}

bool group_segment_family(const std::string &name, std::string *family)
{
    constexpr std::size_t kHexDigits = 16;
    const std::size_t dash = name.rfind('-');
    if (name.size() < 3 || name[0] != '/' || dash == std::string::npos ||
        dash < 2 || name.size() - dash - 1 != kHexDigits) {
        return false;
    }
    for (std::size_t i = dash + 1; i < name.size(); ++i) {
        const char c = name[i];
        if ((c < '0' || c > '9') && (c < 'a' || c > 'f')) {
            return false;
        }
    }
    *family = name.substr(1, dash - 1);
    return true;
}

} // namespace uct_mm_common
