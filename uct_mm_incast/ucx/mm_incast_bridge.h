/* SPDX-License-Identifier: BSD-3-Clause
 * C view of the C++ core for the C glue: the receive FIFO (consumer and
 * producer side, uct_mm_common's p2p FIFO) and the iface's defaults for groups.
 * Every function is noexcept in C++ (exceptions become statuses inside the
 * bridge). */
#ifndef UCT_MM_INCAST_BRIDGE_H_
#define UCT_MM_INCAST_BRIDGE_H_

#include <stddef.h>
#include <stdint.h>
#include <ucs/type/status.h>

#ifdef __cplusplus
extern "C" {
#define UCT_MM_INCAST_NOEXCEPT noexcept
#else
#define UCT_MM_INCAST_NOEXCEPT
#endif

typedef struct uct_mm_incast_fifo_rx uct_mm_incast_fifo_rx_t;
typedef struct uct_mm_incast_fifo_tx uct_mm_incast_fifo_tx_t;
typedef void (*uct_mm_incast_fifo_cb_t)(void *arg, uint8_t am_id, void *data,
                                        size_t length);
/** Writes at most max_payload bytes at `dest`; returns how many. */
typedef size_t (*uct_mm_incast_fifo_pack_t)(void *dest, void *arg);

/* The receive FIFO is uct_mm_common's p2p FIFO (fifo_segment.h, channel.h),
 * the same as mm_bcast's: `slot_bytes` per slot (a multiple of 64, the
 * 16-byte slot header included), `slots` a power of two; `timeout_ms` is
 * the stall after which a liveness scan runs. */
ucs_status_t uct_mm_incast_fifo_rx_create(
    unsigned slots, unsigned slot_bytes, unsigned timeout_ms,
    uct_mm_incast_fifo_rx_t **rx_p) UCT_MM_INCAST_NOEXCEPT;
void uct_mm_incast_fifo_rx_destroy(uct_mm_incast_fifo_rx_t *rx)
    UCT_MM_INCAST_NOEXCEPT;
int uct_mm_incast_fifo_rx_fd(const uct_mm_incast_fifo_rx_t *rx)
    UCT_MM_INCAST_NOEXCEPT;
/** The FIFO's doorbell descriptor (uct_iface_event_fd_get), -1 if none. */
int uct_mm_incast_fifo_rx_event_fd(const uct_mm_incast_fifo_rx_t *rx)
    UCT_MM_INCAST_NOEXCEPT;
/** Arms the doorbell for the next message: 1, or 0 (not armed) when a
 *  message is at hand already. */
int uct_mm_incast_fifo_rx_arm(uct_mm_incast_fifo_rx_t *rx)
    UCT_MM_INCAST_NOEXCEPT;
size_t uct_mm_incast_fifo_rx_bytes(const uct_mm_incast_fifo_rx_t *rx)
    UCT_MM_INCAST_NOEXCEPT;
/** Delivers up to `max` messages in order: cb(arg, am_id, data, length),
 *  `data` valid during the call only. */
unsigned uct_mm_incast_fifo_rx_poll(uct_mm_incast_fifo_rx_t *rx, unsigned max,
                                    uct_mm_incast_fifo_cb_t cb,
                                    void *arg) UCT_MM_INCAST_NOEXCEPT;

ucs_status_t uct_mm_incast_fifo_tx_create(
    int pid, int fd, size_t bytes, unsigned timeout_ms,
    uct_mm_incast_fifo_tx_t **tx_p) UCT_MM_INCAST_NOEXCEPT;
void uct_mm_incast_fifo_tx_destroy(uct_mm_incast_fifo_tx_t *tx)
    UCT_MM_INCAST_NOEXCEPT;
size_t uct_mm_incast_fifo_tx_max_payload(const uct_mm_incast_fifo_tx_t *tx)
    UCT_MM_INCAST_NOEXCEPT;
/** Sends `pack`'s bytes as one message: UCS_OK (*length_p set),
 *  UCS_ERR_NO_RESOURCE when the FIFO is full, UCS_ERR_EXCEEDS_LIMIT when
 *  `pack` wrote more than max_payload (nothing delivered), or the FIFO's
 *  sticky failure (its reader found dead). */
ucs_status_t
uct_mm_incast_fifo_tx_send(uct_mm_incast_fifo_tx_t *tx, uint8_t am_id,
                           uct_mm_incast_fifo_pack_t pack, void *arg,
                           size_t *length_p) UCT_MM_INCAST_NOEXCEPT;
/** UCS_OK, or the FIFO's sticky failure. */
ucs_status_t uct_mm_incast_fifo_tx_state(const uct_mm_incast_fifo_tx_t *tx)
    UCT_MM_INCAST_NOEXCEPT;
int uct_mm_incast_fifo_tx_full(uct_mm_incast_fifo_tx_t *tx)
    UCT_MM_INCAST_NOEXCEPT;

/** What an mm_incast iface gives its groups (UCX_MM_INCAST_* and the
 *  iface's worker and secret). */
typedef struct uct_mm_incast_group_settings {
    void *worker;       /* uct_worker_h of the iface */
    uint64_t secret[2]; /* names the groups whose member 0 it is */
    int mode;           /* uct_mm_incast_mode_t */
    unsigned max_group_size;
    unsigned max_outstanding;
    unsigned ring_size;    /* elements; 0: as many as fit 4 MiB */
    size_t seg_size;       /* chunk bytes */
    double timeout;        /* seconds */
    double attach_timeout; /* seconds */
    /* AUTO's crossovers (UCX_MM_INCAST_AUTO_*, policy.h AutoThresholds) */
    size_t auto_atomic_max;
    size_t auto_locked_min;
    unsigned auto_locked_min_group;
    unsigned auto_pair_group;
    size_t auto_pair_locked_min;
    unsigned auto_gather_batched_max_group;
    size_t direct_size;        /* direct slot payload bytes (0: none) */
    unsigned direct_max_group; /* ... in groups of up to these members */
    size_t stream_thresh;      /* chunks of messages from this size streamed */
} uct_mm_incast_group_settings_t;

/** Fills *s from an mm_incast iface; returns 0 when `iface` (a
 *  uct_iface_h of any transport, or NULL) is not one. In the C glue. */
int uct_mm_incast_iface_group_settings(const void *iface,
                                       uct_mm_incast_group_settings_t *s);

/** The secret in an mm_incast iface address. In the C glue. */
void uct_mm_incast_iface_addr_secret(const void *iface_addr,
                                     uint64_t secret[2]);

/** A fresh random secret for an iface. In the C++ bridge. */
void uct_mm_incast_new_secret(uint64_t secret[2]) UCT_MM_INCAST_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif
