// SPDX-License-Identifier: BSD-3-Clause
// Internal to cost/: the simulator's state (flattened ops, matched
// messages, resources) shared by its setup and its event loop.
#pragma once

#include "cost/simulator.h"

#include <algorithm>
#include <queue>
#include <tuple>

namespace ucg::cost::detail {

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

/// One flat op: what the event handlers read and write of it, together,
/// so an event touches one or two cache lines (the plan's own Op objects
/// are large and scattered; separate arrays cost a miss per field).
struct OpState {
    double ready = 0;   // its deps done
    double deliver = 0; // its last message delivered (receives)
    double start = -1;  // -1: not started
    double end = -1;    // -1: not done
    double bytes = 0;   // moved (sends: src; others: dst)
    int rank = 0;
    int index = 0;  // in its rank's program
    int peer0 = 0;  // first peer, or its own rank
    int npeers = 0; // peers listed
    int deps_left = 0;
    int msgs_left = 0; // receives: messages not yet delivered
    int gate = -1;     // what it waited for last (critical path)
    plan::OpKind kind = plan::OpKind::kCopy;
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
    Result<void> check_reach() const;
    std::string where(int op) const;
    const topology::LinkCost &link(int a, int b) const
    {
        return fabric_.topo ? fabric_.topo->link(a, b) : fabric_.uniform;
    }
    int host(int r) const
    {
        return fabric_.topo ? fabric_.topo->host_of(r) : r;
    }
    /// The first free CPU of rank r's group (its own CPU without groups).
    double &cpu(int r)
    {
        const size_t g = fabric_.cpu_group.empty()
                             ? size_t(r)
                             : size_t(fabric_.cpu_group[size_t(r)]);
        auto first = cpu_.begin() + cpu_begin_[g];
        return *std::min_element(first, cpu_.begin() + cpu_begin_[g + 1]);
    }
    /// What a rank that waited for a message waits for its CPU: a poll
    /// turn of each other rank of its group's CPU (Fabric::turn_ns).
    double turns(int r) const
    {
        return group_turns_.empty()
                   ? 0
                   : group_turns_[size_t(fabric_.cpu_group[size_t(r)])];
    }
    /// Whether a message's bytes are CPU work (Fabric::cpu_group).
    bool bytes_on_cpu() const { return !fabric_.cpu_group.empty(); }
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
    std::vector<OpState> ops_;                // by flat id: rank after rank
    std::vector<int> offset_;                 // flat id of each rank's op 0
    std::vector<int> dependents_, dep_begin_; // CSR
    std::vector<int> out_msgs_, out_begin_;   // CSR: messages of a send
    std::vector<Msg> msgs_;
    // Resources: free-at times.
    std::vector<double> cpu_;         // free-at per CPU, groups' CPUs in turn
    std::vector<size_t> cpu_begin_;   // first CPU of each group, and the end
    std::vector<double> group_turns_; // turns() of each CPU group's ranks
    std::vector<double> port_tx_, port_rx_, nic_tx_, nic_rx_;
    std::vector<double> up_tx_, up_rx_;
    std::priority_queue<Event, std::vector<Event>, std::greater<>> heap_;
};

inline const plan::Op &op_at(const plan::Plan &p, int rank, int index)
{
    return p.ranks[size_t(rank)].ops[size_t(index)];
}

} // namespace ucg::cost::detail
