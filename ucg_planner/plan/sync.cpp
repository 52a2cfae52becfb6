// SPDX-License-Identifier: BSD-3-Clause
// Rendezvous support (docs/decisions/0005 item 5): which receives the
// executor posts early, and a run of the plan with synchronous sends that
// proves the rule deadlock free.
//
// Why early receives: recursive doubling, dissemination and the like send
// and then receive into the slot they sent from. With synchronous sends
// both partners' sends wait for the other's receive, which waits (deps)
// for its own send: a cycle. A receive that depends on a send of its own
// rank is therefore posted at the start into scratch and applied later;
// every other receive is posted when its deps are done, so it lands in
// place.
#include "plan/engine.h"

#include <deque>

namespace ucg::plan {

std::vector<char> early_receives(const RankProgram &program)
{
    const auto &ops = program.ops;
    std::vector<char> after_send(ops.size(), 0), early(ops.size(), 0);
    for (std::size_t i = 0; i < ops.size(); ++i) {
        for (int d : ops[i].deps) {
            const auto du = static_cast<std::size_t>(d);
            if (du < i && (after_send[du] || is_send(ops[du].kind))) {
                after_send[i] = 1;
                break;
            }
        }
        const bool p2p_recv =
            ops[i].kind == OpKind::kRecv || ops[i].kind == OpKind::kRecvReduce;
        early[i] = static_cast<char>(p2p_recv && after_send[i]);
    }
    return early;
}

namespace {

struct State {
    int deps_left = 0;
    int peers_left = 0; // send: receives not posted; recv: sends not posted
    int prev = -1;      // the rank's previous op of the same group
    bool early = false;
    bool posted = false;
    bool done = false;
};

class SyncRun {
  public:
    SyncRun(const Plan &plan, const detail::Matching &m) : plan_(plan), m_(m)
    {
        st_.resize(plan.ranks.size());
        users_.resize(plan.ranks.size());
        next_.resize(plan.ranks.size());
        for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
            init_rank(r);
        }
    }
    void run()
    {
        for (std::size_t r = 0; r < st_.size(); ++r) {
            for (std::size_t i = 0; i < st_[r].size(); ++i) {
                todo_.push_back({static_cast<int>(r), static_cast<int>(i)});
            }
        }
        while (!todo_.empty()) {
            const detail::OpRef x = todo_.front();
            todo_.pop_front();
            step(x);
        }
    }
    std::vector<std::string> stuck() const;

  private:
    void init_rank(std::size_t r)
    {
        const auto &ops = plan_.ranks[r].ops;
        const auto early = early_receives(plan_.ranks[r]);
        st_[r].resize(ops.size());
        users_[r].resize(ops.size());
        next_[r].assign(ops.size(), -1);
        std::vector<int> last(plan_.groups.size(), -1);
        for (std::size_t i = 0; i < ops.size(); ++i) {
            State &s = st_[r][i];
            s.deps_left = static_cast<int>(ops[i].deps.size());
            for (int d : ops[i].deps) {
                users_[r][static_cast<std::size_t>(d)].push_back(
                    static_cast<int>(i));
            }
            for (int id : m_.msgs_of[r][i]) {
                s.peers_left += id >= 0 ? 1 : 0;
            }
            s.early = early[i] != 0;
            if (ops[i].group >= 0) {
                int &l = last[static_cast<std::size_t>(ops[i].group)];
                s.prev = l;
                if (l >= 0) {
                    next_[r][static_cast<std::size_t>(l)] = static_cast<int>(i);
                }
                l = static_cast<int>(i);
            }
        }
    }
    State &at(detail::OpRef x)
    {
        return st_[static_cast<std::size_t>(x.rank)]
                  [static_cast<std::size_t>(x.op)];
    }
    const Op &op(detail::OpRef x) const
    {
        return plan_.ranks[static_cast<std::size_t>(x.rank)]
            .ops[static_cast<std::size_t>(x.op)];
    }
    bool can_post(detail::OpRef x)
    {
        const State &s = at(x);
        if (s.early) {
            return true;
        }
        return s.deps_left == 0 && (s.prev < 0 || at({x.rank, s.prev}).posted);
    }
    // Posts and completes what it can; queues the ops that may follow.
    void step(detail::OpRef x)
    {
        State &s = at(x);
        if (!s.posted && can_post(x)) {
            s.posted = true;
            post(x);
        }
        if (s.posted && !s.done && s.deps_left == 0 && s.peers_left == 0) {
            s.done = true;
            for (int u : users_[static_cast<std::size_t>(x.rank)]
                               [static_cast<std::size_t>(x.op)]) {
                --at({x.rank, u}).deps_left;
                todo_.push_back({x.rank, u});
            }
        }
    }
    // A posted receive lets its senders complete; a posted send lets its
    // receives complete; the rank's next op of the group may post.
    void post(detail::OpRef x)
    {
        const auto &ids = m_.msgs_of[static_cast<std::size_t>(x.rank)]
                                    [static_cast<std::size_t>(x.op)];
        const bool send = is_send(op(x).kind);
        for (int id : ids) {
            if (id < 0) {
                continue;
            }
            const auto &msg = m_.messages[static_cast<std::size_t>(id)];
            const detail::OpRef other = send ? msg.recv : msg.send;
            --at(other).peers_left;
            todo_.push_back(other);
        }
        const int nx = next_[static_cast<std::size_t>(x.rank)]
                            [static_cast<std::size_t>(x.op)];
        if (nx >= 0) {
            todo_.push_back({x.rank, nx});
        }
    }

    const Plan &plan_;
    const detail::Matching &m_;
    std::vector<std::vector<State>> st_;
    std::vector<std::vector<std::vector<int>>> users_;
    std::vector<std::vector<int>> next_; // next op of the same group
    std::deque<detail::OpRef> todo_;
};

std::vector<std::string> SyncRun::stuck() const
{
    std::vector<std::string> out;
    std::size_t left = 0;
    for (std::size_t r = 0; r < st_.size(); ++r) {
        for (std::size_t i = 0; i < st_[r].size(); ++i) {
            const State &s = st_[r][i];
            if (s.done) {
                continue;
            }
            if (++left <= 4) {
                out.push_back(
                    "synchronous sends deadlock: " +
                    detail::where(plan_, static_cast<int>(r),
                                  static_cast<int>(i)) +
                    (s.posted ? " posted, waiting for " +
                                    std::to_string(s.peers_left) + " peers"
                              : " never posted") +
                    (s.deps_left
                         ? ", " + std::to_string(s.deps_left) + " deps left"
                         : ""));
            }
        }
    }
    return out;
}

} // namespace

std::vector<std::string> check_synchronous(const Plan &plan)
{
    std::vector<std::string> errors;
    const detail::Matching m = detail::match_messages(plan, errors);
    if (!errors.empty()) {
        return errors;
    }
    SyncRun run(plan, m);
    run.run();
    return run.stuck();
}

} // namespace ucg::plan
