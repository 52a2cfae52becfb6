// SPDX-License-Identifier: BSD-3-Clause
// The plan simulator: seed 002's numbers from hand-built plans, NIC and
// incast contention, the critical path, and errors.
#include "algorithms/registry.h"
#include "cost/formulas.h"
#include "cost/simulator.h"
#include "topology/synthetic.h"

#include <catch2/catch.hpp>

using namespace ucg;
using namespace ucg::cost;
using plan::Buffer;
using plan::chunks;
using plan::Collective;
using plan::PlanBuilder;

namespace {

/// The alpha-beta model as LogGP: L = alpha, o = 0, g = alpha, G = beta.
Fabric alpha_beta_fabric(double alpha, double beta)
{
    return Fabric{nullptr, topology::LinkCost{alpha, 0, alpha, beta}};
}

plan::Range place(int rank, int root, int chunk = 0)
{
    return chunks(rank == root ? Buffer::kInput : Buffer::kOutput, 0, chunk);
}

plan::Plan binomial_bcast4()
{
    PlanBuilder pb(Collective::kBcast, 4, 0, 1);
    pb.xfer(0, 2, 0, {place(0, 0)}, {place(2, 0)});
    pb.xfer(0, 1, 1, {place(0, 0)}, {place(1, 0)});
    pb.xfer(2, 3, 1, {place(2, 0)}, {place(3, 0)});
    return pb.take("test-binomial");
}

plan::Plan chain_bcast(int nranks, int segments)
{
    PlanBuilder pb(Collective::kBcast, nranks, 0, segments);
    for (int c = 0; c < segments; ++c) {
        for (int r = 0; r + 1 < nranks; ++r) {
            pb.xfer(r, r + 1, 0, {place(r, 0, c)}, {place(r + 1, 0, c)});
        }
    }
    return pb.take("test-chain");
}

SimResult run(const plan::Plan &p, const Fabric &f, size_t count)
{
    SimConfig cfg;
    cfg.count = count;
    auto r = simulate(p, f, cfg);
    INFO((r.ok() ? "" : r.error().message));
    REQUIRE(r.ok());
    return std::move(r).value();
}

} // namespace

TEST_CASE("simulated binomial tree and chain give seed 002's times",
          "[cost][sim]")
{
    Fabric f = alpha_beta_fabric(10, 1);
    CHECK(run(binomial_bcast4(), f, 1000000).makespan_ns == 2000020);
    SimResult chain = run(chain_bcast(4, 10), f, 1000000);
    CHECK(chain.makespan_ns == 1200120);
    CHECK(chain.finish_ns[1] < chain.finish_ns[2]);
    CHECK(chain.messages == 30);
}

TEST_CASE("simulated greedy LogP broadcast of seed 002 ends at 24",
          "[cost][sim]")
{
    LogGP p{6, 2, 4, 0};
    auto s = logp_optimal_bcast(8, p);
    PlanBuilder pb(Collective::kBcast, 8, 0, 1);
    for (int r = 1; r < 8; ++r) { // informed order
        int from = s.parent[size_t(r)];
        pb.xfer(from, r, 0, {place(from, 0)}, {place(r, 0)});
    }
    Fabric f{nullptr, topology::LinkCost{6, 2, 4, 0}};
    SimResult res = run(pb.take("greedy"), f, 1);
    CHECK(res.makespan_ns == 24);
    for (int r = 1; r < 8; ++r) {
        CHECK(res.finish_ns[size_t(r)] >= s.informed_ns[size_t(r)]);
    }
}

TEST_CASE("ranks of one host share its NIC", "[cost][sim]")
{
    // Ranks 0,1 on host 0 send 1 MB each to ranks 2,3 on host 1.
    auto topo = topology::make_synthetic("nodes=2,ppn=2");
    REQUIRE(topo.ok());
    PlanBuilder pb(Collective::kBcast, 4, 0, 1);
    pb.xfer(0, 2, 0, {place(0, 0)}, {place(2, 0)});
    pb.xfer(1, 3, 0, {place(1, 1)}, {place(3, 0)});
    plan::Plan p = pb.take("pairs");
    SimResult shared = run(p, Fabric{&*topo, {}}, 1 << 20);
    const topology::LinkCost &l = topo->link(0, 2);
    double one = l.overhead_ns * 2 + l.latency_ns + (1 << 20) * l.ns_per_byte;
    CHECK(shared.makespan_ns > one + 0.9 * (1 << 20) * l.ns_per_byte);
    // Four hosts: no sharing.
    auto apart = topology::make_synthetic("nodes=4,ppn=1");
    REQUIRE(apart.ok());
    SimResult alone = run(p, Fabric{&*apart, {}}, 1 << 20);
    CHECK(alone.makespan_ns < shared.makespan_ns);
}

