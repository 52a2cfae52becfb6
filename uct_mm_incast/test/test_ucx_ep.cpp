// SPDX-License-Identifier: BSD-3-Clause
// mm_incast as an ordinary UCT transport, in one process: AM short/bcopy
// delivered by progress, a full FIFO answering no-resource, pending
// requests dispatched when it drains, flush, and bad input refused; and
// its receive events between two processes.
#include "ucx_iface_fixture.h"

#include "ucg_test/reachability_case.h"
#include "ucg_test/uct_events.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

using incast_test::Iface;

namespace {

struct Received {
    std::vector<uint64_t> headers;
    size_t bytes = 0;
};

ucs_status_t on_am(void *arg, void *data, size_t length, unsigned)
{
    auto *r = static_cast<Received *>(arg);
    uint64_t h;
    std::memcpy(&h, data, sizeof(h));
    r->headers.push_back(h);
    r->bytes += length;
    return UCS_OK;
}

size_t pack_64(void *dest, void *)
{
    std::memset(dest, 0x5a, 64);
    return 64;
}

struct Pending {
    uct_pending_req_t req;
    uct_ep_h ep;
    int sent = 0;
};

ucs_status_t pending_cb(uct_pending_req_t *req)
{
    auto *p = ucs_container_of(req, Pending, req);
    const ucs_status_t st = uct_ep_am_short(p->ep, 1, 99, nullptr, 0);
    p->sent += (st == UCS_OK);
    return st;
}

uct_ep_h connect_to_self(const Iface &iface)
{
    uct_iface_attr_t attr;
    REQUIRE(uct_iface_query(iface.iface, &attr) == UCS_OK);
    std::vector<char> dev(attr.device_addr_len), addr(attr.iface_addr_len);
    auto *d = reinterpret_cast<uct_device_addr_t *>(dev.data());
    auto *a = reinterpret_cast<uct_iface_addr_t *>(addr.data());
    REQUIRE(uct_iface_get_device_address(iface.iface, d) == UCS_OK);
    REQUIRE(uct_iface_get_address(iface.iface, a) == UCS_OK);
    REQUIRE(uct_iface_is_reachable(iface.iface, d, a));
    uct_ep_params_t p{};
    p.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
                   UCT_EP_PARAM_FIELD_IFACE_ADDR;
    p.iface = iface.iface;
    p.dev_addr = d;
    p.iface_addr = a;
    uct_ep_h ep;
    REQUIRE(uct_ep_create(&p, &ep) == UCS_OK);
    return ep;
}

} // namespace

