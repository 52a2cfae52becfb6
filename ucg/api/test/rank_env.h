// SPDX-License-Identifier: BSD-3-Clause
// Forked ranks with a UCG context and group each, for the runtime's tests:
// the out-of-band exchange runs on a launch board mapped before the fork;
// ranks pose as `hosts` hosts (rank % hosts) through the group's host id.
#pragma once

#include "coll_ref.h"

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
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
/// `late_rank`, if a rank, gets each out-of-band exchange back 300 ms after
/// the others (a member the scheduler leaves behind).
bool expect_group_create(int size, ucs_status_t expect,
                         const std::function<void(int)> &setup = nullptr,
                         int late_rank = -1);

/// Inside a run_ranks body: every rank meets here (out of band).
void oob_barrier();

/// Inside a run_ranks body: this rank's context.
ucg_context_h rank_context();

/// Inside a run_ranks body: another group over the same ranks and
/// context (a collective call of every rank).
ucs_status_t second_group(ucg_group_h g, int rank, int size, ucg_group_h *out);

/// Inits the case's collective, runs it `repeats` times (new data each
/// time, one init: persistent) and checks every output; frees it and
/// returns its plan's name.
std::string run_case(ucg_group_h g, RefCase &c, int repeats);

/// An environment variable for a scope (forked ranks inherit it); unset
/// when `value` is null; its old value (or none) is back after.
class ScopedEnv {
  public:
    ScopedEnv(const char *name, const char *value);
    ScopedEnv(const char *name, const std::string &value)
        : ScopedEnv(name, value.c_str())
    {
    }
    ~ScopedEnv();
    ScopedEnv(const ScopedEnv &) = delete;
    ScopedEnv &operator=(const ScopedEnv &) = delete;

  private:
    const char *name_;
    std::string old_;
    bool had_;
};

/// The CPUs this process may run on.
int online_cpus();

/// A bcast of `bytes` on 2 forked ranks of one host (`tune`: UCG_TUNE
/// rules, or null): whether rank 0's call completed within `wait` while
/// rank 1, progressing, had not yet posted its part. Rank 1 posts once
/// rank 0 stopped waiting, and checks the bytes it gets.
bool root_done_alone(std::size_t bytes, std::chrono::milliseconds wait,
                     const char *tune = nullptr);

} // namespace ucg::test