TEST_CASE("an incast serialises at the receiver's port", "[cost][sim]")
{
    PlanBuilder pb(Collective::kGather, 4, 0, 1);
    for (int r = 1; r < 4; ++r) {
        pb.xfer(r, 0, 0, {chunks(Buffer::kInput, 0, 0)},
                {chunks(Buffer::kOutput, r, 0)});
    }
    SimResult res = run(pb.take("flat"), alpha_beta_fabric(10, 1), 1000);
    CHECK(res.makespan_ns == 10 + 3 * 1000);
}

TEST_CASE("the critical path runs from the root to the last rank",
          "[cost][sim]")
{
    SimResult res = run(chain_bcast(4, 3), alpha_beta_fabric(10, 1), 300);
    REQUIRE(!res.critical_path.empty());
    CHECK(res.critical_path.front().rank == 0);
    CHECK(res.critical_path.back().rank == 3);
    CHECK(res.critical_path.back().end_ns == res.makespan_ns);
    for (size_t i = 1; i < res.critical_path.size(); ++i) {
        CHECK(res.critical_path[i].end_ns >= res.critical_path[i - 1].end_ns);
    }
    CHECK_THAT(format_critical_path(res), Catch::Contains("rank 3"));
}

TEST_CASE("unmatched messages and deadlocks are reported", "[cost][sim]")
{
    PlanBuilder lone(Collective::kBcast, 2, 0, 1);
    lone.send(0, 1, 5, {place(0, 0)});
    auto unmatched = simulate(lone.take("x"), alpha_beta_fabric(1, 1), {});
    REQUIRE(!unmatched.ok());
    CHECK_THAT(unmatched.error().message,
               Catch::Contains("rank 0 op 0") && Catch::Contains("tag 5"));

    // Each rank receives before it sends the slot it received.
    PlanBuilder pb(Collective::kAllreduce, 2, 0, 1);
    for (int r = 0; r < 2; ++r) {
        pb.recv(r, 1 - r, 0, {chunks(Buffer::kOutput, 0, 0)});
        pb.send(r, 1 - r, 0, {chunks(Buffer::kOutput, 0, 0)});
    }
    auto dead = simulate(pb.take("x"), alpha_beta_fabric(1, 1), {});
    REQUIRE(!dead.ok());
    CHECK_THAT(dead.error().message, Catch::Contains("deadlock"));
}

TEST_CASE("shared uplinks slow and serialise messages between switches",
          "[cost][sim]")
{
    auto topo = topology::make_synthetic("racks=2,nodes=2,ppn=1");
    REQUIRE(topo.ok());
    // Hosts 0,1 on switch 0 each send 1 MB to hosts 2,3 on switch 1.
    PlanBuilder pb(Collective::kBcast, 4, 0, 1);
    pb.xfer(0, 2, 0, {place(0, 0)}, {place(2, 0)});
    pb.xfer(1, 3, 0, {place(1, 1)}, {place(3, 0)});
    // Then rank 2 answers on a by now idle uplink.
    pb.xfer(2, 0, 1, {place(2, 0)}, {chunks(Buffer::kScratch, 0, 0)});
    pb.scratch(0, 1);
    plan::Plan p = pb.take("pairs");
    const double mb = 1 << 20;
    SimConfig cfg;
    cfg.count = 1 << 20;
    auto open = simulate(p, Fabric{&*topo, {}}, cfg);
    cfg.uplink_ns_per_byte = 1.0;
    auto shared = simulate(p, Fabric{&*topo, {}}, cfg);
    REQUIRE(open.ok());
    REQUIRE(shared.ok());
    const topology::LinkCost &l = topo->link(0, 2);
    CHECK(open->finish_ns[3] ==
          Approx(2 * l.overhead_ns + l.latency_ns + mb * l.ns_per_byte));
    // Two messages through one 1 ns/B uplink: the second lands after 2 MB.
    CHECK(shared->makespan_ns >= 2 * mb * 1.0);
    CHECK(shared->finish_ns[2] >= mb * 1.0);
    // Rank 2's answer starts after 1 MB and needs another 1 MB of uplink.
    CHECK(shared->finish_ns[0] >= 2 * mb * 1.0);
}

