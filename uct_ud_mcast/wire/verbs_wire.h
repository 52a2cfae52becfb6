// SPDX-License-Identifier: BSD-3-Clause
// Verbs wire for InfiniBand and RoCE: one UD QP per iface; a group's
// multicast join goes through rdma_cm (rdma_join_multicast on an id bound
// to the device's IP), and on the join event the QP is attached to the
// group's MGID/MLID (ibv_attach_mcast) and an address handle made for
// sending to it. Joining never blocks: the cm channel is polled with the
// completion queue, and sends to a group wait until it is joined.
// Untested on hardware here (no RDMA device on the build machine).
#pragma once

#include "wire.h"

#include <memory>
#include <string>
#include <vector>

struct ibv_context;
struct ibv_pd;
struct ibv_cq;
struct ibv_qp;
struct ibv_mr;
struct ibv_ah;
struct ibv_comp_channel;
struct rdma_event_channel;
struct rdma_cm_id;

namespace uct_ud_mcast {

struct VerbsConfig {
    std::string device;    ///< "<ibv device>:<port>", e.g. "mlx5_0:1"
    int gid_index = 0;     ///< GID table entry (RoCE: pick the v2 IPv4 one)
    std::string bind_addr; ///< IP for rdma_cm; "" = the GID's IPv4 (RoCE)
    uint32_t qkey = 0x1ee7a330;
    unsigned rx_depth = 512;
    unsigned tx_depth = 256;
    uint16_t port_base = 40000; ///< as UdpConfig: the group's IP address
};

/// A verbs wire address: GID, LID and QP number.
struct VerbsAddr {
    uint8_t gid[16];
    uint16_t lid;
    uint32_t qpn;
};

/// Packs into / reads from Wire::local_addr's bytes.
void pack_verbs_addr(const VerbsAddr &a, uint8_t *out) noexcept;
VerbsAddr unpack_verbs_addr(const uint8_t *in) noexcept;
/// "mlx5_0:1" -> ("mlx5_0", 1); false when malformed.
bool parse_verbs_device(const std::string &name, std::string *dev,
                        uint8_t *port);
/// The IPv4 address of an IPv4-mapped GID (RoCE v2), or 0.
uint32_t gid_ipv4(const uint8_t gid[16]) noexcept;
/// "<dev>:<port>" of every active port of every verbs device.
std::vector<std::string> verbs_devices();

class VerbsWire final : public Wire {
  public:
    /// kNotFound: no such device or port (not active); kIoError: a verbs
    /// call failed (logged).
    static Status open(const VerbsConfig &cfg, std::unique_ptr<VerbsWire> *out);
    ~VerbsWire() override;

    void local_addr(uint8_t *out) const override;
    uint32_t max_packet() const override { return mtu_; }
    int resolve(const uint8_t *addr) override;
    bool send_to(int peer, const uint8_t *pkt, size_t len) override;
    Status join(uint64_t key, int *group) override;
    void leave(int group) override;
    bool send_group(int group, const uint8_t *pkt, size_t len) override;
    unsigned poll(Engine *engine, uint64_t now) override;
    void wait(int timeout_ms) override;
    int event_fd() const override;
    bool readable() override;

  private:
    struct Dest {
        ibv_ah *ah = nullptr;
        uint32_t qpn = 0;
    };
    struct Group {
        rdma_cm_id *id = nullptr;
        bool joined = false;
        bool failed = false;
        uint8_t mgid[16] = {};
        uint16_t mlid = 0;
        Dest dest;
    };
    VerbsWire() = default;
    Status setup(const VerbsConfig &cfg);
    Status setup_qp();
    void post_recv(unsigned slot);
    bool post_send(const Dest &d, const uint8_t *pkt, size_t len);
    void poll_cm();

    VerbsConfig cfg_;
    uint8_t port_ = 1;
    bool global_ = false; ///< RoCE: every AH carries a GRH
    uint32_t mtu_ = 0;
    VerbsAddr local_{};
    ibv_context *ctx_ = nullptr;
    ibv_pd *pd_ = nullptr;
    ibv_comp_channel *channel_ = nullptr;
    ibv_cq *cq_ = nullptr;
    ibv_qp *qp_ = nullptr;
    ibv_mr *mr_ = nullptr;
    std::vector<uint8_t> bufs_; ///< rx_depth receive then tx_depth send slots
    unsigned tx_next_ = 0;
    unsigned tx_inflight_ = 0;
    rdma_event_channel *cm_ = nullptr;
    std::vector<Dest> peers_;
    std::vector<std::unique_ptr<Group>> groups_;
};

} // namespace uct_ud_mcast
