// SPDX-License-Identifier: BSD-3-Clause
// What a wire is to the glue: a unicast endpoint (its address travels in
// the iface address), multicast groups joined by session key, and a poll
// that hands received packets to the engine. WireTransmit adapts a wire to
// the core's Transmit for one session.
#pragma once

#include "engine.h"

#include <cstdint>
#include <vector>

namespace uct_ud_mcast {

/// Bytes of a wire address inside an iface address (UDP uses 6, verbs 22).
inline constexpr size_t kWireAddrBytes = 24;

class Wire {
  public:
    virtual ~Wire() = default;
    /// This endpoint's address (kWireAddrBytes, zero-padded).
    virtual void local_addr(uint8_t *out) const = 0;
    /// Largest packet the wire carries.
    virtual uint32_t max_packet() const = 0;
    /// A handle for sending to the endpoint at `addr` (a peer's
    /// local_addr), or a negative value when it cannot be reached.
    virtual int resolve(const uint8_t *addr) = 0;
    virtual bool send_to(int peer, const uint8_t *pkt, size_t len) = 0;
    /// Joins the multicast group of a session key; *group for send_group.
    virtual Status join(uint64_t key, int *group) = 0;
    virtual void leave(int group) = 0;
    virtual bool send_group(int group, const uint8_t *pkt, size_t len) = 0;
    /// A run of packets to a group (Transmit::to_all_run); returns how
    /// many of the first were sent.
    virtual uint32_t send_group_run(int group, const uint8_t *pkts, size_t seg,
                                    uint32_t count, size_t last)
    {
        return send_run_one_by_one(pkts, seg, count, last,
                                   [&](const uint8_t *p, size_t n) {
                                       return send_group(group, p, n);
                                   });
    }
    /// Receives what is there (at most a batch per socket or queue) into
    /// the engine; returns the number of packets.
    virtual unsigned poll(Engine *engine, uint64_t now) = 0;
    /// Blocks until something arrives or `timeout_ms` passes.
    virtual void wait(int timeout_ms) = 0;
    /// A file descriptor that becomes readable when packets arrive.
    virtual int event_fd() const = 0;
    /// Packets are waiting (poll would find some); never blocks.
    virtual bool readable() = 0;
};

/// A session's Transmit over a wire: members by resolved handle, "all" by
/// multicast group (or the peer, for a two-member session without one).
class WireTransmit final : public Transmit {
  public:
    WireTransmit(Wire *wire, std::vector<int> peers, int group, uint16_t me)
        : wire_(wire), peers_(std::move(peers)), group_(group), me_(me)
    {
    }
    bool to_member(uint16_t m, const uint8_t *pkt, size_t len) noexcept override
    {
        return m < peers_.size() && peers_[m] >= 0 &&
               wire_->send_to(peers_[m], pkt, len);
    }
    bool to_all(const uint8_t *pkt, size_t len) noexcept override
    {
        if (group_ >= 0) {
            return wire_->send_group(group_, pkt, len);
        }
        return to_member(static_cast<uint16_t>(me_ ^ 1), pkt, len);
    }
    uint32_t to_all_run(const uint8_t *pkts, size_t seg, uint32_t count,
                        size_t last) noexcept override
    {
        if (group_ >= 0) {
            return wire_->send_group_run(group_, pkts, seg, count, last);
        }
        return Transmit::to_all_run(pkts, seg, count, last);
    }
    int group() const noexcept { return group_; }

  private:
    Wire *wire_;
    std::vector<int> peers_;
    int group_;
    uint16_t me_;
};

} // namespace uct_ud_mcast