TEST_CASE("every registry algorithm simulates without deadlock", "[cost][sim]")
{
    Fabric f{nullptr, topology::LinkCost{1000, 100, 100, 0.1}};
    for (const algorithms::Algorithm &a : algorithms::registry()) {
        for (int n : {1, 2, 3, 5, 8}) {
            algorithms::Request q;
            q.collective = a.collective;
            q.nranks = n;
            q.root = n - 1;
            q.radix = 3;
            q.segments = 2;
            q.levels = algorithms::make_levels(n, {2, 2});
            if (!a.applicable(q)) {
                continue;
            }
            INFO(plan::to_string(a.collective) << " " << a.name << " P=" << n);
            auto p = algorithms::build(a.name, q);
            REQUIRE(p.ok());
            SimConfig cfg;
            cfg.count = 1000;
            auto r = simulate(p.value(), f, cfg);
            INFO((r.ok() ? "" : r.error().message));
            REQUIRE(r.ok());
            CHECK((n == 1 || r->makespan_ns > 0));
        }
    }
}

TEST_CASE("the simulator keeps shm within a host and mcast within its domain",
          "[cost][sim]")
{
    auto topo = topology::make_synthetic("nodes=2,ppn=2");
    REQUIRE(topo.ok());
    auto plan_over = [](std::vector<int> members, plan::Channel ch) {
        PlanBuilder pb(Collective::kBcast, 4, members[0], 1);
        const plan::Range out = chunks(Buffer::kOutput, 0, 0);
        pb.copy(members[0], {chunks(Buffer::kInput, 0, 0)}, {out});
        const int root = members[0];
        members.erase(members.begin());
        pb.bcast(plan::GroupMsg{root, members, 0}, ch, {out}, {out});
        return pb.take("test-one-to-many");
    };
    const Fabric f{&*topo, {}};
    SimConfig cfg;
    CHECK(simulate(plan_over({0, 1}, plan::Channel::kShmBcast), f, cfg).ok());
    const auto across =
        simulate(plan_over({0, 2}, plan::Channel::kShmBcast), f, cfg);
    REQUIRE_FALSE(across.ok());
    CHECK_THAT(across.error().message,
               Catch::Contains("shm_bcast with rank 2 on another host"));
    const auto mc = plan_over({0, 2}, plan::Channel::kMcast);
    CHECK_THAT(simulate(mc, f, cfg).error().message,
               Catch::Contains("no multicast"));
    topo->enable_mcast(topology::LevelKind::kHost);
    CHECK_THAT(simulate(mc, f, cfg).error().message,
               Catch::Contains("outside its multicast domain"));
    topo->enable_mcast(topology::LevelKind::kSwitch);
    CHECK(simulate(mc, f, cfg).ok());
    // Without a topology nothing is known about hosts: not checked.
    CHECK(simulate(plan_over({0, 2}, plan::Channel::kShmBcast),
                   alpha_beta_fabric(1, 1), cfg)
              .ok());
}

