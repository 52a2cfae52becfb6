// SPDX-License-Identifier: BSD-3-Clause
// One UCT iface opened through the public UCT API, with everything it needs
// (component, md, async context, worker), for tests of our transports. The
// transport's plugin must already be loaded (linked or preloaded).
#pragma once

#include <string>
#include <uct/api/uct.h>
#include <utility>
#include <vector>

namespace ucg_test {

struct UctIfaceSpec {
    std::string component; ///< e.g. "mm_bcast"; the md has the same name
    std::string transport; ///< tl name
    std::string device;    ///< e.g. "memory"
    /// Transport config overrides (name without the UCX_<TL>_ prefix).
    std::vector<std::pair<std::string, std::string>> config;
};

/// Opens the iface in its constructor, closes it all in its destructor.
/// Failures throw RankFailure (so it serves Catch tests and forked ranks).
class UctIface {
  public:
    /// `err_handler` (with `err_arg`): the iface's error handler, if any.
    explicit UctIface(const UctIfaceSpec &spec,
                      uct_error_handler_t err_handler = nullptr,
                      void *err_arg = nullptr);
    ~UctIface();
    UctIface(const UctIface &) = delete;
    UctIface &operator=(const UctIface &) = delete;

    ucs_async_context_t *async = nullptr;
    uct_worker_h worker = nullptr;
    uct_md_h md = nullptr;
    uct_iface_h iface = nullptr;
    uct_iface_attr_t attr{}; ///< queried right after opening
};

/// Where a peer iface lives, for reachability tests.
enum class PeerPlace {
    kSameHost,         ///< a forked child, in our namespaces
    kOtherIpcNamespace ///< a forked child that entered a new IPC namespace
};

/// Whether a `spec` iface of this process reaches one opened by a forked
/// child placed as `place` (its device and iface addresses passed back;
/// ours is opened after the fork): 1 or 0. -1
/// when the child may not enter a new IPC namespace (needs root); -2 when
/// UCX read the namespace in this process before the fork, so the child's
/// view is stale (UCX reads it once: run the test in a fresh process, as
/// ctest does).
int reachable_from_child(const UctIfaceSpec &spec, PeerPlace place);

} // namespace ucg_test
