// SPDX-License-Identifier: BSD-3-Clause
// ud_mcast point-to-point: one two-member session per pair of ifaces (made
// by ep_create, or by the engine on the peer's first JOIN, so a receiver
// needs no endpoint: UCP wireup), AM sends, pending queue and flush.
#include "ud_mcast.h"

#include "iface_glue.h"
#include "uct_mm_common/backoff.h"
#include "ucx_glue.h"

#include <algorithm>
#include <cstring>

namespace uct_ud_mcast {
namespace {

using uct_mm_common::now_ns;
using uct_mm_common::to_ucs_status;

Ep *to_ep(uct_ep_h tl_ep)
{
    return reinterpret_cast<Ep *>(tl_ep);
}

bool can_send(const Session &s)
{
    return s.ready() && s.next_psn() - s.acked_psn() < s.config().window;
}

} // namespace

bool Peer::deliver(uint16_t, const DataBody &d, const uint8_t *payload,
                   uint32_t len) noexcept
{
    if (d.kind != kKindAm || d.am_id >= UCT_AM_ID_MAX) {
        ++iface->engine.counters().drop_malformed;
        return true;
    }
    // No UCT_CB_PARAM_FLAG_DESC: the handler may not keep the data.
    uct_iface_invoke_am(&iface->super, d.am_id, const_cast<uint8_t *>(payload),
                        len, 0);
    return true;
}

void Peer::failed(Status status, uint16_t) noexcept
{
    for (Ep *ep : iface->eps) {
        if (ep->peer == this) {
            uct_iface_handle_ep_err(&iface->super.super, &ep->super.super,
                                    to_ucs_status(status));
        }
    }
}

namespace {

// Point-to-point keys (auth.h): a direction's key derives from its
// receiver's secret, so an iface checks what it receives with its own
// secret alone. The initiator (ep_create) has the peer's full address;
// its JOIN carries the key of the way back boxed under a pad of the
// peer's secret, so the joined iface needs no address of its own to
// answer.
MacKey key_to(const MacKey &receiver_secret, uint64_t from, uint64_t to)
{
    return derive_key(receiver_secret, "ud_mcast p2p", from, to);
}

MacKey box_pad(const MacKey &receiver_secret, uint64_t from, uint64_t to)
{
    return derive_key(receiver_secret, "ud_mcast box", from, to);
}

MacKey xor_keys(const MacKey &a, const uint8_t *b)
{
    MacKey r;
    for (size_t i = 0; i < r.size(); ++i) {
        r[i] = static_cast<uint8_t>(a[i] ^ b[i]);
    }
    return r;
}

// A new peer, the iface at `to`, sent to with `tx_key`; this side's JOINs
// carry `box` (zero when the peer has its key already).
Peer *make_peer(Iface *iface, const PeerAddr &to, const MacKey &box,
                const MacKey &tx_key, uint64_t now)
{
    const uint64_t id = to.id;
    const int handle = iface->wire->resolve(to.wire);
    if (handle < 0) {
        return nullptr;
    }
    auto peer = std::make_unique<Peer>();
    peer->iface = iface;
    SessionConfig cfg = iface->base;
    cfg.key = p2p_session_key(iface->id, id);
    cfg.size = 2;
    cfg.p2p = true;
    cfg.my_index = iface->id < id ? 0 : 1;
    cfg.nonce = static_cast<uint32_t>(mix64(iface->id ^ now)) | 1u;
    cfg.tx_key = tx_key;
    cfg.rx_key = key_to(iface->secret, id, iface->id);
    JoinAddr join; // this side's address, and the box
    local_peer_addr(iface, &join.peer);
    std::memcpy(join.box, box.data(), sizeof(join.box));
    std::memcpy(cfg.join_addr.data(), &join, sizeof(join));
    cfg.join_addr_len = sizeof(join);
    std::vector<int> peers(2, -1);
    peers[cfg.my_index ^ 1] = handle;
    peer->tx = std::make_unique<WireTransmit>(iface->wire.get(), peers, -1,
                                              cfg.my_index);
    peer->session = std::make_unique<Session>(cfg, peer->tx.get(), peer.get(),
                                              &iface->engine.counters(), now);
    Peer *p = peer.get();
    iface->engine.add(p->session.get());
    iface->peers.emplace(id, std::move(peer));
    p->session->progress(now); // first JOIN now, not a tick later
    return p;
}

} // namespace

Peer *peer_get(Iface *iface, const IfaceAddr &addr, uint64_t now)
{
    auto it = iface->peers.find(addr.peer.id);
    if (it != iface->peers.end()) {
        return it->second.get();
    }
    if (addr.peer.id == iface->id || addr.peer.wire_kind != iface->wire_kind) {
        return nullptr;
    }
    MacKey peer_secret;
    std::memcpy(peer_secret.data(), addr.secret, peer_secret.size());
    const MacKey back = key_to(iface->secret, addr.peer.id, iface->id);
    const MacKey box =
        xor_keys(back, box_pad(peer_secret, iface->id, addr.peer.id).data());
    return make_peer(iface, addr.peer, box,
                     key_to(peer_secret, iface->id, addr.peer.id), now);
}

// From iface progress (noexcept): no exception may leave.
Session *P2pMaker::create_p2p(const Packet &join, uint64_t now)
{
    try {
        return create(join, now);
    } catch (...) {
        uct_mm_common::status_from_exception("ud_mcast: p2p session");
        return nullptr;
    }
}

namespace {

// The joiner's address in a p2p JOIN addressed to `iface`; false if the
// JOIN is not one.
bool join_addr_of(const Iface *iface, const Packet &join, JoinAddr *addr)
{
    if (join.join.addr_len != sizeof(*addr) || join.hdr.size != 2) {
        return false;
    }
    std::memcpy(addr, join.join.addr, sizeof(*addr));
    return addr->peer.id != iface->id &&
           join.hdr.key == p2p_session_key(iface->id, addr->peer.id);
}

} // namespace

bool P2pMaker::p2p_rx_key(const Packet &join, MacKey *key)
{
    JoinAddr addr;
    if (!join_addr_of(iface, join, &addr)) {
        return false;
    }
    *key = key_to(iface->secret, addr.peer.id, iface->id);
    return true;
}

// Called for a JOIN the engine authenticated (p2p_rx_key).
Session *P2pMaker::create(const Packet &join, uint64_t now)
{
    JoinAddr addr;
    if (!join_addr_of(iface, join, &addr) ||
        iface->peers.count(addr.peer.id) != 0 ||
        addr.peer.wire_kind != iface->wire_kind) {
        return nullptr;
    }
    if (iface->peers.size() >= iface->max_peers) {
        ++iface->engine.counters().drop_peer_limit;
        return nullptr;
    }
    const MacKey tx_key =
        xor_keys(box_pad(iface->secret, addr.peer.id, iface->id), addr.box);
    Peer *p = make_peer(iface, addr.peer, MacKey{}, tx_key, now);
    return p == nullptr ? nullptr : p->session.get();
}

unsigned ep_progress(Ep *ep) noexcept
{
    unsigned count = 0;
    Session &s = *ep->peer->session;
    while (!ucs_queue_is_empty(&ep->pending) && can_send(s)) {
        auto *priv = ucs_queue_head_elem_non_empty(
            &ep->pending, uct_pending_req_priv_queue_t, queue_elem);
        auto *req = ucs_container_of(priv, uct_pending_req_t, priv);
        ucs_queue_pull_non_empty(&ep->pending);
        if (req->func(req) != UCS_OK) {
            ucs_queue_push_head(&ep->pending, &priv->queue_elem);
            break;
        }
        ++count;
    }
    if (!ep->flushes.empty() && (!s.unacked() || s.state() != Status::kOk)) {
        std::vector<uct_completion_t *> done;
        done.swap(ep->flushes);
        for (uct_completion_t *comp : done) {
            uct_invoke_completion(comp, to_ucs_status(s.state()));
        }
        ++count;
    }
    return count;
}

namespace {

ucs_status_t ep_create_impl(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    if (!(params->field_mask & UCT_EP_PARAM_FIELD_IFACE) ||
        !(params->field_mask & UCT_EP_PARAM_FIELD_IFACE_ADDR)) {
        ucs_error("ud_mcast: ep_create needs an iface and an iface address");
        return UCS_ERR_INVALID_PARAM;
    }
    auto *iface = reinterpret_cast<Iface *>(params->iface);
    IfaceAddr addr;
    std::memcpy(&addr, params->iface_addr, sizeof(addr));
    if (iface->peers.count(addr.peer.id) == 0 &&
        iface->peers.size() >= iface->max_peers) {
        ucs_error("ud_mcast: iface %016llx has %zu peers, the limit "
                  "(UCX_UD_MCAST_MAX_PEERS)",
                  static_cast<unsigned long long>(iface->id),
                  iface->peers.size());
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    Peer *peer = peer_get(iface, addr, now_ns());
    if (peer == nullptr) {
        ucs_error("ud_mcast: peer iface %016llx cannot be reached",
                  static_cast<unsigned long long>(addr.peer.id));
        return UCS_ERR_UNREACHABLE;
    }
    auto *ep = new Ep();
    int init_count = 1;
    const ucs_status_t status = uct_base_ep_t_init(
        &ep->super, &uct_base_ep_t_class, &init_count, &iface->super);
    if (status != UCS_OK) {
        delete ep;
        return status;
    }
    ep->iface = iface;
    ep->peer = peer;
    ucs_queue_head_init(&ep->pending);
    iface->eps.push_back(ep);
    *ep_p = &ep->super.super;
    return UCS_OK;
}

} // namespace

ucs_status_t ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p) noexcept
{
    UCT_MM_GUARD("ud_mcast ep_create", ep_create_impl(params, ep_p));
}

void ep_destroy(uct_ep_h tl_ep) noexcept
{
    Ep *ep = to_ep(tl_ep);
    ep_pending_purge(tl_ep, nullptr, nullptr);
    auto &eps = ep->iface->eps;
    eps.erase(std::remove(eps.begin(), eps.end(), ep), eps.end());
    ucs_class_call_cleanup_chain(&uct_base_ep_t_class, &ep->super, -1);
    delete ep;
}

ucs_status_t ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                         const void *payload, unsigned length) noexcept
{
    Ep *ep = to_ep(tl_ep);
    Session &s = *ep->peer->session;
    if (id >= UCT_AM_ID_MAX ||
        length + sizeof(header) > s.config().max_payload) {
        ucs_error("ud_mcast: am_short id %u, %u bytes: out of range", id,
                  length);
        return UCS_ERR_INVALID_PARAM;
    }
    MsgHead h;
    h.am_id = id;
    return to_ucs_status(s.send_packet(
        h,
        [&](uint8_t *dest) {
            std::memcpy(dest, &header, sizeof(header));
            if (length != 0) {
                std::memcpy(dest + sizeof(header), payload, length);
            }
            return sizeof(header) + length;
        },
        now_ns()));
}

