// SPDX-License-Identifier: BSD-3-Clause
// Packet validation (the fuzzed parser) and sealing.
#include "packet.h"

#include "crc32c.h"

#include <cstring>

namespace uct_ud_mcast {
namespace {

uint32_t key_seed(uint64_t key)
{
    return static_cast<uint32_t>(key) ^ static_cast<uint32_t>(key >> 32);
}

// CRC of the packet as if its check field were zero.
uint32_t packet_crc(const uint8_t *buf, size_t len, uint64_t key)
{
    static const uint8_t kZero[4] = {};
    constexpr size_t at = offsetof(CommonHeader, check);
    uint32_t crc = crc32c(key_seed(key), buf, at);
    crc = crc32c(crc, kZero, sizeof(kZero));
    return crc32c(crc, buf + at + 4, len - at - 4);
}

bool body_valid(Packet *out)
{
    switch (out->type) {
    case PacketType::kData:
        return out->data.offset <= out->data.msg_len &&
               out->payload_len <= out->data.msg_len - out->data.offset;
    case PacketType::kNack:
        return out->nack.nranges >= 1 && out->nack.nranges <= kMaxNackRanges;
    case PacketType::kJoin:
        return out->join.addr_len <= kMaxAddrBytes;
    default:
        return true;
    }
}

} // namespace

size_t body_bytes(PacketType type) noexcept
{
    switch (type) {
    case PacketType::kData:
        return sizeof(DataBody);
    case PacketType::kAck:
        return sizeof(AckBody);
    case PacketType::kNack:
        return sizeof(NackBody);
    case PacketType::kJoin:
        return sizeof(JoinBody);
    case PacketType::kReady:
        return 0;
    case PacketType::kProbe:
    case PacketType::kStatus:
    case PacketType::kAbort:
        return sizeof(StreamBody);
    }
    return 0;
}

ParseError parse_packet(const uint8_t *buf, size_t len, Packet *out) noexcept
{
    if (len < sizeof(CommonHeader)) {
        return ParseError::kTooShort;
    }
    std::memcpy(&out->hdr, buf, sizeof(CommonHeader));
    const CommonHeader &h = out->hdr;
    if (h.magic != kMagic || h.version != kVersion) {
        return ParseError::kBadMagic;
    }
    if (h.length != len) {
        return ParseError::kTooShort;
    }
    out->type = static_cast<PacketType>(h.type);
    const size_t body = body_bytes(out->type);
    if (h.type < 1 || h.type > 8 || h.src >= kMaxMembers ||
        h.size > kMaxMembers || h.src >= h.size) {
        return ParseError::kBadType;
    }
    if (len < sizeof(CommonHeader) + body + kMacBytes) {
        return ParseError::kTooShort;
    }
    len -= kMacBytes; // the trailer: checked by packet_authentic
    if (packet_crc(buf, len, h.key) != h.check) {
        return ParseError::kBadCheck;
    }
    const uint8_t *b = buf + sizeof(CommonHeader);
    out->payload = nullptr;
    out->payload_len = 0;
    switch (out->type) {
    case PacketType::kData:
        std::memcpy(&out->data, b, sizeof(DataBody));
        out->payload = b + sizeof(DataBody);
        out->payload_len = static_cast<uint32_t>(len - kDataHeaderBytes);
        break;
    case PacketType::kAck:
        std::memcpy(&out->ack, b, sizeof(AckBody));
        break;
    case PacketType::kNack:
        std::memcpy(&out->nack, b, sizeof(NackBody));
        break;
    case PacketType::kJoin:
        std::memcpy(&out->join, b, sizeof(JoinBody));
        break;
    case PacketType::kReady:
        break;
    default:
        std::memcpy(&out->stream, b, sizeof(StreamBody));
        break;
    }
    if (len != sizeof(CommonHeader) + body && out->type != PacketType::kData) {
        return ParseError::kBadType;
    }
    return body_valid(out) ? ParseError::kNone : ParseError::kBadType;
}

bool packet_authentic(const uint8_t *buf, size_t len,
                      const MacKey &key) noexcept
{
    return len >= kMacBytes &&
           mac_verify(key, buf, len - kMacBytes, buf + len - kMacBytes);
}

void seal_packet(uint8_t *buf, size_t len, const MacKey &key) noexcept
{
    const auto length = static_cast<uint32_t>(len);
    std::memcpy(buf + offsetof(CommonHeader, length), &length, 4);
    uint64_t session;
    std::memcpy(&session, buf + offsetof(CommonHeader, key), 8);
    len -= kMacBytes;
    const uint32_t check = packet_crc(buf, len, session);
    std::memcpy(buf + offsetof(CommonHeader, check), &check, 4);
    mac_compute(key, buf, len, buf + len);
}

} // namespace uct_ud_mcast
