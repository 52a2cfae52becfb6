// SPDX-License-Identifier: BSD-3-Clause
// VerbsWire: device and UD QP setup, address handles, rdma_cm multicast
// join with ibv_attach_mcast, and the completion queue poll.
#include "verbs_wire.h"

#include "uct_mm_common/log.h"
#include "udp_wire.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

namespace uct_ud_mcast {

using uct_mm_common::log;
using uct_mm_common::LogLevel;

namespace {

constexpr size_t kGrh = 40; // a UD receive starts with the GRH
constexpr uint64_t kSendBit = 1ull << 63;

uint32_t mtu_bytes(ibv_mtu mtu)
{
    return 128u << static_cast<unsigned>(mtu); // IBV_MTU_256 is 1
}

Status verbs_error(const char *what)
{
    log(LogLevel::kError, "ud_mcast verbs: %s: %s", what, std::strerror(errno));
    return Status::kIoError;
}

} // namespace

Status VerbsWire::open(const VerbsConfig &cfg, std::unique_ptr<VerbsWire> *out)
{
    std::unique_ptr<VerbsWire> w(new VerbsWire());
    const Status st = w->setup(cfg);
    if (st == Status::kOk) {
        *out = std::move(w);
    }
    return st;
}

Status VerbsWire::setup(const VerbsConfig &cfg)
{
    cfg_ = cfg;
    std::string dev;
    if (!parse_verbs_device(cfg.device, &dev, &port_)) {
        log(LogLevel::kError, "ud_mcast verbs: device '%s' is not <dev>:<port>",
            cfg.device.c_str());
        return Status::kInvalidParam;
    }
    int n = 0;
    ibv_device **list = ibv_get_device_list(&n);
    for (int i = 0; list != nullptr && i < n && ctx_ == nullptr; ++i) {
        if (dev == ibv_get_device_name(list[i])) {
            ctx_ = ibv_open_device(list[i]);
        }
    }
    if (list != nullptr) {
        ibv_free_device_list(list);
    }
    ibv_port_attr pa{};
    if (ctx_ == nullptr || ibv_query_port(ctx_, port_, &pa) != 0 ||
        pa.state != IBV_PORT_ACTIVE) {
        log(LogLevel::kError, "ud_mcast verbs: no active port %s",
            cfg.device.c_str());
        return Status::kNotFound;
    }
    global_ = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
    mtu_ = mtu_bytes(pa.active_mtu);
    local_.lid = pa.lid;
    ibv_gid gid{};
    if (ibv_query_gid(ctx_, port_, cfg.gid_index, &gid) != 0) {
        return verbs_error("ibv_query_gid");
    }
    std::memcpy(local_.gid, gid.raw, 16);
    return setup_qp();
}

Status VerbsWire::setup_qp()
{
    const unsigned slots = cfg_.rx_depth + cfg_.tx_depth;
    pd_ = ibv_alloc_pd(ctx_);
    channel_ = ibv_create_comp_channel(ctx_);
    cq_ = pd_ && channel_ ? ibv_create_cq(ctx_, static_cast<int>(slots),
                                          nullptr, channel_, 0)
                          : nullptr;
    if (cq_ == nullptr) {
        return verbs_error("pd, channel or cq");
    }
    bufs_.resize(static_cast<size_t>(slots) * (kGrh + mtu_));
    mr_ = ibv_reg_mr(pd_, bufs_.data(), bufs_.size(), IBV_ACCESS_LOCAL_WRITE);
    ibv_qp_init_attr init{};
    init.send_cq = cq_;
    init.recv_cq = cq_;
    init.qp_type = IBV_QPT_UD;
    init.cap.max_send_wr = cfg_.tx_depth;
    init.cap.max_recv_wr = cfg_.rx_depth;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    qp_ = mr_ != nullptr ? ibv_create_qp(pd_, &init) : nullptr;
    if (qp_ == nullptr) {
        return verbs_error("mr or UD qp");
    }
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = port_;
    a.qkey = cfg_.qkey;
    if (ibv_modify_qp(qp_, &a,
                      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                          IBV_QP_QKEY) != 0) {
        return verbs_error("qp to INIT");
    }
    a.qp_state = IBV_QPS_RTR;
    if (ibv_modify_qp(qp_, &a, IBV_QP_STATE) != 0) {
        return verbs_error("qp to RTR");
    }
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = 0;
    if (ibv_modify_qp(qp_, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0) {
        return verbs_error("qp to RTS");
    }
    local_.qpn = qp_->qp_num;
    for (unsigned s = 0; s < cfg_.rx_depth; ++s) {
        post_recv(s);
    }
    return Status::kOk;
}

VerbsWire::~VerbsWire()
{
    for (size_t g = 0; g < groups_.size(); ++g) {
        leave(static_cast<int>(g));
    }
    for (const Dest &d : peers_) {
        ibv_destroy_ah(d.ah);
    }
    if (cm_ != nullptr) {
        rdma_destroy_event_channel(cm_);
    }
    if (qp_ != nullptr) {
        ibv_destroy_qp(qp_);
    }
    if (mr_ != nullptr) {
        ibv_dereg_mr(mr_);
    }
    if (cq_ != nullptr) {
        ibv_destroy_cq(cq_);
    }
    if (channel_ != nullptr) {
        ibv_destroy_comp_channel(channel_);
    }
    if (pd_ != nullptr) {
        ibv_dealloc_pd(pd_);
    }
    if (ctx_ != nullptr) {
        ibv_close_device(ctx_);
    }
}

void VerbsWire::local_addr(uint8_t *out) const
{
    pack_verbs_addr(local_, out);
}

int VerbsWire::resolve(const uint8_t *addr)
{
    const VerbsAddr peer = unpack_verbs_addr(addr);
    ibv_ah_attr ah{};
    ah.dlid = peer.lid;
    ah.port_num = port_;
    if (global_) {
        ah.is_global = 1;
        std::memcpy(ah.grh.dgid.raw, peer.gid, 16);
        ah.grh.sgid_index = static_cast<uint8_t>(cfg_.gid_index);
        ah.grh.hop_limit = 64;
    }
    Dest d;
    d.ah = ibv_create_ah(pd_, &ah);
    d.qpn = peer.qpn;
    if (d.ah == nullptr) {
        verbs_error("ibv_create_ah");
        return -1;
    }
    peers_.push_back(d);
    return static_cast<int>(peers_.size() - 1);
}

void VerbsWire::post_recv(unsigned slot)
{
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uintptr_t>(bufs_.data()) +
               static_cast<uint64_t>(slot) * (kGrh + mtu_);
    sge.length = static_cast<uint32_t>(kGrh + mtu_);
    sge.lkey = mr_->lkey;
    ibv_recv_wr wr{};
    wr.wr_id = slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr *bad = nullptr;
    ibv_post_recv(qp_, &wr, &bad);
}

bool VerbsWire::post_send(const Dest &d, const uint8_t *pkt, size_t len)
{
    if (len > mtu_ || tx_inflight_ == cfg_.tx_depth) {
        return false;
    }
    const unsigned slot = cfg_.rx_depth + tx_next_;
    tx_next_ = (tx_next_ + 1) % cfg_.tx_depth;
    uint8_t *buf = bufs_.data() + static_cast<size_t>(slot) * (kGrh + mtu_);
    std::memcpy(buf, pkt, len);
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uintptr_t>(buf);
    sge.length = static_cast<uint32_t>(len);
    sge.lkey = mr_->lkey;
    ibv_send_wr wr{};
    wr.wr_id = kSendBit | slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = d.ah;
    wr.wr.ud.remote_qpn = d.qpn;
    wr.wr.ud.remote_qkey = cfg_.qkey;
    ibv_send_wr *bad = nullptr;
    if (ibv_post_send(qp_, &wr, &bad) != 0) {
        return false;
    }
    ++tx_inflight_;
    return true;
}

bool VerbsWire::send_to(int peer, const uint8_t *pkt, size_t len)
{
    return post_send(peers_[static_cast<size_t>(peer)], pkt, len);
}

Status VerbsWire::join(uint64_t key, int *group)
{
    if (cm_ == nullptr) {
        cm_ = rdma_create_event_channel();
        if (cm_ == nullptr) {
            return verbs_error("rdma_create_event_channel");
        }
        fcntl(cm_->fd, F_SETFL, fcntl(cm_->fd, F_GETFL) | O_NONBLOCK);
    }
    auto g = std::make_unique<Group>();
    sockaddr_in bind{};
    bind.sin_family = AF_INET;
    bind.sin_addr.s_addr = gid_ipv4(local_.gid);
    if (!cfg_.bind_addr.empty()) {
        inet_pton(AF_INET, cfg_.bind_addr.c_str(), &bind.sin_addr);
    }
    if (bind.sin_addr.s_addr == 0) {
        log(LogLevel::kError, "ud_mcast verbs: no IPv4 address for rdma_cm "
                              "(set UCX_UD_MCAST_BIND_ADDR)");
        return Status::kInvalidParam;
    }
    uint32_t ip;
    uint16_t port;
    UdpWire::group_addr(key, cfg_.port_base, &ip, &port);
    sockaddr_in mcast{};
    mcast.sin_family = AF_INET;
    mcast.sin_addr.s_addr = htonl(ip);
    if (rdma_create_id(cm_, &g->id, g.get(), RDMA_PS_UDP) != 0 ||
        rdma_bind_addr(g->id, reinterpret_cast<sockaddr *>(&bind)) != 0 ||
        rdma_join_multicast(g->id, reinterpret_cast<sockaddr *>(&mcast),
                            g.get()) != 0) {
        const Status st = verbs_error("rdma_cm multicast join");
        if (g->id != nullptr) {
            rdma_destroy_id(g->id);
        }
        return st;
    }
    groups_.push_back(std::move(g));
    *group = static_cast<int>(groups_.size() - 1);
    return Status::kOk;
}

void VerbsWire::poll_cm()
{
    rdma_cm_event *ev = nullptr;
    while (cm_ != nullptr && rdma_get_cm_event(cm_, &ev) == 0) {
        auto *g = static_cast<Group *>(ev->id->context);
        if (ev->event == RDMA_CM_EVENT_MULTICAST_JOIN) {
            const ibv_ah_attr &ah = ev->param.ud.ah_attr;
            std::memcpy(g->mgid, ah.grh.dgid.raw, 16);
            g->mlid = ah.dlid;
            ibv_ah_attr attr = ah;
            attr.port_num = port_;
            g->dest.ah = ibv_create_ah(pd_, &attr);
            g->dest.qpn = 0xffffff;
            ibv_gid mgid;
            std::memcpy(mgid.raw, g->mgid, 16);
            g->joined = g->dest.ah != nullptr &&
                        ibv_attach_mcast(qp_, &mgid, g->mlid) == 0;
            g->failed = !g->joined;
        } else {
            g->failed = true;
            log(LogLevel::kError, "ud_mcast verbs: multicast join: %s",
                rdma_event_str(ev->event));
        }
        rdma_ack_cm_event(ev);
    }
}

void VerbsWire::leave(int group)
{
    Group &g = *groups_[static_cast<size_t>(group)];
    if (g.joined) {
        ibv_gid mgid;
        std::memcpy(mgid.raw, g.mgid, 16);
        ibv_detach_mcast(qp_, &mgid, g.mlid);
        g.joined = false;
    }
    if (g.dest.ah != nullptr) {
        ibv_destroy_ah(g.dest.ah);
        g.dest.ah = nullptr;
    }
    if (g.id != nullptr) {
        rdma_destroy_id(g.id); // leaves the group
        g.id = nullptr;
    }
}

bool VerbsWire::send_group(int group, const uint8_t *pkt, size_t len)
{
    const Group &g = *groups_[static_cast<size_t>(group)];
    return g.joined && post_send(g.dest, pkt, len);
}

unsigned VerbsWire::poll(Engine *engine, uint64_t now)
{
    for (const auto &g : groups_) {
        if (g->id != nullptr && !g->joined && !g->failed) {
            poll_cm(); // only while a join is pending
            break;
        }
    }
    ibv_wc wc[16];
    const int n = ibv_poll_cq(cq_, 16, wc);
    unsigned count = 0;
    for (int i = 0; i < n; ++i) {
        if ((wc[i].wr_id & kSendBit) != 0) {
            --tx_inflight_;
            continue;
        }
        const auto slot = static_cast<unsigned>(wc[i].wr_id);
        if (wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len >= kGrh) {
            engine->on_packet(
                bufs_.data() + static_cast<size_t>(slot) * (kGrh + mtu_) + kGrh,
                wc[i].byte_len - kGrh, now);
            ++count;
        }
        post_recv(slot);
    }
    return count;
}

bool VerbsWire::readable()
{
    // A CQ cannot be peeked without consuming, and completions queued
    // before arming raise no event: say "maybe" so waiters poll instead.
    return true;
}

void VerbsWire::wait(int timeout_ms)
{
    if (ibv_req_notify_cq(cq_, 0) != 0) {
        return;
    }
    pollfd pfd{channel_->fd, POLLIN, 0};
    if (::poll(&pfd, 1, timeout_ms) > 0) {
        ibv_cq *cq;
        void *ctx;
        if (ibv_get_cq_event(channel_, &cq, &ctx) == 0) {
            ibv_ack_cq_events(cq, 1);
        }
    }
}

int VerbsWire::event_fd() const
{
    return channel_ != nullptr ? channel_->fd : -1;
}

} // namespace uct_ud_mcast