TEST_CASE("AMs through the receive FIFO, flow control, pending and flush",
          "[mm_incast][ucx]")
{
    Iface iface(incast_test::Config{{"FIFO_SIZE", "4"}});
    Received rx;
    REQUIRE(uct_iface_set_am_handler(iface.iface, 1, on_am, &rx, 0) == UCS_OK);
    uct_iface_progress_enable(iface.iface,
                              UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    uct_ep_h ep = connect_to_self(iface);

    uint64_t payload = 7;
    for (uint64_t h = 0; h < 3; ++h) {
        CHECK(uct_ep_am_short(ep, 1, h, &payload, sizeof(payload)) == UCS_OK);
    }
    CHECK(uct_ep_am_bcopy(ep, 1, pack_64, nullptr, 0) == 64);
    // The FIFO holds 4: the next send waits for the receiver to drain.
    CHECK(uct_ep_am_short(ep, 1, 9, nullptr, 0) == UCS_ERR_NO_RESOURCE);
    Pending pend;
    pend.ep = ep;
    pend.req.func = pending_cb;
    CHECK(uct_ep_pending_add(ep, &pend.req, 0) == UCS_OK);
    CHECK(uct_ep_flush(ep, 0, nullptr) == UCS_ERR_NO_RESOURCE);
    for (int i = 0; (i < 100) && (rx.headers.size() < 5); ++i) {
        uct_worker_progress(iface.worker);
    }
    CHECK(pend.sent == 1);
    REQUIRE(rx.headers.size() == 5);
    CHECK(rx.headers[0] == 0);
    CHECK(rx.headers[2] == 2);
    CHECK(rx.headers[4] == 99);
    CHECK(rx.bytes == 3 * 16 + 64 + 8);
    CHECK(uct_ep_flush(ep, 0, nullptr) == UCS_OK);
    CHECK(uct_iface_flush(iface.iface, 0, nullptr) == UCS_OK);
    // Nothing pending: pending_add says "send now".
    CHECK(uct_ep_pending_add(ep, &pend.req, 0) == UCS_ERR_BUSY);
    uct_ep_destroy(ep);
}

TEST_CASE("bad sends are refused with a named status", "[mm_incast][ucx]")
{
    Iface iface;
    uct_ep_h ep = connect_to_self(iface);
    uct_iface_attr_t attr;
    REQUIRE(uct_iface_query(iface.iface, &attr) == UCS_OK);
    CHECK(attr.cap.am.max_zcopy == 0);
    CHECK(!(attr.cap.flags & UCT_IFACE_FLAG_AM_ZCOPY));
    std::vector<char> big(attr.cap.am.max_short + 1);
    CHECK(uct_ep_am_short(ep, 1, 0, big.data(),
                          static_cast<unsigned>(big.size())) ==
          UCS_ERR_EXCEEDS_LIMIT);
    uct_iov_t iov{};
    CHECK(uct_ep_am_zcopy(ep, 1, nullptr, 0, &iov, 1, 0, nullptr) ==
          UCS_ERR_INVALID_PARAM);
    uct_ep_destroy(ep);
}

namespace {

// Opens an mm_incast iface with one setting changed; the status of
// uct_config_modify if it refuses the value, else of uct_iface_open.
ucs_status_t open_with(const char *name, const char *value)
{
    Iface base; // the component, md and worker of a default iface
    uct_iface_config_t *config;
    REQUIRE(uct_md_iface_config_read(base.md, UCT_MM_INCAST_TL_NAME, nullptr,
                                     nullptr, &config) == UCS_OK);
    ucs_status_t st = uct_config_modify(config, name, value);
    if (st == UCS_OK) {
        uct_iface_params_t params{};
        params.field_mask =
            UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
        params.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
        params.mode.device.tl_name = UCT_MM_INCAST_TL_NAME;
        params.mode.device.dev_name = "memory";
        uct_iface_h iface = nullptr;
        st = uct_iface_open(base.md, base.worker, &params, config, &iface);
        if (st == UCS_OK) {
            uct_iface_close(iface);
        }
    }
    uct_config_release(config);
    return st;
}

} // namespace

TEST_CASE("AUTO thresholds: settings parse, bad values are refused",
          "[mm_incast][ucx]")
{
    CHECK(open_with("AUTO_ATOMIC_MAX", "0") == UCS_OK);
    CHECK(open_with("AUTO_LOCKED_MIN", "inf") == UCS_OK);
    CHECK(open_with("AUTO_LOCKED_MIN", "64k") == UCS_OK);
    CHECK(open_with("AUTO_LOCKED_MIN_GROUP", "256") == UCS_OK);
    CHECK(open_with("AUTO_PAIR_GROUP", "1") == UCS_OK);
    CHECK(open_with("AUTO_PAIR_LOCKED_MIN", "4k") == UCS_OK);
    CHECK(open_with("AUTO_GATHER_BATCHED_MAX_GROUP", "8") == UCS_OK);
    // Not a size or a number: UCX's parser refuses it.
    CHECK(open_with("AUTO_ATOMIC_MAX", "lots") == UCS_ERR_INVALID_PARAM);
    CHECK(open_with("AUTO_PAIR_GROUP", "two") == UCS_ERR_INVALID_PARAM);
    CHECK(open_with("AUTO_PAIR_LOCKED_MIN", "some") == UCS_ERR_INVALID_PARAM);
    // Out of 1..256: the iface refuses it (one log line).
    CHECK(open_with("AUTO_PAIR_GROUP", "0") == UCS_ERR_INVALID_PARAM);
    CHECK(open_with("AUTO_LOCKED_MIN_GROUP", "257") == UCS_ERR_INVALID_PARAM);
    CHECK(open_with("AUTO_GATHER_BATCHED_MAX_GROUP", "0") ==
          UCS_ERR_INVALID_PARAM);
}

TEST_CASE("FIFO_SIZE must be a power of two (the shared p2p FIFO's slots)",
          "[mm_incast][ucx]")
{
    CHECK(open_with("FIFO_SIZE", "2") == UCS_OK);
    CHECK(open_with("FIFO_SIZE", "128") == UCS_OK);
    CHECK(open_with("FIFO_SIZE", "1") == UCS_ERR_INVALID_PARAM);
    CHECK(open_with("FIFO_SIZE", "48") == UCS_ERR_INVALID_PARAM);
}

TEST_CASE("events: armed, a peer's message wakes the iface's descriptor, "
          "busy while one is at hand",
          "[mm_incast][ucx][fork]")
{
    const std::string failed = ucg_test::check_receive_events(
        {"mm_incast", "mm_incast", "memory", {}});
    INFO(failed);
    CHECK(failed.empty());
}

TEST_CASE("an iface in another IPC namespace is another host",
          "[mm_incast][ucx][fork]")
{
    ucg_test::check_ipc_namespace_is_another_host(
        {UCT_MM_INCAST_TL_NAME, UCT_MM_INCAST_TL_NAME, "memory", {}});
}
