// SPDX-License-Identifier: BSD-3-Clause
// The baseline: the root sends to each of N receivers over UCX's tcp
// transport (UCT active messages). Latency round: N sends of 8 B, then the
// last receiver replies 8 B. Bandwidth: each 64 KiB message as max_bcopy
// fragments to every receiver in turn; every receiver replies when it has
// all the bytes.
#include "bench.h"

#include <cstring>
#include <sched.h>
#include <vector>

namespace ucg_mcast_bench {
namespace {

struct Rx {
    uint64_t msgs = 0;
    uint64_t bytes = 0;
};

ucs_status_t on_am(void *arg, void *, size_t length, unsigned)
{
    auto *rx = static_cast<Rx *>(arg);
    ++rx->msgs;
    rx->bytes += length;
    return UCS_OK;
}

uct_ep_h connect(Uct &u, Board *b, unsigned peer)
{
    uct_ep_params_t p{};
    p.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
                   UCT_EP_PARAM_FIELD_IFACE_ADDR;
    p.iface = u.iface;
    p.dev_addr = reinterpret_cast<const uct_device_addr_t *>(b->addr[peer]);
    p.iface_addr =
        reinterpret_cast<const uct_iface_addr_t *>(b->addr[peer] + 64);
    uct_ep_h ep;
    if (uct_ep_create(&p, &ep) != UCS_OK) {
        die("tcp uct_ep_create");
    }
    return ep;
}

void setup(Uct &u, Board *b, unsigned rank, unsigned n, Rx *rx,
           std::vector<uct_ep_h> *eps)
{
    uct_iface_set_am_handler(u.iface, 1, on_am, rx, 0);
    uct_iface_get_device_address(
        u.iface, reinterpret_cast<uct_device_addr_t *>(b->addr[rank]));
    uct_iface_get_address(
        u.iface, reinterpret_cast<uct_iface_addr_t *>(b->addr[rank] + 64));
    barrier(b, 0, n + 1, nullptr);
    eps->assign(n + 1, nullptr);
    if (rank == 0) {
        for (unsigned r = 1; r <= n; ++r) {
            (*eps)[r] = connect(u, b, r);
        }
    } else {
        (*eps)[0] = connect(u, b, 0);
    }
}

void am_short(Uct &u, uct_ep_h ep, uint64_t v)
{
    while (uct_ep_am_short(ep, 1, v, nullptr, 0) == UCS_ERR_NO_RESOURCE) {
        u.progress_or_idle();
    }
}

size_t pack_zero(void *dest, void *arg)
{
    const size_t len = *static_cast<size_t *>(arg);
    std::memset(dest, 1, len);
    return len;
}

void wait_msgs(Uct &u, const Rx &rx, uint64_t msgs)
{
    while (rx.msgs < msgs) {
        u.progress_or_idle();
    }
}

void finish(Uct &u, Board *b, unsigned n, unsigned p,
            std::vector<uct_ep_h> *eps)
{
    barrier(b, p, n + 1, &u);
    for (uct_ep_h ep : *eps) {
        if (ep != nullptr) {
            while (uct_ep_flush(ep, 0, nullptr) == UCS_INPROGRESS) {
                u.progress();
            }
            uct_ep_destroy(ep);
        }
    }
}

} // namespace

void tcp_latency(unsigned rank, Board *b, unsigned n, const Options &o)
{
    Uct u("tcp", o.dev, {});
    Rx rx;
    std::vector<uct_ep_h> eps;
    setup(u, b, rank, n, &rx, &eps);
    uint64_t i = 0;
    auto round = [&] {
        if (rank == 0) {
            for (unsigned r = 1; r <= n; ++r) {
                am_short(u, eps[r], i);
            }
            wait_msgs(u, rx, i + 1); // the last receiver's reply
        } else {
            wait_msgs(u, rx, i + 1);
            if (rank == n) {
                am_short(u, eps[0], i);
            }
        }
        ++i;
    };
    for (unsigned k = 0; k < 200; ++k) {
        round(); // warm-up
    }
    for (unsigned rep = 0; rep < o.reps; ++rep) {
        barrier(b, 1 + rep, n + 1, &u);
        const double t0 = now_us();
        for (unsigned k = 0; k < o.lat_rounds; ++k) {
            round();
        }
        if (rank == 0) {
            b->result[rep] = (now_us() - t0) / o.lat_rounds;
        }
    }
    finish(u, b, n, 1 + o.reps, &eps);
}

void tcp_bandwidth(unsigned rank, Board *b, unsigned n, const Options &o)
{
    Uct u("tcp", o.dev, {});
    Rx rx;
    std::vector<uct_ep_h> eps;
    setup(u, b, rank, n, &rx, &eps);
    const size_t frag = u.attr.cap.am.max_bcopy;
    const uint64_t per_rep = static_cast<uint64_t>(o.bw_msgs) * kBwBytes;
    for (unsigned rep = 0; rep < o.reps; ++rep) {
        barrier(b, 1 + rep, n + 1, &u);
        const double t0 = now_us();
        if (rank == 0) {
            for (unsigned i = 0; i < o.bw_msgs; ++i) {
                for (unsigned r = 1; r <= n; ++r) {
                    for (size_t off = 0; off < kBwBytes; off += frag) {
                        size_t len = std::min(frag, kBwBytes - off);
                        while (uct_ep_am_bcopy(eps[r], 1, pack_zero, &len, 0) ==
                               UCS_ERR_NO_RESOURCE) {
                            u.progress_or_idle();
                        }
                    }
                }
            }
            wait_msgs(u, rx, static_cast<uint64_t>(n) * (rep + 1));
            b->result[rep] = (now_us() - t0) * 1e-6;
        } else {
            while (rx.bytes < per_rep * (rep + 1)) {
                u.progress_or_idle();
            }
            am_short(u, eps[0], rep);
        }
    }
    finish(u, b, n, 1 + o.reps, &eps);
}

} // namespace ucg_mcast_bench
