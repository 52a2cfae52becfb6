// SPDX-License-Identifier: BSD-3-Clause
// ud_mcast groups (uct_group.h): a GroupChannel over the iface's wire, its
// multicast group joined by session key; completions through UCT.
#include "ud_mcast.h"

#include "group_channel.h"
#include "uct_mm_common/backoff.h"
#include "uct_ud_mcast.h"
#include "ucx_glue.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace uct_ud_mcast {

using uct_mm_common::now_ns;
using uct_mm_common::to_ucs_status;

struct Group {
    uct_group super; ///< must stay first: the ops table
    Iface *iface = nullptr;
    unsigned me = 0;
    unsigned size = 0;
    int wire_group = -1;
    std::unique_ptr<WireTransmit> tx;
    std::unique_ptr<GroupChannel> ch;
};

namespace {

constexpr size_t kMaxLength = 1u << 30;

Group *to_group(uct_group_h g)
{
    return reinterpret_cast<Group *>(g);
}

void complete(void *, void *cookie, Status st)
{
    if (cookie != nullptr) {
        uct_invoke_completion(static_cast<uct_completion_t *>(cookie),
                              to_ucs_status(st));
    }
}

ucs_status_t post(uct_group_h tl_group, const uct_group_msg_t *msg,
                  uct_completion_t *comp, bool send)
{
    Group *g = to_group(tl_group);
    if (msg == nullptr || msg->coll != UCT_GROUP_COLL_BCAST ||
        msg->root >= g->size || (msg->root == g->me) != send ||
        msg->length > kMaxLength ||
        (msg->length != 0 && msg->buffer == nullptr)) {
        ucs_error("ud_mcast: group %s: bad message (BCAST only, root %u of "
                  "%u, %zu bytes)",
                  send ? "send" : "recv", msg ? msg->root : 0u, g->size,
                  msg ? msg->length : 0);
        return UCS_ERR_INVALID_PARAM;
    }
    GroupMsg m;
    m.root = static_cast<uint16_t>(msg->root);
    m.len = static_cast<uint32_t>(msg->length);
    m.tag = msg->tag;
    m.buffer = msg->buffer;
    bool done = false;
    const uint64_t now = now_ns();
    const Status st = send ? g->ch->post_send(m, comp, &done, now)
                           : g->ch->post_recv(m, comp, &done, now);
    if (st != Status::kOk) {
        return to_ucs_status(st);
    }
    return done ? UCS_OK : UCS_INPROGRESS;
}

ucs_status_t group_send(uct_group_h g, const uct_group_msg_t *msg,
                        uct_completion_t *comp) noexcept
{
    UCT_MM_GUARD("ud_mcast group send", post(g, msg, comp, true));
}

ucs_status_t group_recv(uct_group_h g, const uct_group_msg_t *msg,
                        uct_completion_t *comp) noexcept
{
    UCT_MM_GUARD("ud_mcast group recv", post(g, msg, comp, false));
}

ucs_status_t group_status(uct_group_h g) noexcept
{
    return to_ucs_status(to_group(g)->ch->state());
}

void destroy(Group *g) noexcept
{
    Iface *iface = g->iface;
    iface->engine.remove(&g->ch->session());
    iface->wire->leave(g->wire_group);
    auto &v = iface->groups;
    v.erase(std::remove(v.begin(), v.end(), g), v.end());
    delete g;
}

void group_destroy(uct_group_h g) noexcept
{
    destroy(to_group(g));
}

const uct_group_ops_t g_group_ops = {group_send, group_recv, group_status,
                                     group_destroy};

ucs_status_t create(uct_iface_h tl_iface, const uct_group_params_t *params,
                    uct_group_h *group_p)
{
    const uint64_t required =
        UCT_GROUP_PARAM_FIELD_KEY | UCT_GROUP_PARAM_FIELD_MEMBER_INDEX |
        UCT_GROUP_PARAM_FIELD_GROUP_SIZE | UCT_GROUP_PARAM_FIELD_MEMBER_ADDRS;
    if (!is_ud_mcast_iface(tl_iface) || params == nullptr ||
        group_p == nullptr || (params->field_mask & required) != required ||
        params->member_addrs == nullptr ||
        params->member_index >= params->group_size) {
        ucs_error("ud_mcast: group_create needs a ud_mcast iface and every "
                  "group parameter");
        return UCS_ERR_INVALID_PARAM;
    }
    auto *iface = reinterpret_cast<Iface *>(tl_iface);
    if (params->group_size > iface->max_group_size) {
        ucs_error("ud_mcast: group of %u members: the limit is %u",
                  params->group_size, iface->max_group_size);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    std::vector<IfaceAddr> addrs(params->group_size);
    std::vector<int> handles(params->group_size, -1);
    for (unsigned m = 0; m < params->group_size; ++m) {
        if (params->member_addrs[m] == nullptr) {
            return UCS_ERR_INVALID_PARAM;
        }
        std::memcpy(&addrs[m], params->member_addrs[m], sizeof(IfaceAddr));
        if (addrs[m].peer.wire_kind != iface->wire_kind) {
            ucs_error("ud_mcast: member %u is on another wire", m);
            return UCS_ERR_INVALID_PARAM;
        }
        if (m != params->member_index) {
            handles[m] = iface->wire->resolve(addrs[m].peer.wire);
        }
    }
    auto g = std::make_unique<Group>();
    g->super.ops = &g_group_ops;
    g->iface = iface;
    g->me = params->member_index;
    g->size = params->group_size;
    SessionConfig cfg = iface->group;
    cfg.key = mix64(params->group_key ^ mix64(addrs[0].peer.id));
    cfg.my_index = static_cast<uint16_t>(g->me);
    cfg.size = static_cast<uint16_t>(g->size);
    cfg.nonce = static_cast<uint32_t>(mix64(iface->id ^ now_ns())) | 1u;
    MacKey root_secret; // every member has member 0's address
    std::memcpy(root_secret.data(), addrs[0].secret, root_secret.size());
    cfg.tx_key = cfg.rx_key =
        derive_key(root_secret, "ud_mcast group", params->group_key, cfg.key);
    if (iface->engine.find(cfg.key) != nullptr) {
        ucs_error("ud_mcast: a group with key %016llx is live on this iface",
                  static_cast<unsigned long long>(params->group_key));
        return UCS_ERR_INVALID_PARAM;
    }
    const Status st = iface->wire->join(cfg.key, &g->wire_group);
    if (st != Status::kOk) {
        return to_ucs_status(st);
    }
    g->tx = std::make_unique<WireTransmit>(iface->wire.get(), handles,
                                           g->wire_group, cfg.my_index);
    g->ch = std::make_unique<GroupChannel>(
        cfg, iface->max_outstanding, g->tx.get(), &iface->engine.counters(),
        complete, nullptr, now_ns());
    iface->engine.add(&g->ch->session());
    iface->groups.push_back(g.get());
    *group_p = &g.release()->super;
    return UCS_OK;
}

ucs_status_t query(uct_iface_h tl_iface, uct_group_attr_t *attr)
{
    if (!is_ud_mcast_iface(tl_iface) || attr == nullptr) {
        return UCS_ERR_INVALID_PARAM;
    }
    auto *iface = reinterpret_cast<Iface *>(tl_iface);
    attr->cap_flags = UCT_GROUP_CAP_BCAST;
    attr->max_group_size = iface->max_group_size;
    attr->max_outstanding = iface->max_outstanding;
    attr->max_length = kMaxLength;
    // A message that fills a quarter of the window pipelines with the next.
    attr->seg_length =
        std::max<size_t>(iface->group.max_payload,
                         static_cast<size_t>(iface->group.max_payload) *
                             iface->group.window / 4);
    return UCS_OK;
}

ucs_status_t flush(uct_group_h tl_group)
{
    if (tl_group == nullptr || tl_group->ops != &g_group_ops) {
        ucs_error("ud_mcast: group_flush needs a ud_mcast group");
        return UCS_ERR_INVALID_PARAM;
    }
    GroupChannel &ch = *to_group(tl_group)->ch;
    if (ch.state() != Status::kOk) {
        return to_ucs_status(ch.state());
    }
    return ch.session().unacked() ? UCS_INPROGRESS : UCS_OK;
}

} // namespace

void group_destroy_all(Iface *iface) noexcept
{
    while (!iface->groups.empty()) {
        destroy(iface->groups.back());
    }
}

} // namespace uct_ud_mcast

extern "C" __attribute__((visibility("default"))) ucs_status_t
uct_ud_mcast_group_iface_query(uct_iface_h iface, uct_group_attr_t *attr)
{
    UCT_MM_GUARD("uct_ud_mcast_group_iface_query",
                 uct_ud_mcast::query(iface, attr));
}

extern "C" __attribute__((visibility("default"))) ucs_status_t
uct_ud_mcast_group_create(uct_iface_h iface, const uct_group_params_t *params,
                          uct_group_h *group_p)
{
    UCT_MM_GUARD("uct_ud_mcast_group_create",
                 uct_ud_mcast::create(iface, params, group_p));
}

extern "C" __attribute__((visibility("default"))) ucs_status_t
uct_ud_mcast_group_flush(uct_group_h group)
{
    UCT_MM_GUARD("uct_ud_mcast_group_flush", uct_ud_mcast::flush(group));
}
