// SPDX-License-Identifier: BSD-3-Clause
// Opening one UCT iface by component, transport and device name.
#include "ucg_test/uct_iface.h"
#include "ucg_test/check.h"

#include <cstring>

namespace ucg_test {
namespace {

uct_component_h find_component(const std::string &name)
{
    uct_component_h *components;
    unsigned count;
    UCG_CHECK(uct_query_components(&components, &count) == UCS_OK);
    uct_component_h found = nullptr;
    for (unsigned i = 0; i < count; ++i) {
        uct_component_attr_t attr{};
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        UCG_CHECK(uct_component_query(components[i], &attr) == UCS_OK);
        if (name == attr.name) {
            found = components[i];
        }
    }
    uct_release_component_list(components);
    if (found == nullptr) {
        fail_check(__FILE__, __LINE__, "component registered",
                   "no UCT component '" + name + "' (plugin not loaded?)");
    }
    return found;
}

} // namespace

UctIface::UctIface(const UctIfaceSpec &spec, uct_error_handler_t err_handler,
                   void *err_arg)
{
    uct_component_h component = find_component(spec.component);
    uct_md_config_t *md_config;
    UCG_CHECK(uct_md_config_read(component, nullptr, nullptr, &md_config) ==
              UCS_OK);
    const ucs_status_t md_status =
        uct_md_open(component, spec.component.c_str(), md_config, &md);
    uct_config_release(md_config);
    UCG_CHECK(md_status == UCS_OK);
    UCG_CHECK(ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                       &async) == UCS_OK);
    UCG_CHECK(uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker) ==
              UCS_OK);

    uct_iface_config_t *config;
    UCG_CHECK(uct_md_iface_config_read(md, spec.transport.c_str(), nullptr,
                                       nullptr, &config) == UCS_OK);
    for (const auto &[name, value] : spec.config) {
        UCG_CHECK(uct_config_modify(config, name.c_str(), value.c_str()) ==
                  UCS_OK);
    }
    uct_iface_params_t params{};
    params.field_mask =
        UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name = spec.transport.c_str();
    params.mode.device.dev_name = spec.device.c_str();
    if (err_handler != nullptr) {
        params.field_mask |= UCT_IFACE_PARAM_FIELD_ERR_HANDLER |
                             UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
                             UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
        params.err_handler = err_handler;
        params.err_handler_arg = err_arg;
        params.err_handler_flags = 0; // called from the worker progress
    }
    const ucs_status_t status =
        uct_iface_open(md, worker, &params, config, &iface);
    uct_config_release(config);
    UCG_CHECK(status == UCS_OK);
    UCG_CHECK(uct_iface_query(iface, &attr) == UCS_OK);
}

UctIface::~UctIface()
{
    if (iface != nullptr) {
        uct_iface_close(iface);
    }
    if (worker != nullptr) {
        uct_worker_destroy(worker);
    }
    if (async != nullptr) {
        ucs_async_context_destroy(async);
    }
    if (md != nullptr) {
        uct_md_close(md);
    }
}

} // namespace ucg_test
