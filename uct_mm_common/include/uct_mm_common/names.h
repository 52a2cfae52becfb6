// SPDX-License-Identifier: BSD-3-Clause
// Unguessable names for group segments: each iface draws a 128-bit secret
// from the kernel once and carries it in its iface address; a group's
// segment name is a keyed hash (SipHash-2-4) of the group key under member
// 0's secret, so another local user can neither predict a name (and
// pre-create it) nor learn the secret from names seen in /dev/shm.
#pragma once

#include <cstdint>
#include <string>

namespace uct_mm_common {

/// The secret an iface puts in its address (packed into it as two words).
struct Secret {
    std::uint64_t k0 = 0;
    std::uint64_t k1 = 0;
};

/// 128 bits from getrandom(2) (std::random_device if that fails).
Secret random_secret() noexcept;

/// SipHash-2-4 of the 8 little-endian bytes of `value` under `key`.
std::uint64_t keyed_hash(const Secret &key, std::uint64_t value) noexcept;

/// "/<prefix>-<16 hex digits of keyed_hash(secret, group_key)>".
std::string group_segment_name(const char *prefix, const Secret &secret,
                               std::uint64_t group_key);

/// The prefix of a name group_segment_name() made ("/<prefix>-<16 hex>"):
/// true and the prefix in *family, false for any other name.
bool group_segment_family(const std::string &name, std::string *family);

} // namespace uct_mm_common
