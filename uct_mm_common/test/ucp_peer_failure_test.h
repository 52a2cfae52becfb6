// SPDX-License-Identifier: BSD-3-Clause
// UCP over one mm transport in peer error mode: a worker whose endpoint
// asks for UCP_ERR_HANDLING_MODE_PEER still selects the transport (it
// advertises ERRHANDLE_PEER_FAILURE), and once the peer is killed, UCP's
// keepalive (an am_bcopy with UCT_SEND_FLAG_PEER_CHECK on a transport that
// connects to ifaces) reaches the transport's peer check and the endpoint's
// error callback fires within a bounded time.
#pragma once

#include "ucg_test/check.h"
#include "ucg_test/fork_ranks.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <sched.h>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

namespace mm_ucp_peer_test {

using Clock = std::chrono::steady_clock;

/// One UCP context and worker restricted to transport `tl`, with a short
/// keepalive interval.
struct UcpRank {
    explicit UcpRank(const std::string &tl)
    {
        ucp_config_t *config;
        UCG_CHECK(ucp_config_read(nullptr, nullptr, &config) == UCS_OK);
        UCG_CHECK(ucp_config_modify(config, "TLS", tl.c_str()) == UCS_OK);
        UCG_CHECK(ucp_config_modify(config, "KEEPALIVE_INTERVAL", "50ms") ==
                  UCS_OK);
        ucp_params_t params{};
        params.field_mask = UCP_PARAM_FIELD_FEATURES;
        params.features = UCP_FEATURE_AM;
        const ucs_status_t status = ucp_init(&params, config, &context);
        ucp_config_release(config);
        UCG_CHECK(status == UCS_OK);
        ucp_worker_params_t wparams{};
        wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
        wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
        UCG_CHECK(ucp_worker_create(context, &wparams, &worker) == UCS_OK);
    }
    ~UcpRank()
    {
        ucp_worker_destroy(worker);
        ucp_cleanup(context);
    }
    UcpRank(const UcpRank &) = delete;
    UcpRank &operator=(const UcpRank &) = delete;

    /// One progress call; backs off when there was nothing to do.
    void progress() const
    {
        if (ucp_worker_progress(worker) == 0) {
            sched_yield();
        }
    }

    ucp_context_h context = nullptr;
    ucp_worker_h worker = nullptr;
};

struct Shared {
    std::atomic<int> ready;    ///< child: address written
    std::atomic<int> received; ///< child: the parent's message arrived
    std::size_t addr_len;
    unsigned char addr[8192];
};

inline ucs_status_t on_am(void *arg, const void *, size_t, void *, size_t,
                          const ucp_am_recv_param_t *)
{
    static_cast<Shared *>(arg)->received.store(1);
    return UCS_OK;
}

struct EpError {
    int calls = 0;
    ucs_status_t status = UCS_OK;
};

inline void on_ep_error(void *arg, ucp_ep_h, ucs_status_t status)
{
    auto *e = static_cast<EpError *>(arg);
    ++e->calls;
    e->status = status;
}

/// The lanes of `ep` as ucp_ep_print_info writes them.
inline std::string ep_info(ucp_ep_h ep)
{
    char *buf = nullptr;
    std::size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    UCG_CHECK(f != nullptr);
    ucp_ep_print_info(ep, f);
    std::fclose(f);
    std::string text(buf, len);
    std::free(buf);
    return text;
}

/// Waits for a UCP request (or a status pointer) to complete.
inline ucs_status_t wait_request(const UcpRank &rank, void *req)
{
    if (req == nullptr) {
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(req)) {
        return UCS_PTR_STATUS(req);
    }
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    ucs_status_t status;
    while ((status = ucp_request_check_status(req)) == UCS_INPROGRESS &&
           Clock::now() < deadline) {
        rank.progress();
    }
    ucp_request_free(req);
    return status;
}

/// Kills and reaps the child however the test ends (a failed REQUIRE
/// must not leave it serving forever).
class ChildGuard {
  public:
    explicit ChildGuard(int pid) : pid_(pid) {}
    ~ChildGuard() { kill_and_reap(); }
    ChildGuard(const ChildGuard &) = delete;
    ChildGuard &operator=(const ChildGuard &) = delete;
    void kill_and_reap()
    {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            int status;
            waitpid(pid_, &status, 0);
            pid_ = -1;
        }
    }