TEST_CASE("the simulator refuses a plan above its memory limit by name",
          "[cost][sim]")
{
    const plan::Plan p = chain_bcast(64, 8);
    const std::int64_t need = sim_bytes(p);
    // 63 x 8 sends and receives, each with one peer and at most one dep.
    CHECK(need > 2 * 63 * 8 * 100);
    CHECK(need < 2 * 63 * 8 * 400);
    SimConfig cfg;
    cfg.max_bytes = need; // fits exactly
    CHECK(simulate(p, alpha_beta_fabric(1, 1), cfg).ok());
    cfg.max_bytes = need - 1;
    auto r = simulate(p, alpha_beta_fabric(1, 1), cfg);
    REQUIRE(!r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("too large to simulate") &&
                                      Catch::Contains("limit"));

    // Refused before matching: an unmatched plan gets the size error.
    PlanBuilder lone(Collective::kBcast, 2, 0, 1);
    lone.send(0, 1, 5, {place(0, 0)});
    cfg.max_bytes = 1;
    auto u = simulate(lone.take("x"), alpha_beta_fabric(1, 1), cfg);
    REQUIRE(!u.ok());
    CHECK_THAT(u.error().message, Catch::Contains("too large to simulate"));
}

TEST_CASE("a shm incast reduce takes no port time at its root", "[cost][sim]")
{
    // The senders write their own slots; the root pays o per slot and
    // combines: 3 members of 1000 bytes take o + G m + L (the first
    // message), then 3 (o + gamma m) at the root, not 3 G m at its port.
    auto topo = topology::make_synthetic("nodes=1,ppn=4");
    REQUIRE(topo.ok());
    const topology::LinkCost l{150, 100, 50, 1};
    topo->set_link_cost(topo->levels().back().kind, l);
    PlanBuilder pb(Collective::kReduce, 4, 0, 1);
    const plan::Range in = chunks(Buffer::kInput, 0, 0);
    pb.incast(plan::GroupMsg{0, {1, 2, 3}, 0}, {in},
              {chunks(Buffer::kOutput, 0, 0)});
    SimConfig cfg;
    cfg.count = 1000;
    cfg.reduce_ns_per_byte = 0.5;
    auto r = simulate(pb.take("test-incast"), Fabric{&*topo, {}}, cfg);
    REQUIRE(r.ok());
    CHECK(r->makespan_ns == Approx(100 + 1000 + 150 + 3 * (100 + 500)));
}

TEST_CASE("LogGP forms: a root repeats every max(o, g + G m), a pipeline "
          "runs at its busiest resource",
          "[cost][sim]")
{
    const topology::LinkCost l{150, 100, 50, 0.05};
    const Fabric f{nullptr, l};
    const AlphaBeta ab = alpha_beta(l);
    for (double s : {8.0, 65536.0}) {
        algorithms::Request q;
        q.collective = Collective::kBcast;
        q.nranks = 8;
        auto lin = algorithms::build("linear", q);
        REQUIRE(lin.ok());
        INFO("bytes " << s);
        // Alpha-beta would say 7 (alpha + beta s).
        CHECK(run(*lin, f, size_t(s)).makespan_ns ==
              Approx(flat_bcast_ns(8, s, ab)).epsilon(0.01));
        // A middle rank's receive and send overheads interleave with its
        // ports chunk by chunk, which the stage leaves out: within 6%.
        for (int segments : {1, 8}) {
            INFO("segments " << segments);
            CHECK(run(chain_bcast(5, segments), f, size_t(s)).makespan_ns ==
                  Approx(pipelined_ns(4, 1, segments, s / segments, 0, ab))
                      .epsilon(0.06));
        }
    }
}

namespace {

/// One message of 1000 B from rank a to rank b of n, and c to d where given.
plan::Plan two_messages(int n, int a, int b, int c = -1, int d = -1)
{
    PlanBuilder pb(Collective::kBcast, n, a, 1);
    pb.xfer(a, b, 0, {place(a, a)}, {place(b, a)});
    if (c >= 0) {
        pb.xfer(c, d, 1, {place(c, c)}, {place(d, c)});
    }
    return pb.take("test-messages");
}

} // namespace

