// SPDX-License-Identifier: BSD-3-Clause
// UdpWire: sockets, group membership, batched receive.
#include "udp_wire.h"

#include "uct_mm_common/log.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/udp.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace uct_ud_mcast {

using uct_mm_common::log;
using uct_mm_common::LogLevel;

namespace {

constexpr unsigned kBatch = 16;

// What one UDP_SEGMENT send may carry: the kernel's segment limit
// (UDP_MAX_SEGMENTS) and one IPv4 datagram's payload.
constexpr uint32_t kMaxSegments = 64;
constexpr size_t kMaxDatagram = 65507;

bool interface_ipv4(const std::string &ifname, in_addr *ip)
{
    ifaddrs *list = nullptr;
    if (getifaddrs(&list) != 0) {
        return false;
    }
    bool found = false;
    for (ifaddrs *a = list; a != nullptr && !found; a = a->ifa_next) {
        if (a->ifa_addr != nullptr && a->ifa_addr->sa_family == AF_INET &&
            ifname == a->ifa_name) {
            *ip = reinterpret_cast<sockaddr_in *>(a->ifa_addr)->sin_addr;
            found = true;
        }
    }
    freeifaddrs(list);
    return found;
}

int interface_mtu(int fd, const std::string &ifname)
{
    ifreq req{};
    std::strncpy(req.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
    return ioctl(fd, SIOCGIFMTU, &req) == 0 ? req.ifr_mtu : 1500;
}

void set_rcvbuf(int fd, uint32_t bytes)
{
    const int v = static_cast<int>(bytes);
    // FORCE passes rmem_max where we may (CAP_NET_ADMIN); else the capped one.
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)) != 0) {
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
    }
}

Status sys_error(const char *what)
{
    log(LogLevel::kError, "ud_mcast udp: %s: %s", what, std::strerror(errno));
    return Status::kIoError;
}

} // namespace

void UdpWire::group_addr(uint64_t key, uint16_t port_base, uint32_t *ip,
                         uint16_t *port)
{
    const uint64_t h = mix64(key ^ 0x75646d63ull);
    *ip = (239u << 24) | (192u << 16) | static_cast<uint32_t>(h & 0xffff);
    *port = static_cast<uint16_t>(port_base + ((h >> 16) % 4096));
}

Status UdpWire::open(const UdpConfig &cfg, std::unique_ptr<UdpWire> *out)
{
    std::unique_ptr<UdpWire> w(new UdpWire());
    const Status st = w->setup(cfg);
    if (st == Status::kOk) {
        *out = std::move(w);
    }
    return st;
}

Status UdpWire::setup(const UdpConfig &cfg)
{
    cfg_ = cfg;
    in_addr ip{};
    if (!interface_ipv4(cfg.ifname, &ip)) {
        log(LogLevel::kError, "ud_mcast udp: interface %s has no IPv4 address",
            cfg.ifname.c_str());
        return Status::kInvalidParam;
    }
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    if (fd_ < 0 || epfd_ < 0) {
        return sys_error("socket");
    }
    local_.sin_family = AF_INET;
    local_.sin_addr = ip;
    if (bind(fd_, reinterpret_cast<sockaddr *>(&local_), sizeof(local_)) != 0) {
        return sys_error("bind");
    }
    socklen_t len = sizeof(local_);
    getsockname(fd_, reinterpret_cast<sockaddr *>(&local_), &len);
    const unsigned char ttl = static_cast<unsigned char>(cfg.ttl);
    const unsigned char loop = 1; // members may share the host
    if (setsockopt(fd_, IPPROTO_IP, IP_MULTICAST_IF, &ip, sizeof(ip)) != 0 ||
        setsockopt(fd_, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, 1) != 0 ||
        setsockopt(fd_, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, 1) != 0) {
        return sys_error("multicast options");
    }
    set_rcvbuf(fd_, cfg.rcvbuf);
    const uint32_t if_limit =
        static_cast<uint32_t>(interface_mtu(fd_, cfg.ifname)) - 28;
    // 0: what the interface carries unfragmented (IP fragments multiply
    // the loss of a datagram), at most 8 KiB (window memory).
    max_packet_ = cfg.max_packet == 0 ? std::min(if_limit, 8192u)
                                      : std::min(cfg.max_packet, 65507u);
    rx_.resize(static_cast<size_t>(kBatch) * max_packet_);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd_;
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd_, &ev) != 0) {
        return sys_error("epoll_ctl");
    }
    return Status::kOk;
}

