/* SPDX-License-Identifier: BSD-3-Clause
 * Peer failure of a point-to-point endpoint, the way UCX reports it: the
 * endpoint records its peer's pid and start time when it connects;
 * uct_ep_check (and sends with UCT_SEND_FLAG_PEER_CHECK, UCP's keepalive)
 * compare them with the process now there (uct_mm_common/liveness.h: gone,
 * zombie or a reused pid is dead) and report a dead peer once through the
 * iface's error handler, from the worker's progress. C and C++ (mm_incast's
 * glue is C). */
#ifndef UCT_MM_COMMON_PEER_CHECK_H_
#define UCT_MM_COMMON_PEER_CHECK_H_

#include <stdint.h>
#include <ucs/type/status.h>
#include <uct/api/uct.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The peer of one endpoint; lives inside the endpoint. */
typedef struct uct_mm_peer {
    uct_ep_h ep;            /* the endpoint whose failure is reported */
    uint64_t start_time;    /* the peer's start time (clock ticks) */
    uint64_t next_check_ns; /* uct_mm_peer_check_stalled's next check */
    int32_t pid;            /* the peer's process */
    int32_t reported;       /* nonzero once a failure is scheduled */
    ucs_status_t status;    /* the failure scheduled */
} uct_mm_peer_t;

/** Records `pid` (alive now) as the peer of `ep`. UCS_ERR_UNREACHABLE (one
 *  log line) when no such process runs. */
ucs_status_t uct_mm_peer_init(uct_mm_peer_t *peer, uct_ep_h ep, int pid);

/** Whether the peer still runs: UCS_OK, or UCS_ERR_CONNECTION_RESET after
 *  scheduling the report (uct_mm_peer_report). */
ucs_status_t uct_mm_peer_check(uct_mm_peer_t *peer);

/** For a send stalled on this peer (its FIFO full): uct_mm_peer_check at
 *  most once per `interval_ns` (the transport's TIMEOUT / 4), so a dead
 *  peer is reported within the timeout even without uct_ep_check. */
ucs_status_t uct_mm_peer_check_stalled(uct_mm_peer_t *peer,
                                       uint64_t interval_ns);

/** Schedules, once per endpoint, the iface's error handler with `status`
 *  for the endpoint, called from the worker's progress (as UCX's own
 *  transports report; without an error handler, one diagnostic line). */
void uct_mm_peer_report(uct_mm_peer_t *peer, ucs_status_t status);

/** The uct_ep_check op: flags must be 0 and comp NULL (else
 *  UCS_ERR_INVALID_PARAM, one log line); then uct_mm_peer_check. Returns
 *  UCS_OK either way: the error handler reports the failure. */
ucs_status_t uct_mm_peer_ep_check(uct_mm_peer_t *peer, unsigned flags,
                                  uct_completion_t *comp);

/** Drops a report not delivered yet; call before the endpoint is freed. */
void uct_mm_peer_cleanup(uct_mm_peer_t *peer);

#ifdef __cplusplus
}
#endif

#endif