TEST_CASE("ranks that share a CPU hold it for a message's bytes at both "
          "ends, a share of the bytes' time each",
          "[cost][sim]")
{
    // G = 1 ns/B, no fixed costs: 1000 B take 1000 ns between two CPUs.
    Fabric f{nullptr, topology::LinkCost{0, 0, 0, 1}};
    const double share = f.cpu_share * 1000;
    REQUIRE(f.cpu_share == kCpuShareOfBytes);
    CHECK(run(two_messages(2, 0, 1), f, 1000).makespan_ns == Approx(1000));
    // Two groups of one CPU: each end's share fits in the bytes' time.
    f.cpu_group = {0, 1};
    f.group_cpus = {1, 1};
    CHECK(run(two_messages(2, 0, 1), f, 1000).makespan_ns == Approx(1000));
    // One CPU runs both ends: their shares add (1.15 x the bytes' time).
    f.cpu_group = {0, 0};
    f.group_cpus = {1};
    CHECK(run(two_messages(2, 0, 1), f, 1000).makespan_ns == Approx(2 * share));
    // Two messages among four ranks of one group: four ends' shares on
    // one CPU, two on each of two, one on each of four.
    const plan::Plan p = two_messages(4, 0, 1, 2, 3);
    f.cpu_group = {0, 0, 0, 0};
    for (const auto &[cpus, expect] :
         {std::pair{1, 4 * share}, {2, 2 * share}, {4, 1000.0}}) {
        INFO(cpus << " CPUs");
        f.group_cpus = {cpus};
        CHECK(run(p, f, 1000).makespan_ns == Approx(expect));
    }
}

TEST_CASE("a rank that waited for a message gets its shared CPU back "
          "after a poll turn of each other rank of the CPU",
          "[cost][sim]")
{
    // G = 1 ns/B, no fixed costs: 1000 B take 1000 ns between two CPUs.
    Fabric f{nullptr, topology::LinkCost{0, 0, 0, 1}};
    f.turn_ns = 100;
    const double share = f.cpu_share * 1000;
    // No groups: no turns.
    CHECK(run(two_messages(4, 0, 2), f, 1000).makespan_ns == Approx(1000));
    // Rank 2 waits on a CPU it shares with rank 3: one turn.
    f.cpu_group = {0, 0, 1, 1};
    f.group_cpus = {1, 1};
    CHECK(run(two_messages(4, 0, 2), f, 1000).makespan_ns ==
          Approx(1000 + 100));
    // A CPU each: none.
    f.group_cpus = {2, 2};
    CHECK(run(two_messages(4, 0, 2), f, 1000).makespan_ns == Approx(1000));
    // Four ranks on one CPU: both ends' shares, then three turns.
    f.cpu_group = {0, 0, 0, 0};
    f.group_cpus = {1};
    CHECK(run(two_messages(4, 0, 2), f, 1000).makespan_ns ==
          Approx(2 * share + 300));
    // Two messages at once, 0 to 2 and 1 to 3 (each pair on its own
    // CPU's turns): each receiver waits a turn, the makespan one more.
    f.cpu_group = {0, 0, 1, 1};
    f.group_cpus = {1, 1};
    f.turn_ns = 0;
    const double without =
        run(two_messages(4, 0, 2, 1, 3), f, 1000).makespan_ns;
    f.turn_ns = 100;
    CHECK(run(two_messages(4, 0, 2, 1, 3), f, 1000).makespan_ns ==
          Approx(without + 100));
    // A receive whose message came before it was ready did not wait: rank
    // 0 sends 2 twice (landing at 1000 and 2000 ns); the first receive
    // waits, then takes 2000 ns of turns, and the second's message is
    // there when it is ready, at 3000 ns.
    PlanBuilder pb(Collective::kBcast, 4, 0, 1);
    pb.xfer(0, 2, 0, {place(0, 0)}, {place(2, 0)});
    pb.xfer(0, 2, 0, {place(0, 0)}, {place(2, 0)});
    f.turn_ns = 2000;
    CHECK(run(pb.take("test-twice"), f, 1000).makespan_ns == Approx(3000));
}

TEST_CASE("the simulator refuses CPU groups that do not fit the plan",
          "[cost][sim]")
{
    Fabric f{nullptr, topology::LinkCost{0, 0, 0, 1}};
    SimConfig cfg;
    cfg.count = 8;
    f.cpu_group = {0};
    f.group_cpus = {1};
    auto r = simulate(two_messages(2, 0, 1), f, cfg);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message ==
          "simulate: CPU groups given for 1 of the plan's 2 ranks");
    f.cpu_group = {0, 2};
    r = simulate(two_messages(2, 0, 1), f, cfg);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "simulate: CPU group 2 of 1");
}
