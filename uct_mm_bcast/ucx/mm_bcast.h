// SPDX-License-Identifier: BSD-3-Clause
// mm_bcast glue: the iface, endpoint and configuration types shared by
// component.cpp (registration, md), iface.cpp and ep.cpp.
#pragma once

#include "seq_layout.h"

#include "uct_mm_common/channel.h"
#include "uct_mm_common/fifo_segment.h"
#include "uct_mm_common/group_link.h"
#include "uct_mm_common/names.h"

#include "peer_check.h"

// UCX's private headers carry no extern "C" guards of their own.
extern "C" {
#include <ucs/datastruct/queue.h>
#include <ucs/sys/sys.h>
#include <uct/base/uct_component.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_iov.inl>
#include <uct/base/uct_md.h>
#include <uct/sm/base/sm_iface.h>
}

#include <vector>

namespace uct_mm_bcast {

using uct_mm_common::Channel;
using uct_mm_common::ChannelConfig;
using uct_mm_common::CmaDescriptor;
using uct_mm_common::FifoSegment;
using uct_mm_common::RemoteIov;
using uct_mm_common::Ring;
using uct_mm_common::RingGeometry;
using uct_mm_common::Status;

inline constexpr const char *kTlName = "mm_bcast";

/// UCX_MM_BCAST_* transport settings.
struct IfaceConfig {
    uct_iface_config_t super;
    unsigned fifo_size;       ///< slots per ring (power of two)
    size_t seg_size;          ///< bytes per slot (header + payload)
    size_t max_short;         ///< am_short limit, header included
    size_t min_zcopy;         ///< advertised am_zcopy threshold
    size_t max_zcopy;         ///< am_zcopy limit
    unsigned max_iov;         ///< am_zcopy iov entries
    unsigned max_group_size;  ///< group limit (members)
    double timeout;           ///< seconds: a dead member is reported within
    double attach_timeout;    ///< seconds every member has to join
    unsigned group_ring_size; ///< positions of a group's ring
    size_t group_seg_size;    ///< payload bytes of a group ring position
    size_t cma_thresh;        ///< group messages from this size go by CMA
    size_t cma_max;           ///< ... and below this one
    size_t stream_thresh;     ///< group messages streamed from this size
    unsigned max_outstanding; ///< group posts per member not complete
};

/// Iface address: where senders find this iface's receive FIFO, and the
/// secret that names the groups whose member 0 this iface is.
struct IfaceAddr {
    uint64_t secret[2];  ///< random, per iface (uct_mm_common/names.h)
    int32_t pid;         ///< owner process
    int32_t fifo_fd;     ///< FIFO segment fd in the owner (proc-link)
    uint64_t fifo_bytes; ///< FIFO segment size
} __attribute__((packed));
static_assert(sizeof(IfaceAddr) == 32);

struct Ep;

/// Group settings of an iface (UCX_MM_BCAST_*): what uct_group_create uses.
struct GroupSettings {
    unsigned max_group_size = 0;
    unsigned ring_size = 0;
    unsigned seg_size = 0;
    size_t cma_thresh = 0;
    size_t cma_max = 0;
    size_t stream_thresh = 0;
    unsigned max_outstanding = 0;
    unsigned timeout_ms = 0;
    unsigned attach_timeout_ms = 0;
};

struct Iface {
    uct_base_iface_t super; ///< must stay first (UCX casts)
    FifoSegment fifo;       ///< my point-to-point receive FIFO
    Channel rx;             ///< reader of `fifo`
    /// Rung by senders into `fifo` while UCP sleeps on it (its adaptive
    /// progress stops polling an iface no endpoint uses); fd() -1: none,
    /// and the iface advertises no events.
    uct_mm_common::Doorbell bell;
    std::vector<Ep *> eps;        ///< every endpoint
    std::vector<Ep *> busy;       ///< endpoints with pending or zcopy work:
                                  ///< the only ones progress visits
    uct_mm_common::Secret secret; ///< names groups (IfaceAddr::secret)
    ChannelConfig chan_cfg;
    RingGeometry geo;
    size_t max_short = 0;
    size_t min_zcopy = 0; ///< cap.am.min_zcopy (UCX_MM_BCAST_MIN_ZCOPY)
    GroupSettings group;
};

struct Ep {
    uct_base_ep_t super; ///< must stay first
    Iface *iface = nullptr;
    bool in_busy = false;     ///< listed in iface->busy
    FifoSegment peer_fifo;    ///< the peer's FIFO (I produce into it)
    Channel ch;               ///< sender into peer_fifo
    ucs_queue_head_t pending; ///< uct_pending_req_t, in order
    uct_mm_peer_t peer{};     ///< the FIFO's owner: failure reports
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
ucs_status_t ep_check(uct_ep_h tl_ep, unsigned flags,
                      uct_completion_t *comp) noexcept;
/// Progress of one endpoint: zcopy completions, flushes, pending.
unsigned ep_progress(Ep *ep) noexcept;
/// Whether the endpoint has pending or zcopy work (belongs in iface->busy).
bool ep_has_work(const Ep *ep) noexcept;
/// Lists the endpoint in iface->busy (idempotent).
void ep_mark_busy(Ep *ep) noexcept;

} // namespace uct_mm_bcast
