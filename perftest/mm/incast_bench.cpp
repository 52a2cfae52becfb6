// SPDX-License-Identifier: BSD-3-Clause
// Incast (fan-in) latency: the N-1 other ranks send one contribution each
// to rank 0, which gathers them or reduces them (int32 sum, double sum).
//  - mm_incast: one group (uct_group.h) per configured mode
//    (UCX_MM_INCAST_MODE = batched, centralized, locked, atomic) and one in
//    auto mode (`auto=<mode the message ran in>`); the root posts a receive
//    into its buffer (no accumulate), each sender posts its send; gather
//    always runs a slot mode (configured locked/atomic print what ran);
//  - p2p: N-1 senders, each with AM short/bcopy fragments over UCX's posix
//    transport to the root, whose handler copies (gather) or reduces (the
//    same kernels as mm_incast) each fragment into the user buffer;
//  - direct (reductions up to UCX_MM_INCAST_DIRECT_SIZE): an mm_incast
//    group's direct reduce (uct_mm_incast.h): each rank writes its block
//    and a flag into its slot, the root reduces the N slots (its own too).
// Each iteration starts when the root bumps `go` on the board (the senders
// wait for it) and ends when the whole result is in the root's buffer: one
// hop out and one back, like bcast and the ping-pong round trip, which is
// timed in the same ranks and rounds (floor-rtt). Printed: median/min/max
// in us, ratios to the p2p median and to the floor of the same point.
#include "bench_common.h"
#include "benches.h"

#include "policy.h"
#include "reduce_ops.h"

#include <uct_mm_incast.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <unistd.h>
#include <vector>