ssize_t ep_am_bcopy(uct_ep_h tl_ep, uint8_t id, uct_pack_callback_t pack_cb,
                    void *arg, unsigned) noexcept
{
    Ep *ep = to_ep(tl_ep);
    Session &s = *ep->peer->session;
    if (id >= UCT_AM_ID_MAX) {
        return UCS_ERR_INVALID_PARAM;
    }
    MsgHead h;
    h.am_id = id;
    size_t length = 0;
    const Status st = s.send_packet(
        h,
        [&](uint8_t *dest) {
            length = pack_cb(dest, arg);
            return length;
        },
        now_ns());
    if (st != Status::kOk) {
        return to_ucs_status(st);
    }
    return static_cast<ssize_t>(length);
}

ucs_status_t ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                            unsigned) noexcept
{
    Ep *ep = to_ep(tl_ep);
    if (ucs_queue_is_empty(&ep->pending) && can_send(*ep->peer->session)) {
        return UCS_ERR_BUSY;
    }
    uct_pending_req_queue_push(&ep->pending, req);
    return UCS_OK;
}

void ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                      void *arg) noexcept
{
    uct_mm_common::purge_pending(&to_ep(tl_ep)->pending, cb, arg);
}

ucs_status_t ep_flush(uct_ep_h tl_ep, unsigned, uct_completion_t *comp) noexcept
{
    Ep *ep = to_ep(tl_ep);
    const Session &s = *ep->peer->session;
    if (s.state() != Status::kOk) {
        return to_ucs_status(s.state());
    }
    if (!s.unacked()) {
        return UCS_OK;
    }
    if (comp != nullptr) {
        try {
            ep->flushes.push_back(comp);
        } catch (...) {
            return UCS_ERR_NO_MEMORY;
        }
    }
    return UCS_INPROGRESS;
}

} // namespace uct_ud_mcast
