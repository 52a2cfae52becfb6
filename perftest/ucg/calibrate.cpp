// SPDX-License-Identifier: BSD-3-Clause
// ucg_perftest --calibrate-links (calibrate.h).
#include "calibrate.h"

#include "topology/topo_file.h"
#include "topology/topology.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ucg::perftest {
namespace {

// This rank's host as the runtime names it: posed (--hosts) or real.
std::string host_name(const Env &env, const Options &opt)
{
    if (std::string posed = posed_host(env, opt); !posed.empty()) {
        return posed;
    }
    char name[64] = {};
    ::gethostname(name, sizeof(name) - 1);
    return name;
}

// The level of the link between the two ranks, as the runtime's topology
// sees it (hosts, and racks from UCG_TOPO_FILE), or an error line.
Result<topology::LevelKind> link_level(const Env &env, const Options &opt)
{
    char mine[64] = {}, all[128] = {};
    const std::string name = host_name(env, opt);
    name.copy(mine, sizeof(mine) - 1);
    env.allgather(mine, all, sizeof(mine));
    std::vector<topology::Locality> locs(2);
    locs[0].host = std::string(all);
    locs[1].host = std::string(all + 64);
    topology::SwitchMap switches;
    bool racks = false;
    if (const char *path = std::getenv("UCG_TOPO_FILE");
        path != nullptr && *path != '\0') {
        auto map = topology::read_topology_file(path);
        if (!map) {
            return fail("UCG_TOPO_FILE " + map.error().message);
        }
        switches = map.value();
        racks = true;
    }
    auto t =
        topology::Topology::from_localities(locs, racks ? &switches : nullptr);
    if (!t) {
        return t.error();
    }
    return t->link_level(0, 1).kind;
}

} // namespace

int calibrate_links(const Env &env, const Options &opt, ucg_context_h ctx,
                    ucg_group_h group)
{
    const auto level = link_level(env, opt);
    if (!level) {
        if (env.rank == 0) {
            std::fprintf(stderr, "ucg_perftest: --calibrate-links: %s\n",
                         level.error().message.c_str());
        }
        return 1;
    }
    if (env.rank == 0) {
        std::printf("# ucg_perftest --calibrate-links: ranks 0 and 1 over "
                    "UCG point-to-point, %s level, %d passes\n"
                    "# Size       Time(us)    Worst(us)   Fitted(us)  "
                    "Sender(us)\n",
                    topology::level_name(*level), kCalibrationPasses);
    }
    std::vector<std::vector<LinkPoint>> passes(kCalibrationPasses);
    for (std::vector<LinkPoint> &pass : passes) {
        for (std::size_t b = opt.min_bytes; b <= opt.max_bytes; b *= 2) {
            Stats s;
            const ucs_status_t st =
                bench_ucg(env, opt, ctx, group, UCG_COLL_BCAST, b, &s);
            if (st != UCS_OK) {
                std::fprintf(stderr,
                             "ucg_perftest: rank %d: bcast, %zu bytes: %s\n",
                             env.rank, b, ucs_status_string(st));
                return 1;
            }
            pass.push_back({static_cast<double>(b), s.max_us, s.min_us});
        }
    }
    if (env.rank != 0) {
        return 0;
    }
    const std::vector<PassedPoint> best = best_of_passes(passes);
    std::vector<LinkPoint> points;
    for (const PassedPoint &p : best) {
        points.push_back(p.best);
    }
    const LinkFit f = fit_link(points);
    for (const PassedPoint &p : best) {
        std::printf("%-12.0f %10.2f %12.2f %12.2f %10.2f\n", p.best.bytes,
                    p.best.us, p.worst_us,
                    f.alpha_us + p.best.bytes * f.ns_per_byte / 1000,
                    p.best.sender_us);
    }
    // A pass several times slower than the best: the machine, not the
    // link (decision 0042); the best passes are fitted.
    if (const double spread = pass_spread(best, kFitFromBytes); spread >= 1.5) {
        std::printf("# a pass took up to %.1fx the best one's time: the "
                    "machine ran slow for a while; each size's best pass "
                    "is fitted\n",
                    spread);
    }
    // LogGP: alpha = L + 2o, o the sender's time; the gap between two
    // sends is at least o (the CPU sends them), else the level's default.
    const topology::LinkCost d = topology::default_link_cost(*level);
    const double o_ns = f.overhead_us * 1000;
    const double latency_ns = std::max(0.0, f.alpha_us * 1000 - 2 * o_ns);
    char entry[160];
    std::snprintf(entry, sizeof(entry), "%s=%.0f,%.0f,%.0f,%.4f",
                  topology::level_name(*level), latency_ns, o_ns,
                  std::max(o_ns, d.gap_ns), f.ns_per_byte);
    std::printf("# %s: alpha %.2f us (a send's overhead %.2f us), beta %.4f "
                "ns/byte (%.2f GB/s)\n",
                topology::level_name(*level), f.alpha_us, f.overhead_us,
                f.ns_per_byte, f.ns_per_byte > 0 ? 1 / f.ns_per_byte : 0.0);
    const char *cur = std::getenv("UCG_LINKS");
    const std::string merged = merge_links(cur != nullptr ? cur : "", entry);
    if (merged.empty()) {
        std::fprintf(stderr, "ucg_perftest: --calibrate-links: UCG_LINKS as "
                             "set does not parse\n");
        return 1;
    }
    std::printf("export UCG_LINKS=\"%s\"\n", merged.c_str());
    return 0;
}

