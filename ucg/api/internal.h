// SPDX-License-Identifier: BSD-3-Clause
// What the runtime's files share: the objects (runtime.h) and the
// functions behind each ucg.h entry, plus logging and small helpers.
#pragma once

#include "api/runtime.h"

// The transports' group entry points (uct_group.h). Weak until every
// build has them: a transport without them leaves the runtime
// point-to-point only.
extern "C" {
ucs_status_t uct_mm_bcast_group_iface_query(uct_iface_h, uct_group_attr_t *)
    __attribute__((weak));
ucs_status_t uct_mm_bcast_group_create(uct_iface_h, const uct_group_params_t *,
                                       uct_group_h *) __attribute__((weak));
ucs_status_t uct_mm_incast_group_iface_query(uct_iface_h, uct_group_attr_t *)
    __attribute__((weak));
ucs_status_t uct_mm_incast_group_create(uct_iface_h, const uct_group_params_t *,
                                        uct_group_h *) __attribute__((weak));
}

namespace ucg::rt {

/// One line on stderr (or UCX's log), where an error is classified.
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/// $name as a number, else `fallback`.
double env_double(const char *name, double fallback);
/// Monotonic seconds.
double now_sec();

// context.cpp
ucs_status_t context_create(const ucg_context_params_t *params,
                            ucg_context_h *context_p);
void context_destroy(ucg_context_h ctx);
unsigned progress(ucg_context *ctx);

// group.cpp
ucs_status_t group_create(ucg_context_h ctx, const ucg_group_params_t *params,
                          ucg_group_h *group_p);
void group_destroy(ucg_group_h group);
void close_ep(ucg_context *ctx, ucp_ep_h ep);
/// The ud_mcast channel over `members` (ranks, ascending, this rank among
/// them), made on first use: every member makes it at the same collective
/// init, and it connects during progress. UCS_ERR_UNSUPPORTED where the
/// group has no multicast; the transport's error where creation fails.
ucs_status_t open_mcast(ucg_group *g, const std::vector<int> &members,
                        exec::GroupChannel **ch_p);
/// Checks every member this process can probe (same real host: pid);
/// returns the first dead rank, or -1.
int find_dead_member(ucg_group *group);
/// Probes the group's other machines (host_probe.h), each at most once per
/// call: the first rank of a host that has not answered for
/// UCG_TIMEOUT / 2 seconds of checks, or -1.
int find_unreachable_member(ucg_group *group, double now);

// plan_files.cpp
/// Reads and checks the plan files `spec` names (UCG_PLAN_FILES grammar)
/// into g->file_plans; UCS_ERR_INVALID_PARAM and one log line naming the
/// file, line and reason when one fails.
ucs_status_t load_plan_files(ucg_group *g, const char *spec);

// coll.cpp
ucs_status_t coll_init(ucg_group_h group, const ucg_coll_args_t *args,
                       ucg_coll_h *coll_p);
ucs_status_t coll_start(ucg_coll_h coll);
ucs_status_t coll_test(ucg_coll_h coll);
ucs_status_t coll_wait(ucg_coll_h coll);
void coll_free(ucg_coll_h coll);
/// Deletes freed collectives whose posts the fabric released (all of them
/// with `force`, at context destroy).
void reap_zombies(ucg_context *ctx, bool force);

} // namespace ucg::rt