namespace ucg_mm_bench {
namespace {

constexpr uint8_t kAmId = 9;
constexpr unsigned kOffsetBits = 56; ///< p2p header: slot << 56 | offset

struct Coll {
    const char *name;
    bool gather;
    ucg_op_t op;
    ucg_dtype_t dtype;
};
constexpr Coll kColls[] = {{"gather", true, UCG_OP_SUM, UCG_DTYPE_UINT8},
                           {"sum_i32", false, UCG_OP_SUM, UCG_DTYPE_INT32},
                           {"sum_f64", false, UCG_OP_SUM, UCG_DTYPE_DOUBLE}};

constexpr uct_mm_incast_mode_t kModes[] = {
    UCT_MM_INCAST_MODE_BATCHED, UCT_MM_INCAST_MODE_CENTRALIZED,
    UCT_MM_INCAST_MODE_LOCKED, UCT_MM_INCAST_MODE_ATOMIC,
    UCT_MM_INCAST_MODE_AUTO};
constexpr int kNumModes = sizeof(kModes) / sizeof(kModes[0]);

const char *mode_name(uct_mm_incast_mode_t mode)
{
    return uct_mm_incast_mode_name(mode);
}

/// Root of the p2p baseline: where arriving fragments go.
struct P2pRx {
    std::byte *out = nullptr;
    std::size_t msg_bytes = 0; ///< one sender's contribution
    std::size_t elem_bytes = 1;
    bool reduce = false; ///< false: gather
    ucg_op_t op = UCG_OP_SUM;
    ucg_dtype_t dtype = UCG_DTYPE_UINT8;
    std::size_t got = 0;         ///< bytes of this incast
    std::vector<double> aligned; ///< a misaligned fragment, copied
};

ucs_status_t on_frag(void *arg, void *data, size_t length, unsigned)
{
    auto *rx = static_cast<P2pRx *>(arg);
    uint64_t hdr;
    std::memcpy(&hdr, data, sizeof(hdr));
    const std::size_t slot = hdr >> kOffsetBits;
    const std::size_t off = hdr & ((uint64_t{1} << kOffsetBits) - 1);
    const auto *src = static_cast<const std::byte *>(data) + sizeof(hdr);
    const std::size_t n = length - sizeof(hdr);
    if (!rx->reduce) {
        std::memcpy(rx->out + slot * rx->msg_bytes + off, src, n);
    } else {
        // The same kernels as mm_incast's root. posix's payload may be
        // misaligned for the element (4 mod 8 here): such a fragment is
        // first copied to an aligned buffer, as a receiver reducing from
        // any transport's buffer must (unaligned loads are UB).
        const void *one = src;
        if (reinterpret_cast<std::uintptr_t>(src) % rx->elem_bytes != 0) {
            rx->aligned.resize(n / sizeof(double) + 1);
            std::memcpy(rx->aligned.data(), src, n);
            one = rx->aligned.data();
        }
        uct_mm_incast::reduce_multi(rx->op, rx->dtype, rx->out + off, &one, 1,
                                    n / rx->elem_bytes, true);
    }
    rx->got += n;
    return UCS_OK;
}

struct FragArg {
    uint64_t hdr;
    const std::byte *data;
    std::size_t len;
};

size_t pack_frag(void *dest, void *arg)
{
    auto *a = static_cast<FragArg *>(arg);
    std::memcpy(dest, &a->hdr, sizeof(a->hdr));
    std::memcpy(static_cast<std::byte *>(dest) + sizeof(a->hdr), a->data,
                a->len);
    return sizeof(a->hdr) + a->len;
}

// A sender's contribution over posix: short if it fits, else bcopy
// fragments of whole elements, each retried while the FIFO is full.
void p2p_send(UctIface &u, uct_ep_h ep, uint64_t slot, const std::byte *data,
              std::size_t bytes, std::size_t elem_bytes)
{
    const std::size_t max_frag =
        (u.attr.cap.am.max_bcopy - sizeof(uint64_t)) / elem_bytes * elem_bytes;
    for (std::size_t off = 0; off < bytes; off += max_frag) {
        FragArg a{(slot << kOffsetBits) | off, data + off,
                  bytes - off < max_frag ? bytes - off : max_frag};
        Spinner full;
        for (;;) {
            ucs_status_t st;
            if (a.len + sizeof(uint64_t) <= u.attr.cap.am.max_short) {
                st = uct_ep_am_short(ep, kAmId, a.hdr, a.data,
                                     static_cast<unsigned>(a.len));
            } else {
                const ssize_t n = uct_ep_am_bcopy(ep, kAmId, pack_frag, &a, 0);
                st = n < 0 ? static_cast<ucs_status_t>(n) : UCS_OK;
            }
            if (st == UCS_OK) {
                break;
            }
            if (st != UCS_ERR_NO_RESOURCE) {
                std::fprintf(stderr, "p2p send: %s\n", ucs_status_string(st));
                _exit(2);
            }
            uct_worker_progress(u.worker);
            full.idle(); // the root must run to drain its FIFO
        }
    }
}

struct IncastResult {
    Stats floor; ///< ping-pong round trip inside this point
    Stats p2p;
    Stats direct; ///< reductions up to the direct slot
    bool has_direct;
    Stats modes[kNumModes];
    Stats seg[kMaxSegVariants]; ///< MODE=auto at Options::seg_sizes
    uct_mm_incast_mode_t resolved[kNumModes]; ///< what each group runs
    bool ok[kNumModes];
};

/// Arguments of one (N, collective, size) point.
struct Point {
    int n;
    const Coll *coll;
    std::size_t msg_bytes;
    int iters;
};

/// One variant: how the root starts and finishes an incast, and how a
/// sender contributes. The root keeps its samples (us).
struct Variant {
    std::function<void()> prepare;    ///< root, before the clock starts
    std::function<void()> complete;   ///< root: returns with the result
    std::function<void()> contribute; ///< sender, after `go`
    std::vector<double> samples;
};

// `iters` timed incasts of one variant, after one untimed.
void run_variant(Variant *v, int rank, Board *b, int n, int iters)
{
    barrier(b, n);
    const uint64_t base = b->go.load(); // nobody bumps it before the barrier
    barrier(b, n);
    for (int it = 0; it <= iters; ++it) {
        if (rank != 0) {
            Spinner spin;
            while (b->go.load(std::memory_order_acquire) <= base + it) {
                spin.idle();
            }
            v->contribute();
            continue;
        }
        v->prepare();
        const double t0 = now_us();
        b->go.store(base + it + 1, std::memory_order_release);
        v->complete();
        if (it > 0) {
            v->samples.push_back(now_us() - t0);
        }
    }
}

/// The p2p baseline of one rank: a posix iface, an ep to the root.
struct P2p {
    UctIface px;
    uct_ep_h ep = nullptr;
    P2pRx rx;
    std::vector<std::byte> buf;

