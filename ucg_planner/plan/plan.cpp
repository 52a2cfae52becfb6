// SPDX-License-Identifier: BSD-3-Clause
// Names, classification, buffer shapes and projection of plans.
#include "plan/plan.h"

#include <array>

namespace ucg::plan {

namespace {

constexpr std::array<std::string_view, kNumCollectives> kCollectiveNames = {
    "bcast",    "reduce",         "allreduce", "gather", "scatter", "allgather",
    "alltoall", "reduce_scatter", "barrier",   "scan",   "exscan",
};
constexpr std::array<std::string_view, 11> kOpKindNames = {
    "send",
    "recv",
    "recv_reduce",
    "copy",
    "reduce",
    "bcast_send",
    "bcast_recv",
    "incast_send",
    "incast_recv_reduce",
    "incast_gather_send",
    "incast_recv",
};
constexpr std::array<std::string_view, 4> kChannelNames = {
    "p2p", "shm_bcast", "shm_incast", "mcast"};
constexpr std::array<std::string_view, 3> kBufferNames = {"in", "out", "scr"};

template <class E, std::size_t N>
std::optional<E> lookup(const std::array<std::string_view, N> &names,
                        std::string_view s)
{
    for (std::size_t i = 0; i < N; ++i) {
        if (names[i] == s) {
            return static_cast<E>(i);
        }
    }
    return std::nullopt;
}

} // namespace

std::string_view to_string(Collective c)
{
    return kCollectiveNames[static_cast<std::size_t>(c)];
}
std::string_view to_string(OpKind k)
{
    return kOpKindNames[static_cast<std::size_t>(k)];
}
std::string_view to_string(Channel c)
{
    return kChannelNames[static_cast<std::size_t>(c)];
}
std::string_view to_string(Buffer b)
{
    return kBufferNames[static_cast<std::size_t>(b)];
}
std::optional<Collective> collective_from_string(std::string_view s)
{
    return lookup<Collective>(kCollectiveNames, s);
}
std::optional<OpKind> op_kind_from_string(std::string_view s)
{
    return lookup<OpKind>(kOpKindNames, s);
}
std::optional<Channel> channel_from_string(std::string_view s)
{
    return lookup<Channel>(kChannelNames, s);
}
std::optional<Buffer> buffer_from_string(std::string_view s)
{
    return lookup<Buffer>(kBufferNames, s);
}

bool is_recv(OpKind k)
{
    return k == OpKind::kRecv || k == OpKind::kRecvReduce ||
           k == OpKind::kBcastRecv || k == OpKind::kIncastRecvReduce ||
           k == OpKind::kIncastRecv;
}
bool is_one_to_many(OpKind k)
{
    return k == OpKind::kBcastSend || k == OpKind::kBcastRecv ||
           k == OpKind::kIncastSend || k == OpKind::kIncastRecvReduce ||
           k == OpKind::kIncastGatherSend || k == OpKind::kIncastRecv;
}
bool is_group_root(OpKind k)
{
    return k == OpKind::kBcastSend || k == OpKind::kIncastRecvReduce ||
           k == OpKind::kIncastRecv;
}
bool is_reducing(OpKind k)
{
    return k == OpKind::kRecvReduce || k == OpKind::kReduce ||
           k == OpKind::kIncastRecvReduce;
}

bool has_operator(Collective c)
{
    return c == Collective::kReduce || c == Collective::kAllreduce ||
           c == Collective::kReduceScatter || c == Collective::kScan ||
           c == Collective::kExscan;
}

int input_blocks(Collective c, int nranks, int root, int rank)
{
    switch (c) {
    case Collective::kBcast:
        return rank == root ? 1 : 0;
    case Collective::kScatter:
        return rank == root ? nranks : 0;
    case Collective::kAlltoall:
    case Collective::kReduceScatter:
        return nranks;
    default:
        return 1;
    }
}

int output_blocks(Collective c, int nranks, int root, int rank)
{
    switch (c) {
    case Collective::kReduce:
        return rank == root ? 1 : 0;
    case Collective::kGather:
        return rank == root ? nranks : 0;
    case Collective::kAllgather:
    case Collective::kAlltoall:
        return nranks;
    default:
        return 1;
    }
}

std::size_t range_elements(const std::vector<Range> &ranges, int nchunks,
                           std::size_t count)
{
    std::size_t n = 0;
    for (const Range &r : ranges) {
        const std::size_t per_block =
            chunk_begin(count, nchunks, r.chunk + r.nchunks) -
            chunk_begin(count, nchunks, r.chunk);
        n += per_block * static_cast<std::size_t>(r.nblocks);
    }
    return n;
}

int range_slots(const std::vector<Range> &ranges)
{
    std::int64_t n = 0;
    for (const Range &r : ranges) {
        n += std::int64_t{r.nblocks} * r.nchunks;
        if (n >= INT32_MAX) {
            return INT32_MAX; // a checked plan never gets here
        }
    }
    return static_cast<int>(n);
}

void keep_rank(Plan &plan, int rank)
{
    for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
        if (static_cast<int>(r) != rank) {
            plan.ranks[r] = RankProgram{};
        }
    }
    if (rank < 0 || static_cast<std::size_t>(rank) >= plan.ranks.size()) {
        plan.groups.clear();
        return;
    }
    std::vector<int> renum(plan.groups.size(), -1);
    std::vector<std::vector<int>> kept;
    for (Op &op : plan.ranks[static_cast<std::size_t>(rank)].ops) {
        if (op.group < 0 ||
            static_cast<std::size_t>(op.group) >= plan.groups.size()) {
            continue; // the validator reports it
        }
        int &to = renum[static_cast<std::size_t>(op.group)];
        if (to < 0) {
            to = static_cast<int>(kept.size());
            kept.push_back(plan.groups[static_cast<std::size_t>(op.group)]);
        }
        op.group = to;
    }
    plan.groups = std::move(kept);
}

