// SPDX-License-Identifier: BSD-3-Clause
// Opening one UCT iface by component, transport and device name.
#include "ucg_test/uct_iface.h"
#include "ucg_test/check.h"

#include "ucg_test/thread_ranks.h"

#include <cerrno>
#include <cstring>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <ucs/sys/sys.h>
#include <unistd.h>

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

int reachable_from_child(const UctIfaceSpec &spec, PeerPlace place)
{
    struct Addresses {
        int state; ///< 0: running, 1: addresses in, 2: no namespace, 3:
                   ///< failed, 4: UCX cached the namespace before the fork
        unsigned char dev[256];
        unsigned char addr[1024];
    };
    SharedMapping mem(sizeof(Addresses));
    auto *a = new (mem.data()) Addresses{};
    const pid_t pid = fork();
    UCG_CHECK(pid >= 0);
    if (pid == 0) {
        if (place == PeerPlace::kOtherIpcNamespace &&
            unshare(CLONE_NEWIPC) != 0) {
            a->state = errno == EPERM ? 2 : 3;
            _exit(0);
        }
        struct stat st {};
        if (place == PeerPlace::kOtherIpcNamespace &&
            (stat("/proc/self/ns/ipc", &st) != 0 ||
             ucs_sys_get_ns(UCS_SYS_NS_TYPE_IPC) != st.st_ino)) {
            a->state = 4; // UCX read it once, in the parent: stale here
            _exit(0);
        }
        try {
            UctIface peer(spec);
            if (peer.attr.device_addr_len > sizeof(a->dev) ||
                peer.attr.iface_addr_len > sizeof(a->addr) ||
                uct_iface_get_device_address(
                    peer.iface,
                    reinterpret_cast<uct_device_addr_t *>(a->dev)) != UCS_OK ||
                uct_iface_get_address(
                    peer.iface,
                    reinterpret_cast<uct_iface_addr_t *>(a->addr)) != UCS_OK) {
                a->state = 3;
                _exit(0);
            }
            a->state = 1;
        } catch (...) {
            a->state = 3;
        }
        _exit(0);
    }
    int status = 0;
    UCG_CHECK(waitpid(pid, &status, 0) == pid);
    UCG_CHECK(a->state == 1 || a->state == 2 || a->state == 4);
    if (a->state != 1) {
        return a->state == 2 ? -1 : -2;
    }
    const UctIface iface(spec); // after the fork: the child read its own
    return uct_iface_is_reachable(iface.iface,
                                  reinterpret_cast<uct_device_addr_t *>(a->dev),
                                  reinterpret_cast<uct_iface_addr_t *>(a->addr))
               ? 1
               : 0;
}

} // namespace ucg_test
