// SPDX-License-Identifier: BSD-3-Clause
// mm_bcast registration: configuration table (UCX_MM_BCAST_*), memory
// domain, component and transport, registered from the library constructor.
#include "mm_bcast.h"

#include "ucx_glue.h"

#include <climits>
#include <cstring>

namespace uct_mm_bcast {
namespace {

ucs_config_field_t g_iface_config_table[] = {
    {"", "", nullptr, ucs_offsetof(IfaceConfig, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},
    {"FIFO_SIZE", "64",
     "Slots of every ring (receive FIFO and group ring), a power of two.",
     ucs_offsetof(IfaceConfig, fifo_size), UCS_CONFIG_TYPE_UINT},
    {"SEG_SIZE", "8256",
     "Bytes per ring slot: a 16-byte header and the payload (am_bcopy "
     "limit); a multiple of 64.",
     ucs_offsetof(IfaceConfig, seg_size), UCS_CONFIG_TYPE_MEMUNITS},
    {"MAX_SHORT", "256", "am_short limit in bytes, its 8-byte header included.",
     ucs_offsetof(IfaceConfig, max_short), UCS_CONFIG_TYPE_MEMUNITS},
    {"MAX_ZCOPY", "1m",
     "am_zcopy limit: receivers copy from the sender with process_vm_readv.",
     ucs_offsetof(IfaceConfig, max_zcopy), UCS_CONFIG_TYPE_MEMUNITS},
    {"MAX_IOV", "8", "am_zcopy iov entries.",
     ucs_offsetof(IfaceConfig, max_iov), UCS_CONFIG_TYPE_UINT},
    {"MAX_GROUP_SIZE", "64", "Largest group endpoint (at most 256 members).",
     ucs_offsetof(IfaceConfig, max_group_size), UCS_CONFIG_TYPE_UINT},
    {"TIMEOUT", "2s",
     "Stall after which the members' processes are checked; a dead member "
     "fails the endpoint with UCS_ERR_CONNECTION_RESET.",
     ucs_offsetof(IfaceConfig, timeout), UCS_CONFIG_TYPE_TIME},
    {"ATTACH_TIMEOUT", "10s",
     "How long a group member waits for member 0 to create the segment.",
     ucs_offsetof(IfaceConfig, attach_timeout), UCS_CONFIG_TYPE_TIME},
    {nullptr}};

ucs_config_field_t g_md_config_table[] = {
    {"", "", nullptr, 0, UCS_CONFIG_TYPE_TABLE(uct_md_config_table)},
    {nullptr}};

// No registration is needed: receivers read the sender's memory with CMA.
// The md still advertises REG (with a dummy handle) so that UCP enables
// zero-copy protocols, as UCX's cma md does.
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

ucs_status_t cm_open(uct_component_t *, uct_worker_h, const uct_cm_config_t *,
                     uct_cm_h *) noexcept
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t rkey_ptr(uct_component_t *, uct_rkey_t, void *, uint64_t,
                      void **) noexcept
{
    return UCS_ERR_UNSUPPORTED;
}
void md_close(uct_md_h) noexcept {}

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

uct_md_t g_md = {&g_md_ops, &g_component};

ucs_status_t md_open(uct_component_t *, const char *, const uct_md_config_t *,
                     uct_md_h *md_p) noexcept
{
    *md_p = &g_md;
    return UCS_OK;
}

ucs_status_t rkey_unpack(uct_component_t *, const void *, uct_rkey_t *rkey_p,
                         void **handle_p) noexcept
{
    *rkey_p = 0;
    *handle_p = nullptr;
    return UCS_OK;
}

ucs_status_t rkey_release(uct_component_t *, uct_rkey_t, void *) noexcept
{
    return UCS_OK;
}

ucs_status_t query_devices(uct_md_h md, uct_tl_device_resource_t **devices_p,
                           unsigned *num_p) noexcept
{
    return uct_single_device_resource(
        md, UCT_SM_DEVICE_NAME, UCT_DEVICE_TYPE_SHM, UCS_SYS_DEVICE_ID_UNKNOWN,
        devices_p, num_p);
}

void md_vfs_init(uct_md_h) noexcept {}

uct_tl_t g_tl = {"mm_bcast",
                 query_devices,
                 iface_open,
                 {"mm_bcast transport",
                  "MM_BCAST_",
                  g_iface_config_table,
                  sizeof(IfaceConfig),
                  {}},
                 {}};

} // namespace

uct_component_t g_component = {"mm_bcast",
                               uct_md_query_single_md_resource,
                               md_open,
                               cm_open,
                               rkey_unpack,
                               rkey_ptr,
                               rkey_release,
                               {"mm_bcast memory domain",
                                "MM_BCAST_",
                                g_md_config_table,
                                sizeof(uct_md_config_t),
                                {}},
                               UCS_CONFIG_EMPTY_GLOBAL_LIST_ENTRY,
                               {},
                               {},
                               0,
                               md_vfs_init};

} // namespace uct_mm_bcast

// Registration when the library is loaded (LD_PRELOAD or linked): the
// transport into the component, its config table into UCS's list, then the
// component (which adds its md/cm tables itself; adding them twice would
// corrupt the list).
__attribute__((constructor)) static void mm_bcast_register()
{
    using namespace uct_mm_bcast;
    ucs_list_head_init(&g_component.tl_list);
    ucs_list_add_tail(&g_component.tl_list, &g_tl.list);
    ucs_list_add_tail(&ucs_config_global_list, &g_tl.config.list);
    uct_component_register(&g_component);
    uct_mm_common::install_ucs_log_sink();
}

__attribute__((destructor)) static void mm_bcast_unregister()
{
    using namespace uct_mm_bcast;
    uct_component_unregister(&g_component);
    ucs_list_del(&g_tl.config.list);
}
