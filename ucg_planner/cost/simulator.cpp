// SPDX-License-Identifier: BSD-3-Clause
// The discrete-event simulator's event loop: runs ready ops, landings and
// deliveries in time order over CPUs, ports, NICs and uplinks (semantics in
// simulator.h), then reports finish times and the critical path.
#include "cost/sim_engine.h"

#include <algorithm>
#include <queue>
#include <sstream>
#include <tuple>

namespace ucg::cost {

namespace detail {

void Sim::on_ready(int op, double t)
{
    OpState &o = ops_[size_t(op)];
    o.ready = t;
    if (plan::is_send(o.kind)) {
        on_send(op, t);
    } else if (plan::is_recv(o.kind)) {
        if (o.msgs_left == 0) {
            complete_recv(op, std::max(t, o.deliver));
        }
    } else {
        double per_byte = o.kind == OpKind::kReduce ? cfg_.reduce_ns_per_byte
                                                    : cfg_.copy_ns_per_byte;
        double &c = cpu(o.rank);
        o.start = std::max(t, c);
        const double end = o.start + o.bytes * per_byte;
        if (end > o.start) {
            c = end;
        }
        push(end, kDone, op);
    }
}

void Sim::on_send(int op, double t)
{
    OpState &o = ops_[size_t(op)];
    const int r = o.rank;
    const int first = out_begin_[size_t(op)], last = out_begin_[size_t(op) + 1];
    if (first == last) { // a send with no peers: nothing to do
        o.start = t;
        push(t, kDone, op);
        return;
    }
    const int peer0 = msgs_[size_t(out_msgs_[size_t(first)])].to;
    const topology::LinkCost &l = link(r, peer0);
    const double m = o.bytes;
    double &port =
        host(r) != host(peer0) ? nic_tx_[size_t(host(r))] : port_tx_[size_t(r)];
    double *up = cross_switch(r, peer0)
                     ? &up_tx_[size_t(fabric_.topo->switch_of(r))]
                     : nullptr;
    double &c = cpu(r);
    double s = std::max({t, c, port, up ? *up : 0.0});
    c = s + l.overhead_ns +
        (bytes_on_cpu() ? fabric_.cpu_share * m * l.ns_per_byte : 0.0);
    port = s + l.gap_ns + m * l.ns_per_byte;
    if (up) {
        *up = s + m * cfg_.uplink_ns_per_byte;
    }
    o.start = s;
    const double injected = s + l.overhead_ns + m * l.ns_per_byte;
    // Across switches the slower of NIC and uplink sets the byte rate.
    const double uplink_extra =
        m * std::max(0.0, cfg_.uplink_ns_per_byte - l.ns_per_byte);
    for (int k = first; k < last; ++k) {
        int msg = out_msgs_[size_t(k)];
        int to = msgs_[size_t(msg)].to;
        push(injected + link(r, to).latency_ns +
                 (cross_switch(r, to) ? uplink_extra : 0.0),
             kLand, msg);
    }
    push(injected, kDone, op);
}

void Sim::on_land(int msg, double t)
{
    const Msg &mm = msgs_[size_t(msg)];
    const OpState &send = ops_[size_t(mm.send)];
    const int from = send.rank, to = mm.to;
    const double m = send.bytes;
    if (ops_[size_t(mm.recv)].kind == OpKind::kIncastRecvReduce) {
        // Each sender wrote its own slot; the root reads the slots as it
        // combines them (reduce_ns_per_byte), not through a port.
        push(t, kDeliver, msg);
        return;
    }
    double &port = host(from) != host(to) ? nic_rx_[size_t(host(to))]
                                          : port_rx_[size_t(to)];
    const double bytes_ns = m * link(from, to).ns_per_byte;
    double d = std::max(t, port + bytes_ns);
    if (bytes_on_cpu()) { // the receiver's CPU takes them too
        double &c = cpu(to);
        c = std::max(c, d - bytes_ns) + fabric_.cpu_share * bytes_ns;
        d = std::max(d, c);
    }
    if (cross_switch(from, to)) {
        double &up = up_rx_[size_t(fabric_.topo->switch_of(to))];
        d = std::max(d, up + m * cfg_.uplink_ns_per_byte);
        up = d;
    }
    port = d;
    push(d, kDeliver, msg);
}

void Sim::on_deliver(int msg, double t)
{
    const int op = msgs_[size_t(msg)].recv;
    OpState &o = ops_[size_t(op)];
    if (t >= o.deliver) {
        o.deliver = t;
        if (t > o.ready || o.deps_left > 0) {
            o.gate = msgs_[size_t(msg)].send;
        }
    }
    if (--o.msgs_left == 0 && o.deps_left == 0) {
        complete_recv(op, std::max(t, o.ready));
    }
}

void Sim::complete_recv(int op, double t)
{
    // Both the last delivery (deps already done, its ready event not yet
    // run) and the ready event find the receive complete: run it once.
    OpState &o = ops_[size_t(op)];
    if (o.start >= 0) {
        return;
    }
    const double npeers = double(o.npeers);
    double cost = npeers * link(o.rank, o.peer0).overhead_ns;
    if (plan::is_reducing(o.kind)) {
        cost += npeers * o.bytes * cfg_.reduce_ns_per_byte;
    }
    double &c = cpu(o.rank);
    const double waited = o.deliver > o.ready ? turns(o.rank) : 0.0;
    o.start = std::max(t + waited, c);
    if (cost > 0) { // a free CPU stays free for a receive's later bytes
        c = o.start + cost;
    }
    push(o.start + cost, kDone, op);
}

void Sim::on_done(int op, double t)
{
    ops_[size_t(op)].end = t;
    for (int k = dep_begin_[size_t(op)]; k < dep_begin_[size_t(op) + 1]; ++k) {
        const int d = dependents_[size_t(k)];
        OpState &next = ops_[size_t(d)];
        if (t >= next.ready) {
            next.ready = t;
            next.gate = op;
        }
        if (--next.deps_left == 0) {
            push(next.ready, kReady, d);
        }
    }
}

Result<SimResult> Sim::run()
{
    if (auto f = flatten(); !f) {
        return f.error();
    }
    if (auto c = check_reach(); !c) {
        return c.error();
    }
    if (auto m = match(); !m) {
        return m.error();
    }
    const size_t nops = ops_.size(); // times and gates as OpState{} has them
    const size_t n = size_t(plan_.nranks);
    if (bytes_on_cpu()) {
        cpu_begin_.assign(1, 0);
        for (int cpus : fabric_.group_cpus) {
            cpu_begin_.push_back(cpu_begin_.back() + size_t(std::max(cpus, 1)));
        }
        if (fabric_.turn_ns > 0) {
            // A turn of each other rank of the group's CPU: ranks per CPU - 1.
            std::vector<int> ranks(fabric_.group_cpus.size(), 0);
            for (int g : fabric_.cpu_group) {
                ++ranks[size_t(g)];
            }
            group_turns_.resize(ranks.size());
            for (size_t g = 0; g < ranks.size(); ++g) {
                const double per_cpu =
                    double(ranks[g]) /
                    double(cpu_begin_[g + 1] - cpu_begin_[g]);
                group_turns_[g] = fabric_.turn_ns * std::max(0.0, per_cpu - 1);
            }
        }
    } else {
        cpu_begin_.resize(n + 1);
        for (size_t r = 0; r <= n; ++r) {
            cpu_begin_[r] = r;
        }
    }
    cpu_.assign(cpu_begin_.back(), 0);
    port_tx_.assign(n, 0);
    port_rx_.assign(n, 0);
    const size_t hosts = fabric_.topo ? size_t(fabric_.topo->num_hosts()) : n;
    nic_tx_.assign(hosts, 0);
    nic_rx_.assign(hosts, 0);
    const size_t sw = fabric_.topo ? size_t(fabric_.topo->num_switches()) : 1;
    up_tx_.assign(sw, 0);
    up_rx_.assign(sw, 0);
    for (size_t id = 0; id < nops; ++id) {
        if (ops_[id].deps_left == 0) {
            push(0, kReady, int(id));
        }
    }
    while (!heap_.empty()) {
        Event ev = heap_.top();
        heap_.pop();
        int id = int(ev.key >> 2);
        switch (EvType(ev.key & 3)) {
        case kReady:
            on_ready(id, ev.t);
            break;
        case kLand:
            on_land(id, ev.t);
            break;
        case kDeliver:
            on_deliver(id, ev.t);
            break;
        case kDone:
            on_done(id, ev.t);
            break;
        }
    }
    SimResult res;
    res.ops = nops;
    res.messages = msgs_.size();
    res.finish_ns.assign(n, 0);
    int last = -1;
    for (size_t id = 0; id < nops; ++id) {
        const OpState &o = ops_[id];
        if (o.end < 0) {
            return fail("simulate: deadlock: " + where(int(id)) +
                        " never completes (" + std::to_string(o.deps_left) +
                        " deps, " + std::to_string(o.msgs_left) +
                        " messages outstanding)");
        }
        double &f = res.finish_ns[size_t(o.rank)];
        f = std::max(f, o.end);
        if (last < 0 || o.end > ops_[size_t(last)].end) {
            last = int(id);
        }
    }
    res.makespan_ns = last < 0 ? 0 : ops_[size_t(last)].end;
    for (int op = last; cfg_.critical_path && op >= 0;
         op = ops_[size_t(op)].gate) {
        const OpState &o = ops_[size_t(op)];
        const bool waited = o.start > std::max(o.ready, o.deliver);
        res.critical_path.push_back(
            {o.rank, o.index, o.kind, o.start, o.end, waited});
    }
    std::reverse(res.critical_path.begin(), res.critical_path.end());
    return res;
}

} // namespace detail

namespace {
constexpr std::int64_t kCap = std::int64_t{1} << 62;
constexpr std::int64_t kPerRank = 6 * 8;
} // namespace

std::int64_t sim_bytes(const plan::RankProgram &program)
{
    // Per op: its OpState plus two heap events (the heap's vector may
    // double: counted twice). Per
    // dependency: one int of the reversed CSR. Per peer of a send or
    // receive: one End while matching, and per message a Msg, its CSR
    // entry and two events.
    constexpr std::int64_t kPerOp =
        std::int64_t{sizeof(detail::OpState)} + 2 * 2 * 16;
    constexpr std::int64_t kPerDep = 4;
    constexpr std::int64_t kPerPeer = 20 + (12 + 4 + 2 * 2 * 16);
    std::int64_t deps = 0, peers = 0;
    for (const plan::Op &op : program.ops) {
        deps += std::int64_t(op.deps.size());
        peers += std::int64_t(op.peers.size());
    }
    return std::int64_t(program.ops.size()) * kPerOp + deps * kPerDep +
           peers * kPerPeer;
}

std::int64_t program_bytes(const plan::RankProgram &program)
{
    // Each non-empty vector is one allocation (+16 bytes of malloc header).
    auto vec = [](const auto &v) {
        return v.empty() ? std::int64_t{0}
                         : std::int64_t(v.capacity() * sizeof(v[0]) + 16);
    };
    std::int64_t total = vec(program.ops);
    for (const plan::Op &op : program.ops) {
        total += vec(op.peers) + vec(op.src) + vec(op.dst) + vec(op.deps);
    }
    return total;
}

std::int64_t sim_bytes(const plan::Plan &plan)
{
    std::int64_t total = std::int64_t(plan.ranks.size()) * kPerRank;
    for (const plan::RankProgram &r : plan.ranks) {
        total += sim_bytes(r);
        if (total > kCap) {
            return kCap;
        }
    }
    return total;
}

Result<SimResult> simulate(const plan::Plan &plan, const Fabric &fabric,
                           const SimConfig &config)
{
    if (const std::int64_t need = sim_bytes(plan); need > config.max_bytes) {
        return fail("plan too large to simulate: about " +
                    std::to_string(need >> 20) +
                    " MiB of simulator state (limit " +
                    std::to_string(config.max_bytes >> 20) +
                    " MiB; grows with ops and messages, O(P^2) for "
                    "allgather, alltoall and reduce_scatter)");
    }
    if (!fabric.cpu_group.empty()) {
        if (fabric.cpu_group.size() != size_t(plan.nranks)) {
            return fail("simulate: CPU groups given for " +
                        std::to_string(fabric.cpu_group.size()) +
                        " of the plan's " + std::to_string(plan.nranks) +
                        " ranks");
        }
        for (int g : fabric.cpu_group) {
            if (g < 0 || size_t(g) >= fabric.group_cpus.size()) {
                return fail("simulate: CPU group " + std::to_string(g) +
                            " of " + std::to_string(fabric.group_cpus.size()));
            }
        }
    }
    return detail::Sim(plan, fabric, config).run();
}

std::string format_critical_path(const SimResult &result)
{
    std::ostringstream os;
    for (const PathStep &s : result.critical_path) {
        os << "  rank " << s.rank << " op " << s.op << " "
           << plan::to_string(s.kind) << " [" << s.start_ns << ", " << s.end_ns
           << "] ns" << (s.waited ? " (waited)" : "") << "\n";
    }
    return os.str();
}

} // namespace ucg::cost
