// SPDX-License-Identifier: BSD-3-Clause
// ud_mcast wire format: one common header, then a body per packet type.
// Every field little-endian (x86-64 and aarch64 hosts; asserted).
//
//  0       2    3    4        6        8                                16
//  +-------+----+----+--------+--------+--------------------------------+
//  | magic |ver |type|  src   |  size  |          session key           |
//  +-------+----+----+--------+--------+--------------------------------+
//  16               20               24               28              32
//  +----------------+----------------+----------------+----------------+
//  |     epoch      |     length     |     check      |     flags      |
//  +----------------+----------------+----------------+----------------+
//  32  DATA body                                                      64
//  +--------+--------+--------+--------+--------+--------+----+--+--+-----+
//  |  psn   |  ack   |msg_seq |msg_len | offset |  tag   |root|kd|am| pad |
//  +--------+--------+--------+--------+--------+--------+----+--+--+-----+
//  64  payload (length - 80 bytes)
//  length - 16: MAC (16 bytes)
//
// check = CRC-32C over the packet but its MAC, with the check field zero,
// seeded with the session key: a packet of another group, a truncated or
// corrupt one fails it. It detects accidents. The MAC (auth.h) over the
// packet but the MAC itself, under a key that never goes on the wire,
// authenticates it: the receiver checks it before any field drives state.
#pragma once

#include "auth.h"

#include <bit>
#include <cstddef>
#include <cstdint>

