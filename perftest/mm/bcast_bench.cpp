// SPDX-License-Identifier: BSD-3-Clause
// Broadcast fan-out latency: rank 0 sends one message to the N-1 others.
//  - mm_bcast: a group (uct_group.h); the root posts a send, every other
//    rank posts a receive into its own buffer. `auto=ring`: the default
//    path (the root copies fragments into the group ring, receivers copy
//    them out); `cma` (UCX_MM_BCAST_CMA_THRESH=1, over the fragment size):
//    receivers read the root's buffer with process_vm_readv straight into
//    theirs, and the send completes once all have;
//  - p2p: N-1 sends over UCX's posix transport, messages over max_bcopy in
//    max_bcopy fragments (posix has no am_zcopy); its receivers' AM handler
//    counts the bytes in place, copying nothing (`p2p-posix`, as before),
//    or copies them into a receive buffer as UCP does with eager data
//    (`p2p-copy`: what mm_bcast's receivers do now).
//  - direct: an mm_incast group's direct bcast (uct_mm_incast.h), up to
//    its slot (UCX_MM_INCAST_DIRECT_SIZE): the root writes the bytes and
//    a flag into its slot, each receiver copies them out once it sees it.
// Each iteration ends when every receiver has all the bytes (a shared
// counter, the same for both) and the root may reuse its buffer: one hop
// out and one back, like the cache-line round trip timed in the same ranks
// and rounds (floor-rtt). Printed: median/min/max in us, ratios to the p2p
// median and to the floor of the same point.
#include "bench_common.h"
#include "benches.h"

#include "uct_mm_bcast.h"

#include <uct_group.h>

#include <algorithm>
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
    unsigned char *sink = nullptr; ///< p2p-copy: the receive buffer
};

ucs_status_t on_am(void *arg, void *data, size_t length, unsigned)
{
    auto *rx = static_cast<RxState *>(arg);
    if (rx->sink != nullptr) {
        const std::size_t n =
            length < rx->msg_bytes - rx->got ? length : rx->msg_bytes - rx->got;
        std::memcpy(rx->sink + rx->got, data, n);
    }
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

// One p2p send of `len` bytes at `data` on `ep`, retried while no resource.
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
        } else {
            PackArg arg{data, len};
            const ssize_t n = uct_ep_am_bcopy(ep, kAmId, pack, &arg, 0);
            st = n < 0 ? static_cast<ucs_status_t>(n) : UCS_OK;
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

// p2p root: one untimed, then `iters` timed iterations of N-1 sends (in
// max_bcopy fragments) + wait for all receivers.
void p2p_root_loop(UctIface &u, const std::vector<uct_ep_h> &eps,
                   std::size_t bytes, int iters, Board *b, int n,
                   std::vector<double> *samples)
{
    std::vector<unsigned char> buf(bytes, 0x5a);
    const std::size_t frag = u.attr.cap.am.max_bcopy;
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

void p2p_rx_loop(UctIface &u, RxState *rx, std::uint64_t expect)
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

void comp_noop(uct_completion_t *) {}

// Posts one group message and progresses until it completes.
void group_post_wait(UctIface &u, uct_group_h g, bool send, void *buf,
                     std::size_t bytes)
{
    uct_group_msg_t m{};
    m.coll = UCT_GROUP_COLL_BCAST;
    m.root = 0;
    m.buffer = buf;
    m.length = bytes;
    uct_completion_t comp{comp_noop, 1, UCS_OK};
    const ucs_status_t st =
        send ? uct_group_send(g, &m, &comp) : uct_group_recv(g, &m, &comp);
    if (st == UCS_INPROGRESS) {
        Spinner spin;
        while (comp.count != 0) {
            if (uct_worker_progress(u.worker) == 0) {
                spin.idle();
            } else {
                spin.busy();
            }
        }
    }
    if ((st != UCS_OK && st != UCS_INPROGRESS) || comp.status != UCS_OK) {
        std::fprintf(
            stderr, "group %s failed: %s\n", send ? "send" : "recv",
            ucs_status_string(st != UCS_INPROGRESS ? st : comp.status));
        _exit(2);
    }
}

// mm root: one untimed, then `iters` timed iterations of one group send
// + wait for all receivers.
void mm_root_loop(UctIface &u, uct_group_h g, std::size_t bytes, int iters,
                  Board *b, int n, std::vector<double> *samples)
{
    std::vector<unsigned char> buf(bytes, 0x5a);
    std::uint64_t target = 0;
    for (int it = 0; it <= iters; ++it) {
        const double t0 = now_us();
        group_post_wait(u, g, true, buf.data(), bytes);
        target += static_cast<std::uint64_t>(n - 1);
        Spinner spin;
        while (b->done.load(std::memory_order_acquire) < target) {
            if (uct_worker_progress(u.worker) == 0) {
                spin.idle();
            }
        }
        if (it > 0) {
            samples->push_back(now_us() - t0);
        }
    }
}

void mm_rx_loop(UctIface &u, uct_group_h g, std::size_t bytes, int iters,
                Board *b)
{
    std::vector<unsigned char> buf(bytes);
    for (int it = 0; it <= iters; ++it) {
        group_post_wait(u, g, false, buf.data(), bytes);
        b->done.fetch_add(1, std::memory_order_release);
    }
}

struct BcastResult {
    Stats floor; ///< ping-pong round trip inside this point
    Stats ring, cma, p2p, p2p_copy, direct;
    bool has_cma;               ///< timed: over the group's fragment size
    bool has_direct;            ///< timed: up to the direct slot
    Stats seg[kMaxSegVariants]; ///< the ring at Options::seg_sizes
};

uct_group_h create_group(UctIface &mm, Board *b, int which, int rank, int n)
{
    std::vector<const uct_iface_addr_t *> addrs;
    const uct_group_params_t gp = group_params(b, which, rank, n, 1, &addrs);
    uct_group_h group;
    if (uct_mm_bcast_group_create(mm.iface, &gp, &group) != UCS_OK) {
        _exit(4);
    }
    return group;
}

// Root: one posix ep to every other rank (their addresses in b->addr[which]).
std::vector<uct_ep_h> create_p2p(UctIface &px, Board *b, int which, int n)
{
    std::vector<uct_ep_h> eps;
    alignas(8) unsigned char dev[64] = {}; // 8 or 16 bytes
    uct_iface_get_device_address(px.iface,
                                 reinterpret_cast<uct_device_addr_t *>(dev));
    for (int i = 1; i < n; ++i) {
        uct_ep_params_t ep_params{};
        ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                               UCT_EP_PARAM_FIELD_DEV_ADDR |
                               UCT_EP_PARAM_FIELD_IFACE_ADDR;
        ep_params.iface = px.iface;
        ep_params.dev_addr = reinterpret_cast<uct_device_addr_t *>(dev);
        ep_params.iface_addr =
            reinterpret_cast<const uct_iface_addr_t *>(b->addr[which][i]);
        uct_ep_h ep;
        if (uct_ep_create(&ep_params, &ep) != UCS_OK) {
            _exit(5);
        }
        eps.push_back(ep);
    }
    return eps;
}

// Direct root: one untimed, then `iters` timed iterations of one direct
// bcast + wait for all receivers; receivers count each one done.
void direct_root_loop(DirectGroup &d, std::size_t bytes, int iters, Board *b,
                      int n, std::vector<double> *samples)
{
    std::vector<unsigned char> buf(bytes, 0x5a);
    uct_mm_incast_direct_msg_t m{};
    m.coll = UCT_MM_INCAST_DIRECT_BCAST;
    m.length = bytes;
    m.src = buf.data();
    std::uint64_t target = 0;
    for (int it = 0; it <= iters; ++it) {
        const double t0 = now_us();
        d.run(m);
        target += static_cast<std::uint64_t>(n - 1);
        Spinner spin;
        while (b->done.load(std::memory_order_acquire) < target) {
            spin.idle();
        }
        if (it > 0) {
            samples->push_back(now_us() - t0);
        }
    }
}

void direct_rx_loop(DirectGroup &d, std::size_t bytes, int iters, Board *b)
{
    std::vector<unsigned char> buf(bytes);
    uct_mm_incast_direct_msg_t m{};
    m.coll = UCT_MM_INCAST_DIRECT_BCAST;
    m.length = bytes;
    m.dst = buf.data();
    for (int it = 0; it <= iters; ++it) {
        d.run(m);
        b->done.fetch_add(1, std::memory_order_release);
    }
}

// One variant: the root sends and times (keeping its samples), the others
// receive.
struct Phase {
    UctIface *iface;
    std::vector<uct_ep_h> eps; ///< p2p: the root's eps
    uct_group_h group;         ///< mm: the group (eps unused)
    RxState *rx;               ///< p2p receivers
    std::vector<double> samples;
    DirectGroup *direct = nullptr; ///< direct: instead of the others
};

void run_phase(Phase *ph, int rank, Board *b, int n, std::size_t bytes,
               int iters)
{
    barrier(b, n);
    b->done.store(0);
    barrier(b, n);
    if (ph->direct != nullptr) {
        if (rank == 0) {
            direct_root_loop(*ph->direct, bytes, iters, b, n, &ph->samples);
        } else {
            direct_rx_loop(*ph->direct, bytes, iters, b);
        }
    } else if (ph->group != nullptr) {
        if (rank == 0) {
            mm_root_loop(*ph->iface, ph->group, bytes, iters, b, n,
                         &ph->samples);
        } else {
            mm_rx_loop(*ph->iface, ph->group, bytes, iters, b);
        }
    } else if (rank == 0) {
        p2p_root_loop(*ph->iface, ph->eps, bytes, iters, b, n, &ph->samples);
    } else {
        ph->rx->messages = 0;
        p2p_rx_loop(*ph->iface, ph->rx, static_cast<std::uint64_t>(iters + 1));
    }
    barrier(b, n);
}

Stats stats_of(const Phase &ph)
{
    return summarize(ph.samples.data(), static_cast<int>(ph.samples.size()));
}

void rank_body(int rank, Board *b, int n, std::size_t bytes, int iters,
               const std::vector<std::size_t> &seg_sizes, BcastResult *out)
{
    UctIface mm, mmc, px, pxc;
    if (!mm.open("mm_bcast", "mm_bcast") ||
        !mmc.open("mm_bcast", "mm_bcast", {{"CMA_THRESH", "1"}}) ||
        !px.open("posix", "posix") || !pxc.open("posix", "posix")) {
        _exit(3);
    }
    // The ring at other fragment sizes (addresses in b->addr[4 + i]).
    const std::size_t nseg =
        std::min<std::size_t>(seg_sizes.size(), kMaxSegVariants);
    std::vector<UctIface> seg(nseg);
    std::vector<uct_group_h> seg_groups;
    for (std::size_t i = 0; i < nseg; ++i) {
        if (!seg[i].open("mm_bcast", "mm_bcast",
                         {{"GROUP_SEG_SIZE", std::to_string(seg_sizes[i])}})) {
            _exit(3);
        }
        uct_iface_get_address(
            seg[i].iface,
            reinterpret_cast<uct_iface_addr_t *>(b->addr[4 + i][rank]));
    }
    RxState rx_px{b, bytes};
    std::vector<unsigned char> sink(bytes);
    RxState rx_pxc{b, bytes};
    rx_pxc.sink = sink.data();
    uct_iface_set_am_handler(px.iface, kAmId, on_am, &rx_px, 0);
    uct_iface_set_am_handler(pxc.iface, kAmId, on_am, &rx_pxc, 0);
    uct_iface_get_address(
        pxc.iface, reinterpret_cast<uct_iface_addr_t *>(b->addr[3][rank]));
    uct_iface_get_address(
        mm.iface, reinterpret_cast<uct_iface_addr_t *>(b->addr[0][rank]));
    uct_iface_get_address(
        px.iface, reinterpret_cast<uct_iface_addr_t *>(b->addr[1][rank]));
    uct_iface_get_address(
        mmc.iface, reinterpret_cast<uct_iface_addr_t *>(b->addr[2][rank]));
    barrier(b, n);
    uct_group_h ring = create_group(mm, b, 0, rank, n);
    uct_group_h cma = create_group(mmc, b, 2, rank, n);
    for (std::size_t i = 0; i < nseg; ++i) {
        seg_groups.push_back(create_group(seg[i], b, int(4 + i), rank, n));
    }
    std::vector<uct_ep_h> p2p, p2pc;
    if (rank == 0) {
        p2p = create_p2p(px, b, 1, n);
        p2pc = create_p2p(pxc, b, 3, n);
    }
    uct_group_attr_t attr{};
    uct_mm_bcast_group_iface_query(mm.iface, &attr);
    DirectGroup direct;
    direct.open(b, rank, n);
    BcastResult res{};
    res.has_cma = bytes > 8192; // over one fragment (GROUP_SEG_SIZE)
    res.has_direct = bytes <= direct.max_length;
    std::vector<Phase> phases;
    phases.push_back({&px, p2p, nullptr, &rx_px, {}});
    phases.push_back({&pxc, p2pc, nullptr, &rx_pxc, {}});
    phases.push_back({&mm, {}, ring, nullptr, {}});
    if (res.has_cma) {
        phases.push_back({&mmc, {}, cma, nullptr, {}});
    }
    const std::size_t first_seg = phases.size();
    for (std::size_t i = 0; i < nseg; ++i) {
        phases.push_back({&seg[i], {}, seg_groups[i], nullptr, {}});
    }
    if (res.has_direct) {
        phases.push_back({&direct.mm, {}, nullptr, nullptr, {}, &direct});
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
    barrier(b, n); // nobody leaves a group while another still uses it
    if (rank == 0) {
        res.floor = summarize(floor.data(), static_cast<int>(floor.size()));
        res.p2p = stats_of(phases[0]);
        res.p2p_copy = stats_of(phases[1]);
        res.ring = stats_of(phases[2]);
        if (res.has_cma) {
            res.cma = stats_of(phases[3]);
        }
        for (std::size_t i = 0; i < nseg; ++i) {
            res.seg[i] = stats_of(phases[first_seg + i]);
        }
        if (res.has_direct) {
            res.direct = stats_of(phases.back());
        }
        *out = res;
    }
    for (uct_ep_h ep : p2p) {
        uct_ep_destroy(ep);
    }
    for (uct_ep_h ep : p2pc) {
        uct_ep_destroy(ep);
    }
    uct_group_destroy(ring);
    uct_group_destroy(cma);
    direct.close();
    for (uct_group_h g : seg_groups) {
        uct_group_destroy(g);
    }
    for (UctIface &i : seg) {
        i.close();
    }
    mm.close();
    mmc.close();
    px.close();
    pxc.close();
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
                rank_body(rank, b, n, bytes, iters, opts.seg_sizes,
                          rank == 0 ? res : nullptr);
            });
            if (!ok) {
                std::printf("bcast    %2d %8zu failed\n", n, bytes);
                rc = 1;
                continue;
            }
            const double base = res->p2p.median_us;
            const double fl = res->floor.median_us;
            if (opts.collect != nullptr) {
                BcastPoint pt{n,
                              bytes,
                              res->ring.median_us,
                              res->has_cma ? res->cma.median_us : 0,
                              base,
                              {}};
                for (std::size_t i = 0;
                     i < opts.seg_sizes.size() && i < kMaxSegVariants; ++i) {
                    pt.seg_us.push_back(res->seg[i].median_us);
                }
                opts.collect->bcast.push_back(pt);
            }
            if (opts.quiet) {
                continue;
            }
            print_row({"bcast", n, bytes, "floor-rtt", res->floor, base, fl});
            print_row({"bcast", n, bytes, "p2p-posix", res->p2p, base, fl});
            print_row({"bcast", n, bytes, "p2p-copy", res->p2p_copy, base, fl});
            print_row({"bcast", n, bytes, "auto=ring", res->ring, base, fl});
            if (res->has_cma) {
                print_row({"bcast", n, bytes, "cma", res->cma, base, fl});
            }
            if (res->has_direct) {
                print_row({"bcast", n, bytes, "direct", res->direct, base, fl});
            }
        }
    }
    return rc;
}

} // namespace ucg_mm_bench
