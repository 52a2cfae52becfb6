// SPDX-License-Identifier: BSD-3-Clause
// mm_incast groups through uct_group.h: the iface's limits, and a group
// (core/incast_group.h) named from member 0's secret and the group key,
// wrapped by the common glue (progress only while it has work).
#include "mm_incast_bridge.h"

#include "group_glue.h"
#include "incast_group.h"
#include "ucx_glue.h"

#include "uct_mm_common/names.h"

#include <ucs/debug/log_def.h>
#include <uct_mm_incast.h>

#include <memory>

namespace uct_mm_incast {
namespace {

using uct_mm_common::to_ucs_status;

IncastGroupConfig group_config(const uct_mm_incast_group_settings_t &s)
{
    IncastGroupConfig c;
    c.elements = s.ring_size;
    c.seg_bytes = static_cast<std::uint32_t>(s.seg_size);
    c.stream_min = s.stream_thresh;
    c.mode = static_cast<uct_mm_incast_mode_t>(s.mode);
    c.thresholds.atomic_max_bytes = s.auto_atomic_max;
    c.thresholds.locked_min_bytes = s.auto_locked_min;
    c.thresholds.locked_min_group = s.auto_locked_min_group;
    c.thresholds.pair_group = s.auto_pair_group;
    c.thresholds.pair_locked_min_bytes = s.auto_pair_locked_min;
    c.thresholds.gather_batched_max_group = s.auto_gather_batched_max_group;
    c.direct_bytes = static_cast<std::uint32_t>(s.direct_size);
    c.direct_max_group = s.direct_max_group;
    c.max_outstanding = s.max_outstanding;
    c.max_group_size = s.max_group_size;
    c.timeout_ms = static_cast<std::uint32_t>(s.timeout * 1e3);
    c.attach_timeout_ms = static_cast<std::uint32_t>(s.attach_timeout * 1e3);
    return c;
}

ucs_status_t iface_query(uct_iface_h iface, uct_group_attr_t *attr)
{
    uct_mm_incast_group_settings_t s;
    if (attr == nullptr || !uct_mm_incast_iface_group_settings(iface, &s)) {
        ucs_error("mm_incast: group_iface_query needs an mm_incast iface");
        return UCS_ERR_INVALID_PARAM;
    }
    uct_mm_common::fill_group_attr(IncastGroup::limits_of(group_config(s)),
                                   attr);
    return UCS_OK;
}

ucs_status_t create(uct_iface_h iface, const uct_group_params_t *params,
                    uct_group_h *group_p)
{
    uct_mm_incast_group_settings_t s;
    if (!uct_mm_incast_iface_group_settings(iface, &s)) {
        ucs_error("mm_incast: group_create needs an mm_incast iface");
        return UCS_ERR_INVALID_PARAM;
    }
    const ucs_status_t status = uct_mm_common::check_group_params(
        "mm_incast", params, s.max_group_size, group_p);
    if (status != UCS_OK) {
        return status;
    }
    std::uint64_t secret[2];
    uct_mm_incast_iface_addr_secret(params->member_addrs[0], secret);
    IncastGroupConfig c = group_config(s);
    c.name = uct_mm_common::group_segment_name(
        "ucg-mmig", {secret[0], secret[1]}, params->group_key);
    c.member = params->member_index;
    c.size = params->group_size;
    IncastGroup *core = nullptr;
    const Status st = IncastGroup::create(c, &core);
    if (st != Status::kOk) {
        ucs_error("mm_incast: cannot create group member %u of %u: %s",
                  c.member, c.size, uct_mm_common::status_name(st));
        return to_ucs_status(st);
    }
    return uct_mm_common::wrap_group(
        "mm_incast", std::unique_ptr<uct_mm_common::GroupCore>(core),
        static_cast<uct_worker_h>(s.worker), group_p);
}

uct_mm_incast_mode_t msg_mode(uct_group_h group, const uct_group_msg_t *m)
{
    auto *core = dynamic_cast<IncastGroup *>(uct_mm_common::core_of(group));
    if (core == nullptr || m == nullptr) {
        return UCT_MM_INCAST_MODE_LAST;
    }
    uct_mm_common::Message msg;
    msg.coll = static_cast<uct_mm_common::Coll>(m->coll);
    msg.root = m->root;
    msg.op = m->op;
    msg.dtype = m->dtype;
    msg.length = m->length;
    return core->mode_of(msg);
}

ucs_status_t group_direct(uct_group_h group, uct_mm_incast_direct_h *direct_p,
                          size_t *max_length_p)
{
    auto *core = dynamic_cast<IncastGroup *>(uct_mm_common::core_of(group));
    if (core == nullptr || direct_p == nullptr || max_length_p == nullptr) {
        ucs_error("mm_incast: group_direct needs an mm_incast group");
        return UCS_ERR_INVALID_PARAM;
    }
    if (core->state() != Status::kOk) {
        return to_ucs_status(core->state());
    }
    DirectArea *d = core->direct();
    if (d == nullptr) {
        // Not joined yet, or member 0 configured no direct slots.
        return core->joined() ? UCS_ERR_UNSUPPORTED : UCS_ERR_NO_RESOURCE;
    }
    *direct_p = reinterpret_cast<uct_mm_incast_direct_h>(d);
    *max_length_p = d->max_length();
    return UCS_OK;
}

DirectArea *to_area(uct_mm_incast_direct_h direct)
{
    return reinterpret_cast<DirectArea *>(direct);
}

ucs_status_t direct_post(uct_mm_incast_direct_h direct,
                         const uct_mm_incast_direct_msg_t *msg, uint64_t *id_p)
{
    if (direct == nullptr || msg == nullptr || id_p == nullptr) {
        ucs_error("mm_incast: direct_post without a group, message or id");
        return UCS_ERR_INVALID_PARAM;
    }
    // The kinds map one to one; values out of range (read as the ints the
    // caller stored) become the LAST ones, which check() refuses.
    const int coll = uct_mm_common::raw(msg->coll);
    DirectMsg m;
    m.coll = coll >= 0 && coll < static_cast<int>(DirectColl::kLast)
                 ? static_cast<DirectColl>(coll)
                 : DirectColl::kLast;
    m.root = msg->root;
    m.op = uct_mm_common::op_of(msg->op);
    m.dtype = uct_mm_common::dtype_of(msg->dtype);
    m.length = msg->length;
    m.src = msg->src;
    m.dst = msg->dst;
    DirectArea *d = to_area(direct);
    const char *why = "";
    if (d->check(m, &why) != Status::kOk) {
        ucs_error("mm_incast: direct message of %zu bytes (kind %u, root "
                  "%u): %s",
                  m.length, static_cast<unsigned>(coll), m.root, why);
        return UCS_ERR_INVALID_PARAM;
    }
    return to_ucs_status(d->post(m, id_p));
}

} // namespace
} // namespace uct_mm_incast

