// SPDX-License-Identifier: BSD-3-Clause
// Forked ranks with a UCG context and group each, for the runtime's tests:
// the out-of-band exchange runs on a launch board mapped before the fork;
// ranks pose as `hosts` hosts (rank % hosts) through the group's host id.
#pragma once

#include "coll_ref.h"

#include <functional>
#include <vector>

namespace ucg::test {

/// Runs body(group, rank) on `size` forked ranks and REQUIREs that every
/// rank succeeded (a UCG_CHECK failure names the rank and the check).
void run_ranks(int size, int hosts,
               const std::function<void(ucg_group_h, int)> &body,
               double timeout_sec = 120, const char *tune = nullptr,
               const std::vector<int> &may_be_killed = {},
               const ucg_context_params_t *context_params = nullptr);

/// Creates a group on `size` forked ranks of one host; true when every
/// rank's creation returned `expect` (a group made is destroyed).
/// `setup(rank)`, if given, runs in each rank before its context is made.
bool expect_group_create(int size, ucs_status_t expect,
                         const std::function<void(int)> &setup = nullptr);

/// Inside a run_ranks body: every rank meets here (out of band).
void oob_barrier();

/// Inside a run_ranks body: another group over the same ranks and
/// context (a collective call of every rank).
ucs_status_t second_group(ucg_group_h g, int rank, int size, ucg_group_h *out);

/// Inits the case's collective, runs it `repeats` times (new data each
/// time, one init: persistent) and checks every output; frees it.
void run_case(ucg_group_h g, RefCase &c, int repeats);

} // namespace ucg::test
