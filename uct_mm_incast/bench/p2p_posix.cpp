// SPDX-License-Identifier: BSD-3-Clause
// Point-to-point baseline over UCX's posix UCT transport.
#include "p2p_posix.h"

#include "backoff.h"

#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace bench {
namespace {

constexpr uint8_t kAmData = 1;
constexpr uint8_t kAmCredit = 2;

struct FragHeader {
    uint32_t slot;   ///< sender's slot (member order without the root)
    uint32_t seq;    ///< incast number (low bits)
    uint64_t offset; ///< byte offset of this fragment
};

void must(ucs_status_t st, const char *what)
{
    if (st != UCS_OK) {
        std::fprintf(stderr, "bench: %s: %s\n", what, ucs_status_string(st));
        std::exit(2);
    }
}

struct PackArg {
    FragHeader hdr;
    const std::byte *data;
    std::size_t len;
};

size_t pack(void *dest, void *arg)
{
    auto *a = static_cast<PackArg *>(arg);
    std::memcpy(dest, &a->hdr, sizeof(a->hdr));
    std::memcpy(static_cast<std::byte *>(dest) + sizeof(a->hdr), a->data,
                a->len);
    return sizeof(a->hdr) + a->len;
}

} // namespace

void PosixRank::open(int rank, PosixAddress *table)
{
    rank_ = rank;
    table_ = table;
    must(ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &async_),
         "async");
    must(uct_worker_create(async_, UCS_THREAD_MODE_SINGLE, &worker_), "worker");
    uct_component_h *comps;
    unsigned num_comps;
    must(uct_query_components(&comps, &num_comps), "components");
    for (unsigned i = 0; (i < num_comps) && (md_ == nullptr); ++i) {
        uct_component_attr_t attr{};
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        must(uct_component_query(comps[i], &attr), "component query");
        if (std::strcmp(attr.name, "posix") != 0) {
            continue;
        }
        uct_md_config_t *cfg;
        must(uct_md_config_read(comps[i], nullptr, nullptr, &cfg), "md cfg");
        must(uct_md_open(comps[i], "posix", cfg, &md_), "md open");
        uct_config_release(cfg);
    }
    uct_release_component_list(comps);
    if (md_ == nullptr) {
        must(UCS_ERR_NO_DEVICE, "no posix md");
    }
    uct_iface_config_t *icfg;
    must(uct_md_iface_config_read(md_, "posix", nullptr, nullptr, &icfg),
         "iface cfg");
    uct_iface_params_t params{};
    params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                        UCT_IFACE_PARAM_FIELD_DEVICE |
                        UCT_IFACE_PARAM_FIELD_CPU_MASK;
    params.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name = "posix";
    params.mode.device.dev_name = "memory";
    UCS_CPU_ZERO(&params.cpu_mask);
    must(uct_iface_open(md_, worker_, &params, icfg, &iface_), "iface open");
    uct_config_release(icfg);
    uct_iface_attr_t attr;
    must(uct_iface_query(iface_, &attr), "iface query");
    max_bcopy_ = attr.cap.am.max_bcopy - sizeof(FragHeader);
    must(uct_iface_set_am_handler(iface_, kAmData, on_data, this, 0),
         "am handler");
    must(uct_iface_set_am_handler(iface_, kAmCredit, on_credit, this, 0),
         "am handler");
    PosixAddress &me = table[rank];
    me.dev_len = static_cast<uint32_t>(attr.device_addr_len);
    me.iface_len = static_cast<uint32_t>(attr.iface_addr_len);
    must(uct_iface_get_device_address(
             iface_, reinterpret_cast<uct_device_addr_t *>(me.dev)),
         "dev addr");
    must(uct_iface_get_address(iface_,
                               reinterpret_cast<uct_iface_addr_t *>(me.iface)),
         "iface addr");
    uct_iface_progress_enable(iface_, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
}

