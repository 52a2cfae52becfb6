// SPDX-License-Identifier: BSD-3-Clause
// mm_bcast glue: the iface, endpoint and configuration types shared by
// component.cpp (registration, md), iface.cpp and ep.cpp.
#pragma once

#include "channel.h"
#include "group.h"

// UCX's private headers carry no extern "C" guards of their own.
extern "C" {
#include <ucs/datastruct/queue.h>
#include <ucs/sys/sys.h>
#include <ucs/sys/uid.h>
#include <uct/base/uct_component.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_iov.inl>
#include <uct/base/uct_md.h>
#include <uct/sm/base/sm_iface.h>
}

#include <vector>

namespace uct_mm_bcast {

inline constexpr const char *kTlName = "mm_bcast";

/// UCX_MM_BCAST_* transport settings.
struct IfaceConfig {
    uct_iface_config_t super;
    unsigned fifo_size;      ///< slots per ring (power of two)
    size_t seg_size;         ///< bytes per slot (header + payload)
    size_t max_short;        ///< am_short limit, header included
    size_t min_zcopy;        ///< advertised am_zcopy threshold
    size_t max_zcopy;        ///< am_zcopy limit
    unsigned max_iov;        ///< am_zcopy iov entries
    unsigned max_group_size; ///< group endpoint limit
    double timeout;          ///< seconds of stall before a liveness scan
    double attach_timeout;   ///< seconds a member waits for member 0
};

/// Iface address: where senders find this iface's receive FIFO.
struct IfaceAddr {
    uint64_t id;         ///< unique iface id (names group segments)
    int32_t pid;         ///< owner process
    int32_t fifo_fd;     ///< FIFO segment fd in the owner (proc-link)
    uint64_t fifo_bytes; ///< FIFO segment size
} __attribute__((packed));
static_assert(sizeof(IfaceAddr) == 24);

struct Ep;

struct Iface {
    uct_base_iface_t super;   ///< must stay first (UCX casts)
    FifoSegment fifo;         ///< my point-to-point receive FIFO
    Channel rx;               ///< reader of `fifo`
    std::vector<Ep *> eps;    ///< every endpoint (group and p2p)
    std::vector<Ep *> groups; ///< group endpoints, polled by progress
    uint64_t id = 0;
    uint64_t system_id = 0;
    ChannelConfig chan_cfg;
    RingGeometry geo;
    size_t max_short = 0;
    size_t min_zcopy = 0; ///< cap.am.min_zcopy (UCX_MM_BCAST_MIN_ZCOPY)
    unsigned max_group_size = 0;
    unsigned attach_timeout_ms = 0;
};

struct Ep {
    uct_base_ep_t super; ///< must stay first
    Iface *iface = nullptr;
    bool is_group = false;
    FifoSegment peer_fifo;    ///< p2p: the peer's FIFO (I produce into it)
    GroupSegment group;       ///< group: the shared ring (I am a member)
    Channel ch;               ///< sender (and, for groups, receiver)
    ucs_queue_head_t pending; ///< uct_pending_req_t, in order
    uint64_t zcopy_posted = 0;
    uint64_t zcopy_done = 0;
    /// Flush completions waiting for zcopy_done to reach a count.
    std::vector<std::pair<uint64_t, uct_completion_t *>> flushes;
};

extern uct_iface_ops_t g_iface_ops;
extern uct_component_t g_component;

// iface.cpp
ucs_status_t iface_open(uct_md_h md, uct_worker_h worker,
                        const uct_iface_params_t *params,
                        const uct_iface_config_t *config,
                        uct_iface_h *iface_p) noexcept;
bool is_mm_bcast_iface(uct_iface_h iface) noexcept;

// ep.cpp: the ops table entries
ucs_status_t ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p) noexcept;
void ep_destroy(uct_ep_h tl_ep) noexcept;
ucs_status_t ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                         const void *payload, unsigned length) noexcept;
ucs_status_t ep_am_short_iov(uct_ep_h tl_ep, uint8_t id, const uct_iov_t *iov,
                             size_t iovcnt) noexcept;
ssize_t ep_am_bcopy(uct_ep_h tl_ep, uint8_t id, uct_pack_callback_t pack_cb,
                    void *arg, unsigned flags) noexcept;
ucs_status_t ep_am_zcopy(uct_ep_h tl_ep, uint8_t id, const void *header,
                         unsigned header_length, const uct_iov_t *iov,
                         size_t iovcnt, unsigned flags,
                         uct_completion_t *comp) noexcept;
ucs_status_t ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                            unsigned flags) noexcept;
void ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                      void *arg) noexcept;
ucs_status_t ep_flush(uct_ep_h tl_ep, unsigned flags,
                      uct_completion_t *comp) noexcept;
/// Progress of one endpoint: zcopy completions, flushes, pending.
unsigned ep_progress(Ep *ep) noexcept;

} // namespace uct_mm_bcast