namespace uct_ud_mcast {

static_assert(std::endian::native == std::endian::little,
              "the wire format is little-endian");

inline constexpr uint16_t kMagic = 0x4d55; // "UM"
inline constexpr uint8_t kVersion = 2;     // 2: the MAC trailer
inline constexpr uint16_t kNoMember = 0xffff;
inline constexpr unsigned kMaxMembers = 1024;
inline constexpr unsigned kMaxNackRanges = 8;
inline constexpr unsigned kMaxAddrBytes = 64;

enum class PacketType : uint8_t {
    kData = 1,   ///< a fragment of a message (multicast, or p2p unicast)
    kAck = 2,    ///< cumulative ACK of one sender's stream, to the tree parent
    kNack = 3,   ///< missing PSN ranges of one stream, to its sender
    kJoin = 4,   ///< "I am attached", to member 0 (p2p: to the peer)
    kReady = 5,  ///< "everyone is attached", from member 0; carries the epoch
    kProbe = 6,  ///< "are you alive, where is your stream?", to a sender
    kStatus = 7, ///< reply to a probe: the sender's next PSN
    kAbort = 8,  ///< the group failed: status and culprit
};

/// Flags of the common header.
enum : uint32_t {
    kFlagAck = 1u << 0, ///< DATA: `ack` holds the sender's cumulative ACK of
                        ///< the addressee's stream (two-member sessions)
    kFlagP2p = 1u << 1, ///< the session is point-to-point (created on JOIN)
};

struct CommonHeader {
    uint16_t magic;  ///< kMagic
    uint8_t version; ///< kVersion
    uint8_t type;    ///< PacketType
    uint16_t src;    ///< member index of the sender
    uint16_t size;   ///< members in the session (consistency check)
    uint64_t key;    ///< session key (group key mixed with member 0's iface)
    uint32_t epoch;  ///< session epoch from member 0's READY; 0 before
    uint32_t length; ///< bytes of the whole packet, this header included
    uint32_t check;  ///< CRC-32C, see above
    uint32_t flags;  ///< kFlag*
};
static_assert(sizeof(CommonHeader) == 32);
static_assert(offsetof(CommonHeader, key) == 8);
static_assert(offsetof(CommonHeader, check) == 24);

struct DataBody {
    uint32_t psn;     ///< packet sequence number in the sender's stream
    uint32_t ack;     ///< with kFlagAck: next PSN the sender expects from dst
    uint32_t msg_seq; ///< message number (group sequence, or per sender)
    uint32_t msg_len; ///< bytes of the whole message
    uint32_t offset;  ///< where this fragment's payload goes in it
    uint32_t tag;     ///< the poster's label (checked against the receive)
    uint16_t root;    ///< the message's root (member index)
    uint8_t kind;     ///< uct_group_coll_t, or kKindAm for an active message
    uint8_t am_id;    ///< active message id
    uint32_t pad;     ///< zero
};
static_assert(sizeof(DataBody) == 32);
inline constexpr size_t kDataHeaderBytes =
    sizeof(CommonHeader) + sizeof(DataBody);
inline constexpr uint8_t kKindAm = 0xff;

struct AckBody {
    uint16_t stream;  ///< whose stream (member index of its sender)
    uint16_t laggard; ///< the member of the subtree holding `cum` back
    uint32_t cum;     ///< every PSN below it is consumed by the subtree
};
static_assert(sizeof(AckBody) == 8);

struct NackRange {
    uint32_t first; ///< first missing PSN
    uint32_t count; ///< missing PSNs from `first`
};

struct NackBody {
    uint16_t stream;  ///< whose stream
    uint16_t nranges; ///< 1..kMaxNackRanges
    uint32_t pad;
    NackRange ranges[kMaxNackRanges];
};
static_assert(sizeof(NackBody) == 72);

struct JoinBody {
    uint32_t nonce;    ///< the joiner's incarnation (random)
    uint16_t addr_len; ///< bytes of addr used (p2p: the joiner's iface addr)
    uint16_t pad;
    uint8_t addr[kMaxAddrBytes];
};
static_assert(sizeof(JoinBody) == 72);

struct StreamBody {
    uint16_t stream;  ///< PROBE/STATUS: whose stream
    uint16_t culprit; ///< ABORT: the member blamed, or kNoMember
    uint32_t value;   ///< STATUS: next PSN; ABORT: the Status code
};
static_assert(sizeof(StreamBody) == 8);

/// Why a packet was refused.
enum class ParseError {
    kNone,
    kTooShort, ///< shorter than its header, or length field mismatch
    kBadMagic, ///< not ours at all (magic or version)
    kBadType,  ///< unknown type, or a body inconsistent with it
    kBadCheck, ///< CRC mismatch: corrupt, or another group's key
};

/// A parsed packet: views into the caller's buffer (valid while it is).
struct Packet {
    CommonHeader hdr;
    PacketType type;
    DataBody data;          ///< kData
    const uint8_t *payload; ///< kData: payload bytes
    uint32_t payload_len;
    AckBody ack;       ///< kAck
    NackBody nack;     ///< kNack
    JoinBody join;     ///< kJoin
    StreamBody stream; ///< kProbe, kStatus, kAbort
};

/// Validates and decodes `len` bytes (the MAC trailer included, not
/// checked: packet_authentic); never reads outside them.
ParseError parse_packet(const uint8_t *buf, size_t len, Packet *out) noexcept;

/// Whether the `len` bytes of a parsed packet end with their MAC under
/// `key`.
bool packet_authentic(const uint8_t *buf, size_t len,
                      const MacKey &key) noexcept;

/// Bytes of the body for a type (0 for an unknown type).
size_t body_bytes(PacketType type) noexcept;

/// Fills hdr->length, hdr->check and the MAC trailer (under `key`) of a
/// packet assembled in `buf`: header first, `len` bytes in all, the last
/// kMacBytes of them the trailer's room.
void seal_packet(uint8_t *buf, size_t len, const MacKey &key) noexcept;

/// 64-bit mixer (splitmix64 finalizer): session keys and hashes.
inline uint64_t mix64(uint64_t x) noexcept
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/// The session key of the point-to-point session between the ifaces `a`
/// and `b` (either order).
inline uint64_t p2p_session_key(uint64_t a, uint64_t b) noexcept
{
    const uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
    return mix64(lo ^ mix64(hi ^ 0x7032703270327032ull));
}

/// Wrap-around PSN comparison: a - b as a signed distance.
inline int32_t psn_diff(uint32_t a, uint32_t b) noexcept
{
    return static_cast<int32_t>(a - b);
}

} // namespace uct_ud_mcast
