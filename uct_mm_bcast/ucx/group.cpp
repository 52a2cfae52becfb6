// SPDX-License-Identifier: BSD-3-Clause
// mm_bcast groups through uct_group.h: the iface's limits, and a group
// (core/seq_group.h) named from member 0's secret and the group key,
// wrapped by the common glue (progress only while it has work).
#include "mm_bcast.h"

#include "group_glue.h"
#include "seq_group.h"
#include "uct_mm_bcast.h"
#include "ucx_glue.h"

#include <cstring>
#include <memory>

namespace uct_mm_bcast {
namespace {

using uct_mm_common::to_ucs_status;

SeqGroupConfig group_config(const Iface *iface)
{
    const GroupSettings &g = iface->group;
    SeqGroupConfig c;
    c.geo.num_slots = g.ring_size;
    c.geo.seg_bytes = g.seg_size;
    c.cma_min = g.cma_thresh;
    c.cma_max = g.cma_max;
    c.stream_min = g.stream_thresh;
    c.max_outstanding = g.max_outstanding;
    c.timeout_ms = g.timeout_ms;
    c.attach_timeout_ms = g.attach_timeout_ms;
    c.max_group_size = g.max_group_size;
    return c;
}

ucs_status_t iface_query(uct_iface_h tl_iface, uct_group_attr_t *attr)
{
    if (!is_mm_bcast_iface(tl_iface) || attr == nullptr) {
        ucs_error("mm_bcast: group_iface_query needs an mm_bcast iface");
        return UCS_ERR_INVALID_PARAM;
    }
    uct_mm_common::fill_group_attr(
        SeqGroup::limits_of(
            group_config(reinterpret_cast<const Iface *>(tl_iface))),
        attr);
    return UCS_OK;
}

ucs_status_t create(uct_iface_h tl_iface, const uct_group_params_t *params,
                    uct_group_h *group_p)
{
    if (!is_mm_bcast_iface(tl_iface)) {
        ucs_error("mm_bcast: group_create needs an mm_bcast iface");
        return UCS_ERR_INVALID_PARAM;
    }
    auto *iface = reinterpret_cast<Iface *>(tl_iface);
    ucs_status_t status = uct_mm_common::check_group_params(
        "mm_bcast", params, iface->group.max_group_size, group_p);
    if (status != UCS_OK) {
        return status;
    }
    IfaceAddr first;
    std::memcpy(&first, params->member_addrs[0], sizeof(first));
    SeqGroupConfig c = group_config(iface);
    c.name = uct_mm_common::group_segment_name(
        "ucg-mmbg", {first.secret[0], first.secret[1]}, params->group_key);
    c.member = params->member_index;
    c.size = params->group_size;
    if ((params->field_mask & UCT_GROUP_PARAM_FIELD_FLAGS) &&
        (params->flags & UCT_GROUP_FLAG_NO_CMA)) {
        c.cma_min = ~std::size_t{0};
    }
    SeqGroup *core = nullptr;
    const Status st = SeqGroup::create(c, &core);
    if (st != Status::kOk) {
        ucs_error("mm_bcast: cannot create group member %u of %u: %s", c.member,
                  c.size, uct_mm_common::status_name(st));
        return to_ucs_status(st);
    }
    return uct_mm_common::wrap_group(
        "mm_bcast", std::unique_ptr<uct_mm_common::GroupCore>(core),
        reinterpret_cast<uct_worker_h>(iface->super.worker), group_p);
}

} // namespace
} // namespace uct_mm_bcast

extern "C" __attribute__((visibility("default"))) ucs_status_t
uct_mm_bcast_group_iface_query(uct_iface_h iface, uct_group_attr_t *attr)
{
    UCT_MM_GUARD("uct_mm_bcast_group_iface_query",
                 uct_mm_bcast::iface_query(iface, attr));
}

extern "C" __attribute__((visibility("default"))) ucs_status_t
uct_mm_bcast_group_create(uct_iface_h iface, const uct_group_params_t *params,
                          uct_group_h *group_p)
{
    UCT_MM_GUARD("uct_mm_bcast_group_create",
                 uct_mm_bcast::create(iface, params, group_p));
}
