// SPDX-License-Identifier: BSD-3-Clause
// The skeleton through the public UCT API: found among the components,
// its iface opens, and an active message sent on an ep reaches the handler.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <uct/api/uct.h>

namespace {

struct Received {
    int count = 0;
    uint64_t header = 0;
    std::string payload;
};

ucs_status_t on_am(void *arg, void *data, size_t length, unsigned)
{
    auto *got = static_cast<Received *>(arg);
    ++got->count;
    std::memcpy(&got->header, data, sizeof(got->header));
    got->payload.assign(static_cast<char *>(data) + sizeof(uint64_t),
                        length - sizeof(uint64_t));
    return UCS_OK;
}

uct_component_h find_component(const char *name)
{
    uct_component_h *components;
    unsigned count;
    REQUIRE(uct_query_components(&components, &count) == UCS_OK);
    uct_component_h found = nullptr;
    for (unsigned i = 0; i < count; ++i) {
        uct_component_attr_t attr{};
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        REQUIRE(uct_component_query(components[i], &attr) == UCS_OK);
        if (std::strcmp(attr.name, name) == 0) {
            found = components[i];
        }
    }
    uct_release_component_list(components);
    return found;
}

} // namespace

TEST_CASE("skeleton transport delivers an active message to itself",
          "[skeleton][ucx]")
{
    uct_component_h component = find_component("ucg_skel");
    REQUIRE(component != nullptr);

    uct_md_config_t *md_config;
    REQUIRE(uct_md_config_read(component, nullptr, nullptr, &md_config) ==
            UCS_OK);
    uct_md_h md;
    REQUIRE(uct_md_open(component, "ucg_skel", md_config, &md) == UCS_OK);
    uct_config_release(md_config);

    ucs_async_context_t *async;
    REQUIRE(ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &async) ==
            UCS_OK);
    uct_worker_h worker;
    REQUIRE(uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker) ==
            UCS_OK);

    uct_iface_config_t *iface_config;
    REQUIRE(uct_md_iface_config_read(md, "ucg_skel", nullptr, nullptr,
                                     &iface_config) == UCS_OK);
    uct_iface_params_t params{};
    params.field_mask =
        UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name = "ucg_skel";
    params.mode.device.dev_name = "loop";
    uct_iface_h iface;
    REQUIRE(uct_iface_open(md, worker, &params, iface_config, &iface) ==
            UCS_OK);
    uct_config_release(iface_config);

    Received got;
    REQUIRE(uct_iface_set_am_handler(iface, 3, on_am, &got, 0) == UCS_OK);
    uct_iface_attr_t attr;
    REQUIRE(uct_iface_query(iface, &attr) == UCS_OK);
    CHECK(attr.cap.am.max_short == 64);

    uint64_t address;
    REQUIRE(attr.iface_addr_len == sizeof(address));
    REQUIRE(uct_iface_get_address(iface, reinterpret_cast<uct_iface_addr_t *>(
                                             &address)) == UCS_OK);
    uct_ep_params_t ep_params{};
    ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                           UCT_EP_PARAM_FIELD_IFACE_ADDR |
                           UCT_EP_PARAM_FIELD_DEV_ADDR;
    ep_params.iface = iface;
    ep_params.iface_addr = reinterpret_cast<uct_iface_addr_t *>(&address);
    ep_params.dev_addr = nullptr;
    uct_ep_h ep;
    REQUIRE(uct_ep_create(&ep_params, &ep) == UCS_OK);

    const char text[] = "hello";
    CHECK(uct_ep_am_short(ep, 3, 0x1234, text, sizeof(text) - 1) == UCS_OK);
    CHECK(got.count == 1);
    CHECK(got.header == 0x1234);
    CHECK(got.payload == "hello");

    // Larger than the advertised maximum: refused, nothing delivered.
    char big[64] = {};
    CHECK(uct_ep_am_short(ep, 3, 0, big, sizeof(big)) == UCS_ERR_INVALID_PARAM);
    CHECK(got.count == 1);

    uct_ep_destroy(ep);
    uct_iface_close(iface);
    uct_worker_destroy(worker);
    ucs_async_context_destroy(async);
    uct_md_close(md);
}
