// SPDX-License-Identifier: BSD-3-Clause
// Forked ranks, barrier, UCT iface opening and statistics for mm benches.
#include "bench_common.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ucg_mm_bench {

namespace {

// Rank r runs on the r-th allowed CPU (round robin), the same for every
// transport: two ranks of N=2 never share a core unless there is only one.
void pin_rank(int rank)
{
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
        return;
    }
    const int count = CPU_COUNT(&allowed);
    int nth = count > 0 ? rank % count : 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &allowed) && nth-- == 0) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            sched_setaffinity(0, sizeof(one), &one);
            return;
        }
    }
}

} // namespace

bool run_ranks(int n, Board *board,
               const std::function<void(int, Board *)> &body)
{
    std::vector<pid_t> pids;
    for (int r = 0; r < n; ++r) {
        const pid_t pid = fork();
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            pin_rank(r);
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

bool UctIface::open(
    const char *component, const char *tl,
    const std::vector<std::pair<std::string, std::string>> &config)
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
    for (const auto &[name, value] : config) {
        ok =
            ok && uct_config_modify(cfg, name.c_str(), value.c_str()) == UCS_OK;
    }
    if (ok) {
        uct_iface_params_t params{};
        params.field_mask =
            UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE;
        params.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
        params.mode.device.tl_name = tl;
        params.mode.device.dev_name = "memory";
        ok = uct_iface_open(md, worker, &params, cfg, &iface) == UCS_OK &&
             uct_iface_query(iface, &attr) == UCS_OK;
    }
    if (cfg != nullptr) {
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

void run_floor(int rank, Board *b, int n, int iters,
               std::vector<double> *samples)
{
    barrier(b, n);
    const std::uint64_t base = b->go.load(); // stored only after barriers
    barrier(b, n);
    for (std::uint64_t it = base + 1; rank < 2 && it <= base + iters; ++it) {
        Spinner spin;
        if (rank == 0) {
            const double t0 = now_us();
            b->go.store(it, std::memory_order_release);
            while (b->pong.load(std::memory_order_acquire) != it) {
                spin.idle();
            }
            samples->push_back(now_us() - t0);
        } else {
            while (b->go.load(std::memory_order_acquire) != it) {
                spin.idle();
            }
            b->pong.store(it, std::memory_order_release);
        }
    }
    barrier(b, n);
}

void print_header()
{
    std::printf("%-8s %2s %8s %-18s %10s %10s %10s %7s %7s\n", "section", "N",
                "bytes", "variant", "median_us", "min_us", "max_us", "ratio",
                "x_floor");
}

void print_row(const Row &r)
{
    char ratio[16] = "-", floor[16] = "-";
    if (r.p2p_median_us > 0) {
        std::snprintf(ratio, sizeof(ratio), "%.2f",
                      r.stats.median_us / r.p2p_median_us);
    }
    if (r.floor_rtt_us > 0) {
        std::snprintf(floor, sizeof(floor), "%.2f",
                      r.stats.median_us / r.floor_rtt_us);
    }
    std::printf("%-8s %2d %8zu %-18s %10.3f %10.3f %10.3f %7s %7s\n", r.section,
                r.group_size, r.msg_bytes, r.variant.c_str(), r.stats.median_us,
                r.stats.min_us, r.stats.max_us, ratio, floor);
    std::fflush(stdout);
}

int iterations_for(std::size_t bytes)
{
    return bytes >= (1u << 20) ? 60 : bytes >= (32u << 10) ? 200 : 1000;
}

void *map_shared(std::size_t bytes)
{
    void *mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        std::perror("ucg_mm_perftest: mmap of the shared board");
        std::exit(1);
    }
    return mem;
}

void unmap_shared(void *mem, std::size_t bytes)
{
    munmap(mem, bytes);
}

} // namespace ucg_mm_bench

namespace ucg_mm_bench {

uct_group_params_t group_params(Board *b, int which, int rank, int n,
                                std::uint64_t key,
                                std::vector<const uct_iface_addr_t *> *addrs)
{
    addrs->resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        (*addrs)[static_cast<std::size_t>(i)] =
            reinterpret_cast<const uct_iface_addr_t *>(b->addr[which][i]);
    }
    uct_group_params_t gp{};
    gp.field_mask =
        UCT_GROUP_PARAM_FIELD_KEY | UCT_GROUP_PARAM_FIELD_MEMBER_INDEX |
        UCT_GROUP_PARAM_FIELD_GROUP_SIZE | UCT_GROUP_PARAM_FIELD_MEMBER_ADDRS;
    gp.group_key = key;
    gp.member_index = static_cast<unsigned>(rank);
    gp.group_size = static_cast<unsigned>(n);
    gp.member_addrs = addrs->data();
    return gp;
}

void DirectGroup::open(Board *b, int rank, int n)
{
    if (!mm.open("mm_incast", "mm_incast")) {
        _exit(3);
    }
    uct_iface_get_address(mm.iface, reinterpret_cast<uct_iface_addr_t *>(
                                        b->addr[kDirectAddr][rank]));
    barrier(b, n);
    std::vector<const uct_iface_addr_t *> addrs;
    const uct_group_params_t gp =
        group_params(b, kDirectAddr, rank, n, 2, &addrs);
    if (uct_mm_incast_group_create(mm.iface, &gp, &group) != UCS_OK) {
        _exit(4);
    }
    // Until this member has joined, the area's geometry is not known.
    Spinner spin;
    ucs_status_t st;
    while ((st = uct_mm_incast_group_direct(group, &direct, &max_length)) ==
           UCS_ERR_NO_RESOURCE) {
        uct_worker_progress(mm.worker);
        spin.idle();
    }
    if (st == UCS_ERR_UNSUPPORTED) {
        max_length = 0;
    } else if (st != UCS_OK) {
        _exit(4);
    }
    barrier(b, n); // every rank read the addresses before the next open
}

void DirectGroup::run(const uct_mm_incast_direct_msg_t &m)
{
    std::uint64_t id = 0;
    Spinner spin;
    ucs_status_t st;
    while ((st = uct_mm_incast_direct_post(direct, &m, &id)) ==
           UCS_ERR_NO_RESOURCE) {
        spin.idle();
    }
    while (st == UCS_INPROGRESS) {
        st = uct_mm_incast_direct_test(direct, id);
        spin.idle();
    }
    if (st != UCS_OK) {
        std::fprintf(stderr, "direct message: %s\n", ucs_status_string(st));
        _exit(6);
    }
}

void DirectGroup::close()
{
    if (group != nullptr) {
        uct_group_destroy(group);
    }
    mm.close();
}

} // namespace ucg_mm_bench
