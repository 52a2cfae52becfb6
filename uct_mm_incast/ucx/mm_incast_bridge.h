/* SPDX-License-Identifier: BSD-3-Clause
 * C view of the C++ core for the C glue: the receive FIFO (consumer and
 * producer side) and the iface's defaults for groups. Every function is
 * noexcept in C++ (exceptions become statuses inside the bridge). */
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

/** am_id of a FIFO element to skip (a failed bcopy). */
#define UCT_MM_INCAST_AM_ID_SKIP 0xff

typedef struct uct_mm_incast_fifo_rx uct_mm_incast_fifo_rx_t;
typedef struct uct_mm_incast_fifo_tx uct_mm_incast_fifo_tx_t;
typedef void (*uct_mm_incast_fifo_cb_t)(void *arg, uint8_t am_id, void *data,
                                        uint32_t length);

ucs_status_t uct_mm_incast_fifo_rx_create(unsigned elements, size_t max_payload,
                                          uct_mm_incast_fifo_rx_t **rx_p)
    UCT_MM_INCAST_NOEXCEPT;
void uct_mm_incast_fifo_rx_destroy(uct_mm_incast_fifo_rx_t *rx)
    UCT_MM_INCAST_NOEXCEPT;
int uct_mm_incast_fifo_rx_fd(const uct_mm_incast_fifo_rx_t *rx)
    UCT_MM_INCAST_NOEXCEPT;
size_t uct_mm_incast_fifo_rx_bytes(const uct_mm_incast_fifo_rx_t *rx)
    UCT_MM_INCAST_NOEXCEPT;
unsigned uct_mm_incast_fifo_rx_poll(uct_mm_incast_fifo_rx_t *rx, unsigned max,
                                    uct_mm_incast_fifo_cb_t cb,
                                    void *arg) UCT_MM_INCAST_NOEXCEPT;

ucs_status_t uct_mm_incast_fifo_tx_create(int pid, int fd, size_t bytes,
                                          uct_mm_incast_fifo_tx_t **tx_p)
    UCT_MM_INCAST_NOEXCEPT;
void uct_mm_incast_fifo_tx_destroy(uct_mm_incast_fifo_tx_t *tx)
    UCT_MM_INCAST_NOEXCEPT;
size_t uct_mm_incast_fifo_tx_max_payload(const uct_mm_incast_fifo_tx_t *tx)
    UCT_MM_INCAST_NOEXCEPT;
/** Payload area of a claimed element, or NULL when the FIFO is full. */
void *uct_mm_incast_fifo_tx_claim(uct_mm_incast_fifo_tx_t *tx,
                                  uint64_t *index_p) UCT_MM_INCAST_NOEXCEPT;
void uct_mm_incast_fifo_tx_publish(uct_mm_incast_fifo_tx_t *tx, uint64_t index,
                                   uint8_t am_id,
                                   uint32_t length) UCT_MM_INCAST_NOEXCEPT;
int uct_mm_incast_fifo_tx_full(uct_mm_incast_fifo_tx_t *tx)
    UCT_MM_INCAST_NOEXCEPT;

/** Group defaults from an mm_incast iface (its UCX_MM_INCAST_* config);
 *  `iface` must be a uct_iface_h (of any transport);
 *  returns 0 when `iface` is not an mm_incast iface. Lives in the C glue. */
int uct_mm_incast_iface_group_defaults(void *iface, int *mode_p,
                                       unsigned *elements_p,
                                       size_t *max_bytes_p);

#ifdef __cplusplus
}
#endif

#endif
