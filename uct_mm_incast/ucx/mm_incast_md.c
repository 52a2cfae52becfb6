/* SPDX-License-Identifier: BSD-3-Clause
 * mm_incast memory domain and component, and their registration from the
 * library constructor (UCX 1.13 loads only its built-in modules, so stock
 * tools see this transport when the library is LD_PRELOADed). The
 * transport copies (short and bcopy), so registration is a no-op that
 * exists because uct_iface_mem_alloc (ucx_perftest) needs it. */
#include "mm_incast_iface.h"

#include <limits.h>
#include <string.h>

static ucs_config_field_t uct_mm_incast_md_config_table[] = {
    {"", "", NULL, 0, UCS_CONFIG_TYPE_TABLE(uct_md_config_table)}, {NULL}};

static ucs_status_t uct_mm_incast_md_query(uct_md_h md, uct_md_attr_t *attr)
{
    memset(&attr->cap, 0, sizeof(attr->cap));
    attr->cap.flags = UCT_MD_FLAG_REG;
    attr->cap.reg_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    attr->cap.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
    attr->cap.max_reg = ULONG_MAX;
    attr->rkey_packed_size = 0;
    attr->reg_cost = ucs_linear_func_make(0, 0);
    memset(&attr->local_cpus, 0xff, sizeof(attr->local_cpus));
    return UCS_OK;
}

static ucs_status_t uct_mm_incast_mem_reg(uct_md_h md, void *address,
                                          size_t length, unsigned flags,
                                          uct_mem_h *memh_p)
{
    *memh_p = (uct_mem_h)address; /* any non-NULL token: nothing to pin */
    return (address != NULL) ? UCS_OK : UCS_ERR_INVALID_PARAM;
}

static ucs_status_t uct_mm_incast_rkey_unpack(uct_component_t *component,
                                              const void *rkey_buffer,
                                              uct_rkey_t *rkey_p,
                                              void **handle_p)
{
    *rkey_p = 0; /* no remote access: the rkey is never used */
    *handle_p = NULL;
    return UCS_OK;
}

static ucs_status_t uct_mm_incast_md_open(uct_component_t *component,
                                          const char *md_name,
                                          const uct_md_config_t *config,
                                          uct_md_h *md_p)
{
    static uct_md_ops_t ops = {
        .close = (uct_md_close_func_t)ucs_empty_function,
        .query = uct_mm_incast_md_query,
        .mem_reg = uct_mm_incast_mem_reg,
        .mem_dereg = (uct_md_mem_dereg_func_t)ucs_empty_function_return_success,
        .mkey_pack = (uct_md_mkey_pack_func_t)ucs_empty_function_return_success,
        .detect_memory_type = (uct_md_detect_memory_type_func_t)
            ucs_empty_function_return_unsupported};
    static uct_md_t md = {.ops = &ops, .component = &uct_mm_incast_component};

    *md_p = &md;
    return UCS_OK;
}

uct_component_t uct_mm_incast_component = {
    .query_md_resources = uct_md_query_single_md_resource,
    .md_open = uct_mm_incast_md_open,
    .cm_open =
        (uct_component_cm_open_func_t)ucs_empty_function_return_unsupported,
    .rkey_unpack = uct_mm_incast_rkey_unpack,
    .rkey_ptr =
        (uct_component_rkey_ptr_func_t)ucs_empty_function_return_unsupported,
    .rkey_release =
        (uct_component_rkey_release_func_t)ucs_empty_function_return_success,
    .name = UCT_MM_INCAST_NAME,
    .md_config = {.name = "mm_incast memory domain",
                  .prefix = "MM_INCAST_MD_",
                  .table = uct_mm_incast_md_config_table,
                  .size = sizeof(uct_md_config_t)},
    .cm_config = UCS_CONFIG_EMPTY_GLOBAL_LIST_ENTRY,
    .tl_list = UCT_COMPONENT_TL_LIST_INITIALIZER(&uct_mm_incast_component),
    .flags = 0,
    .md_vfs_init = (uct_component_md_vfs_init_func_t)ucs_empty_function};

/* The transport into the component and its config table into UCS's list
 * (so `ucx_info -c` shows UCX_MM_INCAST_*), then the component, which adds
 * its own md/cm tables. */
__attribute__((constructor)) static void uct_mm_incast_register(void)
{
    uct_mm_incast_core_init();
    ucs_list_add_tail(&uct_mm_incast_component.tl_list, &uct_mm_incast_tl.list);
    ucs_list_add_tail(&ucs_config_global_list, &uct_mm_incast_tl.config.list);
    uct_component_register(&uct_mm_incast_component);
}

__attribute__((destructor)) static void uct_mm_incast_unregister(void)
{
    uct_component_unregister(&uct_mm_incast_component);
    ucs_list_del(&uct_mm_incast_tl.config.list);
}
