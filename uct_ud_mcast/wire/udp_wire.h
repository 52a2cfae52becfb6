// SPDX-License-Identifier: BSD-3-Clause
// UDP/IP multicast wire: one unicast socket per iface (bound to the
// interface's IPv4 address, ephemeral port; it also sends multicast), one
// socket per joined group (bound to the group's address and port), all in
// one epoll set so idle progress is one system call whatever the groups.
// Group address: 239.192.x.y and port from a hash of the session key.
#pragma once

#include "wire.h"

#include <memory>
#include <netinet/in.h>
#include <string>
#include <vector>

namespace uct_ud_mcast {

struct UdpConfig {
    std::string ifname = "lo";  ///< interface (its first IPv4 address)
    uint16_t port_base = 40000; ///< group ports: base + hash % 4096
    uint32_t max_packet = 0;    ///< datagram limit (0: MTU - 28, <= 8 KiB)
    uint32_t rcvbuf = 4u << 20; ///< socket receive buffer bytes
    int ttl = 1;                ///< multicast TTL (hops)
};

class UdpWire final : public Wire {
  public:
    static Status open(const UdpConfig &cfg, std::unique_ptr<UdpWire> *out);
    ~UdpWire() override;

    void local_addr(uint8_t *out) const override;
    uint32_t max_packet() const override { return max_packet_; }
    int resolve(const uint8_t *addr) override;
    bool send_to(int peer, const uint8_t *pkt, size_t len) override;
    Status join(uint64_t key, int *group) override;
    void leave(int group) override;
    bool send_group(int group, const uint8_t *pkt, size_t len) override;
    /// One sendmsg per run where the kernel segments it (UDP_SEGMENT),
    /// else a sendto per packet.
    uint32_t send_group_run(int group, const uint8_t *pkts, size_t seg,
                            uint32_t count, size_t last) override;
    unsigned poll(Engine *engine, uint64_t now) override;
    void wait(int timeout_ms) override;
    int event_fd() const override { return epfd_; }
    bool readable() override;

    /// System calls that sent a run of more than one packet.
    uint64_t run_sends() const noexcept { return run_sends_; }

    /// The multicast address and port of a session key (host order).
    static void group_addr(uint64_t key, uint16_t port_base, uint32_t *ip,
                           uint16_t *port);

  private:
    UdpWire() = default;
    Status setup(const UdpConfig &cfg);
    unsigned drain(int fd, Engine *engine, uint64_t now);

    struct Group {
        int fd = -1;
        sockaddr_in dest{};
    };
    UdpConfig cfg_;
    int fd_ = -1;
    int epfd_ = -1;
    sockaddr_in local_{};
    uint32_t max_packet_ = 0;
    std::vector<sockaddr_in> peers_;
    std::vector<Group> groups_;
    std::vector<uint8_t> rx_; ///< batch buffers
    bool segment_ = true;     ///< the kernel takes UDP_SEGMENT (until refused)
    uint64_t run_sends_ = 0;
};

} // namespace uct_ud_mcast
