// SPDX-License-Identifier: BSD-3-Clause
// What the reliability core is configured with, what it counts, and the two
// interfaces it talks through: Transmit (down, to a wire) and
// SessionHandler (up, to the message layer).
#pragma once

#include "auth.h"
#include "packet.h"
#include "uct_mm_common/status.h"

#include <array>
#include <cstdint>

namespace uct_ud_mcast {

using uct_mm_common::Status;

/// Timers and limits of a session; the same on every member.
struct SessionConfig {
    uint64_t key = 0; ///< session key (see packet.h)
    /// MAC keys (auth.h): of the packets this member sends, and of those
    /// it accepts (the same for a group; per direction for p2p).
    MacKey tx_key{};
    MacKey rx_key{};
    uint16_t my_index = 0;       ///< this member
    uint16_t size = 2;           ///< members
    bool p2p = false;            ///< a point-to-point session (kFlagP2p)
    uint32_t nonce = 1;          ///< random; member 0 makes it the epoch
    uint32_t window = 64;        ///< packets in flight per sender, power of 2
    uint32_t max_payload = 1400; ///< payload bytes per packet
    uint32_t max_queued = 64;    ///< messages queued by post_message
    uint32_t ack_fanin = 4;      ///< children per node of the ACK tree
    uint32_t ack_every = 16;     ///< consumed packets that force an ACK
    uint64_t ack_delay_ns = 100'000;      ///< coalescing delay of ACKs
    uint64_t nack_delay_ns = 100'000;     ///< reorder grace before a NACK
    uint64_t nack_holdoff_ns = 1'000'000; ///< a PSN is resent once per this
    uint64_t rto_min_ns = 10'000'000;     ///< first resend timeout
    uint64_t rto_max_ns = 500'000'000;    ///< resend timeout cap (backoff)
    uint64_t probe_ns = 200'000'000;      ///< silence before a PROBE
    uint64_t timeout_ns = 10'000'000'000; ///< silence before a failure
    uint64_t attach_timeout_ns = 30'000'000'000; ///< join barrier limit
    /// Carried by JOIN (p2p: the joiner's iface address, for the peer).
    std::array<uint8_t, kMaxAddrBytes> join_addr{};
    uint16_t join_addr_len = 0;
};

/// Counters of an engine (all its sessions), visible through the public
/// header. Bytes include headers.
struct Counters {
    uint64_t tx_packets = 0;
    uint64_t tx_bytes = 0;
    uint64_t rx_packets = 0;
    uint64_t rx_bytes = 0;
    uint64_t tx_data = 0;       ///< first transmissions of DATA
    uint64_t tx_data_bytes = 0; ///< their bytes
    uint64_t tx_resent = 0;     ///< DATA sent again (NACK or timeout)
    uint64_t tx_resent_bytes = 0;
    uint64_t tx_acks = 0;
    uint64_t tx_nacks = 0;
    uint64_t tx_ctrl = 0;           ///< JOIN, READY, PROBE, STATUS, ABORT
    uint64_t tx_overhead_bytes = 0; ///< ACK, NACK, control and resent bytes
    uint64_t nacks_suppressed = 0;  ///< NACKed PSNs not resent (holdoff)
    uint64_t rx_delivered = 0;      ///< DATA consumed in order
    uint64_t rx_duplicate = 0;      ///< DATA already had: dropped
    uint64_t rx_out_of_order = 0;   ///< DATA stored until a gap filled
    uint64_t drop_malformed = 0;    ///< bad magic, length, type or body
    uint64_t drop_bad_check = 0;    ///< CRC mismatch
    uint64_t drop_bad_mac = 0;      ///< not sealed with the session's key
    uint64_t drop_foreign = 0;      ///< no session with this key
    uint64_t drop_peer_limit = 0;   ///< a new peer's JOIN past MAX_PEERS
    uint64_t drop_stale = 0;        ///< wrong epoch, or PSN out of window
    uint64_t drop_early = 0;        ///< before the session was ready
    uint64_t drop_injected = 0;     ///< dropped by the loss test hook
    uint64_t tx_failed = 0;         ///< the wire refused a packet
};

/// The head of one message; every fragment carries it.
struct MsgHead {
    uint32_t seq = 0;       ///< message number
    uint32_t len = 0;       ///< bytes
    uint32_t tag = 0;       ///< the poster's label
    uint16_t root = 0;      ///< the sender
    uint8_t kind = kKindAm; ///< uct_group_coll_t or kKindAm
    uint8_t am_id = 0;      ///< active message id
};

/// A run of `count` packets laid end to end from `pkts` (every one `seg`
/// bytes but the last, `last` bytes) sent by `send(pkt, len)` one at a
/// time; returns how many of the first were sent.
template <typename Send>
uint32_t send_run_one_by_one(const uint8_t *pkts, size_t seg, uint32_t count,
                             size_t last, Send &&send)
{
    for (uint32_t i = 0; i < count; ++i) {
        if (!send(pkts + i * seg, i + 1 == count ? last : seg)) {
            return i;
        }
    }
    return count;
}

/// Down: a wire sends whole packets; false when it could not (now).
class Transmit {
  public:
    /// To one member (unicast).
    virtual bool to_member(uint16_t member, const uint8_t *pkt,
                           size_t len) noexcept = 0;
    /// To every other member (multicast; the peer in a p2p session).
    virtual bool to_all(const uint8_t *pkt, size_t len) noexcept = 0;
    /// To every other member, a run of `count` packets laid end to end
    /// from `pkts`: every one `seg` bytes but the last, `last` bytes (at
    /// most `seg`). Returns how many of the first were sent; a wire that
    /// can sends the run in one call (UDP: segmentation offload).
    virtual uint32_t to_all_run(const uint8_t *pkts, size_t seg, uint32_t count,
                                size_t last) noexcept
    {
        return send_run_one_by_one(
            pkts, seg, count, last,
            [this](const uint8_t *p, size_t n) { return to_all(p, n); });
    }

  protected:
    ~Transmit() = default;
};

/// Up: the message layer above a session.
class SessionHandler {
  public:
    /// The next in-order fragment of `sender`'s stream; false leaves it
    /// stored (the stream stalls until Session::redeliver).
    virtual bool deliver(uint16_t sender, const DataBody &d,
                         const uint8_t *payload, uint32_t len) noexcept = 0;
    /// A post_message() is wholly in the send window (its data was copied).
    virtual void sent(void *cookie) noexcept = 0;
    /// Whether a posted receive waits for data from `sender` (it is then
    /// probed when silent, and declared dead after the timeout).
    virtual bool waiting_for(uint16_t sender) const noexcept = 0;
    /// The session failed for good (once).
    virtual void failed(Status status, uint16_t culprit) noexcept = 0;

  protected:
    ~SessionHandler() = default;
};

} // namespace uct_ud_mcast
