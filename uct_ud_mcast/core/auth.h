// SPDX-License-Identifier: BSD-3-Clause
// Packet authentication: every packet ends with a 16-byte MAC under a key
// that never goes on the wire: SipHash-2-4 with a 128-bit output
// (libsodium's crypto_shorthash_siphashx24), a keyed PRF three times
// faster than keyed BLAKE2b here (decision 0025). Each iface has a random
// secret, carried only in its iface address (the out-of-band exchange:
// UCP's address, or a group's member addresses); keys derive from secrets
// with keyed BLAKE2b (crypto_generichash). A group's key derives from
// member 0's secret and the group key; a point-to-point direction's from
// the receiving iface's secret (ep.cpp). Keys are 128 bits: SipHash's key,
// and what fits a UCP iface address (at most 63 bytes).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace uct_ud_mcast {

inline constexpr size_t kMacBytes = 16;
inline constexpr size_t kKeyBytes = 16;

/// An iface secret or a key derived from one.
using MacKey = std::array<uint8_t, kKeyBytes>;

/// A fresh random secret (libsodium initialised on first use); false
/// when libsodium cannot be initialised.
bool random_secret(MacKey *out) noexcept;

/// The key of `label` (a constant of at most 16 characters) for the
/// values a and b, under `secret`: what two parties holding the secret
/// both derive, and no one else.
MacKey derive_key(const MacKey &secret, const char *label, uint64_t a,
                  uint64_t b) noexcept;

/// Writes the MAC of buf[0, len) under `key` to `mac`.
void mac_compute(const MacKey &key, const uint8_t *buf, size_t len,
                 uint8_t *mac) noexcept;

/// Whether `mac` is the MAC of buf[0, len) under `key` (constant time).
bool mac_verify(const MacKey &key, const uint8_t *buf, size_t len,
                const uint8_t *mac) noexcept;

} // namespace uct_ud_mcast
