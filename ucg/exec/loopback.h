// SPDX-License-Identifier: BSD-3-Clause
// The loopback fabric: every rank of a plan in one process, messages
// copied between their buffers, one-to-many groups emulated with the
// uct_group.h semantics (sequence order, incasts reduced in member order).
// Sends are eager (complete at once) or synchronous (complete only once
// matched), so tests can prove plans safe under rendezvous. Completions
// are delivered by progress(), never inside a post, as real fabrics do.
#pragma once

#include "exec/engine.h"

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

namespace ucg::exec {

class LoopbackWorld {
  public:
    explicit LoopbackWorld(int nranks, bool synchronous_sends = false);
    ~LoopbackWorld();
    LoopbackWorld(const LoopbackWorld &) = delete;
    LoopbackWorld &operator=(const LoopbackWorld &) = delete;

    /// Rank r's fabric.
    Fabric *fabric(int rank);
    /// The channel rank `rank` uses for a one-to-many group (created on
    /// first use; members ascending). Each transport channel has its own
    /// message sequence, as the real transports do.
    GroupChannel *channel(int rank, plan::Channel kind,
                          const std::vector<int> &members);
    /// Delivers queued completions; returns how many.
    unsigned progress();

  private:
    class RankFabric;
    struct Message;
    struct Posted;
    struct GroupState;

    void match(std::tuple<int, int, std::uint64_t> key);
    void group_progress(GroupState &g);
    void complete_later(Completion *c, ucs_status_t st);

    int nranks_;
    bool sync_;
    std::vector<std::unique_ptr<RankFabric>> fabrics_;
    std::map<std::tuple<int, int, std::uint64_t>, std::deque<Message>> sent_;
    std::map<std::tuple<int, int, std::uint64_t>, std::deque<Posted>> posted_;
    using GroupKey = std::pair<plan::Channel, std::vector<int>>;
    std::map<GroupKey, std::unique_ptr<GroupState>> groups_;
    std::map<std::pair<int, GroupKey>, std::unique_ptr<GroupChannel>>
        channels_; ///< per rank and group
    std::vector<std::pair<Completion *, ucs_status_t>> done_;
};

} // namespace ucg::exec
