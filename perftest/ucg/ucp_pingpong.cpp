// SPDX-License-Identifier: BSD-3-Clause
// ucp_one_way_us() and ClockOffsets: ucp_pingpong.h.
#include "ucp_pingpong.h"

#include "timed_loop.h"

#include <ucp/api/ucp.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <poll.h>
#include <sched.h>
#include <utility>
#include <vector>

namespace ucg::perftest {

namespace {

constexpr ucp_tag_t kTag = 0x55cc;
/// Clock pings; a pong's tag adds the answering rank.
constexpr ucp_tag_t kClockTag = 0xc10c000000000000ull;
constexpr double kGiveUpS = 10;

struct Ucp {
    ucp_context_h context = nullptr;
    ucp_worker_h worker = nullptr;
    std::vector<ucp_ep_h> eps; ///< by rank; nullptr: none
    int efd = -1; ///< the worker's event fd (opened with wakeup), else -1

    ~Ucp()
    {
        for (ucp_ep_h ep : eps) {
            if (ep == nullptr) {
                continue;
            }
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

// `wakeup`: waits sleep on the worker's event fd (wait()).
ucs_status_t open(Ucp *u, bool wakeup)
{
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_TAG | (wakeup ? UCP_FEATURE_WAKEUP : 0);
    ucs_status_t st = ucp_init(&params, nullptr, &u->context);
    if (st != UCS_OK) {
        return st;
    }
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    st = ucp_worker_create(u->context, &wp, &u->worker);
    if (st == UCS_OK && wakeup) {
        st = ucp_worker_get_efd(u->worker, &u->efd);
    }
    return st;
}

// Every rank: opens a worker where `take_part` and connects it to
// `peers`, the addresses travelling by the env's allgathers. A rank that
// takes part and finds another's UCP failed returns UCS_ERR_UNREACHABLE.
ucs_status_t connect(const Env &env, bool take_part, bool wakeup,
                     const std::vector<int> &peers, Ucp *u)
{
    ucs_status_t st = take_part ? open(u, wakeup) : UCS_OK;
    ucp_address_t *addr = nullptr;
    std::size_t len = 0;
    if (st == UCS_OK && take_part) {
        st = ucp_worker_get_address(u->worker, &addr, &len);
    }
    // Every rank: ready (1), failed (0) or not taking part (2), and its
    // address's length; then the addresses, the longest's length each.
    std::uint64_t mine[2] = {take_part ? (st == UCS_OK ? 1u : 0u) : 2u, len};
    const auto size = static_cast<std::size_t>(env.size);
    std::vector<std::uint64_t> all(2 * size);
    ucs_status_t oob = env.allgather(mine, all.data(), sizeof(mine));
    bool ready = true;
    std::size_t longest = 0;
    for (std::size_t r = 0; oob == UCS_OK && r < size; ++r) {
        ready = ready && all[2 * r] != 0;
        longest = std::max<std::size_t>(longest, all[2 * r + 1]);
    }
    std::vector<char> out(longest + 1, 0), addrs((longest + 1) * size);
    if (addr != nullptr) {
        std::memcpy(out.data(), addr, len);
        ucp_worker_release_address(u->worker, addr);
    }
    if (oob == UCS_OK) {
        oob = env.allgather(out.data(), addrs.data(), longest + 1);
    }
    if (oob != UCS_OK || st != UCS_OK || !take_part) {
        return oob != UCS_OK ? oob : st;
    }
    if (!ready) {
        return UCS_ERR_UNREACHABLE;
    }
    u->eps.assign(size, nullptr);
    for (int peer : peers) {
        ucp_ep_params_t ep{};
        ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        ep.address = reinterpret_cast<const ucp_address_t *>(
            addrs.data() + (longest + 1) * static_cast<std::size_t>(peer));
        st = ucp_ep_create(u->worker, &ep, &u->eps[std::size_t(peer)]);
        if (st != UCS_OK) {
            return st;
        }
    }
    return UCS_OK;
}

// Cancels and frees a request still in flight (nullptr or an error: none).
void cancel(ucp_worker_h worker, void *req)
{
    if (UCS_PTR_IS_PTR(req)) {
        ucp_request_cancel(worker, req);
        ucp_request_free(req);
    }
}

// Waits for a request (nullptr: done at once): polls; after 1,000 idle
// polls in a row it yields (the ranks may share a core), or, where the
// worker has an event fd, after 50 it sleeps on the fd, 1 ms at most at a
// time (ranks that wait for their turn leave the core to the two that
// ping-pong, whose pongs then wait for no one's polls). The request's
// status, UCS_ERR_TIMED_OUT after kGiveUpS.
ucs_status_t wait(const Ucp *u, void *req)
{
    ucp_worker_h worker = u->worker;
    if (req == nullptr) {
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(req)) {
        return UCS_PTR_STATUS(req);
    }
    const unsigned spin = u->efd < 0 ? 1000 : 50;
    unsigned polls = 0;
    double give_up = 0;
    ucs_status_t st;
    while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS) {
        if (ucp_worker_progress(worker) != 0) {
            polls = 0;
        } else if (++polls >= spin) {
            if (u->efd < 0) {
                sched_yield();
            } else if (ucp_worker_arm(worker) == UCS_OK) {
                pollfd fd{u->efd, POLLIN, 0};
                poll(&fd, 1, 1);
                polls = 1024; // check the time after each sleep
            }
            if ((polls & 1023) == 0) {
                const double t = now_s();
                give_up = give_up == 0 ? t + kGiveUpS : give_up;
                if (t > give_up) {
                    cancel(worker, req);
                    return UCS_ERR_TIMED_OUT;
                }
            }
        }
    }
    ucp_request_free(req);
    return st;
}

// One exchange: rank 0 sends and then receives, rank 1 the other way.
ucs_status_t exchange(Ucp *u, int peer, bool first, std::uint64_t *buf)
{
    ucp_request_param_t p{};
    void *recv = nullptr;
    if (!first) {
        recv = ucp_tag_recv_nbx(u->worker, buf, sizeof(*buf), kTag, ~0ull, &p);
        const ucs_status_t st = wait(u, recv);
        if (st != UCS_OK) {
            return st;
        }
    } else {
        recv =
            ucp_tag_recv_nbx(u->worker, buf + 1, sizeof(*buf), kTag, ~0ull, &p);
    }
    ucs_status_t st = wait(u, ucp_tag_send_nbx(u->eps[std::size_t(peer)], buf,
                                               sizeof(*buf), kTag, &p));
    if (first && st == UCS_OK) {
        st = wait(u, recv);
    } else if (first) {
        cancel(u->worker, recv);
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
            const ucs_status_t st = exchange(u, first ? 1 : 0, first, buf);
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
    const ucs_status_t st = connect(env, pair, false, {1 - env.rank}, &u);
    const double us = pair && st == UCS_OK ? ping_pong(&u, env.rank == 0) : -1;
    if (pair && st != UCS_OK) {
        std::fprintf(stderr,
                     "ucg_perftest: no UCP ping-pong between ranks 0 "
                     "and 1: %s\n",
                     ucs_status_string(st));
    }
    // Both sides done before either closes its endpoint.
    std::uint64_t done = 0;
    std::vector<std::uint64_t> dones(std::size_t(env.size));
    env.allgather(&done, dones.data(), sizeof(done));
    return env.rank == 0 ? us : -1;
}

struct ClockOffsets::Impl {
    Ucp ucp;
    ucs_status_t status = UCS_OK;
};

ClockOffsets::ClockOffsets(const Env &env)
    : env_(env), impl_(std::make_unique<Impl>())
{
    std::vector<int> peers;
    if (env.rank != 0) {
        peers.push_back(0);
    } else {
        for (int r = 1; r < env.size; ++r) {
            peers.push_back(r);
        }
    }
    impl_->status = connect(env, env.size > 1, true, peers, &impl_->ucp);
}

ClockOffsets::~ClockOffsets() = default;

ucs_status_t ClockOffsets::status() const
{
    return impl_->status;
}

namespace {

// One double to `peer` (its clock, or its offset), waited for.
ucs_status_t send_value(Ucp *u, int peer, double value, ucp_tag_t tag)
{
    ucp_request_param_t p{};
    return wait(u, ucp_tag_send_nbx(u->eps[std::size_t(peer)], &value,
                                    sizeof(value), tag, &p));
}

ucs_status_t recv_value(Ucp *u, double *value, ucp_tag_t tag)
{
    ucp_request_param_t p{};
    return wait(
        u, ucp_tag_recv_nbx(u->worker, value, sizeof(*value), tag, ~0ull, &p));
}

// Rank 0's side with rank r: the ping-pongs, then r's offset sent to it.
ucs_status_t offset_of_rank(Ucp *u, int r, const std::function<double()> &clock)
{
    std::vector<ClockSample> samples(kClockPings);
    const ucp_tag_t pong = kClockTag + ucp_tag_t(r);
    for (ClockSample &s : samples) {
        ucp_request_param_t p{};
        void *recv = ucp_tag_recv_nbx(u->worker, &s.remote_us,
                                      sizeof(s.remote_us), pong, ~0ull, &p);
        s.sent_us = clock();
        ucs_status_t st = send_value(u, r, 0, kClockTag);
        if (st != UCS_OK) {
            cancel(u->worker, recv);
            return st;
        }
        if ((st = wait(u, recv)) != UCS_OK) {
            return st;
        }
        s.back_us = clock();
    }
    return send_value(u, r, clock_offset(samples), kClockTag);
}

} // namespace

ucs_status_t ClockOffsets::measure(const std::function<double()> &clock,
                                   double *offset_us)
{
    *offset_us = 0;
    if (impl_->status != UCS_OK || env_.size < 2) {
        return impl_->status;
    }
    Ucp *u = &impl_->ucp;
    if (env_.rank == 0) {
        for (int r = 1; r < env_.size; ++r) {
            if (const ucs_status_t st = offset_of_rank(u, r, clock);
                st != UCS_OK) {
                return st;
            }
        }
        return UCS_OK;
    }
    const ucp_tag_t pong = kClockTag + ucp_tag_t(env_.rank);
    for (int k = 0; k < kClockPings; ++k) {
        double ping = 0;
        ucs_status_t st = recv_value(u, &ping, kClockTag);
        if (st == UCS_OK) {
            st = send_value(u, 0, clock(), pong);
        }
        if (st != UCS_OK) {
            return st;
        }
    }
    return recv_value(u, offset_us, kClockTag);
}

} // namespace ucg::perftest
