// SPDX-License-Identifier: BSD-3-Clause
// Forked ranks, barrier, UCT iface opening and statistics for mm benches.
#include "bench_common.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ucg_mm_bench {

bool run_ranks(int n, Board *board,
               const std::function<void(int, Board *)> &body)
{
    std::vector<pid_t> pids;
    for (int r = 0; r < n; ++r) {
        const pid_t pid = fork();
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            body(r, board);
            _exit(0);
        }
        pids.push_back(pid);
    }
    bool ok = true;
    for (pid_t pid : pids) {
        int status = 0;
        waitpid(pid, &status, 0);
        ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    return ok;
}

void barrier(Board *b, int n)
{
    const unsigned phase = b->barrier_phase.load();
    if (b->barrier_count.fetch_add(1) + 1 == static_cast<unsigned>(n)) {
        b->barrier_count.store(0);
        b->barrier_phase.store(phase + 1);
        return;
    }
    while (b->barrier_phase.load() == phase) {
        sched_yield();
    }
}

bool UctIface::open(const char *component, const char *tl)
{
    uct_component_h *comps;
    unsigned num;
    if (uct_query_components(&comps, &num) != UCS_OK) {
        return false;
    }
    uct_component_h comp = nullptr;
    for (unsigned i = 0; i < num; ++i) {
        uct_component_attr_t ca{};
        ca.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        uct_component_query(comps[i], &ca);
        if (std::strcmp(ca.name, component) == 0) {
            comp = comps[i];
        }
    }
    uct_md_config_t *md_cfg = nullptr;
    bool ok = comp != nullptr &&
              uct_md_config_read(comp, nullptr, nullptr, &md_cfg) == UCS_OK &&
              uct_md_open(comp, component, md_cfg, &md) == UCS_OK;
    if (md_cfg != nullptr) {
        uct_config_release(md_cfg);
    }
    uct_release_component_list(comps);
    ok = ok && ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                        &async) == UCS_OK;
    ok = ok &&
         uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker) == UCS_OK;
    uct_iface_config_t *cfg = nullptr;
    ok = ok &&
         uct_md_iface_config_read(md, tl, nullptr, nullptr, &cfg) == UCS_OK;
    if (ok) {
        uct_iface_params_t params{};
        params.field_mask =
            UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
        params.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
        params.mode.device.tl_name = tl;
        params.mode.device.dev_name = "memory";
        ok = uct_iface_open(md, worker, &params, cfg, &iface) == UCS_OK &&
             uct_iface_query(iface, &attr) == UCS_OK;
        uct_config_release(cfg);
    }
    if (ok) {
        uct_iface_progress_enable(iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    } else {
        std::fprintf(stderr, "cannot open %s/%s\n", component, tl);
    }
    return ok;
}

void UctIface::close()
{
    if (iface != nullptr) {
        uct_iface_close(iface);
    }
    if (worker != nullptr) {
        uct_worker_destroy(worker);
    }
    if (async != nullptr) {
        ucs_async_context_destroy(async);
    }
    if (md != nullptr) {
        uct_md_close(md);
    }
}

Stats summarize(const double *samples, int n)
{
    std::vector<double> v(samples, samples + n);
    std::sort(v.begin(), v.end());
    Stats s;
    if (!v.empty()) {
        s.median_us = v[v.size() / 2];
        s.min_us = v.front();
        s.max_us = v.back();
    }
    return s;
}

double now_us()
{
    return std::chrono::duration<double, std::micro>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

int iterations_for(std::size_t bytes)
{
    return bytes >= (1u << 20) ? 30 : bytes >= (64u << 10) ? 100 : 500;
}

} // namespace ucg_mm_bench