extern "C" __attribute__((visibility("default"))) ucs_status_t
uct_mm_incast_group_iface_query(uct_iface_h iface, uct_group_attr_t *attr)
{
    UCT_MM_GUARD("uct_mm_incast_group_iface_query",
                 uct_mm_incast::iface_query(iface, attr));
}

extern "C" __attribute__((visibility("default"))) ucs_status_t
uct_mm_incast_group_create(uct_iface_h iface, const uct_group_params_t *params,
                           uct_group_h *group_p)
{
    UCT_MM_GUARD("uct_mm_incast_group_create",
                 uct_mm_incast::create(iface, params, group_p));
}

extern "C" __attribute__((visibility("default"))) uct_mm_incast_mode_t
uct_mm_incast_group_msg_mode(uct_group_h group, const uct_group_msg_t *msg)
{
    try {
        return uct_mm_incast::msg_mode(group, msg);
    } catch (...) {
        return UCT_MM_INCAST_MODE_LAST;
    }
}

extern "C" __attribute__((visibility("default"))) const char *
uct_mm_incast_mode_name(uct_mm_incast_mode_t mode)
{
    return uct_mm_incast::mode_name(mode);
}

extern "C" __attribute__((visibility("default"))) ucs_status_t
uct_mm_incast_group_direct(uct_group_h group, uct_mm_incast_direct_h *direct_p,
                           size_t *max_length_p)
{
    UCT_MM_GUARD("uct_mm_incast_group_direct",
                 uct_mm_incast::group_direct(group, direct_p, max_length_p));
}

extern "C" __attribute__((visibility("default"))) ucs_status_t
uct_mm_incast_direct_post(uct_mm_incast_direct_h direct,
                          const uct_mm_incast_direct_msg_t *msg, uint64_t *id_p)
{
    UCT_MM_GUARD("uct_mm_incast_direct_post",
                 uct_mm_incast::direct_post(direct, msg, id_p));
}

extern "C" __attribute__((visibility("default"))) ucs_status_t
uct_mm_incast_direct_test(uct_mm_incast_direct_h direct, uint64_t id)
{
    return uct_mm_common::to_ucs_status(
        reinterpret_cast<uct_mm_incast::DirectArea *>(direct)->test(id));
}

extern "C" __attribute__((visibility("default"))) void
uct_mm_incast_direct_abandon(uct_mm_incast_direct_h direct, uint64_t id)
{
    reinterpret_cast<uct_mm_incast::DirectArea *>(direct)->abandon(id);
}
