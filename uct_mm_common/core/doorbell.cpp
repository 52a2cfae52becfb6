// SPDX-License-Identifier: BSD-3-Clause
// Doorbells (doorbell.h): abstract-namespace unix datagram sockets.
#include "uct_mm_common/doorbell.h"

#include "uct_mm_common/log.h"

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace uct_mm_common {

namespace {

// "\0ucg-mm-bell.<pid>.<id>": the leading NUL puts it in the abstract
// namespace. Returns the address length.
socklen_t bell_name(BellAddress a, sockaddr_un *sa) noexcept
{
    std::memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    const int n = std::snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1,
                                "ucg-mm-bell.%d.%d", a.pid, a.id);
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 +
                                  static_cast<std::size_t>(n));
}

int datagram_socket() noexcept
{
    return socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

} // namespace

Doorbell::~Doorbell()
{
    if (fd_ >= 0) {
        close(fd_);
    }
}

Status Doorbell::open(BellAddress a) noexcept
{
    const int fd = datagram_socket();
    if (fd < 0) {
        log(LogLevel::kDebug, "doorbell: socket: %s", std::strerror(errno));
        return Status::kIoError;
    }
    sockaddr_un sa;
    const socklen_t len = bell_name(a, &sa);
    if (bind(fd, reinterpret_cast<const sockaddr *>(&sa), len) != 0) {
        log(LogLevel::kDebug, "doorbell %d.%d: bind: %s", a.pid, a.id,
            std::strerror(errno));
        close(fd);
        return Status::kIoError;
    }
    fd_ = fd;
    return Status::kOk;
}

void Doorbell::drain() noexcept
{
    // Bounded: a flood of datagrams (anyone may send to the name) cannot
    // hold the owner here; what is left wakes it again.
    char buf[16];
    for (int i = 0; i < kDrainMax && fd_ >= 0 &&
                    recv(fd_, buf, sizeof(buf), MSG_DONTWAIT) >= 0;
         ++i) {
    }
}

void Doorbell::ring(BellAddress a) noexcept
{
    if (a.pid == 0) {
        return;
    }
    // One unbound socket per process serves every ring (and survives fork);
    // made again on a later ring if it could not be made.
    static std::atomic<int> tx{-1};
    int fd = tx.load(std::memory_order_acquire);
    if (fd < 0) {
        fd = datagram_socket();
        if (fd < 0) {
            return; // the owner stays armed: a later producer rings
        }
        int none = -1;
        if (!tx.compare_exchange_strong(none, fd)) {
            close(fd);
            fd = none;
        }
    }
    sockaddr_un sa;
    const socklen_t len = bell_name(a, &sa);
    const char one = 1;
    (void)sendto(fd, &one, 1, MSG_DONTWAIT | MSG_NOSIGNAL,
                 reinterpret_cast<const sockaddr *>(&sa), len);
}

} // namespace uct_mm_common
