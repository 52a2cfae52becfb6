// SPDX-License-Identifier: BSD-3-Clause
// ud_mcast glue: configuration, iface, point-to-point peers and endpoints,
// shared by component.cpp, iface.cpp, ep.cpp and group.cpp.
#pragma once

#include "engine.h"
#include "wire.h"

extern "C" {
#include <ucs/datastruct/queue.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
}

#include <memory>
#include <unordered_map>
#include <vector>

namespace uct_ud_mcast {

/// UCX_UD_MCAST_* settings.
struct IfaceConfig {
    uct_iface_config_t super;
    size_t max_packet;        ///< datagram bytes (0: interface MTU)
    unsigned window;          ///< packets in flight per sender (p2p)
    unsigned group_window;    ///< the same in a group
    unsigned ack_fanin;       ///< ACK tree children per node
    double ack_delay;         ///< s
    double nack_delay;        ///< s
    double rto_min;           ///< s
    double rto_max;           ///< s
    double timeout;           ///< s of silence before a peer is dead
    double attach_timeout;    ///< s for the join barrier
    unsigned max_outstanding; ///< group posts per member
    unsigned max_group_size;
    unsigned max_peers; ///< p2p sessions per iface
    unsigned port_base; ///< UDP group ports
    unsigned ttl;       ///< UDP multicast TTL
    size_t rcvbuf;      ///< UDP socket buffer
    double rx_loss;     ///< test hook: received packets dropped
    unsigned gid_index; ///< verbs wire: GID table entry
    char *bind_addr;    ///< verbs wire: IP for rdma_cm ("" = auto)
};

/// Where an iface is: its id and its wire's unicast address (public).
struct PeerAddr {
    uint64_t id;       ///< random per iface open
    uint8_t wire_kind; ///< 1: UDP, 2: verbs
    uint8_t pad[7];
    uint8_t wire[kWireAddrBytes]; ///< Wire::local_addr
};

/// Iface address: where the iface is and its secret (auth.h). Only the
/// out-of-band exchange carries it; what goes on the wire is a JoinAddr.
struct IfaceAddr {
    PeerAddr peer;
    uint8_t secret[kKeyBytes]; ///< random per iface open
};
static_assert(sizeof(IfaceAddr) == 56); // UCP v1 addresses: at most 63

/// What a point-to-point JOIN carries: where the joiner is (no secret),
/// and the key the joined iface is to send with, boxed (XOR) under a pad
/// only the joined iface can derive (ep.cpp).
struct JoinAddr {
    PeerAddr peer;
    uint8_t box[kKeyBytes];
};
static_assert(sizeof(JoinAddr) <= kMaxAddrBytes);

struct Iface;

/// A point-to-point peer: one two-member session per pair of ifaces,
/// shared by every endpoint between them, kept for the iface's lifetime.
struct Peer final : SessionHandler {
    Iface *iface = nullptr;
    std::unique_ptr<WireTransmit> tx;
    std::unique_ptr<Session> session;
    bool deliver(uint16_t sender, const DataBody &d, const uint8_t *payload,
                 uint32_t len) noexcept override;
    void sent(void *) noexcept override {}
    bool waiting_for(uint16_t) const noexcept override { return false; }
    void failed(Status status, uint16_t culprit) noexcept override;
};

struct Ep {
    uct_base_ep_t super; ///< must stay first
    Iface *iface = nullptr;
    Peer *peer = nullptr;
    ucs_queue_head_t pending;
    std::vector<uct_completion_t *> flushes;
};

struct Group;

struct P2pMaker final : Engine::P2pFactory {
    Iface *iface = nullptr;
    Session *create_p2p(const Packet &join, uint64_t now) override;
    bool p2p_rx_key(const Packet &join, MacKey *key) override;
    Session *create(const Packet &join, uint64_t now);
};

struct Iface {
    uct_base_iface_t super; ///< must stay first (UCX casts)
    Engine engine;
    std::unique_ptr<Wire> wire;
    uint8_t wire_kind = 1;
    uint64_t id = 0;
    MacKey secret{};     ///< auth.h: random per open, in the iface address
    SessionConfig base;  ///< timers and sizes of every session
    SessionConfig group; ///< base with a group's window
    unsigned max_outstanding = 0;
    unsigned max_group_size = 0;
    unsigned max_peers = 0;
    P2pMaker maker;
    std::unordered_map<uint64_t, std::unique_ptr<Peer>> peers; ///< by id
    std::vector<Ep *> eps;
    std::vector<Group *> groups;
};

extern uct_iface_ops_t g_iface_ops;
extern uct_component_t g_component;

// iface.cpp
ucs_status_t iface_open(uct_md_h md, uct_worker_h worker,
                        const uct_iface_params_t *params,
                        const uct_iface_config_t *config,
                        uct_iface_h *iface_p) noexcept;
ucs_status_t query_devices(uct_md_h md, uct_tl_device_resource_t **devices_p,
                           unsigned *num_p) noexcept;
bool is_ud_mcast_iface(uct_iface_h iface) noexcept;
void local_iface_addr(const Iface *iface, IfaceAddr *addr) noexcept;
/// Where this iface is (the public part of its address).
void local_peer_addr(const Iface *iface, PeerAddr *addr) noexcept;

// ep.cpp
/// The peer of a full iface address (ep_create: its secret gives the
/// keys), made on first use.
Peer *peer_get(Iface *iface, const IfaceAddr &addr, uint64_t now);
ucs_status_t ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p) noexcept;
void ep_destroy(uct_ep_h tl_ep) noexcept;
ucs_status_t ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                         const void *payload, unsigned length) noexcept;
ssize_t ep_am_bcopy(uct_ep_h tl_ep, uint8_t id, uct_pack_callback_t pack_cb,
                    void *arg, unsigned flags) noexcept;
ucs_status_t ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                            unsigned flags) noexcept;
void ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                      void *arg) noexcept;
ucs_status_t ep_flush(uct_ep_h tl_ep, unsigned flags,
                      uct_completion_t *comp) noexcept;
unsigned ep_progress(Ep *ep) noexcept;

// group.cpp
void group_destroy_all(Iface *iface) noexcept;

} // namespace uct_ud_mcast