    void open(const Point &pt, int rank, Board *b, Variant *v);
    void close()
    {
        if (ep != nullptr) {
            uct_ep_destroy(ep);
        }
        px.close();
    }
};

void P2p::open(const Point &pt, int rank, Board *b, Variant *v)
{
    if (!px.open("posix", "posix")) {
        _exit(3);
    }
    const std::size_t elem = uct_mm_incast::dtype_bytes(pt.coll->dtype);
    const std::size_t senders = static_cast<std::size_t>(pt.n - 1);
    const bool gather = pt.coll->gather;
    buf.assign(pt.msg_bytes * senders, std::byte{1});
    rx.out = buf.data();
    rx.msg_bytes = pt.msg_bytes;
    rx.elem_bytes = gather ? 1 : elem;
    rx.reduce = !gather;
    rx.op = pt.coll->op;
    rx.dtype = pt.coll->dtype;
    uct_iface_set_am_handler(px.iface, kAmId, on_frag, &rx, 0);
    uct_iface_get_address(
        px.iface, reinterpret_cast<uct_iface_addr_t *>(b->addr[1][rank]));
    barrier(b, pt.n);
    if (rank != 0) {
        alignas(8) unsigned char dev[64] =
            {}; // 8 or 16 bytes // one host: my device address is the root's
        uct_iface_get_device_address(
            px.iface, reinterpret_cast<uct_device_addr_t *>(dev));
        uct_ep_params_t ep_params{};
        ep_params.field_mask = UCT_EP_PARAM_FIELD_IFACE |
                               UCT_EP_PARAM_FIELD_DEV_ADDR |
                               UCT_EP_PARAM_FIELD_IFACE_ADDR;
        ep_params.iface = px.iface;
        ep_params.dev_addr = reinterpret_cast<uct_device_addr_t *>(dev);
        ep_params.iface_addr =
            reinterpret_cast<const uct_iface_addr_t *>(b->addr[1][0]);
        if (uct_ep_create(&ep_params, &ep) != UCS_OK) {
            _exit(5);
        }
    }
    v->prepare = [this, pt, gather] { // posting the receive buffer
        rx.got = 0;
        if (!gather) {
            std::memset(buf.data(), 0, pt.msg_bytes); // the sum's identity
        }
    };
    v->complete = [this, pt, senders] {
        Spinner spin;
        while (rx.got < pt.msg_bytes * senders) {
            if (uct_worker_progress(px.worker) == 0) {
                spin.idle();
            } else {
                spin.busy();
            }
        }
    };
    v->contribute = [this, pt, rank] {
        p2p_send(px, ep, static_cast<uint64_t>(rank - 1), buf.data(),
                 pt.msg_bytes, rx.elem_bytes);
    };
}

/// One mm_incast iface and group of one rank, in one configured mode.
struct Mm {
    UctIface mm;
    uct_group_h g = nullptr;
    std::vector<std::byte> buf;
    uct_group_msg_t msg{};

    /// seg_bytes: GROUP_SEG_SIZE (0: the transport's default).
    void open(const Point &pt, int rank, uct_mm_incast_mode_t mode, Board *b,
              Variant *v, std::size_t seg_bytes = 0);
    void close()
    {
        if (g != nullptr) {
            uct_group_destroy(g);
        }
        mm.close();
    }
};

void comp_noop(uct_completion_t *) {}

// Posts one group message and progresses until it completes.
void group_post_wait(UctIface &u, uct_group_h g, bool send,
                     const uct_group_msg_t &m)
{
    uct_completion_t comp{comp_noop, 1, UCS_OK};
    Spinner spin;
    ucs_status_t st;
    while ((st = send ? uct_group_send(g, &m, &comp)
                      : uct_group_recv(g, &m, &comp)) == UCS_ERR_NO_RESOURCE) {
        uct_worker_progress(u.worker);
        spin.idle();
    }
    if (st == UCS_INPROGRESS) {
        while (comp.count != 0) {
            if (uct_worker_progress(u.worker) == 0) {
                spin.idle();
            } else {
                spin.busy(); // a chunk consumed is progress
            }
        }
        st = comp.status;
    }
    if (st != UCS_OK) {
        std::fprintf(stderr, "incast %s: %s\n", send ? "send" : "recv",
                     ucs_status_string(st));
        _exit(6);
    }
}

void Mm::open(const Point &pt, int rank, uct_mm_incast_mode_t mode, Board *b,
              Variant *v, std::size_t seg_bytes)
{
    std::vector<std::pair<std::string, std::string>> cfg{
        {"MODE", mode_name(mode)}};
    if (seg_bytes != 0) {
        cfg.emplace_back("GROUP_SEG_SIZE", std::to_string(seg_bytes));
    }
    if (!mm.open("mm_incast", "mm_incast", cfg)) {
        _exit(3);
    }
    uct_iface_get_address(
        mm.iface, reinterpret_cast<uct_iface_addr_t *>(b->addr[0][rank]));
    barrier(b, pt.n);
    std::vector<const uct_iface_addr_t *> addrs;
    const uct_group_params_t gp = group_params(b, 0, rank, pt.n, 1, &addrs);
    if (uct_mm_incast_group_create(mm.iface, &gp, &g) != UCS_OK) {
        _exit(4);
    }
    barrier(b, pt.n); // every rank read the addresses before the next open
    buf.assign(pt.msg_bytes * static_cast<std::size_t>(pt.n), std::byte{1});
    msg.coll = pt.coll->gather ? UCT_GROUP_COLL_GATHER : UCT_GROUP_COLL_REDUCE;
    msg.root = 0;
    msg.op = pt.coll->op;
    msg.dtype = pt.coll->dtype;
    msg.length = pt.msg_bytes;
    msg.buffer = buf.data();
    v->prepare = [] {};
    v->complete = [this] { group_post_wait(mm, g, false, msg); };
    v->contribute = [this] { group_post_wait(mm, g, true, msg); };
}

/// A direct reduce to rank 0 (uct_mm_incast.h): every rank writes its
/// slot, the root reduces them all (its own block too) into its buffer.
struct Direct {
    DirectGroup d;
    std::vector<std::byte> src, dst;
    uct_mm_incast_direct_msg_t msg{};

