// SPDX-License-Identifier: BSD-3-Clause
// One rank's UCT objects for the mm_bcast UCT tests: the component, md,
// worker and iface, opened through the public UCT API (the plugin is
// linked, so its constructor registered the transport).
#pragma once

#include "uct_mm_bcast.h"

#include "ucg_test/check.h"

#include <cstring>
#include <string>
#include <uct/api/uct.h>

namespace uct_mm_bcast::test {

struct UctRank {
    ucs_async_context_t *async = nullptr;
    uct_worker_h worker = nullptr;
    uct_md_h md = nullptr;
    uct_iface_h iface = nullptr;
    uct_iface_attr_t attr{};

    /// Opens everything; `env` is set before reading the configuration.
    UctRank()
    {
        uct_component_h *comps;
        unsigned num;
        UCG_CHECK(uct_query_components(&comps, &num) == UCS_OK);
        uct_component_h comp = nullptr;
        for (unsigned i = 0; i < num; ++i) {
            uct_component_attr_t ca{};
            ca.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
            uct_component_query(comps[i], &ca);
            if (std::strcmp(ca.name, "mm_bcast") == 0) {
                comp = comps[i];
            }
        }
        UCG_CHECK(comp != nullptr);
        uct_md_config_t *md_cfg;
        UCG_CHECK(uct_md_config_read(comp, nullptr, nullptr, &md_cfg) ==
                  UCS_OK);
        UCG_CHECK(uct_md_open(comp, "mm_bcast", md_cfg, &md) == UCS_OK);
        uct_config_release(md_cfg);
        uct_release_component_list(comps);
        UCG_CHECK(ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                           &async) == UCS_OK);
        UCG_CHECK(uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker) ==
                  UCS_OK);
        uct_iface_config_t *cfg;
        UCG_CHECK(uct_md_iface_config_read(md, "mm_bcast", nullptr, nullptr,
                                           &cfg) == UCS_OK);
        uct_iface_params_t params{};
        params.field_mask =
            UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
        params.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
        params.mode.device.tl_name = "mm_bcast";
        params.mode.device.dev_name = "memory";
        UCG_CHECK(uct_iface_open(md, worker, &params, cfg, &iface) == UCS_OK);
        uct_config_release(cfg);
        UCG_CHECK(uct_iface_query(iface, &attr) == UCS_OK);
        uct_iface_progress_enable(iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    }
    ~UctRank()
    {
        uct_iface_close(iface);
        uct_worker_destroy(worker);
        ucs_async_context_destroy(async);
        uct_md_close(md);
    }
    UctRank(const UctRank &) = delete;
    UctRank &operator=(const UctRank &) = delete;
};

} // namespace uct_mm_bcast::test
