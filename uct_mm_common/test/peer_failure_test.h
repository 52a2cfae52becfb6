// SPDX-License-Identifier: BSD-3-Clause
// Peer failure of a p2p endpoint through UCT's own mechanism, for both mm
// transports: a forked peer opens an iface and is killed (SIGKILL); this
// process's endpoint to it reports UCS_ERR_CONNECTION_RESET through the
// iface error handler, from uct_ep_check, from a send with
// UCT_SEND_FLAG_PEER_CHECK (UCP's keepalive) or from a pending send stalled
// on the dead peer's full FIFO (within TIMEOUT), never spinning forever.
#pragma once

#include "ucg_test/check.h"
#include "ucg_test/fork_ranks.h"
#include "ucg_test/uct_iface.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstring>
#include <new>
#include <sched.h>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace mm_peer_test {

using Config = std::vector<std::pair<std::string, std::string>>;
using Clock = std::chrono::steady_clock;

/// What the error handler saw.
struct Errors {
    int calls = 0;
    uct_ep_h ep = nullptr;
    ucs_status_t status = UCS_OK;
};

inline ucs_status_t on_error(void *arg, uct_ep_h ep, ucs_status_t status)
{
    auto *e = static_cast<Errors *>(arg);
    ++e->calls;
    e->ep = ep;
    e->status = status;
    return UCS_OK;
}

/// The peer's addresses, written by the child into a shared page.
struct PeerAddr {
    std::atomic<int> ready;
    unsigned char dev[64];
    unsigned char iface[128];
};

/// One peer process with an iface of transport `tl`, alive until killed.
class Peer {
  public:
    Peer(const std::string &tl, const Config &config)
    {
        void *mem = mmap(nullptr, sizeof(PeerAddr), PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        UCG_CHECK(mem != MAP_FAILED);
        addr_ = new (mem) PeerAddr{};
        pid_ = ucg_test::fork_until_ready([&](const auto &ready) {
            ucg_test::UctIface peer({tl, tl, "memory", config});
            UCG_CHECK(peer.attr.device_addr_len <= sizeof(addr_->dev));
            UCG_CHECK(peer.attr.iface_addr_len <= sizeof(addr_->iface));
            UCG_CHECK(uct_iface_get_device_address(
                          peer.iface, reinterpret_cast<uct_device_addr_t *>(
                                          addr_->dev)) == UCS_OK);
            UCG_CHECK(uct_iface_get_address(
                          peer.iface, reinterpret_cast<uct_iface_addr_t *>(
                                          addr_->iface)) == UCS_OK);
            addr_->ready.store(1);
            ready();
            for (;;) {
                pause(); // until SIGKILL
            }
        });
        REQUIRE(addr_->ready.load() == 1);
    }
    ~Peer()
    {
        kill_now();
        reap();
        munmap(addr_, sizeof(PeerAddr));
    }
    Peer(const Peer &) = delete;
    Peer &operator=(const Peer &) = delete;

    /// SIGKILL; the child stays a zombie until reap().
    void kill_now()
    {
        if (!killed_) {
            killed_ = true;
            ::kill(pid_, SIGKILL);
        }
    }
    /// Waits until the killed child is a zombie, without reaping it.
    void wait_zombie()
    {
        siginfo_t info{};
        waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT);
    }
    void reap()
    {
        if (!reaped_) {
            reaped_ = true;
            int status;
            waitpid(pid_, &status, 0);
        }
    }

    uct_ep_h connect(ucg_test::UctIface *local) const
    {
        uct_ep_params_t params{};
        params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                            UCT_EP_PARAM_FIELD_DEV_ADDR |
                            UCT_EP_PARAM_FIELD_IFACE_ADDR;
        params.iface = local->iface;
        params.dev_addr =
            reinterpret_cast<const uct_device_addr_t *>(addr_->dev);
        params.iface_addr =
            reinterpret_cast<const uct_iface_addr_t *>(addr_->iface);
        uct_ep_h ep = nullptr;
        REQUIRE(uct_ep_create(&params, &ep) == UCS_OK);
        return ep;
    }

  private:
    PeerAddr *addr_ = nullptr;
    int pid_ = -1;
    bool killed_ = false;
    bool reaped_ = false;
};

