// SPDX-License-Identifier: BSD-3-Clause
// Loopback fabric (loopback.h): point-to-point matching by (source,
// destination, tag) in post order, and one-to-many groups by sequence.
#include "exec/loopback.h"

#include <algorithm>
#include <cstring>

namespace ucg::exec {

using Key = std::tuple<int, int, std::uint64_t>;

struct LoopbackWorld::Message {
    std::vector<std::uint8_t> data;
    Completion *sender = nullptr; // synchronous: completed at match
};

struct LoopbackWorld::Posted {
    std::vector<Iov> iov;
    Completion *c = nullptr;
};

// One message of a group: what its root and members posted so far.
struct GroupPost {
    bool present = false; // this member posted its part
    GroupMsg msg;
    Completion *c = nullptr;
};

struct LoopbackWorld::GroupState {
    std::vector<int> members;
    std::vector<std::uint64_t> posted; // per member: posts so far
    std::map<std::uint64_t, std::vector<GroupPost>> msgs; // by sequence
};

class LoopbackWorld::RankFabric : public Fabric {
  public:
    RankFabric(LoopbackWorld *world, int rank) : world_(world), rank_(rank) {}

    ucs_status_t send(int peer, std::uint64_t tag, const Iov *iov,
                      unsigned iovcnt, Completion *c) override
    {
        Message m;
        for (unsigned i = 0; i < iovcnt; ++i) {
            const auto *p = static_cast<const std::uint8_t *>(iov[i].base);
            m.data.insert(m.data.end(), p, p + iov[i].length);
        }
        if (world_->sync_) {
            m.sender = c;
        }
        const Key key{rank_, peer, tag};
        world_->sent_[key].push_back(std::move(m));
        world_->match(key);
        if (!world_->sync_) {
            world_->complete_later(c, UCS_OK);
        }
        return UCS_INPROGRESS;
    }

    ucs_status_t recv(int peer, std::uint64_t tag, const Iov *iov,
                      unsigned iovcnt, Completion *c) override
    {
        const Key key{peer, rank_, tag};
        world_->posted_[key].push_back(
            Posted{std::vector<Iov>(iov, iov + iovcnt), c});
        world_->match(key);
        return UCS_INPROGRESS;
    }

    ucs_status_t group_send(GroupChannel &g, const GroupMsg &m,
                            Completion *c) override
    {
        return post(g, m, c);
    }
    ucs_status_t group_recv(GroupChannel &g, const GroupMsg &m,
                            Completion *c) override
    {
        return post(g, m, c);
    }
    void cancel(Instance &) override {}

  private:
    ucs_status_t post(GroupChannel &g, const GroupMsg &m, Completion *c)
    {
        auto *gs = static_cast<GroupState *>(g.handle);
        const auto me = static_cast<std::size_t>(g.my_index);
        const std::uint64_t k = gs->posted[me]++;
        auto &slots = gs->msgs[k];
        slots.resize(gs->members.size());
        slots[me] = GroupPost{true, m, c};
        world_->group_progress(*gs);
        return UCS_INPROGRESS;
    }

