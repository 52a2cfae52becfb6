// SPDX-License-Identifier: BSD-3-Clause
// The message layer of a group (uct_group.h semantics, UCX-free): every
// member posts its part of every message in one sequence order, so message
// k is matched by its number; BCAST only. A receive names its buffer;
// fragments are written in place as they arrive, in order per root.
#pragma once

#include "session.h"

#include <memory>
#include <vector>

namespace uct_ud_mcast {

/// One member's part of one message.
struct GroupMsg {
    uint16_t root = 0;      ///< the sender
    uint32_t len = 0;       ///< bytes
    uint32_t tag = 0;       ///< checked against the root's
    void *buffer = nullptr; ///< source (send) or destination (receive)
};

class GroupChannel final : public SessionHandler {
  public:
    /// Invoked once per post that did not complete at once.
    using CompleteFn = void (*)(void *arg, void *cookie, Status status);

    GroupChannel(const SessionConfig &cfg, unsigned max_outstanding,
                 Transmit *tx, Counters *counters, CompleteFn on_complete,
                 void *arg, uint64_t now);

    Session &session() noexcept { return *session_; }
    Status state() const noexcept { return session_->state(); }

    /// The root's part of the next message. *done: completed already (no
    /// callback follows). kNoResource: max_outstanding posts pending.
    Status post_send(const GroupMsg &msg, void *cookie, bool *done,
                     uint64_t now);
    /// A receiver's part of the next message.
    Status post_recv(const GroupMsg &msg, void *cookie, bool *done,
                     uint64_t now);
    unsigned outstanding() const noexcept { return count_; }

    // SessionHandler
    bool deliver(uint16_t sender, const DataBody &d, const uint8_t *payload,
                 uint32_t len) noexcept override;
    void sent(void *cookie) noexcept override;
    bool waiting_for(uint16_t sender) const noexcept override;
    void failed(Status status, uint16_t culprit) noexcept override;

  private:
    struct Post {
        bool in_use = false;
        bool is_send = false;
        bool done_inline = false; ///< completed inside the posting call
        uint32_t seq = 0;
        GroupMsg msg;
        uint32_t received = 0;
        void *cookie = nullptr;
    };
    Post *claim(const GroupMsg &msg, bool is_send, void *cookie);
    void complete(Post *p, Status status);

    std::vector<Post> posts_;
    unsigned count_ = 0;
    uint32_t next_seq_ = 0;
    Post *posting_ = nullptr; ///< the post being made (inline completion)
    CompleteFn complete_;
    void *arg_;
    std::unique_ptr<Session> session_;
};

} // namespace uct_ud_mcast