UdpWire::~UdpWire()
{
    for (const Group &g : groups_) {
        if (g.fd >= 0) {
            close(g.fd);
        }
    }
    if (fd_ >= 0) {
        close(fd_);
    }
    if (epfd_ >= 0) {
        close(epfd_);
    }
}

void UdpWire::local_addr(uint8_t *out) const
{
    std::memset(out, 0, kWireAddrBytes);
    std::memcpy(out, &local_.sin_addr.s_addr, 4);
    std::memcpy(out + 4, &local_.sin_port, 2);
}

int UdpWire::resolve(const uint8_t *addr)
{
    sockaddr_in a{};
    a.sin_family = AF_INET;
    std::memcpy(&a.sin_addr.s_addr, addr, 4);
    std::memcpy(&a.sin_port, addr + 4, 2);
    if (a.sin_port == 0) {
        return -1;
    }
    for (size_t i = 0; i < peers_.size(); ++i) {
        if (peers_[i].sin_addr.s_addr == a.sin_addr.s_addr &&
            peers_[i].sin_port == a.sin_port) {
            return static_cast<int>(i);
        }
    }
    peers_.push_back(a);
    return static_cast<int>(peers_.size() - 1);
}

bool UdpWire::send_to(int peer, const uint8_t *pkt, size_t len)
{
    const sockaddr_in &a = peers_[static_cast<size_t>(peer)];
    return sendto(fd_, pkt, len, 0, reinterpret_cast<const sockaddr *>(&a),
                  sizeof(a)) == static_cast<ssize_t>(len);
}

Status UdpWire::join(uint64_t key, int *group)
{
    uint32_t ip;
    uint16_t port;
    group_addr(key, cfg_.port_base, &ip, &port);
    Group g;
    g.dest.sin_family = AF_INET;
    g.dest.sin_addr.s_addr = htonl(ip);
    g.dest.sin_port = htons(port);
    g.fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (g.fd < 0) {
        return sys_error("group socket");
    }
    const int one = 1, zero = 0;
    ip_mreq mreq{};
    mreq.imr_multiaddr = g.dest.sin_addr;
    mreq.imr_interface = local_.sin_addr;
    // Bound to the group address: only this group's datagrams (and with
    // MULTICAST_ALL off, only groups this socket joined).
    if (setsockopt(g.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(g.fd, reinterpret_cast<sockaddr *>(&g.dest), sizeof(g.dest)) !=
            0 ||
        setsockopt(g.fd, IPPROTO_IP, IP_MULTICAST_ALL, &zero, sizeof(zero)) !=
            0 ||
        setsockopt(g.fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq)) !=
            0) {
        const Status st = sys_error("joining the multicast group");
        close(g.fd);
        return st;
    }
    set_rcvbuf(g.fd, cfg_.rcvbuf);
    size_t idx = 0;
    while (idx < groups_.size() && groups_[idx].fd >= 0) {
        ++idx;
    }
    if (idx == groups_.size()) {
        groups_.push_back(g);
    } else {
        groups_[idx] = g;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = g.fd;
    epoll_ctl(epfd_, EPOLL_CTL_ADD, g.fd, &ev);
    *group = static_cast<int>(idx);
    return Status::kOk;
}

void UdpWire::leave(int group)
{
    Group &g = groups_[static_cast<size_t>(group)];
    if (g.fd >= 0) {
        epoll_ctl(epfd_, EPOLL_CTL_DEL, g.fd, nullptr);
        close(g.fd); // drops the membership
        g.fd = -1;
    }
}

bool UdpWire::send_group(int group, const uint8_t *pkt, size_t len)
{
    const Group &g = groups_[static_cast<size_t>(group)];
    return sendto(fd_, pkt, len, 0, reinterpret_cast<const sockaddr *>(&g.dest),
                  sizeof(g.dest)) == static_cast<ssize_t>(len);
}

uint32_t UdpWire::send_group_run(int group, const uint8_t *pkts, size_t seg,
                                 uint32_t count, size_t last)
{
    const Group &g = groups_[static_cast<size_t>(group)];
    uint32_t done = 0;
    while (done < count) {
        const uint32_t n =
            segment_ ? std::min({count - done, kMaxSegments,
                                 static_cast<uint32_t>(kMaxDatagram / seg)})
                     : 1;
        const uint8_t *first = pkts + static_cast<size_t>(done) * seg;
        const size_t tail = done + n == count ? last : seg;
        if (n < 2) {
            if (!send_group(group, first, tail)) {
                return done;
            }
            ++done;
            continue;
        }
        iovec iov{const_cast<uint8_t *>(first), (n - 1) * seg + tail};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(uint16_t))] = {};
        msghdr m{};
        m.msg_name = const_cast<sockaddr_in *>(&g.dest);
        m.msg_namelen = sizeof(g.dest);
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_control = control;
        m.msg_controllen = sizeof(control);
        cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = IPPROTO_UDP;
        c->cmsg_type = UDP_SEGMENT;
        c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        const auto size = static_cast<uint16_t>(seg);
        std::memcpy(CMSG_DATA(c), &size, sizeof(size));
        const ssize_t r = sendmsg(fd_, &m, 0);
        if (r == static_cast<ssize_t>(iov.iov_len)) {
            done += n;
            ++run_sends_;
        } else if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
                   errno != ENOBUFS) {
            // No segmentation here (an old kernel, a device without
            // checksum offload, packets over the MTU): one at a time.
            log(LogLevel::kDebug, "ud_mcast udp: UDP_SEGMENT refused (%s)",
                std::strerror(errno));
            segment_ = false;
        } else {
            return done; // the socket's buffer is full: retried later
        }
    }
    return done;
}

