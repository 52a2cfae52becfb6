// SPDX-License-Identifier: BSD-3-Clause
// Simulator setup: flattens the plan's ops, reverses their dependencies and
// matches sends with receives by (sender, receiver, channel, tag) in list
// order, by sorting both sides.
#include "cost/sim_engine.h"

#include <algorithm>

namespace ucg::cost {

plan::Placement placement_of(const topology::Topology &topo)
{
    plan::Placement p;
    for (int r = 0; r < topo.size(); ++r) {
        p.host.push_back(topo.host_of(r));
        p.mcast_domain.push_back(topo.mcast_domain_of(r));
    }
    return p;
}

} // namespace ucg::cost

namespace ucg::cost::detail {

std::string Sim::where(int op) const
{
    const int r = ops_[size_t(op)].rank, i = ops_[size_t(op)].index;
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
    ops_.assign(nops, OpState{});
    dep_begin_.assign(nops + 1, 0);
    const double elem = double(cfg_.elem_bytes);
    for (int r = 0; r < n; ++r) {
        const auto &ops = plan_.ranks[size_t(r)].ops;
        for (int i = 0; i < int(ops.size()); ++i) {
            const plan::Op &op = ops[size_t(i)];
            size_t id = size_t(offset_[size_t(r)] + i);
            OpState &o = ops_[id];
            o.rank = r;
            o.index = i;
            o.kind = op.kind;
            o.peer0 = op.peers.empty() ? r : op.peers[0];
            o.npeers = int(op.peers.size());
            const auto &ranges = plan::is_send(op.kind) ? op.src : op.dst;
            o.bytes = elem * double(plan::range_elements(ranges, plan_.nchunks,
                                                         cfg_.count));
            o.deps_left = int(op.deps.size());
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
        const plan::Op &op = op_at(plan_, ops_[id].rank, ops_[id].index);
        for (int d : op.deps) {
            size_t dep = size_t(offset_[size_t(ops_[id].rank)] + d);
            dependents_[size_t(fill[dep]++)] = int(id);
        }
    }
    return {};
}

Result<void> Sim::check_reach() const
{
    if (!fabric_.topo) {
        return {};
    }
    const plan::Placement where = placement_of(*fabric_.topo);
    for (int r = 0; r < plan_.nranks; ++r) {
        if (std::string e = plan::check_placement(plan_, r, where);
            !e.empty()) {
            return fail("simulate: " + e);
        }
    }
    return {};
}

Result<void> Sim::match()
{
    std::vector<End> sends, recvs;
    const int n = plan_.nranks;
    for (size_t id = 0; id < ops_.size(); ++id) {
        int r = ops_[id].rank;
        const plan::Op &op = op_at(plan_, r, ops_[id].index);
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
    const size_t nops = ops_.size();
    out_begin_.assign(nops + 1, 0);
    for (const Msg &m : msgs_) {
        ++out_begin_[size_t(m.send) + 1];
        ++ops_[size_t(m.recv)].msgs_left;
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

} // namespace ucg::cost::detail
