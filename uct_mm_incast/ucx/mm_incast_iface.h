/* SPDX-License-Identifier: BSD-3-Clause
 * mm_incast UCT glue: iface, ep and config types shared by the glue files.
 * The only place (with the other ucx/ files) that sees UCX private headers. */
#ifndef UCT_MM_INCAST_IFACE_H_
#define UCT_MM_INCAST_IFACE_H_

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mm_incast_bridge.h"
#include "peer_check.h"

#include <ucs/datastruct/queue.h>
#include <ucs/type/class.h>
#include <uct/base/uct_component.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>
#include <uct/sm/base/sm_iface.h>

#define UCT_MM_INCAST_NAME "mm_incast"

/** UCX_MM_INCAST_* (see the table in mm_incast_iface.c). */
typedef struct uct_mm_incast_iface_config {
    uct_sm_iface_config_t super;
    int mode;                 /* uct_mm_incast_mode_t for groups */
    unsigned fifo_elems;      /* receive FIFO depth */
    size_t seg_size;          /* receive FIFO payload per element, bytes */
    unsigned max_group_size;  /* members */
    double timeout;           /* seconds: a dead member is reported within */
    double attach_timeout;    /* seconds every member has to join */
    unsigned max_outstanding; /* group posts per member */
    unsigned group_ring_size; /* elements of a group's ring (0: auto) */
    size_t group_seg_size;    /* chunk bytes of a group ring element */
    size_t auto_atomic_max;   /* AUTO: ATOMIC up to these bytes */
    size_t auto_locked_min;   /* AUTO: LOCKED from these bytes ... */
    unsigned auto_locked_min_group;         /* ... and members */
    unsigned auto_pair_group;               /* AUTO: CENTRALIZED up to */
    size_t auto_pair_locked_min;            /* ... but reductions LOCKED from */
    unsigned auto_gather_batched_max_group; /* AUTO gather: BATCHED up to */
    size_t direct_size;        /* direct slot payload bytes (0: none) */
    unsigned direct_max_group; /* direct messages in groups up to */
    size_t stream_thresh;      /* chunks streamed from this message size */
} uct_mm_incast_iface_config_t;

/** What a peer needs to map this iface's receive FIFO, and the secret that
 *  names the groups whose member 0 this iface is. */
typedef struct uct_mm_incast_iface_addr {
    uint64_t secret[2]; /* random, per iface */
    uint32_t pid;       /* owner process */
    int32_t fd;         /* its memfd */
    uint64_t bytes;     /* FIFO segment size */
} UCS_S_PACKED uct_mm_incast_iface_addr_t;

typedef struct uct_mm_incast_iface {
    uct_sm_iface_t super;
    uct_mm_incast_fifo_rx_t *rx;          /* receive FIFO (memfd) */
    ucs_queue_head_t pending;             /* pending requests of all eps */
    size_t max_payload;                   /* bytes per FIFO element */
    unsigned rx_burst;                    /* elements delivered per progress */
    uct_mm_incast_group_settings_t group; /* for uct_mm_incast_group_* */
} uct_mm_incast_iface_t;

typedef struct uct_mm_incast_ep {
    uct_base_ep_t super;
    uct_mm_incast_fifo_tx_t *tx; /* the peer's receive FIFO */
    size_t max_payload;
    uct_mm_peer_t peer; /* the FIFO's owner: failure reports */
} uct_mm_incast_ep_t;

/** Layout of uct_pending_req_t::priv for this transport. */
typedef struct uct_mm_incast_pending_priv {
    ucs_queue_elem_t elem;
    uct_mm_incast_ep_t *ep;
} uct_mm_incast_pending_priv_t;

/** UCX_MM_INCAST_TIMEOUT in ms for the p2p FIFO's stall check (inf and
 *  anything over ~46 days: the largest value). */
static inline unsigned uct_mm_incast_timeout_ms(double timeout)
{
    double ms = timeout * 1e3;

    if (!(ms < 4e9)) {
        return 4000000000u;
    }
    return (ms < 1) ? 1 : (unsigned)ms;
}

extern uct_component_t uct_mm_incast_component;
extern uct_tl_t uct_mm_incast_tl;

UCS_CLASS_DECLARE(uct_mm_incast_ep_t, const uct_ep_params_t *);
UCS_CLASS_DECLARE_NEW_FUNC(uct_mm_incast_ep_t, uct_ep_t,
                           const uct_ep_params_t *);
UCS_CLASS_DECLARE_DELETE_FUNC(uct_mm_incast_ep_t, uct_ep_t);

ucs_status_t uct_mm_incast_ep_am_short(uct_ep_h tl_ep, uint8_t id,
                                       uint64_t header, const void *payload,
                                       unsigned length);
ucs_status_t uct_mm_incast_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                           const uct_iov_t *iov, size_t iovcnt);
ssize_t uct_mm_incast_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                                  uct_pack_callback_t pack_cb, void *arg,
                                  unsigned flags);
ucs_status_t uct_mm_incast_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id,
                                       const void *header,
                                       unsigned header_length,
                                       const uct_iov_t *iov, size_t iovcnt,
                                       unsigned flags, uct_completion_t *comp);
ucs_status_t uct_mm_incast_ep_pending_add(uct_ep_h tl_ep,
                                          uct_pending_req_t *req,
                                          unsigned flags);
void uct_mm_incast_ep_pending_purge(uct_ep_h tl_ep,
                                    uct_pending_purge_callback_t cb, void *arg);
ucs_status_t uct_mm_incast_ep_flush(uct_ep_h tl_ep, unsigned flags,
                                    uct_completion_t *comp);
ucs_status_t uct_mm_incast_ep_check(uct_ep_h tl_ep, unsigned flags,
                                    uct_completion_t *comp);
/** A pending send of `ep` cannot go (its peer's FIFO is full): reports a
 *  dead peer, checked at most every TIMEOUT / 4. */
void uct_mm_incast_ep_stalled(uct_mm_incast_ep_t *ep);

#endif