    /// False where the point has no direct message (gather, too long).
    bool open(const Point &pt, int rank, Board *b, Variant *v)
    {
        d.open(b, rank, pt.n);
        if (pt.coll->gather || pt.msg_bytes > d.max_length) {
            return false;
        }
        src.assign(pt.msg_bytes, std::byte{1});
        dst.assign(pt.msg_bytes, std::byte{0});
        msg.coll = UCT_MM_INCAST_DIRECT_REDUCE;
        msg.op = pt.coll->op;
        msg.dtype = pt.coll->dtype;
        msg.length = pt.msg_bytes;
        msg.src = src.data();
        msg.dst = dst.data();
        v->prepare = [] {};
        v->complete = [this] { d.run(msg); };
        v->contribute = [this] { d.run(msg); };
        return true;
    }
};

// Every variant of one point, interleaved: kRounds rounds, each running
// every variant for iters / kRounds incasts, so that a change of load on
// the machine hits all variants alike.
void rank_body(const Point &pt, int rank, Board *b,
               const std::vector<std::size_t> &seg_sizes, IncastResult *out)
{
    constexpr int kRounds = 5;
    P2p p2p;
    Mm mm[kNumModes];
    Variant vars[kNumModes + 1];
    IncastResult res{};
    p2p.open(pt, rank, b, &vars[kNumModes]);
    std::vector<Variant *> active{&vars[kNumModes]};
    for (int m = 0; m < kNumModes; ++m) {
        mm[m].open(pt, rank, kModes[m], b, &vars[m]);
        active.push_back(&vars[m]);
    }
    // MODE=auto at other fragment sizes.
    const std::size_t nseg =
        std::min<std::size_t>(seg_sizes.size(), kMaxSegVariants);
    std::vector<Mm> seg(nseg);
    std::vector<Variant> seg_vars(nseg);
    for (std::size_t i = 0; i < nseg; ++i) {
        seg[i].open(pt, rank, UCT_MM_INCAST_MODE_AUTO, b, &seg_vars[i],
                    seg_sizes[i]);
        active.push_back(&seg_vars[i]);
    }
    Direct direct;
    Variant direct_var;
    res.has_direct = direct.open(pt, rank, b, &direct_var);
    if (res.has_direct) {
        active.push_back(&direct_var);
    }
    const int per_round = (pt.iters + kRounds - 1) / kRounds;
    std::vector<double> floor;
    for (int round = 0; round < kRounds; ++round) {
        run_floor(rank, b, pt.n, per_round, &floor);
        for (Variant *v : active) {
            run_variant(v, rank, b, pt.n, per_round);
        }
    }
    barrier(b, pt.n); // nobody leaves while another still polls
    for (int m = 0; m < kNumModes; ++m) {
        // What ran: known once the group has connected (it has).
        res.resolved[m] = uct_mm_incast_group_msg_mode(mm[m].g, &mm[m].msg);
        res.ok[m] = true;
    }
    if (rank == 0) {
        auto stats = [](const Variant &v) {
            return summarize(v.samples.data(),
                             static_cast<int>(v.samples.size()));
        };
        res.floor = summarize(floor.data(), static_cast<int>(floor.size()));
        res.p2p = stats(vars[kNumModes]);
        for (int m = 0; m < kNumModes; ++m) {
            res.modes[m] = stats(vars[m]);
        }
        for (std::size_t i = 0; i < nseg; ++i) {
            res.seg[i] = stats(seg_vars[i]);
        }
        if (res.has_direct) {
            res.direct = stats(direct_var);
        }
        *out = res;
    }
    p2p.close();
    for (Mm &m : mm) {
        m.close();
    }
    for (Mm &m : seg) {
        m.close();
    }
    direct.d.close();
}

void print_point(const Point &pt, const IncastResult &res)
{
    const double base = res.p2p.median_us;
    const double floor_us = res.floor.median_us;
    print_row({pt.coll->name, pt.n, pt.msg_bytes, "floor-rtt", res.floor, base,
               floor_us});
    print_row({pt.coll->name, pt.n, pt.msg_bytes, "p2p-posix", res.p2p, base,
               floor_us});
    for (int m = 0; m < kNumModes; ++m) {
        if (!res.ok[m]) {
            continue;
        }
        std::string variant = mode_name(kModes[m]);
        if (kModes[m] == UCT_MM_INCAST_MODE_AUTO ||
            res.resolved[m] != kModes[m]) {
            variant += std::string("=") + mode_name(res.resolved[m]);
        }
        print_row({pt.coll->name, pt.n, pt.msg_bytes, variant, res.modes[m],
                   base, floor_us});
    }
    if (res.has_direct) {
        print_row({pt.coll->name, pt.n, pt.msg_bytes, "direct", res.direct,
                   base, floor_us});
    }
}

static_assert(UCT_MM_INCAST_MODE_LAST == 5, "IncastPoint::mode_us");

IncastPoint record(const Point &pt, const IncastResult &res, std::size_t nseg)
{
    IncastPoint p;
    p.coll = static_cast<int>(pt.coll - kColls);
    p.n = pt.n;
    p.bytes = pt.msg_bytes;
    p.p2p_us = res.p2p.median_us;
    for (std::size_t i = 0; i < nseg && i < kMaxSegVariants; ++i) {
        p.seg_us.push_back(res.seg[i].median_us);
    }
    for (int m = 0; m < kNumModes; ++m) {
        if (kModes[m] == UCT_MM_INCAST_MODE_AUTO) {
            p.auto_us = res.modes[m].median_us;
        }
        const auto ran = res.resolved[m];
        if (!res.ok[m] || kModes[m] == UCT_MM_INCAST_MODE_AUTO ||
            ran <= UCT_MM_INCAST_MODE_AUTO || ran >= UCT_MM_INCAST_MODE_LAST) {
            continue;
        }
        double &t = p.mode_us[ran];
        const double us = res.modes[m].median_us;
        t = (t == 0 || us < t) ? us : t;
    }
    return p;
}

} // namespace

int bench_incast(const Options &opts)
{
    SharedBoard<IncastResult> shared;
    Board *board = shared.board();
    IncastResult *res = shared.result();
    int rc = 0;
    for (int n : opts.group_sizes) {
        for (const Coll &coll : kColls) {
            for (std::size_t bytes : opts.msg_bytes) {
                bytes = bytes < 8 ? 8 : bytes / 8 * 8; // whole doubles
                int iters =
                    static_cast<int>(iterations_for(bytes) * opts.iter_scale);
                const Point pt{n, &coll, bytes, iters < 3 ? 3 : iters};
                shared.reset();
                const bool ok = run_ranks(n, board, [&](int rank, Board *b) {
                    rank_body(pt, rank, b, opts.seg_sizes,
                              rank == 0 ? res : nullptr);
                });
                if (!ok) {
                    std::printf("%-8s %2d %8zu failed\n", coll.name, n, bytes);
                    rc = 1;
                    continue;
                }
                if (!opts.quiet) {
                    print_point(pt, *res);
                }
                if (opts.collect != nullptr) {
                    opts.collect->incast.push_back(
                        record(pt, *res, opts.seg_sizes.size()));
                }
            }
        }
    }
    return rc;
}

} // namespace ucg_mm_bench
