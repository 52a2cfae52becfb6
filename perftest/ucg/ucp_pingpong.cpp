// SPDX-License-Identifier: BSD-3-Clause
// ucp_one_way_us(): ucp_pingpong.h.
#include "ucp_pingpong.h"

#include <ucp/api/ucp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sched.h>
#include <utility>
#include <vector>

namespace ucg::perftest {

namespace {

constexpr ucp_tag_t kTag = 0x55cc;
constexpr double kGiveUpS = 10;

struct Ucp {
    ucp_context_h context = nullptr;
    ucp_worker_h worker = nullptr;
    ucp_ep_h ep = nullptr;

    ~Ucp()
    {
        if (ep != nullptr) {
            ucp_request_param_t p{};
            p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
            p.flags = UCP_EP_CLOSE_FLAG_FORCE;
            void *req = ucp_ep_close_nbx(ep, &p);
            while (UCS_PTR_IS_PTR(req) &&
                   ucp_request_check_status(req) == UCS_INPROGRESS) {
                ucp_worker_progress(worker);
            }
            if (UCS_PTR_IS_PTR(req)) {
                ucp_request_free(req);
            }
        }
        if (worker != nullptr) {
            ucp_worker_destroy(worker);
        }
        if (context != nullptr) {
            ucp_cleanup(context);
        }
    }
};

ucs_status_t open(Ucp *u)
{
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_TAG;
    ucs_status_t st = ucp_init(&params, nullptr, &u->context);
    if (st != UCS_OK) {
        return st;
    }
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    return ucp_worker_create(u->context, &wp, &u->worker);
}

// Waits for a request (nullptr: done at once): polls, and yields after
// 1,000 polls in a row (the ranks may share a core); the request's status,
// UCS_ERR_TIMED_OUT after kGiveUpS.
ucs_status_t wait(ucp_worker_h worker, void *req)
{
    if (req == nullptr) {
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(req)) {
        return UCS_PTR_STATUS(req);
    }
    unsigned polls = 0;
    double give_up = 0;
    ucs_status_t st;
    while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS) {
        if (ucp_worker_progress(worker) == 0 && ++polls >= 1000) {
            sched_yield();
            if ((polls & 1023) == 0) {
                const double t = now_s();
                give_up = give_up == 0 ? t + kGiveUpS : give_up;
                if (t > give_up) {
                    ucp_request_cancel(worker, req);
                    ucp_request_free(req);
                    return UCS_ERR_TIMED_OUT;
                }
            }
        }
    }
    ucp_request_free(req);
    return st;
}

// One exchange: rank 0 sends and then receives, rank 1 the other way.
ucs_status_t exchange(Ucp *u, bool first, std::uint64_t *buf)
{
    ucp_request_param_t p{};
    void *recv = nullptr;
    if (!first) {
        recv = ucp_tag_recv_nbx(u->worker, buf, sizeof(*buf), kTag, ~0ull, &p);
        const ucs_status_t st = wait(u->worker, recv);
        if (st != UCS_OK) {
            return st;
        }
    } else {
        recv =
            ucp_tag_recv_nbx(u->worker, buf + 1, sizeof(*buf), kTag, ~0ull, &p);
    }
    ucs_status_t st =
        wait(u->worker, ucp_tag_send_nbx(u->ep, buf, sizeof(*buf), kTag, &p));
    if (first && st == UCS_OK) {
        st = wait(u->worker, recv);
    } else if (first && UCS_PTR_IS_PTR(recv)) {
        ucp_request_cancel(u->worker, recv);
        ucp_request_free(recv);
    }
    return st;
}

// Ranks 0 and 1: the ping-pong; rank 0's median one-way time.
double ping_pong(Ucp *u, bool first)
{
    std::uint64_t buf[2] = {};
    std::vector<double> one_way;
    for (int b = -1; b < kPingBatches; ++b) {
        const int n = b < 0 ? kPingWarmup : kPingPerBatch;
        const double t0 = now_s();
        for (int k = 0; k < n; ++k) {
            ++buf[0];
            const ucs_status_t st = exchange(u, first, buf);
            if (st != UCS_OK) {
                std::fprintf(stderr,
                             "ucg_perftest: the UCP ping-pong between ranks 0 "
                             "and 1 failed: %s\n",
                             ucs_status_string(st));
                return -1;
            }
        }
        if (b >= 0) {
            one_way.push_back((now_s() - t0) * 1e6 / n / 2);
        }
    }
    return median(std::move(one_way));
}

} // namespace

double ucp_one_way_us(const Env &env)
{
    if (env.size < 2) {
        return -1;
    }
    const bool pair = env.rank < 2;
    Ucp u;
    ucs_status_t st = pair ? open(&u) : UCS_OK;
    ucp_address_t *addr = nullptr;
    std::size_t len = 0;
    if (st == UCS_OK && pair) {
        st = ucp_worker_get_address(u.worker, &addr, &len);
    }
    // Every rank: whether it is ready and how long its address is, then
    // the addresses (the longest's length each).
    std::uint64_t mine[2] = {st == UCS_OK ? 1u : 0u, len};
    std::vector<std::uint64_t> all(2 * std::size_t(env.size));
    ucs_status_t oob = env.allgather(mine, all.data(), sizeof(mine));
    const bool ready = oob == UCS_OK && all[0] == 1 && all[2] == 1;
    const std::size_t longest = oob == UCS_OK ? std::max(all[1], all[3]) : 0;
    std::vector<char> out(longest + 1, 0), addrs((longest + 1) * env.size);
    if (addr != nullptr) {
        std::memcpy(out.data(), addr, len);
        ucp_worker_release_address(u.worker, addr);
    }
    if (oob == UCS_OK) {
        oob = env.allgather(out.data(), addrs.data(), longest + 1);
    }
    double us = -1;
    if (pair && ready && oob == UCS_OK) {
        ucp_ep_params_t ep{};
        ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        ep.address = reinterpret_cast<const ucp_address_t *>(
            addrs.data() + (longest + 1) * std::size_t(1 - env.rank));
        st = ucp_ep_create(u.worker, &ep, &u.ep);
        us = st == UCS_OK ? ping_pong(&u, env.rank == 0) : -1;
    }
    if (pair && st != UCS_OK) {
        std::fprintf(stderr,
                     "ucg_perftest: no UCP ping-pong between ranks 0 "
                     "and 1: %s\n",
                     ucs_status_string(st));
    }
    // Both sides done before either closes its endpoint.
    std::uint64_t done = 0;
    std::vector<std::uint64_t> dones(std::size_t(env.size));
    if (oob == UCS_OK) {
        env.allgather(&done, dones.data(), sizeof(done));
    }
    return env.rank == 0 ? us : -1;
}

} // namespace ucg::perftest
