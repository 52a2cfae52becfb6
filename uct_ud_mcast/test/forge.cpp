// SPDX-License-Identifier: BSD-3-Clause
// forgeries(): forge.h.
#include "forge.h"

#include <cstring>

namespace uct_ud_mcast::test {
namespace {

// A packet of `type` with the header `h` (type, length and check
// replaced) and `body`, sealed with `key`.
std::vector<uint8_t> make(CommonHeader h, PacketType type, const void *body,
                          size_t body_len, const MacKey &key)
{
    h.type = static_cast<uint8_t>(type);
    std::vector<uint8_t> f(sizeof(h) + body_len + kMacBytes, 0);
    std::memcpy(f.data(), &h, sizeof(h));
    if (body_len != 0) {
        std::memcpy(f.data() + sizeof(h), body, body_len);
    }
    seal_packet(f.data(), f.size(), key);
    return f;
}

} // namespace

std::vector<std::vector<uint8_t>> forgeries(const uint8_t *p, size_t n,
                                            const MacKey &key)
{
    std::vector<std::vector<uint8_t>> out;
    CommonHeader h;
    if (n < sizeof(h) + kMacBytes) {
        return out;
    }
    std::memcpy(&h, p, sizeof(h));
    if (static_cast<PacketType>(h.type) == PacketType::kData) {
        std::vector<uint8_t> f(p, p + n);
        for (size_t i = kDataHeaderBytes; i + kMacBytes < n; ++i) {
            f[i] ^= 0x5a;
        }
        seal_packet(f.data(), f.size(), key);
        out.push_back(std::move(f));
    }
    CommonHeader child = h; // a member that acknowledges h.src's stream
    child.src = static_cast<uint16_t>((h.src + 1) % (h.size == 0 ? 1 : h.size));
    AckBody ack{};
    ack.stream = h.src;
    ack.laggard = child.src;
    ack.cum = 1u << 30;
    out.push_back(make(child, PacketType::kAck, &ack, sizeof(ack), key));
    CommonHeader ready = h;
    ready.src = 0;
    ready.epoch = h.epoch + 1;
    out.push_back(make(ready, PacketType::kReady, nullptr, 0, key));
    JoinBody join{};
    join.nonce = 0x0badf00d;
    out.push_back(make(h, PacketType::kJoin, &join, sizeof(join), key));
    StreamBody abort{};
    abort.culprit = 0;
    abort.value = 1;
    out.push_back(make(h, PacketType::kAbort, &abort, sizeof(abort), key));
    return out;
}

} // namespace uct_ud_mcast::test
