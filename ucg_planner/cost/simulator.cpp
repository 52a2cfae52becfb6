// SPDX-License-Identifier: BSD-3-Clause
// The discrete-event simulator: flattens the plan, matches messages by
// (sender, receiver, channel, tag) in list order, then runs events in time
// order over CPUs, ports, NICs and uplinks (see simulator.h).
#include "cost/simulator.h"

#include <algorithm>
#include <queue>
#include <sstream>
#include <tuple>

namespace ucg::cost {

namespace {

using plan::OpKind;

enum EvType : uint32_t { kDone = 0, kDeliver = 1, kLand = 2, kReady = 3 };

struct Event {
    double t;
    uint64_t key; // id << 2 | type: ties go by type, then id
    bool operator>(const Event &o) const
    {
        return t > o.t || (t == o.t && key > o.key);
    }
};

struct Msg {
    int send = -1; // flat op ids
    int recv = -1;
    int to = -1; // receiving rank
};

/// One end of a message, for matching by sorting.
struct End {
    int sender, receiver, channel, tag, op;
    auto key() const { return std::tie(sender, receiver, channel, tag); }
    bool operator<(const End &o) const
    {
        return std::tie(sender, receiver, channel, tag, op) <
               std::tie(o.sender, o.receiver, o.channel, o.tag, o.op);
    }
};

class Sim {
  public:
    Sim(const plan::Plan &p, const Fabric &f, const SimConfig &c)
        : plan_(p), fabric_(f), cfg_(c)
    {
    }
    Result<SimResult> run();

  private:
    Result<void> flatten();
    Result<void> match();
    std::string where(int op) const;
    const topology::LinkCost &link(int a, int b) const
    {
        return fabric_.topo ? fabric_.topo->link(a, b) : fabric_.uniform;
    }
    int host(int r) const
    {
        return fabric_.topo ? fabric_.topo->host_of(r) : r;
    }
    bool cross_switch(int a, int b) const
    {
        return cfg_.uplink_ns_per_byte > 0 && fabric_.topo &&
               fabric_.topo->switch_of(a) != fabric_.topo->switch_of(b);
    }
    void push(double t, EvType type, int id)
    {
        heap_.push({t, (uint64_t(id) << 2) | type});
    }
    void on_ready(int op, double t);
    void on_send(int op, double t);
    void on_land(int msg, double t);
    void on_deliver(int msg, double t);
    void on_done(int op, double t);
    void complete_recv(int op, double t);

