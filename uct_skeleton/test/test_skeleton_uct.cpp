// SPDX-License-Identifier: BSD-3-Clause
// The skeleton through the public UCT API: found among the components,
// its iface opens, and an active message sent on an ep reaches the handler.
#include "ucg_test/uct_iface.h"

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

} // namespace

TEST_CASE("skeleton transport delivers an active message to itself",
          "[skeleton][ucx]")
{
    ucg_test::UctIface skel({"ucg_skel", "ucg_skel", "loop", {}});
    uct_iface_h iface = skel.iface;
    const uct_iface_attr_t &attr = skel.attr;

    Received got;
    REQUIRE(uct_iface_set_am_handler(iface, 3, on_am, &got, 0) == UCS_OK);
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
}
