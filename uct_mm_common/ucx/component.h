/* SPDX-License-Identifier: BSD-3-Clause
 * The component and memory domain every mm transport shares, and their
 * registration from a plugin's constructor; C and C++ (mm_incast's glue is
 * C). The transports copy through shared memory or read the sender with
 * CMA, so the md pins nothing: it advertises REG with a token handle so that
 * ucx_perftest can allocate and UCP enables zero-copy protocols, as UCX's
 * own cma md does. */
#ifndef UCT_MM_COMMON_COMPONENT_H_
#define UCT_MM_COMMON_COMPONENT_H_

/* UCX's private headers carry no extern "C" guards of their own. */
#ifdef __cplusplus
extern "C" {
#endif

#include <uct/base/uct_component.h>
#include <uct/base/uct_iface.h>

/* The component's callbacks; use them through the initializer below. */
extern ucs_config_field_t uct_mm_common_md_config_table[];
ucs_status_t uct_mm_common_md_open(uct_component_t *component,
                                   const char *md_name,
                                   const uct_md_config_t *config,
                                   uct_md_h *md_p);
ucs_status_t uct_mm_common_cm_open(uct_component_t *component,
                                   uct_worker_h worker,
                                   const uct_cm_config_t *config,
                                   uct_cm_h *cm_p);
ucs_status_t uct_mm_common_rkey_unpack(uct_component_t *component,
                                       const void *rkey_buffer,
                                       uct_rkey_t *rkey_p, void **handle_p);
ucs_status_t uct_mm_common_rkey_ptr(uct_component_t *component, uct_rkey_t rkey,
                                    void *handle, uint64_t raddr,
                                    void **laddr_p);
ucs_status_t uct_mm_common_rkey_release(uct_component_t *component,
                                        uct_rkey_t rkey, void *handle);
void uct_mm_common_md_vfs_init(uct_md_h md);

/**
 * A static uct_component_t called `_name` (a string literal), whose md
 * configuration is `_md_config_name` with prefix `_md_prefix` (after "UCX_").
 * Positional, so that C and C++ both accept it.
 */
#define UCT_MM_COMMON_COMPONENT_INITIALIZER(_name, _md_config_name,            \
                                            _md_prefix)                        \
    {                                                                          \
        _name, uct_md_query_single_md_resource, uct_mm_common_md_open,         \
            uct_mm_common_cm_open, uct_mm_common_rkey_unpack,                  \
            uct_mm_common_rkey_ptr, uct_mm_common_rkey_release,                \
            {_md_config_name,                                                  \
             _md_prefix,                                                       \
             uct_mm_common_md_config_table,                                    \
             sizeof(uct_md_config_t),                                          \
             {NULL, NULL}},                                                    \
            {"", "", NULL, 0, {NULL, NULL}}, {NULL, NULL}, {NULL, NULL}, 0,    \
            uct_mm_common_md_vfs_init                                          \
    }

/**
 * Adds `tl` to `component`, the transport's configuration table to UCS's
 * list (so `ucx_info -c` shows it), then registers the component (which adds
 * its md/cm tables itself: adding them again would corrupt the list), and
 * routes the mm core's log to ucs_log. From the plugin's constructor.
 */
void uct_mm_common_register(uct_component_t *component, uct_tl_t *tl);

/** Undoes uct_mm_common_register, from the plugin's destructor. */
void uct_mm_common_unregister(uct_component_t *component, uct_tl_t *tl);

/**
 * A plugin's constructor and destructor, named after `_name` (an
 * identifier), registering `_component` and `_tl` (pointers) when the
 * library is loaded (linked or LD_PRELOADed: UCX 1.13 loads only its
 * built-in modules) and unregistering them when it is unloaded.
 */
#define UCT_MM_COMMON_PLUGIN(_name, _component, _tl)                           \
    __attribute__((constructor)) static void _name##_register(void)            \
    {                                                                          \
        uct_mm_common_register(_component, _tl);                               \
    }                                                                          \
    __attribute__((destructor)) static void _name##_unregister(void)           \
    {                                                                          \
        uct_mm_common_unregister(_component, _tl);                             \
    }

#ifdef __cplusplus
}
#endif

#endif
