// SPDX-License-Identifier: BSD-3-Clause
// The mm transports' component and memory domain (see component.h).
#include "component.h"

#include "ucx_glue.h"

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
extern "C" {
#include <ucs/debug/log_def.h>
#include <uct/base/uct_md.h>
}

namespace uct_mm_common {
namespace {

ucs_status_t md_query(uct_md_h, uct_md_attr_t *attr) noexcept
{
    std::memset(&attr->cap, 0, sizeof(attr->cap));
    attr->cap.flags = UCT_MD_FLAG_REG;
    attr->cap.reg_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    attr->cap.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    attr->cap.max_reg = ULONG_MAX;
    attr->rkey_packed_size = 0;
    attr->reg_cost = ucs_linear_func_make(0, 0);
    std::memset(&attr->local_cpus, 0xff, sizeof(attr->local_cpus));
    return UCS_OK;
}

// Nothing to pin: any non-NULL handle will do.
ucs_status_t md_mem_reg(uct_md_h, void *, size_t, unsigned,
                        uct_mem_h *memh_p) noexcept
{
    *memh_p = reinterpret_cast<uct_mem_h>(uintptr_t{1});
    return UCS_OK;
}

ucs_status_t md_mem_dereg(uct_md_h, const uct_md_mem_dereg_params_t *) noexcept
{
    return UCS_OK;
}

ucs_status_t md_mkey_pack(uct_md_h, uct_mem_h,
                          const uct_md_mkey_pack_params_t *, void *) noexcept
{
    return UCS_OK;
}

ucs_status_t md_detect_memory_type(uct_md_h, const void *, size_t,
                                   ucs_memory_type_t *) noexcept
{
    return UCS_ERR_UNSUPPORTED;
}

void md_close(uct_md_h md) noexcept
{
    std::free(md);
}

uct_md_ops_t g_md_ops = {
    md_close,
    md_query,
    nullptr, // mem_alloc: not advertised
    nullptr, // mem_free
    nullptr, // mem_advise
    md_mem_reg,
    md_mem_dereg,
    nullptr, // mem_query
    md_mkey_pack,
    nullptr, // is_sockaddr_accessible: not advertised
    md_detect_memory_type,
};

} // namespace
} // namespace uct_mm_common

extern "C" {

ucs_config_field_t uct_mm_common_md_config_table[] = {
    {"", "", nullptr, 0, UCS_CONFIG_TYPE_TABLE(uct_md_config_table)},
    {nullptr}};

// One md per open, as UCX expects: md_close frees it.
ucs_status_t uct_mm_common_md_open(uct_component_t *component, const char *,
                                   const uct_md_config_t *, uct_md_h *md_p)
{
    auto *md = static_cast<uct_md_t *>(std::calloc(1, sizeof(uct_md_t)));
    if (md == nullptr) {
        ucs_error("%s: no memory for the memory domain", component->name);
        return UCS_ERR_NO_MEMORY;
    }
    md->ops = &uct_mm_common::g_md_ops;
    md->component = component;
    *md_p = md;
    return UCS_OK;
}

ucs_status_t uct_mm_common_cm_open(uct_component_t *, uct_worker_h,
                                   const uct_cm_config_t *, uct_cm_h *)
{
    return UCS_ERR_UNSUPPORTED;
}

// No remote keys: receivers copy from the ring or read the sender by pid.
ucs_status_t uct_mm_common_rkey_unpack(uct_component_t *, const void *,
                                       uct_rkey_t *rkey_p, void **handle_p)
{
    *rkey_p = 0;
    *handle_p = nullptr;
    return UCS_OK;
}

ucs_status_t uct_mm_common_rkey_ptr(uct_component_t *, uct_rkey_t, void *,
                                    uint64_t, void **)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_mm_common_rkey_release(uct_component_t *, uct_rkey_t, void *)
{
    return UCS_OK;
}

void uct_mm_common_md_vfs_init(uct_md_h) {}

void uct_mm_common_register(uct_component_t *component, uct_tl_t *tl)
{
    ucs_list_head_init(&component->tl_list);
    ucs_list_add_tail(&component->tl_list, &tl->list);
    ucs_list_add_tail(&ucs_config_global_list, &tl->config.list);
    uct_component_register(component);
    uct_mm_common::install_ucs_log_sink();
}

void uct_mm_common_unregister(uct_component_t *component, uct_tl_t *tl)
{
    uct_component_unregister(component);
    ucs_list_del(&tl->config.list);
}

} // extern "C"
