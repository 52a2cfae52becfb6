// SPDX-License-Identifier: BSD-3-Clause
// ud_mcast side: a group of 1 + N members over uct_group.h (UDP wire).
// Latency round: the root broadcasts 8 B, then the last receiver
// broadcasts 8 B back (the root times it). Bandwidth: the root broadcasts
// 64 KiB messages, pipelined up to max_outstanding, then every receiver
// broadcasts 8 B in turn so the root knows all have everything.
#include "bench.h"

#include "uct_ud_mcast.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <vector>

namespace ucg_mcast_bench {
namespace {

struct Pending {
    uct_completion_t comp{};
    bool done = true; ///< nothing posted yet counts as done
};

void on_done(uct_completion_t *c)
{
    if (c->status != UCS_OK) {
        die("group message failed");
    }
    reinterpret_cast<Pending *>(c)->done = true;
}

uct_group_h make_group(Uct &u, Board *b, unsigned rank, unsigned size,
                       uint64_t key)
{
    uct_iface_get_address(u.iface,
                          reinterpret_cast<uct_iface_addr_t *>(b->addr[rank]));
    barrier(b, 0, size, nullptr);
    std::vector<const uct_iface_addr_t *> addrs(size);
    for (unsigned i = 0; i < size; ++i) {
        addrs[i] = reinterpret_cast<const uct_iface_addr_t *>(b->addr[i]);
    }
    uct_group_params_t p{};
    p.field_mask =
        UCT_GROUP_PARAM_FIELD_KEY | UCT_GROUP_PARAM_FIELD_MEMBER_INDEX |
        UCT_GROUP_PARAM_FIELD_GROUP_SIZE | UCT_GROUP_PARAM_FIELD_MEMBER_ADDRS;
    p.group_key = key;
    p.member_index = rank;
    p.group_size = size;
    p.member_addrs = addrs.data();
    uct_group_h g;
    if (uct_ud_mcast_group_create(u.iface, &p, &g) != UCS_OK) {
        die("uct_ud_mcast_group_create");
    }
    return g;
}

// Posts this member's part of one message (retrying while the group is
// full); the message's Pending becomes done at completion.
void post(Uct &u, uct_group_h g, unsigned rank, unsigned root, void *buf,
          size_t len, Pending *p)
{
    uct_group_msg_t m{};
    m.coll = UCT_GROUP_COLL_BCAST;
    m.root = root;
    m.length = len;
    m.buffer = buf;
    p->comp = {on_done, 1, UCS_OK};
    p->done = false;
    for (;;) {
        const ucs_status_t st = rank == root ? uct_group_send(g, &m, &p->comp)
                                             : uct_group_recv(g, &m, &p->comp);
        if (st == UCS_OK) {
            p->done = true;
            return;
        }
        if (st == UCS_INPROGRESS) {
            return;
        }
        if (st != UCS_ERR_NO_RESOURCE) {
            die("group post failed");
        }
        u.progress_or_idle();
    }
}

void wait_done(Uct &u, Pending *p)
{
    while (!p->done) {
        u.progress_or_idle();
    }
}

// The last receiver sends its answer only once it has the root's message
// (its post would otherwise send at once, not answer).
void round_trip(Uct &u, uct_group_h g, unsigned rank, unsigned last)
{
    uint64_t a = 0, c = 0;
    Pending pa, pc;
    post(u, g, rank, 0, &a, sizeof(a), &pa);
    if (rank == last) {
        wait_done(u, &pa);
    }
    post(u, g, rank, last, &c, sizeof(c), &pc);
    wait_done(u, &pa);
    wait_done(u, &pc);
}

} // namespace

void mcast_latency(unsigned rank, Board *b, unsigned n, const Options &o)
{
    Uct u("ud_mcast", o.dev, {});
    uct_group_h g = make_group(u, b, rank, n + 1, 100 + n);
    for (unsigned i = 0; i < 200; ++i) {
        round_trip(u, g, rank, n); // warm-up (and the join barrier)
    }
    for (unsigned rep = 0; rep < o.reps; ++rep) {
        barrier(b, 1 + rep, n + 1, &u);
        const double t0 = now_us();
        for (unsigned i = 0; i < o.lat_rounds; ++i) {
            round_trip(u, g, rank, n);
        }
        if (rank == 0) {
            b->result[rep] = (now_us() - t0) / o.lat_rounds;
        }
    }
    barrier(b, 1 + o.reps, n + 1, &u);
    if (getenv("UCG_MCAST_BENCH_DEBUG") != nullptr) {
        uct_ud_mcast_counters_t c;
        uct_ud_mcast_iface_counters(u.iface, &c);
        std::fprintf(stderr,
                     "rank %u: tx %lu resent %lu acks %lu nacks %lu ctrl %lu "
                     "rx %lu dup %lu ooo %lu early %lu failed %lu\n",
                     rank, c.tx_packets, c.tx_resent, c.tx_acks, c.tx_nacks,
                     c.tx_ctrl, c.rx_packets, c.rx_duplicate, c.rx_out_of_order,
                     c.drop_early, c.tx_failed);
    }
    uct_group_destroy(g);
}

void mcast_bandwidth(unsigned rank, Board *b, unsigned n, double loss,
                     const Options &o)
{
    const std::string l = std::to_string(loss);
    Uct u("ud_mcast", o.dev, {{"RX_LOSS", l}});
    uct_group_h g = make_group(u, b, rank, n + 1, 200 + n);
    uct_group_attr_t attr;
    uct_ud_mcast_group_iface_query(u.iface, &attr);
    const unsigned depth = attr.max_outstanding;
    std::vector<std::vector<uint8_t>> bufs(depth,
                                           std::vector<uint8_t>(kBwBytes, 1));
    std::vector<Pending> pend(depth);
    std::vector<uint64_t> small(n + 1);
    std::vector<Pending> spend(n + 1);
    round_trip(u, g, rank, n); // the join barrier, outside the timing
    for (unsigned rep = 0; rep < o.reps; ++rep) {
        barrier(b, 1 + rep, n + 1, &u);
        uct_ud_mcast_counters_t c0, c1;
        uct_ud_mcast_iface_counters(u.iface, &c0);
        const double t0 = now_us();
        for (unsigned i = 0; i < o.bw_msgs; ++i) {
            Pending &p = pend[i % depth];
            if (i >= depth) {
                wait_done(u, &p);
            }
            post(u, g, rank, 0, bufs[i % depth].data(), kBwBytes, &p);
        }
        for (unsigned r = 1; r <= n; ++r) { // "I have it all", in turn
            post(u, g, rank, r, &small[r], 8, &spend[r]);
        }
        for (unsigned i = 0; i < depth; ++i) {
            wait_done(u, &pend[i]);
        }
        for (unsigned r = 1; r <= n; ++r) {
            wait_done(u, &spend[r]);
        }
        if (rank == 0) {
            b->result[rep] = (now_us() - t0) * 1e-6;
        }
        uct_ud_mcast_iface_counters(u.iface, &c1);
        b->overhead[rep][rank] = c1.tx_overhead_bytes - c0.tx_overhead_bytes;
    }
    barrier(b, 1 + o.reps, n + 1, &u);
    uct_group_destroy(g);
}

} // namespace ucg_mcast_bench