/// An iface of `tl` whose error handler records into `errors`.
struct Local : ucg_test::UctIface {
    Local(const std::string &tl, const Config &config, Errors *errors)
        : UctIface({tl, tl, "memory", config}, on_error, errors)
    {
        uct_iface_progress_enable(iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    }
};

/// Progresses the worker until `done()` or `limit` passed (backs off).
template <typename Done>
bool progress_until(uct_worker_h worker, Done &&done,
                    std::chrono::milliseconds limit)
{
    const auto deadline = Clock::now() + limit;
    while (!done()) {
        if (Clock::now() > deadline) {
            return false;
        }
        if (uct_worker_progress(worker) == 0) {
            sched_yield();
        }
    }
    return true;
}

inline size_t pack_small(void *dest, void *)
{
    std::memset(dest, 0x5a, 16);
    return 16;
}

inline ssize_t send_keepalive(uct_ep_h ep)
{
    return uct_ep_am_bcopy(ep, 1, pack_small, nullptr,
                           UCT_SEND_FLAG_PEER_CHECK);
}

/// Kill, then one uct_ep_check: the handler reports the endpoint with
/// CONNECTION_RESET, long before the transport's TIMEOUT (60 s here) could;
/// a live peer is never reported.
inline void ep_check_reports_dead_peer(const std::string &tl, bool zombie)
{
    const Config cfg{{"TIMEOUT", "60s"}};
    Errors errors;
    Local local(tl, cfg, &errors);
    REQUIRE((local.attr.cap.flags & UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE));
    REQUIRE((local.attr.cap.flags & UCT_IFACE_FLAG_EP_CHECK));
    Peer peer(tl, cfg);
    uct_ep_h ep = peer.connect(&local);

    REQUIRE(uct_ep_check(ep, 0, nullptr) == UCS_OK);
    REQUIRE(send_keepalive(ep) >= 0);
    progress_until(
        local.worker, [] { return false; }, std::chrono::milliseconds(50));
    CHECK(errors.calls == 0);

    peer.kill_now();
    if (zombie) {
        peer.wait_zombie(); // still in /proc, with its start time
    } else {
        peer.reap();
    }
    // TIMEOUT is 60 s (above): a report within 20 s came from ep_check.
    REQUIRE(uct_ep_check(ep, 0, nullptr) == UCS_OK);
    REQUIRE(progress_until(
        local.worker, [&] { return errors.calls != 0; },
        std::chrono::seconds(20)));
    CHECK(errors.ep == ep);
    CHECK(errors.status == UCS_ERR_CONNECTION_RESET);
    // Reported once, however often it is checked again.
    REQUIRE(uct_ep_check(ep, 0, nullptr) == UCS_OK);
    progress_until(
        local.worker, [] { return false; }, std::chrono::milliseconds(20));
    CHECK(errors.calls == 1);
    uct_ep_destroy(ep);
}

/// UCP's keepalive path: am_bcopy with UCT_SEND_FLAG_PEER_CHECK.
inline void peer_check_send_reports_dead_peer(const std::string &tl)
{
    Errors errors;
    Local local(tl, {}, &errors);
    Peer peer(tl, {});
    uct_ep_h ep = peer.connect(&local);
    peer.kill_now();
    peer.reap();
    // Without the flag a send does not look at the peer.
    REQUIRE(uct_ep_am_bcopy(ep, 1, pack_small, nullptr, 0) >= 0);
    progress_until(
        local.worker, [] { return false; }, std::chrono::milliseconds(20));
    CHECK(errors.calls == 0);
    send_keepalive(ep); // lands in the dead peer's FIFO, or finds it full
    REQUIRE(progress_until(
        local.worker, [&] { return errors.calls != 0; },
        std::chrono::milliseconds(1000)));
    CHECK(errors.ep == ep);
    CHECK(errors.status == UCS_ERR_CONNECTION_RESET);
    uct_ep_destroy(ep);
}

struct Stuck {
    uct_pending_req_t req{};
    uct_ep_h ep = nullptr;
    int runs = 0;
};

inline ucs_status_t stuck_cb(uct_pending_req_t *req)
{
    auto *s = reinterpret_cast<Stuck *>(req);
    ++s->runs;
    const ssize_t len = uct_ep_am_bcopy(s->ep, 1, pack_small, nullptr, 0);
    return len >= 0 ? UCS_OK : static_cast<ucs_status_t>(len);
}

/// A pending send waits on the dead peer's full FIFO and nobody calls
/// ep_check: the error handler fires within the transport's TIMEOUT.
inline void stalled_pending_reports_dead_peer(const std::string &tl)
{
    const Config cfg{{"TIMEOUT", "200ms"}, {"FIFO_SIZE", "8"}};
    Errors errors;
    Local local(tl, cfg, &errors);
    Peer peer(tl, cfg);
    uct_ep_h ep = peer.connect(&local);
    peer.kill_now();
    peer.reap();
    int sent = 0;
    while (uct_ep_am_bcopy(ep, 1, pack_small, nullptr, 0) >= 0) {
        REQUIRE(++sent < 100000);
    }
    Stuck stuck;
    stuck.req.func = stuck_cb;
    stuck.ep = ep;
    REQUIRE(uct_ep_pending_add(ep, &stuck.req, 0) == UCS_OK);
    // Bounded: the report must come (20 s, far above TIMEOUT, so a loaded
    // machine does not fail it; a transport that never reports does).
    REQUIRE(progress_until(
        local.worker, [&] { return errors.calls != 0; },
        std::chrono::seconds(20)));
    CHECK(errors.ep == ep);
    CHECK(errors.status != UCS_OK);
    uct_ep_pending_purge(ep, nullptr, nullptr);
    uct_ep_destroy(ep);
}

/// A report scheduled for an endpoint destroyed before the next progress
/// is dropped (no call with a freed endpoint); bad ep_check arguments are
/// refused.
inline void destroyed_ep_is_not_reported(const std::string &tl)
{
    Errors errors;
    Local local(tl, {}, &errors);
    Peer peer(tl, {});
    uct_ep_h ep = peer.connect(&local);
    uct_completion_t comp{};
    CHECK(uct_ep_check(ep, 1, nullptr) == UCS_ERR_INVALID_PARAM);
    CHECK(uct_ep_check(ep, 0, &comp) == UCS_ERR_INVALID_PARAM);
    peer.kill_now();
    peer.reap();
    REQUIRE(uct_ep_check(ep, 0, nullptr) == UCS_OK);
    uct_ep_destroy(ep);
    progress_until(
        local.worker, [] { return false; }, std::chrono::milliseconds(50));
    CHECK(errors.calls == 0);
}

} // namespace mm_peer_test