void PosixRank::connect(int num_ranks)
{
    eps_.assign(num_ranks, nullptr);
    for (int r = 0; r < num_ranks; ++r) {
        uct_ep_params_t p{};
        p.field_mask = UCT_EP_PARAM_FIELD_IFACE | UCT_EP_PARAM_FIELD_DEV_ADDR |
                       UCT_EP_PARAM_FIELD_IFACE_ADDR;
        p.iface = iface_;
        p.dev_addr = reinterpret_cast<uct_device_addr_t *>(table_[r].dev);
        p.iface_addr = reinterpret_cast<uct_iface_addr_t *>(table_[r].iface);
        must(uct_ep_create(&p, &eps_[r]), "ep create");
    }
}

void PosixRank::close()
{
    for (uct_ep_h ep : eps_) {
        uct_ep_destroy(ep);
    }
    uct_iface_close(iface_);
    uct_md_close(md_);
    uct_worker_destroy(worker_);
    ucs_async_context_destroy(async_);
}

void PosixRank::reset()
{
    credits_ = 0;
    acc_.clear();
    got_.assign(kWindow, 0);
}

void PosixRank::drain(uint64_t iters)
{
    uct_mm_incast::Backoff backoff;
    while (credits_ < iters) {
        progress();
        backoff.pause();
    }
}

ucs_status_t PosixRank::on_data(void *arg, void *data, size_t length, unsigned)
{
    auto *self = static_cast<PosixRank *>(arg);
    FragHeader h;
    std::memcpy(&h, data, sizeof(h));
    const std::byte *src = static_cast<std::byte *>(data) + sizeof(h);
    const std::size_t n = length - sizeof(h);
    std::byte *acc = self->acc_[h.seq % kWindow].data();
    if (self->cur_reduce_) { // the local reduction: int32 sum
        for (std::size_t i = 0; i + 4 <= n; i += 4) {
            int32_t a, b;
            std::memcpy(&a, acc + h.offset + i, 4);
            std::memcpy(&b, src + i, 4);
            a += b;
            std::memcpy(acc + h.offset + i, &a, 4);
        }
    } else {
        std::memcpy(acc + h.slot * self->cur_bytes_ + h.offset, src, n);
    }
    self->got_[h.seq % kWindow] += n;
    return UCS_OK;
}

ucs_status_t PosixRank::on_credit(void *arg, void *, size_t, unsigned)
{
    ++static_cast<PosixRank *>(arg)->credits_;
    return UCS_OK;
}

void PosixRank::root_incast(uint64_t k, std::size_t bytes, bool reduce,
                            int root, int num_ranks, void *out)
{
    const std::size_t senders = static_cast<std::size_t>(num_ranks - 1);
    const std::size_t acc_bytes = reduce ? bytes : bytes * senders;
    if (acc_.empty()) {
        acc_.assign(kWindow, std::vector<std::byte>(acc_bytes));
        cur_bytes_ = bytes;
        cur_reduce_ = reduce;
        cur_root_ = root;
    }
    const uint64_t w = k % kWindow;
    uct_mm_incast::Backoff backoff;
    while (got_[w] < bytes * senders) {
        progress();
        backoff.pause();
    }
    std::memcpy(out, acc_[w].data(), acc_bytes);
    got_[w] = 0;
    if (reduce) {
        std::memset(acc_[w].data(), 0, acc_bytes); // identity of sum
    }
    for (int r = 0; r < num_ranks; ++r) {
        if (r == root) {
            continue;
        }
        while (uct_ep_am_short(eps_[r], kAmCredit, k, nullptr, 0) ==
               UCS_ERR_NO_RESOURCE) {
            progress();
            backoff.pause();
        }
    }
}

void PosixRank::send_incast(uint64_t k, std::size_t bytes, int root,
                            const void *data)
{
    uct_mm_incast::Backoff backoff;
    while (k >= credits_ + kWindow) {
        progress();
        backoff.pause();
    }
    PackArg a;
    a.hdr.slot = static_cast<uint32_t>((rank_ < root) ? rank_ : rank_ - 1);
    a.hdr.seq = static_cast<uint32_t>(k);
    for (std::size_t off = 0; off < bytes; off += max_bcopy_) {
        a.hdr.offset = off;
        a.data = static_cast<const std::byte *>(data) + off;
        a.len = std::min(max_bcopy_, bytes - off);
        while (uct_ep_am_bcopy(eps_[root], kAmData, pack, &a, 0) < 0) {
            progress();
            backoff.pause();
        }
    }
    progress();
}

} // namespace bench
