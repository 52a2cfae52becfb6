// SPDX-License-Identifier: BSD-3-Clause
// Receive events of a transport between two forked processes (uct_events.h).
#include "ucg_test/uct_events.h"

#include "ucg_test/check.h"
#include "ucg_test/fork_ranks.h"
#include "ucg_test/thread_ranks.h"

#include <atomic>
#include <cstring>
#include <poll.h>
#include <sched.h>

namespace ucg_test {

namespace {

constexpr std::uint8_t kAmId = 5;

struct Shared {
    std::atomic<int> step; ///< the receiver's go-ahead: send message `step`
    std::atomic<int> sent; ///< messages the sender has sent
    unsigned char dev[64];
    unsigned char addr[256];
};

ucs_status_t count_am(void *arg, void *, size_t, unsigned)
{
    ++*static_cast<int *>(arg);
    return UCS_OK;
}

bool readable(int fd, int timeout_ms)
{
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN) != 0;
}

void wait_for(const std::atomic<int> &v, int value)
{
    while (v.load() < value) {
        sched_yield();
    }
}

void receiver(const UctIfaceSpec &spec, Shared *sh)
{
    UctIface r(spec);
    UCG_CHECK((r.attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_RECV) != 0);
    UCG_CHECK((r.attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_FD) != 0);
    int got = 0;
    UCG_CHECK(uct_iface_set_am_handler(r.iface, kAmId, count_am, &got, 0) ==
              UCS_OK);
    int fd = -1;
    UCG_CHECK(uct_iface_event_fd_get(r.iface, &fd) == UCS_OK && fd >= 0);
    UCG_CHECK(uct_iface_get_device_address(
                  r.iface, reinterpret_cast<uct_device_addr_t *>(sh->dev)) ==
              UCS_OK);
    UCG_CHECK(uct_iface_get_address(
                  r.iface, reinterpret_cast<uct_iface_addr_t *>(sh->addr)) ==
              UCS_OK);
    uct_iface_progress_enable(r.iface, UCT_PROGRESS_RECV | UCT_PROGRESS_SEND);

    // Not armed: a message rings nothing.
    sh->step.store(1);
    wait_for(sh->sent, 1);
    UCG_CHECK(!readable(fd, 100));
    // Armed while that message waits: busy, nothing slept on.
    UCG_CHECK(uct_iface_event_arm(r.iface, UCT_EVENT_RECV) == UCS_ERR_BUSY);
    while (got < 1) {
        uct_worker_progress(r.worker);
    }
    // Armed with nothing at hand (the last ring drained): the next message
    // wakes the descriptor, and arming is busy until it is taken. Twice.
    for (int m = 2; m <= 3; ++m) {
        UCG_CHECK(uct_iface_event_arm(r.iface, UCT_EVENT_RECV) == UCS_OK);
        UCG_CHECK(!readable(fd, 0));
        sh->step.store(m);
        UCG_CHECK(readable(fd, 10000));
        UCG_CHECK(uct_iface_event_arm(r.iface, UCT_EVENT_RECV) == UCS_ERR_BUSY);
        while (got < m) {
            uct_worker_progress(r.worker);
        }
    }
    sh->step.store(4); // the sender may leave
}

void sender(const UctIfaceSpec &spec, Shared *sh)
{
    UctIface s(spec);
    wait_for(sh->step, 1);
    uct_ep_params_t p{};
    p.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
                   UCT_EP_PARAM_FIELD_IFACE_ADDR;
    p.iface = s.iface;
    p.dev_addr = reinterpret_cast<const uct_device_addr_t *>(sh->dev);
    p.iface_addr = reinterpret_cast<const uct_iface_addr_t *>(sh->addr);
    uct_ep_h ep;
    UCG_CHECK(uct_ep_create(&p, &ep) == UCS_OK);
    for (int m = 1; m <= 3; ++m) {
        wait_for(sh->step, m);
        ucs_status_t st;
        while ((st = uct_ep_am_short(ep, kAmId, 0, nullptr, 0)) ==
               UCS_ERR_NO_RESOURCE) {
            uct_worker_progress(s.worker);
        }
        UCG_CHECK(st == UCS_OK);
        sh->sent.store(m);
    }
    wait_for(sh->step, 4);
    uct_ep_destroy(ep);
}

} // namespace

std::string check_receive_events(const UctIfaceSpec &spec)
{
    SharedMapping mem(sizeof(Shared));
    auto *sh = new (mem.data()) Shared{};
    const ForkOptions opts(2, std::chrono::seconds(60));
    const ForkResult r = run_fork_ranks(opts, [&](int rank) {
        if (rank == 0) {
            receiver(spec, sh);
        } else {
            sender(spec, sh);
        }
    });
    return r.ok ? std::string() : r.summary();
}

} // namespace ucg_test
