// SPDX-License-Identifier: BSD-3-Clause
// Packet MACs (SipHash-2-4, 128-bit output) and key derivation (keyed
// BLAKE2b) over libsodium (auth.h).
#include "auth.h"

#include <algorithm>
#include <cstring>
#include <sodium.h>

namespace uct_ud_mcast {

static_assert(kKeyBytes >= crypto_generichash_KEYBYTES_MIN &&
              kKeyBytes <= crypto_generichash_KEYBYTES_MAX);
static_assert(kMacBytes == crypto_shorthash_siphashx24_BYTES &&
              kKeyBytes == crypto_shorthash_siphashx24_KEYBYTES);

bool random_secret(MacKey *out) noexcept
{
    static const bool ready = sodium_init() >= 0;
    if (!ready) {
        return false;
    }
    randombytes_buf(out->data(), out->size());
    return true;
}

MacKey derive_key(const MacKey &secret, const char *label, uint64_t a,
                  uint64_t b) noexcept
{
    uint8_t msg[16 + 2 * sizeof(uint64_t)] = {};
    std::memcpy(msg, label, std::min<size_t>(std::strlen(label), 16));
    std::memcpy(msg + 16, &a, sizeof(a));
    std::memcpy(msg + 16 + sizeof(a), &b, sizeof(b));
    MacKey key;
    crypto_generichash(key.data(), key.size(), msg, sizeof(msg), secret.data(),
                       secret.size());
    return key;
}

void mac_compute(const MacKey &key, const uint8_t *buf, size_t len,
                 uint8_t *mac) noexcept
{
    crypto_shorthash_siphashx24(mac, buf, len, key.data());
}

bool mac_verify(const MacKey &key, const uint8_t *buf, size_t len,
                const uint8_t *mac) noexcept
{
    uint8_t expect[kMacBytes];
    mac_compute(key, buf, len, expect);
    return crypto_verify_16(expect, mac) == 0;
}

} // namespace uct_ud_mcast