  private:
    int pid_;
};

inline void keepalive_reports_killed_peer(const std::string &tl)
{
    void *mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    REQUIRE(mem != MAP_FAILED);
    const std::unique_ptr<void, void (*)(void *)> unmap(
        mem, [](void *m) { munmap(m, sizeof(Shared)); });
    auto *shared = new (mem) Shared{};
    const int child = ucg_test::fork_until_ready([&](const auto &ready) {
        UcpRank rank(tl);
        ucp_am_handler_param_t am{};
        am.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                        UCP_AM_HANDLER_PARAM_FIELD_CB |
                        UCP_AM_HANDLER_PARAM_FIELD_ARG;
        am.id = 7;
        am.cb = on_am;
        am.arg = shared;
        UCG_CHECK(ucp_worker_set_am_recv_handler(rank.worker, &am) == UCS_OK);
        ucp_address_t *addr;
        std::size_t len;
        UCG_CHECK(ucp_worker_get_address(rank.worker, &addr, &len) == UCS_OK);
        UCG_CHECK(len <= sizeof(shared->addr));
        std::memcpy(shared->addr, addr, len);
        shared->addr_len = len;
        ucp_worker_release_address(rank.worker, addr);
        shared->ready.store(1);
        ready();
        for (;;) { // serves wireup until SIGKILL
            if (ucp_worker_progress(rank.worker) == 0) {
                usleep(200);
            }
        }
    });
    ChildGuard guard(child);
    REQUIRE(shared->ready.load() == 1);

    UcpRank rank(tl);
    EpError error;
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                        UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.address = reinterpret_cast<const ucp_address_t *>(shared->addr);
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = on_ep_error;
    params.err_handler.arg = &error;
    ucp_ep_h ep = nullptr;
    // Refused (UCS_ERR_UNREACHABLE) when the transport cannot handle peer
    // failure.
    REQUIRE(ucp_ep_create(rank.worker, &params, &ep) == UCS_OK);
    const std::string info = ep_info(ep);
    INFO(info);
    CHECK(info.find(tl + "/") != std::string::npos);

    // A message both ways through wireup: the ep knows its remote id, so
    // keepalive runs on it.
    std::uint64_t payload = 42;
    ucp_request_param_t sp{};
    REQUIRE(wait_request(rank, ucp_am_send_nbx(ep, 7, nullptr, 0, &payload,
                                               sizeof(payload), &sp)) ==
            UCS_OK);
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (shared->received.load() == 0 && Clock::now() < deadline) {
        rank.progress();
    }
    REQUIRE(shared->received.load() == 1);
    const auto settle = Clock::now() + std::chrono::milliseconds(200);
    while (Clock::now() < settle) {
        rank.progress();
    }
    CHECK(error.calls == 0);

    guard.kill_and_reap();
    const auto start = Clock::now();
    // Keepalive runs every 50 ms (above); UCX's default is 20 s, so a report
    // within 15 s came from the configured keepalive, with room for a
    // loaded machine.
    while (error.calls == 0 &&
           Clock::now() - start < std::chrono::seconds(15)) {
        rank.progress();
    }
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        Clock::now() - start);
    INFO("error after " << took.count() << " ms");
    REQUIRE(error.calls == 1);
    CHECK(error.status == UCS_ERR_CONNECTION_RESET);

    ucp_request_param_t cp{};
    cp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    cp.flags = UCP_EP_CLOSE_FLAG_FORCE;
    wait_request(rank, ucp_ep_close_nbx(ep, &cp));
}

} // namespace mm_ucp_peer_test