Plan project(const Plan &plan, int rank)
{
    Plan p;
    p.collective = plan.collective;
    p.algorithm = plan.algorithm;
    p.nranks = plan.nranks;
    p.root = plan.root;
    p.nchunks = plan.nchunks;
    p.groups = plan.groups;
    p.ranks.resize(plan.ranks.size());
    if (rank >= 0 && static_cast<std::size_t>(rank) < plan.ranks.size()) {
        p.ranks[static_cast<std::size_t>(rank)] =
            plan.ranks[static_cast<std::size_t>(rank)];
    }
    keep_rank(p, rank);
    return p;
}

std::string check_placement(const Plan &plan, int rank,
                            const Placement &placement)
{
    if (!placement.known() || rank < 0 ||
        static_cast<std::size_t>(rank) >= plan.ranks.size()) {
        return {};
    }
    const auto at = [](const std::vector<int> &v, int r) {
        return r >= 0 && static_cast<std::size_t>(r) < v.size()
                   ? v[static_cast<std::size_t>(r)]
                   : -1;
    };
    const auto &ops = plan.ranks[static_cast<std::size_t>(rank)].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const Op &op = ops[i];
        if (!is_one_to_many(op.kind) || op.group < 0 ||
            static_cast<std::size_t>(op.group) >= plan.groups.size()) {
            continue;
        }
        const bool mcast = op.channel == Channel::kMcast;
        const auto &where = mcast ? placement.mcast_domain : placement.host;
        const int mine = at(where, rank);
        const std::string head = "rank " + std::to_string(rank) + " op " +
                                 std::to_string(i) + " (" +
                                 std::string(to_string(op.kind)) +
                                 "): " + std::string(to_string(op.channel));
        if (mine < 0) {
            return head + (mcast ? " where the rank has no multicast"
                                 : " where the rank's host is unknown");
        }
        for (int m : plan.groups[static_cast<std::size_t>(op.group)]) {
            if (at(where, m) != mine) {
                return head + " with rank " + std::to_string(m) +
                       (mcast ? " outside its multicast domain"
                              : " on another host");
            }
        }
    }
    return {};
}

} // namespace ucg::plan
