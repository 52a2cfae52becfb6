// SPDX-License-Identifier: BSD-3-Clause
// ucg_plan_bench: how fast the planner plans and simulates at scale, and
// what the topology buys. Prints min/median/max over repetitions.
//   1. select + build one rank's plan at 4,096 and 65,536 ranks
//      (goals: < 1 ms and < 20 ms)
//   2. build and simulate a 65,536-rank multi-level bcast and allreduce
//      (goal: simulation < 10 s)
//   3. simulated gain of leader (topology-aware) over flat binomial gather
//      and scatter on seed 000's two-level switch tree (goal: >= 54%)
//   4. build one rank's plan of each stepwise flat algorithm (ring, Bruck,
//      pairwise, recursive doubling/halving/k-ing, Rabenseifner,
//      dissemination) at --flat-ranks ranks (default 65,536): O(steps)
#include "cli.h"
#include "select/compose.h"
#include "tool_cli.h"
#include "topology/synthetic.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

using namespace ucg;
using plan::Collective;

namespace {

struct Stats {
    double min_ms, median_ms, max_ms;
    double first_ms = 0; ///< the first repetition: cold caches and tables
};

Stats time_it(int reps, const std::function<void()> &fn)
{
    std::vector<double> ms;
    for (int i = 0; i < reps; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        fn();
        auto t1 = std::chrono::steady_clock::now();
        ms.push_back(
            std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    const double first = ms.front();
    std::sort(ms.begin(), ms.end());
    return {ms.front(), ms[ms.size() / 2], ms.back(), first};
}

void print_stats(const char *what, const Stats &s, const char *goal)
{
    std::printf("  %-44s min %9.3f  median %9.3f  max %9.3f  first (cold) "
                "%9.3f ms  %s\n",
                what, s.min_ms, s.median_ms, s.max_ms, s.first_ms, goal);
}

topology::Topology synth(const char *text)
{
    auto t = topology::make_synthetic(text);
    if (!t) {
        std::fprintf(stderr, "%s\n", t.error().message.c_str());
        std::exit(1);
    }
    return std::move(t).value();
}

template <class T> T must(Result<T> r)
{
    if (!r) {
        std::fprintf(stderr, "error: %s\n", r.error().message.c_str());
        std::exit(1);
    }
    return std::move(r).value();
}

void bench_one_rank(int reps)
{
    std::printf("1. select + build one rank's plan (rank 0: root, leader at "
                "every level)\n");
    struct Case {
        const char *topo;
        const char *goal;
    };
    for (Case c :
         {Case{"racks=4,nodes=16,ppn=64,sockets=2", "goal < 1 ms"},
          Case{"racks=16,nodes=64,ppn=64,sockets=2", "goal < 20 ms"}}) {
        std::vector<topology::Topology> keep;
        Stats ts = time_it(reps, [&] { keep.push_back(synth(c.topo)); });
        const topology::Topology &t = keep.back();
        std::printf(" %d ranks (%s)\n", t.size(), c.topo);
        print_stats("topology from localities (once per group)", ts, "");
        const std::pair<Collective, uint64_t> cases[] = {
            {Collective::kBcast, 65536},
            {Collective::kAllreduce, 65536},
            {Collective::kAllreduce, 8}};
        for (const auto &cs : cases) {
            const Collective coll = cs.first; // lambdas take no bindings
            const uint64_t bytes = cs.second;
            select::Selector sel(t, {});
            select::Decision d;
            Stats ss = time_it(reps, [&] {
                d = must(sel.select({coll, bytes, 0}));
            });
            size_t ops = 0;
            Stats bs = time_it(
                reps, [&] { ops = must(sel.build(d, 0)).ranks[0].ops.size(); });
            std::string what =
                std::string(plan::to_string(coll)) + " " +
                select::format_size(bytes) + " " + d.chosen.algorithm +
                " segments=" + std::to_string(d.request.segments);
            std::printf("  %s: %zu ops at rank 0\n", what.c_str(), ops);
            print_stats("select (decision)", ss, "");
            print_stats("build one rank", bs, "");
            Stats both = {ss.min_ms + bs.min_ms, ss.median_ms + bs.median_ms,
                          ss.max_ms + bs.max_ms, ss.first_ms + bs.first_ms};
            print_stats("select + build", both, c.goal);
        }
    }
}

void bench_simulate(int reps)
{
    const char *spec = "racks=16,nodes=64,ppn=64,sockets=2";
    std::printf("2. simulate a 65,536-rank multi-level plan (%s)\n", spec);
    topology::Topology t = synth(spec);
    for (auto [coll, bytes] :
         {std::pair{Collective::kBcast, uint64_t(65536)},
          std::pair{Collective::kAllreduce, uint64_t(65536)}}) {
        select::Selector sel(t, {});
        select::Decision d = must(sel.select({coll, bytes, 0}));
        plan::Plan p;
        Stats bs = time_it(1, [&] { p = must(sel.build(d, std::nullopt)); });
        cost::SimConfig cfg;
        cfg.count = bytes;
        cost::SimResult r;
        Stats ss = time_it(reps, [&] {
            r = must(cost::simulate(p, {&t, {}}, cfg));
        });
        std::printf("  %s %s %s segments=%d: %zu ops, %zu messages, "
                    "makespan %.1f us (predicted %.1f us)\n",
                    std::string(plan::to_string(coll)).c_str(),
                    select::format_size(bytes).c_str(),
                    d.chosen.algorithm.c_str(), d.request.segments, r.ops,
                    r.messages, r.makespan_ns / 1000,
                    d.chosen.predicted_ns / 1000);
        print_stats("build all ranks (once)", bs, "");
        print_stats("simulate", ss, "goal < 10000 ms");
    }
}

/// Seed 000's setup: two leaf switches under a spine, nodes scattered by
/// the batch system (random order), DDR-era links.
void bench_gather_gain(int reps, const char *spec, double uplink,
                       const char *scenario)
{
    std::printf("3. topology-aware (leader per level) vs flat binomial "
                "gather/scatter, %s\n   topology %s, uplinks %.3f ns/B per "
                "switch\n",
                scenario, spec, uplink);
    topology::Topology t = synth(spec);
    // Seed 000: 1.57 us intra-chassis, 2.04 us one leaf hop, 2.45 us across
    // the spine; DDR IB ~2 GB/s; shared memory ~10 GB/s.
    t.set_link_cost(topology::LevelKind::kNuma, {200, 100, 50, 0.1});
    t.set_link_cost(topology::LevelKind::kSocket, {300, 100, 60, 0.12});
    t.set_link_cost(topology::LevelKind::kHost, {400, 100, 80, 0.15});
    t.set_link_cost(topology::LevelKind::kSwitch, {1440, 300, 300, 0.5});
    t.set_link_cost(topology::LevelKind::kWorld, {1850, 300, 300, 0.5});
    std::printf("%s", t.describe().c_str());
    const int n = t.size();
    algorithms::Group everyone;
    for (int r = 0; r < n; ++r) {
        everyone.push_back(r);
    }
    const algorithms::Levels flat_levels = {{everyone}};
    int remote = 0; // ranks off the root's host
    for (int r = 0; r < n; ++r) {
        remote += t.host_of(r) != t.host_of(0);
    }
    const double nic_g =
        std::min(t.level(topology::LevelKind::kSwitch)->link.ns_per_byte,
                 t.level(topology::LevelKind::kWorld)->link.ns_per_byte);
    double worst = 1;
    for (Collective c : {Collective::kGather, Collective::kScatter}) {
        plan::Plan flat =
            select::build_leader_gather(c, n, 0, flat_levels, {}, std::nullopt);
        algorithms::Request q;
        q.collective = c;
        q.nranks = n;
        q.radix = 2;
        auto reg_r = algorithms::build("knomial", q);
        if (!reg_r) {
            std::fprintf(stderr, "registry: %s\n",
                         reg_r.error().message.c_str());
            std::exit(1);
        }
        plan::Plan reg = std::move(reg_r.value());
        select::Selector sel(t, {});
        for (uint64_t bytes :
             {uint64_t(64), uint64_t(1024), uint64_t(16384), uint64_t(65536)}) {
            select::Decision d = must(sel.select({c, bytes, 0}));
            plan::Plan aware = must(sel.build(d, std::nullopt));
            std::string shapes;
            for (const select::LevelDecision &l : d.levels) {
                shapes += std::string(shapes.empty() ? "" : ", ") +
                          topology::level_name(l.kind) + " " +
                          l.choice.algorithm +
                          (l.choice.algorithm == "knomial"
                               ? std::to_string(l.choice.radix)
                               : "");
            }
            cost::SimConfig cfg;
            cfg.count = bytes;
            cfg.uplink_ns_per_byte = uplink;
            cfg.critical_path = false;
            double tf = 0, ta = 0, tr = 0;
            Stats s = time_it(reps, [&] {
                tf = must(cost::simulate(flat, {&t, {}}, cfg)).makespan_ns;
                ta = must(cost::simulate(aware, {&t, {}}, cfg)).makespan_ns;
                tr = must(cost::simulate(reg, {&t, {}}, cfg)).makespan_ns;
            });
            double gain = 1 - ta / std::min(tf, tr);
            worst = std::min(worst, gain);
            // Every block of another host crosses the root's NIC, one byte
            // per G: no gather or scatter plan beats this in the model.
            const double bound = double(remote) * double(bytes) * nic_g;
            std::printf("  %-7s %4s/rank: flat binomial %9.1f us (registry "
                        "knomial %9.1f), topology-aware %9.1f us (%s): "
                        "gain %5.1f%%; root-NIC bound %9.1f us, so at most "
                        "%5.1f%%  [3 sims %.1f ms]\n",
                        std::string(plan::to_string(c)).c_str(),
                        select::format_size(bytes).c_str(), tf / 1000,
                        tr / 1000, ta / 1000, shapes.c_str(), 100 * gain,
                        bound / 1000, 100 * (1 - bound / std::min(tf, tr)),
                        s.median_ms);
        }
    }
    std::printf("  smallest gain %.1f%% (goal >= 54%%)\n", 100 * worst);
}

void bench_flat_one_rank(int reps, int nranks)
{
    std::printf("4. build one rank's plan of the stepwise flat algorithms, "
                "%d ranks (rank 0 and the last)\n",
                nranks);
    const std::pair<Collective, const char *> cases[] = {
        {Collective::kAllgather, "ring"},
        {Collective::kAllgather, "bruck"},
        {Collective::kAllgather, "recursive_doubling"},
        {Collective::kAlltoall, "bruck"},
        {Collective::kAlltoall, "pairwise"},
        {Collective::kAllreduce, "ring"},
        {Collective::kAllreduce, "recursive_doubling"},
        {Collective::kAllreduce, "recursive_k"},
        {Collective::kAllreduce, "rabenseifner"},
        {Collective::kReduceScatter, "ring"},
        {Collective::kReduceScatter, "recursive_halving"},
        {Collective::kBarrier, "dissemination"}};
    for (const auto &[coll, name] : cases) {
        algorithms::Request q;
        q.collective = coll;
        q.nranks = nranks;
        q.radix = std::string_view(name) == "recursive_k" ? 4 : 2;
        size_t ops = 0;
        const std::string alg = name; // lambdas take no bindings
        Stats s = time_it(reps, [&] {
            for (int r : {0, nranks - 1}) {
                q.only_rank = r;
                ops = must(algorithms::build(alg, q))
                          .ranks[static_cast<std::size_t>(r)]
                          .ops.size();
            }
        });
        const std::string what = std::string(plan::to_string(coll)) + " " +
                                 name + " (" + std::to_string(ops) +
                                 " ops at the last)";
        print_stats(what.c_str(), s, "");
    }
}

} // namespace

static int tool_main(int argc, char **argv)
{
    int reps = 11;
    bool skip_sim = false;
    int flat_ranks = 65536;
    CLI::App app{"ucg_plan_bench: planner and simulator timings at 4,096 and "
                 "65,536 ranks, and the topology-aware gather/scatter gain. "
                 "Exit status: 0 done, 1 failed, 2 bad command line.",
                 "ucg_plan_bench"};
    tools::add_version(app);
    app.add_option("--reps", reps, "repetitions per measurement")
        ->check(tools::at_least(1))
        ->capture_default_str();
    app.add_flag("--no-65536-sim", skip_sim,
                 "skip simulating the 65,536-rank plans");
    app.add_option("--flat-ranks", flat_ranks,
                   "ranks of the one-rank flat builds (section 4)")
        ->check(tools::at_least(2))
        ->capture_default_str();
    if (const auto rc = tools::parse(app, argc, argv)) {
        return *rc;
    }
    std::printf("ucg_plan_bench: %d repetitions (min/median/max)\n", reps);
    bench_one_rank(reps);
    bench_flat_one_rank(std::min(reps, 3), flat_ranks);
    if (!skip_sim) {
        bench_simulate(std::min(reps, 3));
    }
    // Two DDR uplinks per leaf (0.25 ns/B); seed 000's second run adds
    // other jobs' all-to-all traffic, leaving this job a quarter of them.
    const char *spec = "racks=2,nodes=16,ppn=8,order=random,seed=1";
    bench_gather_gain(std::min(reps, 3), spec, 0.25, "quiet fabric");
    bench_gather_gain(std::min(reps, 3), spec, 1.0,
                      "background traffic on the uplinks");
    return 0;
}

int main(int argc, char **argv)
{
    return ucg::tools::guarded_main("ucg_plan_bench",
                                    [&] { return tool_main(argc, argv); });
}
