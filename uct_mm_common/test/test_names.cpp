// SPDX-License-Identifier: BSD-3-Clause
// Group segment names: SipHash-2-4 (reference vector), distinct per key
// and secret, and random secrets.
#include "uct_mm_common/names.h"

#include <catch2/catch.hpp>

using namespace uct_mm_common;

TEST_CASE("keyed_hash is SipHash-2-4", "[mm][names]")
{
    // The reference implementation's vector for the 8-byte message
    // 00 01 .. 07 under the key 00 01 .. 0f.
    const Secret key{0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};
    CHECK(keyed_hash(key, 0x0706050403020100ULL) == 0x93f5f5799a932462ULL);
}

TEST_CASE("group names differ by key and secret and hide the secret",
          "[mm][names]")
{
    const Secret a = random_secret();
    const Secret b = random_secret();
    CHECK((a.k0 != b.k0 || a.k1 != b.k1));
    const std::string n1 = group_segment_name("ucg-x", a, 1);
    CHECK(n1.rfind("/ucg-x-", 0) == 0);
    CHECK(n1.size() == 7 + 16);
    CHECK(n1 != group_segment_name("ucg-x", a, 2));
    CHECK(n1 != group_segment_name("ucg-x", b, 1));
    CHECK(n1 == group_segment_name("ucg-x", a, 1));
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx",
                  static_cast<unsigned long long>(a.k0));
    CHECK(n1.find(hex) == std::string::npos);
}

TEST_CASE("a group name gives back its family, and no other name does",
          "[mm][names]")
{
    std::string family;
    REQUIRE(group_segment_family(
        group_segment_name("ucg-mmbg", random_secret(), 7), &family));
    CHECK(family == "ucg-mmbg");
    family = "unchanged";
    CHECK_FALSE(group_segment_family("/ucg-mmbg-0123456789abcde", &family));
    CHECK_FALSE(group_segment_family("/ucg-mmbg-0123456789abcdeg", &family));
    CHECK_FALSE(group_segment_family("/ucg-mmbg-0123456789ABCDEF", &family));
    CHECK_FALSE(group_segment_family("ucg-mmbg-0123456789abcdef", &family));
    CHECK_FALSE(group_segment_family("/-0123456789abcdef", &family));
    CHECK_FALSE(group_segment_family("/ucg-mmbg-0123456789abcdef0", &family));
    CHECK(family == "unchanged");
}
