// SPDX-License-Identifier: BSD-3-Clause
// An mm_incast iface opened in-process through UCT (the plugin is linked).
#pragma once

#include <uct_mm_incast.h>

#include <catch2/catch.hpp>
#include <uct/api/uct.h>

#include <cstring>

namespace incast_test {

/// An mm_incast iface opened through UCT with one config override.
struct Iface {
    explicit Iface(const char *mode, const char *fifo_size = "64")
    {
        REQUIRE(ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                         &async) == UCS_OK);
        REQUIRE(uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker) ==
                UCS_OK);
        uct_component_h *comps;
        unsigned n;
        REQUIRE(uct_query_components(&comps, &n) == UCS_OK);
        for (unsigned i = 0; i < n; ++i) {
            uct_component_attr_t attr{};
            attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
            REQUIRE(uct_component_query(comps[i], &attr) == UCS_OK);
            if (std::strcmp(attr.name, UCT_MM_INCAST_TL_NAME) == 0) {
                uct_md_config_t *cfg;
                REQUIRE(uct_md_config_read(comps[i], nullptr, nullptr, &cfg) ==
                        UCS_OK);
                REQUIRE(uct_md_open(comps[i], UCT_MM_INCAST_TL_NAME, cfg,
                                    &md) == UCS_OK);
                uct_config_release(cfg);
            }
        }
        uct_release_component_list(comps);
        REQUIRE(md != nullptr);
        uct_iface_config_t *icfg;
        REQUIRE(uct_md_iface_config_read(md, UCT_MM_INCAST_TL_NAME, nullptr,
                                         nullptr, &icfg) == UCS_OK);
        REQUIRE(uct_config_modify(icfg, "MODE", mode) == UCS_OK);
        REQUIRE(uct_config_modify(icfg, "FIFO_SIZE", fifo_size) == UCS_OK);
        uct_iface_params_t p{};
        p.field_mask =
            UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
        p.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
        p.mode.device.tl_name = UCT_MM_INCAST_TL_NAME;
        p.mode.device.dev_name = "memory";
        REQUIRE(uct_iface_open(md, worker, &p, icfg, &iface) == UCS_OK);
        uct_config_release(icfg);
    }
    ~Iface()
    {
        uct_iface_close(iface);
        uct_md_close(md);
        uct_worker_destroy(worker);
        ucs_async_context_destroy(async);
    }
    ucs_async_context_t *async = nullptr;
    uct_worker_h worker = nullptr;
    uct_md_h md = nullptr;
    uct_iface_h iface = nullptr;
};

} // namespace incast_test