    LoopbackWorld *world_;
    int rank_;
};

LoopbackWorld::LoopbackWorld(int nranks, bool synchronous_sends)
    : nranks_(nranks), sync_(synchronous_sends)
{
    for (int r = 0; r < nranks; ++r) {
        fabrics_.push_back(std::make_unique<RankFabric>(this, r));
    }
}

LoopbackWorld::~LoopbackWorld() = default;

Fabric *LoopbackWorld::fabric(int rank)
{
    return fabrics_[static_cast<std::size_t>(rank)].get();
}

GroupChannel *LoopbackWorld::channel(int rank, plan::Channel kind,
                                     const std::vector<int> &members)
{
    const GroupKey key{kind, members};
    auto &gs = groups_[key];
    if (!gs) {
        gs = std::make_unique<GroupState>();
        gs->members = members;
        gs->posted.assign(members.size(), 0);
    }
    auto &ch = channels_[{rank, key}];
    if (!ch) {
        ch = std::make_unique<GroupChannel>();
        ch->handle = gs.get();
        ch->members = members;
        ch->my_index = static_cast<int>(
            std::lower_bound(members.begin(), members.end(), rank) -
            members.begin());
    }
    return ch.get();
}

void LoopbackWorld::complete_later(Completion *c, ucs_status_t st)
{
    done_.emplace_back(c, st);
}

void LoopbackWorld::match(Key key)
{
    auto s = sent_.find(key);
    auto p = posted_.find(key);
    while (s != sent_.end() && p != posted_.end() && !s->second.empty() &&
           !p->second.empty()) {
        Message m = std::move(s->second.front());
        s->second.pop_front();
        Posted r = std::move(p->second.front());
        p->second.pop_front();
        std::size_t off = 0, room = 0;
        for (const Iov &v : r.iov) {
            room += v.length;
        }
        ucs_status_t st =
            m.data.size() == room ? UCS_OK : UCS_ERR_MESSAGE_TRUNCATED;
        for (const Iov &v : r.iov) {
            const std::size_t n = std::min(v.length, m.data.size() - off);
            if (n != 0) {
                std::memcpy(v.base, m.data.data() + off, n);
            }
            off += n;
        }
        complete_later(r.c, st);
        if (m.sender != nullptr) {
            complete_later(m.sender, UCS_OK);
        }
    }
}

namespace {

void reduce_group(const GroupMsg &at_root, const std::vector<GroupPost> &p,
                  unsigned root)
{
    auto *dst = static_cast<std::uint8_t *>(at_root.buffer);
    const std::size_t es = ucg_dtype_size(at_root.dtype);
    const std::size_t count = es == 0 ? 0 : at_root.length / es;
    bool first = !at_root.accumulate;
    if (at_root.operand != nullptr) { // the root's own first
        std::memmove(dst, at_root.operand, at_root.length);
        first = false;
    }
    for (std::size_t m = 0; m < p.size(); ++m) {
        if (m == root) {
            continue;
        }
        if (first) {
            std::memcpy(dst, p[m].msg.buffer, at_root.length);
            first = false;
        } else if (count != 0) {
            ucg_reduce(at_root.op, at_root.dtype, dst, p[m].msg.buffer, count);
        }
    }
}

} // namespace

void LoopbackWorld::group_progress(GroupState &g)
{
    while (!g.msgs.empty()) {
        auto it = g.msgs.begin();
        std::vector<GroupPost> &p = it->second;
        const bool all = std::all_of(
            p.begin(), p.end(), [](const GroupPost &x) { return x.present; });
        if (!all) {
            return; // messages complete in sequence order
        }
        const unsigned root = p[0].msg.root;
        const GroupMsg &r = p[root].msg;
        for (std::size_t m = 0; m < p.size(); ++m) {
            const GroupMsg &x = p[m].msg;
            const bool agree =
                x.root == root && x.coll == r.coll && x.length == r.length;
            if (!agree) {
                for (GroupPost &q : p) {
                    complete_later(q.c, UCS_ERR_IO_ERROR);
                }
                g.msgs.erase(it);
                return;
            }
        }
        if (r.coll == GroupColl::kBcast) {
            for (std::size_t m = 0; m < p.size(); ++m) {
                if (m != root && r.length != 0) {
                    std::memcpy(p[m].msg.buffer, r.buffer, r.length);
                }
            }
        } else if (r.coll == GroupColl::kGather) {
            auto *out = static_cast<std::uint8_t *>(r.buffer);
            for (std::size_t m = 0; m < p.size(); ++m) {
                if (m == root || r.length == 0) {
                    continue;
                }
                void *to =
                    r.member_buffers != nullptr ? r.member_buffers[m] : out;
                std::memcpy(to, p[m].msg.buffer, r.length);
                out += r.length;
            }
        } else {
            reduce_group(r, p, root);
        }
        for (GroupPost &q : p) {
            complete_later(q.c, UCS_OK);
        }
        g.msgs.erase(it);
    }
}

unsigned LoopbackWorld::progress()
{
    std::vector<std::pair<Completion *, ucs_status_t>> batch;
    batch.swap(done_);
    for (auto &[c, st] : batch) {
        Instance::complete(c, st);
    }
    return static_cast<unsigned>(batch.size());
}

} // namespace ucg::exec
