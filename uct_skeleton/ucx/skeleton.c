/* SPDX-License-Identifier: BSD-3-Clause
 * ucg_skel: the smallest out-of-tree UCT transport that proves the loading
 * path (DESIGN.md section 2). A library constructor registers a component
 * with one memory domain and one loopback transport; stock UCX tools see it
 * when the library is LD_PRELOADed. Active messages sent on an endpoint are
 * delivered to the same iface, so its only peer is itself. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <ucs/sys/string.h>
#include <ucs/type/class.h>
#include <uct/base/uct_component.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>

#include <string.h>

#define UCG_SKEL_NAME "ucg_skel"

typedef struct {
    uct_iface_config_t super;
    size_t max_short; /* bytes, header included */
} ucg_skel_iface_config_t;

typedef struct {
    uct_base_iface_t super;
    uint64_t id;      /* identifies this iface in its address */
    size_t max_short; /* bytes, header included */
    char buffer[256]; /* the message in flight; delivery is synchronous */
} ucg_skel_iface_t;

typedef struct {
    uct_base_ep_t super;
} ucg_skel_ep_t;

static ucs_config_field_t ucg_skel_iface_config_table[] = {
    {"", "", NULL, ucs_offsetof(ucg_skel_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},
    {"MAX_SHORT", "64", "Largest active message, header included (<= 256)",
     ucs_offsetof(ucg_skel_iface_config_t, max_short),
     UCS_CONFIG_TYPE_MEMUNITS},
    {NULL}};

static ucs_config_field_t ucg_skel_md_config_table[] = {
    {"", "", NULL, 0, UCS_CONFIG_TYPE_TABLE(uct_md_config_table)}, {NULL}};

static uct_component_t ucg_skel_component;
static uct_iface_ops_t ucg_skel_iface_ops;

static ucs_status_t ucg_skel_iface_query(uct_iface_h tl_iface,
                                         uct_iface_attr_t *attr)
{
    ucg_skel_iface_t *iface = ucs_derived_of(tl_iface, ucg_skel_iface_t);

    uct_base_iface_query(&iface->super, attr);
    attr->iface_addr_len = sizeof(iface->id);
    attr->device_addr_len = 0;
    attr->ep_addr_len = 0;
    attr->cap.flags = UCT_IFACE_FLAG_CONNECT_TO_IFACE |
                      UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_CB_SYNC;
    attr->cap.am.max_short = iface->max_short;
    attr->cap.am.max_iov = 1;
    attr->cap.am.opt_zcopy_align = 1;
    attr->cap.am.align_mtu = 1;
    attr->latency = ucs_linear_func_make(0, 0);
    attr->bandwidth.dedicated = 1000.0 * UCS_MBYTE;
    attr->bandwidth.shared = 0;
    attr->overhead = 10e-9;
    attr->priority = 0;
    return UCS_OK;
}

static ucs_status_t ucg_skel_iface_get_address(uct_iface_h tl_iface,
                                               uct_iface_addr_t *addr)
{
    ucg_skel_iface_t *iface = ucs_derived_of(tl_iface, ucg_skel_iface_t);

    memcpy(addr, &iface->id, sizeof(iface->id));
    return UCS_OK;
}

static int ucg_skel_iface_is_reachable(const uct_iface_h tl_iface,
                                       const uct_device_addr_t *dev_addr,
                                       const uct_iface_addr_t *iface_addr)
{
    ucg_skel_iface_t *iface = ucs_derived_of(tl_iface, ucg_skel_iface_t);

    return (iface_addr != NULL) &&
           (memcmp(iface_addr, &iface->id, sizeof(iface->id)) == 0);
}

static ucs_status_t ucg_skel_ep_am_short(uct_ep_h tl_ep, uint8_t id,
                                         uint64_t header, const void *payload,
                                         unsigned length)
{
    ucg_skel_iface_t *iface = ucs_derived_of(tl_ep->iface, ucg_skel_iface_t);
    size_t total = sizeof(header) + length;

    UCT_CHECK_AM_ID(id);
    UCT_CHECK_LENGTH(total, 0, iface->max_short, "am_short");
    memcpy(iface->buffer, &header, sizeof(header));
    memcpy(iface->buffer + sizeof(header), payload, length);
    return uct_iface_invoke_am(&iface->super, id, iface->buffer, total, 0);
}

static UCS_CLASS_INIT_FUNC(ucg_skel_ep_t, const uct_ep_params_t *params)
{
    ucg_skel_iface_t *iface = ucs_derived_of(params->iface, ucg_skel_iface_t);

    UCS_CLASS_CALL_SUPER_INIT(uct_base_ep_t, &iface->super);
    return UCS_OK;
}

static UCS_CLASS_CLEANUP_FUNC(ucg_skel_ep_t) {}

UCS_CLASS_DEFINE(ucg_skel_ep_t, uct_base_ep_t);
static UCS_CLASS_DEFINE_NEW_FUNC(ucg_skel_ep_t, uct_ep_t,
                                 const uct_ep_params_t *);
static UCS_CLASS_DEFINE_DELETE_FUNC(ucg_skel_ep_t, uct_ep_t);

static UCS_CLASS_INIT_FUNC(ucg_skel_iface_t, uct_md_h md, uct_worker_h worker,
                           const uct_iface_params_t *params,
                           const uct_iface_config_t *tl_config)
{
    const ucg_skel_iface_config_t *config =
        ucs_derived_of(tl_config, ucg_skel_iface_config_t);

    UCS_CLASS_CALL_SUPER_INIT(uct_base_iface_t, &ucg_skel_iface_ops,
                              &uct_base_iface_internal_ops, md, worker, params,
                              tl_config UCS_STATS_ARG(NULL)
                                  UCS_STATS_ARG(UCG_SKEL_NAME));
    if (config->max_short > sizeof(self->buffer) ||
        config->max_short < sizeof(uint64_t)) {
        ucs_error("UCX_UCG_SKEL_MAX_SHORT=%zu is outside [8, %zu]",
                  config->max_short, sizeof(self->buffer));
        return UCS_ERR_INVALID_PARAM;
    }
    self->id = ucs_generate_uuid((uintptr_t)self);
    self->max_short = config->max_short;
    return UCS_OK;
}

static UCS_CLASS_CLEANUP_FUNC(ucg_skel_iface_t) {}

UCS_CLASS_DEFINE(ucg_skel_iface_t, uct_base_iface_t);
static UCS_CLASS_DEFINE_NEW_FUNC(ucg_skel_iface_t, uct_iface_t, uct_md_h,
                                 uct_worker_h, const uct_iface_params_t *,
                                 const uct_iface_config_t *);
static UCS_CLASS_DEFINE_DELETE_FUNC(ucg_skel_iface_t, uct_iface_t);

static uct_iface_ops_t ucg_skel_iface_ops = {
    .ep_am_short = ucg_skel_ep_am_short,
    .ep_flush = uct_base_ep_flush,
    .ep_fence = uct_base_ep_fence,
    .ep_pending_add = (uct_ep_pending_add_func_t)ucs_empty_function_return_busy,
    .ep_pending_purge = (uct_ep_pending_purge_func_t)ucs_empty_function,
    .ep_create = UCS_CLASS_NEW_FUNC_NAME(ucg_skel_ep_t),
    .ep_destroy = UCS_CLASS_DELETE_FUNC_NAME(ucg_skel_ep_t),
    .iface_flush = uct_base_iface_flush,
    .iface_fence = uct_base_iface_fence,
    .iface_progress_enable =
        (uct_iface_progress_enable_func_t)ucs_empty_function,
    .iface_progress_disable =
        (uct_iface_progress_disable_func_t)ucs_empty_function,
    .iface_progress = (uct_iface_progress_func_t)ucs_empty_function_return_zero,
    .iface_close = UCS_CLASS_DELETE_FUNC_NAME(ucg_skel_iface_t),
    .iface_query = ucg_skel_iface_query,
    .iface_get_device_address =
        (uct_iface_get_device_address_func_t)ucs_empty_function_return_success,
    .iface_get_address = ucg_skel_iface_get_address,
    .iface_is_reachable = ucg_skel_iface_is_reachable};

static ucs_status_t ucg_skel_query_devices(uct_md_h md,
                                           uct_tl_device_resource_t **devices_p,
                                           unsigned *num_devices_p)
{
    return uct_single_device_resource(md, "loop", UCT_DEVICE_TYPE_SELF,
                                      UCS_SYS_DEVICE_ID_UNKNOWN, devices_p,
                                      num_devices_p);
}

static ucs_status_t ucg_skel_md_query(uct_md_h md, uct_md_attr_t *attr)
{
    memset(&attr->cap, 0, sizeof(attr->cap));
    attr->cap.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    attr->rkey_packed_size = 0;
    attr->reg_cost = ucs_linear_func_make(0, 0);
    memset(&attr->local_cpus, 0xff, sizeof(attr->local_cpus));
    return UCS_OK;
}

static ucs_status_t ucg_skel_md_open(uct_component_t *component,
                                     const char *md_name,
                                     const uct_md_config_t *config,
                                     uct_md_h *md_p)
{
    static uct_md_ops_t ops = {.close = (uct_md_close_func_t)ucs_empty_function,
                               .query = ucg_skel_md_query,
                               .detect_memory_type =
                                   (uct_md_detect_memory_type_func_t)
                                       ucs_empty_function_return_unsupported};
    static uct_md_t md = {.ops = &ops, .component = &ucg_skel_component};

    *md_p = &md;
    return UCS_OK;
}

static uct_component_t ucg_skel_component = {
    .query_md_resources = uct_md_query_single_md_resource,
    .md_open = ucg_skel_md_open,
    .cm_open =
        (uct_component_cm_open_func_t)ucs_empty_function_return_unsupported,
    .rkey_unpack =
        (uct_component_rkey_unpack_func_t)ucs_empty_function_return_unsupported,
    .rkey_ptr =
        (uct_component_rkey_ptr_func_t)ucs_empty_function_return_unsupported,
    .rkey_release =
        (uct_component_rkey_release_func_t)ucs_empty_function_return_success,
    .name = UCG_SKEL_NAME,
    .md_config = {.name = "ucg_skel memory domain",
                  .prefix = "UCG_SKEL_",
                  .table = ucg_skel_md_config_table,
                  .size = sizeof(uct_md_config_t)},
    .cm_config = UCS_CONFIG_EMPTY_GLOBAL_LIST_ENTRY,
    .tl_list = UCT_COMPONENT_TL_LIST_INITIALIZER(&ucg_skel_component),
    .flags = 0,
    .md_vfs_init = (uct_component_md_vfs_init_func_t)ucs_empty_function};

static uct_tl_t ucg_skel_tl = {
    .name = UCG_SKEL_NAME,
    .query_devices = ucg_skel_query_devices,
    .iface_open = UCS_CLASS_NEW_FUNC_NAME(ucg_skel_iface_t),
    .config = {.name = "ucg_skel transport",
               .prefix = "UCG_SKEL_",
               .table = ucg_skel_iface_config_table,
               .size = sizeof(ucg_skel_iface_config_t)}};

/* Registration, when the library is loaded: the transport into the
 * component, its config table into UCS's global list (so ucx_info -c lists
 * UCX_UCG_SKEL_*), then the component, which adds its md/cm config tables
 * itself (adding them twice would corrupt the list). */
__attribute__((constructor)) static void ucg_skel_register(void)
{
    ucs_list_add_tail(&ucg_skel_component.tl_list, &ucg_skel_tl.list);
    ucs_list_add_tail(&ucs_config_global_list, &ucg_skel_tl.config.list);
    uct_component_register(&ucg_skel_component);
}

__attribute__((destructor)) static void ucg_skel_unregister(void)
{
    uct_component_unregister(&ucg_skel_component);
    ucs_list_del(&ucg_skel_tl.config.list);
}
