// SPDX-License-Identifier: BSD-3-Clause
// Host liveness probes between machines (host_probe.h, decision 0026).
#include "api/host_probe.h"

#include <ucs/async/async_fwd.h>
#include <ucs/sys/event_set.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace ucg::rt {
namespace {

// Accepts and closes every connection waiting: a probe needs only the
// handshake. Runs on UCX's async thread (the queue stays empty while the
// process is busy elsewhere).
void drain(int, ucs_event_set_types_t, void *arg)
{
    const int fd = *static_cast<const int *>(arg);
    int c;
    while ((c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC)) >= 0 ||
           errno == EINTR) {
        if (c >= 0) {
            ::close(c);
        }
    }
}

} // namespace

bool ucx_may_use(const char *name, const char *devices)
{
    std::string list = devices;
    const bool negate = !list.empty() && list[0] == '^';
    if (negate) {
        list.erase(0, 1);
    }
    bool listed = false;
    std::size_t at = 0;
    while (at <= list.size()) {
        const std::size_t end = std::min(list.find(',', at), list.size());
        const std::string item = list.substr(at, end - at);
        listed = listed || item == "all" || item == name;
        at = end + 1;
    }
    return listed != negate;
}

namespace {

// The IPv4 addresses of the devices UCX may use, up and not loopback.
void find_addresses(ProbeAddr *a)
{
    const char *env = std::getenv("UCX_NET_DEVICES");
    const char *devices = env != nullptr ? env : "all";
    ifaddrs *all = nullptr;
    if (::getifaddrs(&all) != 0) {
        return;
    }
    int n = 0;
    for (const ifaddrs *i = all; i != nullptr && n < kProbeAddrs;
         i = i->ifa_next) {
        if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET ||
            !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK) ||
            !ucx_may_use(i->ifa_name, devices)) {
            continue;
        }
        sockaddr_in sin;
        std::memcpy(&sin, i->ifa_addr, sizeof(sin));
        a->ip[n++] = sin.sin_addr.s_addr;
    }
    ::freeifaddrs(all);
}

} // namespace

ProbeListener::~ProbeListener()
{
    if (handler_) {
        ucs_async_remove_handler(fd_, 1);
    }
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

ucs_status_t ProbeListener::open()
{
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
        return UCS_ERR_IO_ERROR;
    }
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof(sin);
    if (::bind(fd_, reinterpret_cast<sockaddr *>(&sin), sizeof(sin)) != 0 ||
        ::listen(fd_, 64) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr *>(&sin), &len) != 0) {
        return UCS_ERR_IO_ERROR;
    }
    const ucs_status_t st =
        ucs_async_set_event_handler(UCS_ASYNC_MODE_THREAD_SPINLOCK, fd_,
                                    UCS_EVENT_SET_EVREAD, drain, &fd_, nullptr);
    if (st != UCS_OK) {
        return st;
    }
    handler_ = true;
    find_addresses(&addr_);
    addr_.port = sin.sin_port;
    return UCS_OK;
}

HostProbe::~HostProbe()
{
    reset();
}

void HostProbe::reset()
{
    for (const int fd : fds_) {
        ::close(fd);
    }
    fds_.clear();
    since_ = -1;
    answered_ = false;
}

void HostProbe::start(const ProbeAddr &a)
{
    for (int i = 0; i < kProbeAddrs && a.ip[i] != 0; ++i) {
        const int fd =
            ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            return;
        }
        sockaddr_in sin{};
        sin.sin_family = AF_INET;
        sin.sin_port = a.port;
        sin.sin_addr.s_addr = a.ip[i];
        if (::connect(fd, reinterpret_cast<sockaddr *>(&sin), sizeof(sin)) ==
                0 ||
            errno == ECONNREFUSED) {
            answered_ = true;
        } else if (errno == EINPROGRESS) {
            fds_.push_back(fd);
            continue;
        }
        ::close(fd); // answered, or no route now: tried again next check
    }
}

bool HostProbe::answered()
{
    for (std::size_t i = 0; i < fds_.size() && !answered_;) {
        pollfd p{fds_[i], POLLOUT, 0};
        if (::poll(&p, 1, 0) != 1) {
            ++i; // the handshake is still under way
            continue;
        }
        int err = 0;
        socklen_t len = sizeof(err);
        ::getsockopt(fds_[i], SOL_SOCKET, SO_ERROR, &err, &len);
        answered_ = err == 0 || err == ECONNREFUSED;
        ::close(fds_[i]);
        fds_.erase(fds_.begin() + static_cast<std::ptrdiff_t>(i));
    }
    return answered_;
}

HostProbe::Verdict HostProbe::check(const ProbeAddr &a, double now,
                                    double deadline)
{
    if (since_ >= 0 && now - last_ > deadline) {
        reset(); // nobody asked for a while: that time proves nothing
    }
    last_ = now;
    if (since_ < 0) {
        since_ = now;
    }
    if (fds_.empty() && !answered_) {
        start(a); // the first try, or every earlier one failed
    }
    if (answered()) {
        reset();
        return Verdict::kAnswered;
    }
    return now - since_ >= deadline ? Verdict::kUnreachable : Verdict::kWaiting;
}

} // namespace ucg::rt
