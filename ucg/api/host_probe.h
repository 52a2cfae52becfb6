// SPDX-License-Identifier: BSD-3-Clause
// Whether another machine still answers (decision 0026). A member on
// another host whose link went down, or whose machine stopped, fails
// nothing UCP can see for minutes: TCP retransmits what it sent. So a
// collective stalled on such a member asks that host's kernel: a TCP
// connect to a port the member's context listens on. The handshake is the
// kernel's (UCX's async thread drains the accept queue), so a member busy
// elsewhere, or stopped in a debugger, still answers; only a host the
// network no longer reaches does not.
#pragma once

#include <ucs/type/status.h>

#include <cstdint>
#include <vector>

namespace ucg::rt {

inline constexpr int kProbeAddrs = 4;

/// Whether UCX may use network device `name` by the list `devices` (the
/// form of UCX_NET_DEVICES: names, "all", or "^" and names it must not).
bool ucx_may_use(const char *name, const char *devices);

/// Where a member's host answers probes (carried in the group's hello).
struct ProbeAddr {
    /// IPv4 addresses (network order) of the devices UCX may use
    /// (UCX_NET_DEVICES, else every device that is up but loopback); 0 ends.
    std::uint32_t ip[kProbeAddrs];
    std::uint16_t port; ///< network order; 0: no listener (never probed)
    std::uint16_t pad[3];
};

/// The port this process's host answers on: a listening TCP socket whose
/// accept queue UCX's async thread empties.
class ProbeListener {
  public:
    ProbeListener() = default;
    ProbeListener(const ProbeListener &) = delete;
    ProbeListener &operator=(const ProbeListener &) = delete;
    ~ProbeListener();
    /// Listens on every address; the addresses come from getifaddrs.
    /// Where it cannot, addr().port stays 0 and the reason is returned.
    ucs_status_t open();
    const ProbeAddr &addr() const { return addr_; }

  private:
    int fd_ = -1;
    bool handler_ = false;
    ProbeAddr addr_{};
};

/// The probes of one host, asked at a stalled collective's checks.
class HostProbe {
  public:
    enum class Verdict { kAnswered, kWaiting, kUnreachable };
    HostProbe() = default;
    HostProbe(const HostProbe &) = delete;
    HostProbe &operator=(const HostProbe &) = delete;
    ~HostProbe();
    /// One check at `now` (monotonic seconds). The first starts a connect
    /// to each address; later ones read them: a completed or refused one
    /// is an answer (the host's kernel replied), and the probe starts over
    /// at the next check. A connect that failed otherwise (no route) is
    /// tried again. Unreachable once `deadline` seconds passed from the
    /// first try without an answer. A probe nobody checked for `deadline`
    /// seconds starts over (its wait would span time nobody was stalled).
    Verdict check(const ProbeAddr &a, double now, double deadline);

  private:
    bool answered();
    void start(const ProbeAddr &a);
    void reset();
    std::vector<int> fds_;  ///< connects under way
    bool answered_ = false; ///< one completed or was refused
    double since_ = -1;     ///< the first try without an answer
    double last_ = -1;      ///< the last check
};

} // namespace ucg::rt