namespace {

// Where a rank may run: its kernel (boot id) and its CPUs.
struct Cpus {
    BootId boot;
    cpu_set_t mask{};
};

// How many ranks share each CPU this rank may run on: the ranks of its
// kernel with its affinity mask, over the mask's CPUs.
double ranks_per_cpu(const Env &env)
{
    Cpus me;
    me.boot = boot_id();
    if (sched_getaffinity(0, sizeof(me.mask), &me.mask) != 0) {
        return 1;
    }
    std::vector<Cpus> all(static_cast<std::size_t>(env.size));
    env.allgather(&me, all.data(), sizeof(Cpus));
    int same = 0;
    for (const Cpus &c : all) {
        same +=
            std::memcmp(c.boot.text, me.boot.text, sizeof(me.boot.text)) == 0 &&
            CPU_EQUAL(&c.mask, &me.mask);
    }
    return double(same) / std::max(1, CPU_COUNT(&me.mask));
}

ucs_status_t barrier(ucg_group_h group)
{
    ucg_coll_args_t a{};
    a.coll = UCG_COLL_BARRIER;
    return run_once(group, a);
}

} // namespace

int calibrate_turn(const Env &env, ucg_context_h ctx, ucg_group_h group)
{
    TurnPoint mine{0, ranks_per_cpu(env)};
    std::vector<double> rounds;
    for (int pass = 0; pass < kTurnPasses; ++pass) {
        if (const ucs_status_t st = barrier(group); st != UCS_OK) {
            std::fprintf(stderr,
                         "ucg_perftest: --calibrate-turn: rank %d: "
                         "barrier: %s\n",
                         env.rank, ucs_status_string(st));
            return 1;
        }
        const double start = now_s() * 1e6;
        double now = start;
        long n = 0;
        for (; now - start < kTurnWindowUs; now = now_s() * 1e6) {
            ucg_progress(ctx);
            sched_yield();
            ++n;
        }
        rounds.push_back((now - start) / static_cast<double>(n));
    }
    // Each rank's best pass: a machine runs slow for a while (decision
    // 0042), and the processes of a cluster just set up share its CPUs
    // with the kernel's work on the new links.
    mine.round_us = *std::min_element(rounds.begin(), rounds.end());
    std::vector<TurnPoint> all(static_cast<std::size_t>(env.size));
    env.allgather(&mine, all.data(), sizeof(TurnPoint));
    if (env.rank != 0) {
        return 0;
    }
    std::printf("# ucg_perftest --calibrate-turn: %d ranks, each polling "
                "UCG and yielding its CPU for %.0f ms, best of %d passes\n"
                "# %-6s %12s %10s\n",
                env.size, kTurnWindowUs / 1000, kTurnPasses, "Rank",
                "Ranks/CPU", "Round(us)");
    for (std::size_t r = 0; r < all.size(); ++r) {
        std::printf("  %-6zu %12.2f %10.2f\n", r, all[r].ranks_per_cpu,
                    all[r].round_us);
    }
    const double turn = poll_turn_ns(all);
    if (turn > 0) {
        std::printf("# poll turn: %.2f us (a round over the ranks that take "
                    "turns in it, median over the ranks that share a "
                    "CPU)\n",
                    turn / 1000);
    } else {
        std::printf("# poll turn: no rank shares a CPU (none to take)\n");
    }
    std::printf("export UCG_POLL_TURN=%.0f\n", turn);
    return 0;
}

} // namespace ucg::perftest