unsigned UdpWire::drain(int fd, Engine *engine, uint64_t now)
{
    mmsghdr msgs[kBatch];
    iovec iov[kBatch];
    sockaddr_in from[kBatch];
    for (unsigned i = 0; i < kBatch; ++i) {
        iov[i] = {rx_.data() + static_cast<size_t>(i) * max_packet_,
                  max_packet_};
        msgs[i] = {};
        msgs[i].msg_hdr.msg_iov = &iov[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        msgs[i].msg_hdr.msg_name = &from[i];
        msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
    }
    const int n = recvmmsg(fd, msgs, kBatch, MSG_DONTWAIT, nullptr);
    for (int i = 0; i < n; ++i) {
        if (from[i].sin_port == local_.sin_port &&
            from[i].sin_addr.s_addr == local_.sin_addr.s_addr) {
            // Our own multicast, looped back for members on this host
            // (IP_MULTICAST_LOOP): no session takes it, so it is dropped
            // before its checksum and MAC cost anything.
            continue;
        }
        if ((msgs[i].msg_hdr.msg_flags & MSG_TRUNC) != 0) {
            ++engine->counters().drop_malformed; // over our packet size
            continue;
        }
        engine->on_packet(static_cast<uint8_t *>(iov[i].iov_base),
                          msgs[i].msg_len, now);
    }
    return n > 0 ? static_cast<unsigned>(n) : 0;
}

unsigned UdpWire::poll(Engine *engine, uint64_t now)
{
    epoll_event evs[8];
    const int n = epoll_wait(epfd_, evs, 8, 0);
    unsigned count = 0;
    for (int i = 0; i < n; ++i) {
        count += drain(evs[i].data.fd, engine, now);
    }
    return count;
}

bool UdpWire::readable()
{
    epoll_event ev;
    return epoll_wait(epfd_, &ev, 1, 0) > 0; // level-triggered: nothing lost
}

void UdpWire::wait(int timeout_ms)
{
    epoll_event ev;
    epoll_wait(epfd_, &ev, 1, timeout_ms);
}

} // namespace uct_ud_mcast
