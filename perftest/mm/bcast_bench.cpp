// SPDX-License-Identifier: BSD-3-Clause
// Broadcast fan-out latency: rank 0 sends one message to the N-1 others.
//  - mm_bcast: one send on a group endpoint (short, bcopy, or zcopy with
//    the receivers copying through CMA; the root waits for completion);
//  - p2p: N-1 sends over UCX's posix transport, messages over max_bcopy in
//    max_bcopy fragments (posix has no am_zcopy).
// mm_bcast goes the way its caps choose (`auto=<path>`: zcopy from the
// advertised min_zcopy, else max_bcopy fragments); over max_bcopy the other
// path is timed too. Each iteration ends when every receiver has all the
// bytes (a shared counter, the same for both) and the root may reuse its
// buffer: one hop out and one back, like the cache-line round trip timed
// in the same ranks and rounds (floor-rtt). Printed: median/min/max in us,
// ratios to the p2p median and to the floor of the same point.
#include "bench_common.h"
#include "benches.h"

#include "uct_mm_bcast.h"

#include <cstdio>
#include <cstring>
#include <new>
#include <sched.h>
#include <string>

namespace ucg_mm_bench {
namespace {

constexpr uint8_t kAmId = 7;
struct RxState {
    Board *board;
    std::size_t msg_bytes;
    std::size_t got = 0; ///< bytes of the current message
    std::uint64_t messages = 0;
};

ucs_status_t on_am(void *arg, void *, size_t length, unsigned)
{
    auto *rx = static_cast<RxState *>(arg);
    rx->got += length;
    if (rx->got >= rx->msg_bytes) {
        rx->got = 0;
        ++rx->messages;
        rx->board->done.fetch_add(1, std::memory_order_release);
    }
    return UCS_OK;
}

struct PackArg {
    const unsigned char *data;
    std::size_t length;
};

size_t pack(void *dest, void *arg)
{
    auto *p = static_cast<PackArg *>(arg);
    std::memcpy(dest, p->data, p->length);
    return p->length;
}

void comp_noop(uct_completion_t *) {}

// One send of `len` bytes at `data` on `ep`, retried while no resource.
void send_one(UctIface &u, uct_ep_h ep, const unsigned char *data,
              std::size_t len)
{
    Spinner full;
    for (;;) {
        ucs_status_t st;
        if (len <= u.attr.cap.am.max_short) {
            uint64_t hdr = 0;
            std::memcpy(&hdr, data, len < 8 ? len : 8);
            st = uct_ep_am_short(ep, kAmId, hdr, data + 8,
                                 static_cast<unsigned>(len - 8));
        } else if (len <= u.attr.cap.am.max_bcopy) {
            PackArg arg{data, len};
            const ssize_t n = uct_ep_am_bcopy(ep, kAmId, pack, &arg, 0);
            st = n < 0 ? static_cast<ucs_status_t>(n) : UCS_OK;
        } else {
            uct_completion_t comp{comp_noop, 1, UCS_OK};
            uct_iov_t iov{const_cast<unsigned char *>(data), len, nullptr, 0,
                          1};
            st = uct_ep_am_zcopy(ep, kAmId, nullptr, 0, &iov, 1, 0, &comp);
            if (st == UCS_INPROGRESS) {
                Spinner spin;
                while (comp.count != 0) {
                    if (uct_worker_progress(u.worker) == 0) {
                        spin.idle(); // the receivers need the CPU
                    }
                }
                return;
            }
        }
        if (st == UCS_OK) {
            return;
        }
        if (st != UCS_ERR_NO_RESOURCE) {
            std::fprintf(stderr, "send failed: %s\n", ucs_status_string(st));
            _exit(2);
        }
        uct_worker_progress(u.worker);
        full.idle(); // the receivers must run to make room
    }
}

// Root side of one transport: one untimed, then `iters` timed iterations
// of send + wait for all done.
void root_loop(UctIface &u, const std::vector<uct_ep_h> &eps, bool fragment,
               std::size_t bytes, int iters, Board *b, int n,
               std::vector<double> *samples)
{
    std::vector<unsigned char> buf(bytes, 0x5a);
    const std::size_t frag =
        fragment ? u.attr.cap.am.max_bcopy : bytes; // posix: no zcopy
    std::uint64_t target = 0;
    for (int it = 0; it <= iters; ++it) {
        const double t0 = now_us();
        for (uct_ep_h ep : eps) {
            for (std::size_t off = 0; off < bytes; off += frag) {
                const std::size_t len = bytes - off < frag ? bytes - off : frag;
                send_one(u, ep, buf.data() + off, len);
            }
        }
        target += static_cast<std::uint64_t>(n - 1);
        Spinner spin;
        while (b->done.load(std::memory_order_acquire) < target) {
            uct_worker_progress(u.worker);
            spin.idle(); // more ranks than cores
        }
        if (it > 0) {
            samples->push_back(now_us() - t0);
        }
    }
}

void rx_loop(UctIface &u, RxState *rx, std::uint64_t expect)
{
    Spinner spin;
    while (rx->messages < expect) {
        if (uct_worker_progress(u.worker) == 0) {
            spin.idle();
        } else {
            spin.busy();
        }
    }
}

/// The path mm_bcast's caps choose for a message: short, bcopy, then zcopy
/// from the advertised min_zcopy (within max_zcopy), else max_bcopy
/// fragments. What UCP would do with the same caps.
const char *chosen_path(const uct_iface_attr_t &a, std::size_t bytes)
{
    if (bytes <= a.cap.am.max_short) {
        return "short";
    }
    if (bytes <= a.cap.am.max_bcopy) {
        return "bcopy";
    }
    if (bytes >= a.cap.am.min_zcopy && bytes <= a.cap.am.max_zcopy) {
        return "zcopy";
    }
    return "frag";
}

struct BcastResult {
    Stats floor; ///< ping-pong round trip inside this point
    Stats chosen, alt, p2p;
    char path[8];     ///< chosen path
    char alt_path[8]; ///< the other path over max_bcopy, "" if none
};

uct_ep_h create_group(UctIface &mm, Board *b, int rank, int n, std::size_t key)
{
    std::vector<const uct_iface_addr_t *> addrs(n);
    for (int i = 0; i < n; ++i) {
        addrs[i] = reinterpret_cast<const uct_iface_addr_t *>(b->addr[0][i]);
    }
    uct_mm_bcast_group_params_t gp{};
    gp.field_mask = UCT_MM_BCAST_GROUP_PARAM_FIELD_KEY |
                    UCT_MM_BCAST_GROUP_PARAM_FIELD_MEMBER_INDEX |
                    UCT_MM_BCAST_GROUP_PARAM_FIELD_GROUP_SIZE |
                    UCT_MM_BCAST_GROUP_PARAM_FIELD_MEMBER_ADDRS;
    gp.group_key = key;
    gp.member_index = static_cast<unsigned>(rank);
    gp.group_size = static_cast<unsigned>(n);
    gp.member_addrs = addrs.data();
    uct_ep_h group;
    if (uct_mm_bcast_group_ep_create(mm.iface, &gp, &group) != UCS_OK) {
        _exit(4);
    }
    return group;
}

// Root: one posix ep to every other rank.
std::vector<uct_ep_h> create_p2p(UctIface &px, Board *b, int n)
{
    std::vector<uct_ep_h> eps;
    uint64_t dev = 0;
    uct_iface_get_device_address(px.iface,
                                 reinterpret_cast<uct_device_addr_t *>(&dev));
    for (int i = 1; i < n; ++i) {
        uct_ep_params_t ep_params{};
        ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                               UCT_EP_PARAM_FIELD_DEV_ADDR |
                               UCT_EP_PARAM_FIELD_IFACE_ADDR;
        ep_params.iface = px.iface;
        ep_params.dev_addr = reinterpret_cast<uct_device_addr_t *>(&dev);
        ep_params.iface_addr =
            reinterpret_cast<const uct_iface_addr_t *>(b->addr[1][i]);
        uct_ep_h ep;
        if (uct_ep_create(&ep_params, &ep) != UCS_OK) {
            _exit(5);
        }
        eps.push_back(ep);
    }
    return eps;
}

// One variant: the root sends and times (keeping its samples), the others
// receive.
struct Phase {
    UctIface *iface;
    std::vector<uct_ep_h> eps;
    bool fragment;
    RxState *rx;
    std::vector<double> samples;
};

void run_phase(Phase *ph, int rank, Board *b, int n, std::size_t bytes,
               int iters)
{
    barrier(b, n);
    b->done.store(0);
    barrier(b, n);
    if (rank == 0) {
        root_loop(*ph->iface, ph->eps, ph->fragment, bytes, iters, b, n,
                  &ph->samples);
    } else {
        ph->rx->messages = 0;
        rx_loop(*ph->iface, ph->rx, static_cast<std::uint64_t>(iters + 1));
    }
    barrier(b, n);
}

Stats stats_of(const Phase &ph)
{
    return summarize(ph.samples.data(), static_cast<int>(ph.samples.size()));
}

void rank_body(int rank, Board *b, int n, std::size_t bytes, int iters,
               BcastResult *out)
{
    UctIface mm, px;
    if (!mm.open("mm_bcast", "mm_bcast") || !px.open("posix", "posix")) {
        _exit(3);
    }
    RxState rx_mm{b, bytes}, rx_px{b, bytes};
    uct_iface_set_am_handler(mm.iface, kAmId, on_am, &rx_mm, 0);
    uct_iface_set_am_handler(px.iface, kAmId, on_am, &rx_px, 0);
    uct_iface_get_address(
        mm.iface, reinterpret_cast<uct_iface_addr_t *>(b->addr[0][rank]));
    uct_iface_get_address(
        px.iface, reinterpret_cast<uct_iface_addr_t *>(b->addr[1][rank]));
    barrier(b, n);
    uct_ep_h group = create_group(mm, b, rank, n, bytes);
    std::vector<uct_ep_h> p2p;
    if (rank == 0) {
        p2p = create_p2p(px, b, n);
    }
    BcastResult res{};
    std::snprintf(res.path, sizeof(res.path), "%s",
                  chosen_path(mm.attr, bytes));
    const bool frag = std::strcmp(res.path, "frag") == 0;
    std::vector<Phase> phases;
    phases.push_back({&px, p2p, true, &rx_px, {}});
    phases.push_back({&mm, {group}, frag, &rx_mm, {}});
    if (bytes > mm.attr.cap.am.max_bcopy &&
        (!frag || bytes <= mm.attr.cap.am.max_zcopy)) {
        // The path not chosen, for the record: zcopy (receivers copy with
        // CMA) or fragments (the root copies once for all receivers).
        std::snprintf(res.alt_path, sizeof(res.alt_path), "%s",
                      frag ? "zcopy" : "frag");
        phases.push_back({&mm, {group}, !frag, &rx_mm, {}});
    }
    // Interleaved rounds: a change of load hits every variant alike.
    constexpr int kRounds = 5;
    const int per_round = (iters + kRounds - 1) / kRounds;
    std::vector<double> floor;
    for (int round = 0; round < kRounds; ++round) {
        run_floor(rank, b, n, per_round, &floor);
        for (Phase &ph : phases) {
            run_phase(&ph, rank, b, n, bytes, per_round);
        }
    }
    if (rank == 0) {
        res.floor = summarize(floor.data(), static_cast<int>(floor.size()));
        res.p2p = stats_of(phases[0]);
        res.chosen = stats_of(phases[1]);
        if (phases.size() > 2) {
            res.alt = stats_of(phases[2]);
        }
        *out = res;
    }
    for (uct_ep_h ep : p2p) {
        uct_ep_destroy(ep);
    }
    uct_ep_destroy(group);
    mm.close();
    px.close();
}

} // namespace

int bench_bcast(const Options &opts)
{
    SharedBoard<BcastResult> shared;
    Board *board = shared.board();
    BcastResult *res = shared.result();
    int rc = 0;
    for (int n : opts.group_sizes) {
        for (std::size_t bytes : opts.msg_bytes) {
            bytes = bytes < 8 ? 8 : bytes;
            shared.reset();
            int iters =
                static_cast<int>(iterations_for(bytes) * opts.iter_scale);
            iters = iters < 3 ? 3 : iters;
            const bool ok = run_ranks(n, board, [&](int rank, Board *b) {
                rank_body(rank, b, n, bytes, iters, rank == 0 ? res : nullptr);
            });
            if (!ok) {
                std::printf("bcast    %2d %8zu failed\n", n, bytes);
                rc = 1;
                continue;
            }
            const double base = res->p2p.median_us;
            const double fl = res->floor.median_us;
            print_row({"bcast", n, bytes, "floor-rtt", res->floor, base, fl});
            print_row({"bcast", n, bytes, "p2p-posix", res->p2p, base, fl});
            print_row({"bcast", n, bytes, std::string("auto=") + res->path,
                       res->chosen, base, fl});
            if (res->alt_path[0] != '\0') {
                print_row(
                    {"bcast", n, bytes, res->alt_path, res->alt, base, fl});
            }
        }
    }
    return rc;
}

} // namespace ucg_mm_bench