    const plan::Plan &plan_;
    const Fabric &fabric_;
    const SimConfig &cfg_;
    // Flat ops.
    std::vector<int> rank_of_, index_of_, offset_;
    std::vector<double> bytes_;
    std::vector<int> deps_left_, msgs_left_, gate_;
    std::vector<double> ready_, deliver_, start_, end_;
    std::vector<int> dependents_, dep_begin_; // CSR
    std::vector<int> out_msgs_, out_begin_;   // CSR: messages of a send
    std::vector<Msg> msgs_;
    // Resources: free-at times.
    std::vector<double> cpu_, port_tx_, port_rx_, nic_tx_, nic_rx_;
    std::vector<double> up_tx_, up_rx_;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> heap_;
};

const plan::Op &op_at(const plan::Plan &p, int rank, int index)
{
    return p.ranks[size_t(rank)].ops[size_t(index)];
}

std::string Sim::where(int op) const
{
    int r = rank_of_[size_t(op)], i = index_of_[size_t(op)];
    return "rank " + std::to_string(r) + " op " + std::to_string(i) + " (" +
           std::string(plan::to_string(op_at(plan_, r, i).kind)) + ")";
}

Result<void> Sim::flatten()
{
    const int n = plan_.nranks;
    if (int(plan_.ranks.size()) != n) {
        return fail("simulate: plan has " + std::to_string(plan_.ranks.size()) +
                    " rank programs for " + std::to_string(n) + " ranks");
    }
    if (fabric_.topo && fabric_.topo->size() != n) {
        return fail("simulate: topology has " +
                    std::to_string(fabric_.topo->size()) + " ranks, plan " +
                    std::to_string(n));
    }
    offset_.assign(size_t(n) + 1, 0);
    for (int r = 0; r < n; ++r) {
        offset_[size_t(r) + 1] =
            offset_[size_t(r)] + int(plan_.ranks[size_t(r)].ops.size());
    }
    const size_t nops = size_t(offset_.back());
    rank_of_.resize(nops);
    index_of_.resize(nops);
    bytes_.resize(nops);
    deps_left_.assign(nops, 0);
    dep_begin_.assign(nops + 1, 0);
    const double elem = double(cfg_.elem_bytes);
    for (int r = 0; r < n; ++r) {
        const auto &ops = plan_.ranks[size_t(r)].ops;
        for (int i = 0; i < int(ops.size()); ++i) {
            const plan::Op &op = ops[size_t(i)];
            size_t id = size_t(offset_[size_t(r)] + i);
            rank_of_[id] = r;
            index_of_[id] = i;
            const auto &ranges = plan::is_send(op.kind) ? op.src : op.dst;
            bytes_[id] =
                elem *
                double(plan::range_elements(ranges, plan_.nchunks, cfg_.count));
            deps_left_[id] = int(op.deps.size());
            for (int d : op.deps) {
                if (d < 0 || d >= i) {
                    return fail("simulate: " + where(int(id)) +
                                " depends on op " + std::to_string(d));
                }
                ++dep_begin_[size_t(offset_[size_t(r)] + d)];
            }
        }
    }
    // Reverse the deps into a CSR of dependents.
    for (size_t i = 0, sum = 0; i <= nops; ++i) {
        size_t c = i < nops ? size_t(dep_begin_[i]) : 0;
        dep_begin_[i] = int(sum);
        sum += c;
    }
    dependents_.resize(size_t(dep_begin_[nops]));
    std::vector<int> fill(dep_begin_.begin(), dep_begin_.end() - 1);
    for (size_t id = 0; id < nops; ++id) {
        const plan::Op &op = op_at(plan_, rank_of_[id], index_of_[id]);
        for (int d : op.deps) {
            size_t dep = size_t(offset_[size_t(rank_of_[id])] + d);
            dependents_[size_t(fill[dep]++)] = int(id);
        }
    }
    return {};
}

Result<void> Sim::match()
{
    std::vector<End> sends, recvs;
    const int n = plan_.nranks;
    for (size_t id = 0; id < rank_of_.size(); ++id) {
        int r = rank_of_[id];
        const plan::Op &op = op_at(plan_, r, index_of_[id]);
        bool snd = plan::is_send(op.kind), rcv = plan::is_recv(op.kind);
        for (int peer : op.peers) {
            if (peer < 0 || peer >= n) {
                return fail("simulate: " + where(int(id)) + " names peer " +
                            std::to_string(peer));
            }
            if (snd) {
                sends.push_back({r, peer, int(op.channel), op.tag, int(id)});
            } else if (rcv) {
                recvs.push_back({peer, r, int(op.channel), op.tag, int(id)});
            }
        }
    }
    std::sort(sends.begin(), sends.end());
    std::sort(recvs.begin(), recvs.end());
    size_t i = 0, j = 0;
    msgs_.reserve(sends.size());
    while (i < sends.size() || j < recvs.size()) {
        if (j == recvs.size() ||
            (i < sends.size() && sends[i].key() < recvs[j].key())) {
            return fail("simulate: " + where(sends[i].op) + " to rank " +
                        std::to_string(sends[i].receiver) + " tag " +
                        std::to_string(sends[i].tag) + " has no receive");
        }
        if (i == sends.size() || recvs[j].key() < sends[i].key()) {
            return fail("simulate: " + where(recvs[j].op) + " from rank " +
                        std::to_string(recvs[j].sender) + " tag " +
                        std::to_string(recvs[j].tag) + " has no send");
        }
        msgs_.push_back({sends[i].op, recvs[j].op, recvs[j].receiver});
        ++i;
        ++j;
    }
    // Messages per send (CSR) and per receive (a count).
    const size_t nops = rank_of_.size();
    out_begin_.assign(nops + 1, 0);
    msgs_left_.assign(nops, 0);
    for (const Msg &m : msgs_) {
        ++out_begin_[size_t(m.send) + 1];
        ++msgs_left_[size_t(m.recv)];
    }
    for (size_t k = 0; k < nops; ++k) {
        out_begin_[k + 1] += out_begin_[k];
    }
    out_msgs_.resize(msgs_.size());
    std::vector<int> fill(out_begin_.begin(), out_begin_.end() - 1);
    for (size_t k = 0; k < msgs_.size(); ++k) {
        out_msgs_[size_t(fill[size_t(msgs_[k].send)]++)] = int(k);
    }
    return {};
}

} // namespace

namespace {

void Sim::on_ready(int op, double t)
{
    ready_[size_t(op)] = t;
    const plan::Op &o =
        op_at(plan_, rank_of_[size_t(op)], index_of_[size_t(op)]);
    if (plan::is_send(o.kind)) {
        on_send(op, t);
    } else if (plan::is_recv(o.kind)) {
        if (msgs_left_[size_t(op)] == 0) {
            complete_recv(op, std::max(t, deliver_[size_t(op)]));
        }
    } else {
        int r = rank_of_[size_t(op)];
        double per_byte = o.kind == OpKind::kReduce ? cfg_.reduce_ns_per_byte
                                                    : cfg_.copy_ns_per_byte;
        double s = std::max(t, cpu_[size_t(r)]);
        cpu_[size_t(r)] = s + bytes_[size_t(op)] * per_byte;
        start_[size_t(op)] = s;
        push(cpu_[size_t(r)], kDone, op);
    }
}

void Sim::on_send(int op, double t)
{
    const int r = rank_of_[size_t(op)];
    const int first = out_begin_[size_t(op)], last = out_begin_[size_t(op) + 1];
    if (first == last) { // a send with no peers: nothing to do
        start_[size_t(op)] = t;
        push(t, kDone, op);
        return;
    }
    const int peer0 = msgs_[size_t(out_msgs_[size_t(first)])].to;
    const topology::LinkCost &l = link(r, peer0);
    const double m = bytes_[size_t(op)];
    double &port =
        host(r) != host(peer0) ? nic_tx_[size_t(host(r))] : port_tx_[size_t(r)];
    double *up = cross_switch(r, peer0)
                     ? &up_tx_[size_t(fabric_.topo->switch_of(r))]
                     : nullptr;
    double s = std::max({t, cpu_[size_t(r)], port, up ? *up : 0.0});
    cpu_[size_t(r)] = s + l.overhead_ns;
    port = s + l.gap_ns + m * l.ns_per_byte;
    if (up) {
        *up = s + m * cfg_.uplink_ns_per_byte;
    }
    start_[size_t(op)] = s;
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
    const int from = rank_of_[size_t(mm.send)], to = mm.to;
    const double m = bytes_[size_t(mm.send)];
    double &port = host(from) != host(to) ? nic_rx_[size_t(host(to))]
                                          : port_rx_[size_t(to)];
    double d = std::max(t, port + m * link(from, to).ns_per_byte);
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
    if (t >= deliver_[size_t(op)]) {
        deliver_[size_t(op)] = t;
        if (t > ready_[size_t(op)] || deps_left_[size_t(op)] > 0) {
            gate_[size_t(op)] = msgs_[size_t(msg)].send;
        }
    }
    if (--msgs_left_[size_t(op)] == 0 && deps_left_[size_t(op)] == 0) {
        complete_recv(op, std::max(t, ready_[size_t(op)]));
    }
}

void Sim::complete_recv(int op, double t)
{
    const int r = rank_of_[size_t(op)];
    const plan::Op &o = op_at(plan_, r, index_of_[size_t(op)]);
    const double npeers = double(o.peers.size());
    const double overhead =
        link(r, o.peers.empty() ? r : o.peers[0]).overhead_ns;
    double cost = npeers * overhead;
    if (plan::is_reducing(o.kind)) {
        cost += npeers * bytes_[size_t(op)] * cfg_.reduce_ns_per_byte;
    }
    double s = std::max(t, cpu_[size_t(r)]);
    cpu_[size_t(r)] = s + cost;
    start_[size_t(op)] = s;
    push(s + cost, kDone, op);
}

void Sim::on_done(int op, double t)
{
    end_[size_t(op)] = t;
    for (int k = dep_begin_[size_t(op)]; k < dep_begin_[size_t(op) + 1]; ++k) {
        int d = dependents_[size_t(k)];
        if (t >= ready_[size_t(d)]) {
            ready_[size_t(d)] = t;
            gate_[size_t(d)] = op;
        }
        if (--deps_left_[size_t(d)] == 0) {
            push(ready_[size_t(d)], kReady, d);
        }
    }
}

Result<SimResult> Sim::run()
{
    if (auto f = flatten(); !f) {
        return f.error();
    }
    if (auto m = match(); !m) {
        return m.error();
    }
    const size_t nops = rank_of_.size();
    const size_t n = size_t(plan_.nranks);
    ready_.assign(nops, 0);
    deliver_.assign(nops, 0);
    start_.assign(nops, -1);
    end_.assign(nops, -1);
    gate_.assign(nops, -1);
    cpu_.assign(n, 0);
    port_tx_.assign(n, 0);
    port_rx_.assign(n, 0);
    const size_t hosts = fabric_.topo ? size_t(fabric_.topo->num_hosts()) : n;
    nic_tx_.assign(hosts, 0);
    nic_rx_.assign(hosts, 0);
    const size_t sw = fabric_.topo ? size_t(fabric_.topo->num_switches()) : 1;
    up_tx_.assign(sw, 0);
    up_rx_.assign(sw, 0);
    for (size_t id = 0; id < nops; ++id) {
        if (deps_left_[id] == 0) {
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
        if (end_[id] < 0) {
            return fail("simulate: deadlock: " + where(int(id)) +
                        " never completes (" + std::to_string(deps_left_[id]) +
                        " deps, " + std::to_string(msgs_left_[id]) +
                        " messages outstanding)");
        }
        double &f = res.finish_ns[size_t(rank_of_[id])];
        f = std::max(f, end_[id]);
        if (last < 0 || end_[id] > end_[size_t(last)]) {
            last = int(id);
        }
    }
    res.makespan_ns = last < 0 ? 0 : end_[size_t(last)];
    for (int op = last; cfg_.critical_path && op >= 0; op = gate_[size_t(op)]) {
        const plan::Op &o =
            op_at(plan_, rank_of_[size_t(op)], index_of_[size_t(op)]);
        bool waited = start_[size_t(op)] >
                      std::max(ready_[size_t(op)], deliver_[size_t(op)]);
        res.critical_path.push_back(
            {rank_of_[size_t(op)], index_of_[size_t(op)], o.kind,
             start_[size_t(op)], end_[size_t(op)], waited});
    }
    std::reverse(res.critical_path.begin(), res.critical_path.end());
    return res;
}

} // namespace

Result<SimResult> simulate(const plan::Plan &plan, const Fabric &fabric,
                           const SimConfig &config)
{
    return Sim(plan, fabric, config).run();
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
