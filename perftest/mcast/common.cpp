// SPDX-License-Identifier: BSD-3-Clause
// ucg_mcast_perftest: UCT setup, forking, barriers, statistics.
#include "bench.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ucg_mcast_bench {

bool g_block = false;

void die(const char *what)
{
    std::fprintf(stderr, "ucg_mcast_perftest: %s\n", what);
    _exit(1);
}

static uct_component_h find_component(const char *name)
{
    uct_component_h *list;
    unsigned n;
    if (uct_query_components(&list, &n) != UCS_OK) {
        die("uct_query_components");
    }
    uct_component_h found = nullptr;
    for (unsigned i = 0; i < n; ++i) {
        uct_component_attr_t a{};
        a.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                       UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        uct_component_query(list[i], &a);
        if (std::string(a.name) == name) {
            found = list[i];
        }
    }
    uct_release_component_list(list);
    if (found == nullptr) {
        die("UCT component not found");
    }
    return found;
}

Uct::Uct(const char *tl, const std::string &dev,
         const std::vector<std::pair<std::string, std::string>> &cfg)
{
    const std::string t = tl;
    uct_component_h comp = find_component(t == "tcp" ? "tcp" : tl);
    uct_md_config_t *mdc;
    uct_md_config_read(comp, nullptr, nullptr, &mdc);
    if (uct_md_open(comp, t == "tcp" ? "tcp" : tl, mdc, &md) != UCS_OK) {
        die("uct_md_open");
    }
    uct_config_release(mdc);
    ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK, &async);
    uct_worker_create(async, UCS_THREAD_MODE_SINGLE, &worker);
    uct_iface_config_t *ic;
    uct_md_iface_config_read(md, tl, nullptr, nullptr, &ic);
    for (const auto &kv : cfg) {
        uct_config_modify(ic, kv.first.c_str(), kv.second.c_str());
    }
    uct_iface_params_t p{};
    p.field_mask =
        UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
    p.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
    p.mode.device.tl_name = tl;
    p.mode.device.dev_name = dev.c_str();
    if (uct_iface_open(md, worker, &p, ic, &iface) != UCS_OK) {
        die("uct_iface_open");
    }
    uct_config_release(ic);
    uct_iface_query(iface, &attr);
    uct_iface_progress_enable(iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    if (g_block && (attr.cap.event_flags & UCT_IFACE_FLAG_EVENT_FD) != 0 &&
        uct_iface_event_fd_get(iface, &event_fd) != UCS_OK) {
        event_fd = -1;
    }
}

void Uct::progress_or_idle()
{
    if (uct_worker_progress(worker) != 0) {
        idle = 0;
        return;
    }
    if (++idle < 64) {
        return;
    }
    if (event_fd >= 0 && uct_iface_event_arm(iface, UCT_EVENT_RECV) == UCS_OK) {
        pollfd p{event_fd, POLLIN, 0};
        if (poll(&p, 1, 1) == 0) {
            ++timeouts;
        }
    } else {
        sched_yield();
    }
}

Uct::~Uct()
{
    if (getenv("UCG_MCAST_BENCH_DEBUG") != nullptr) {
        std::fprintf(stderr, "pid %d: %lu poll timeouts\n", getpid(), timeouts);
    }
    uct_iface_close(iface);
    uct_worker_destroy(worker);
    ucs_async_context_destroy(async);
    uct_md_close(md);
}

bool run_ranks(unsigned n, Board *board,
               const std::function<void(unsigned, Board *)> &body)
{
    std::vector<pid_t> pids;
    for (unsigned r = 0; r < n; ++r) {
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

void barrier(Board *b, unsigned p, unsigned n, Uct *u)
{
    b->phase[p].fetch_add(1);
    while (b->phase[p].load() < n) {
        if (u != nullptr) {
            u->progress(); // peers may need our ACKs meanwhile
        }
        sched_yield();
    }
}

double now_us()
{
    return std::chrono::duration<double, std::micro>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

Stats stats(const double *v, unsigned n)
{
    std::vector<double> s(v, v + n);
    std::sort(s.begin(), s.end());
    return {s.front(), s[s.size() / 2], s.back()};
}

} // namespace ucg_mcast_bench
