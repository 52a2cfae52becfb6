// SPDX-License-Identifier: BSD-3-Clause
// GroupChannel: matching by sequence number, in-place reassembly, failure
// of every outstanding post when the session fails.
#include "group_channel.h"

#include "uct_mm_common/log.h"

#include <cstring>

namespace uct_ud_mcast {

using uct_mm_common::log;
using uct_mm_common::LogLevel;

GroupChannel::GroupChannel(const SessionConfig &cfg, unsigned max_outstanding,
                           Transmit *tx, Counters *counters,
                           CompleteFn on_complete, void *arg, uint64_t now)
    : posts_(max_outstanding), complete_(on_complete), arg_(arg)
{
    SessionConfig c = cfg;
    c.max_queued = max_outstanding;
    session_ = std::make_unique<Session>(c, tx, this, counters, now);
}

GroupChannel::Post *GroupChannel::claim(const GroupMsg &msg, bool is_send,
                                        void *cookie)
{
    for (Post &p : posts_) {
        if (!p.in_use) {
            p.in_use = true;
            p.is_send = is_send;
            p.done_inline = false;
            p.seq = next_seq_++;
            p.msg = msg;
            p.received = 0;
            p.cookie = cookie;
            ++count_;
            return &p;
        }
    }
    return nullptr;
}

void GroupChannel::complete(Post *p, Status status)
{
    p->in_use = false;
    --count_;
    if (p == posting_) {
        p->done_inline = true; // the posting call reports it
        return;
    }
    complete_(arg_, p->cookie, status);
}

Status GroupChannel::post_send(const GroupMsg &msg, void *cookie, bool *done,
                               uint64_t now)
{
    if (state() != Status::kOk) {
        return state();
    }
    Post *p = claim(msg, true, cookie);
    if (p == nullptr) {
        return Status::kNoResource;
    }
    MsgHead h;
    h.seq = p->seq;
    h.len = msg.len;
    h.tag = msg.tag;
    h.root = msg.root;
    h.kind = 0; // UCT_GROUP_COLL_BCAST
    posting_ = p;
    const Status st = session_->post_message(h, msg.buffer, p, now);
    posting_ = nullptr;
    if (st != Status::kOk) { // max_queued == posts_.size(): failure only
        p->in_use = false;
        --count_;
        --next_seq_;
        return st;
    }
    *done = p->done_inline;
    return Status::kOk;
}

Status GroupChannel::post_recv(const GroupMsg &msg, void *cookie, bool *done,
                               uint64_t now)
{
    if (state() != Status::kOk) {
        return state();
    }
    Post *p = claim(msg, false, cookie);
    if (p == nullptr) {
        return Status::kNoResource;
    }
    posting_ = p;
    session_->redeliver(msg.root, now); // data may be waiting already
    posting_ = nullptr;
    *done = p->done_inline;
    return Status::kOk;
}

bool GroupChannel::deliver(uint16_t sender, const DataBody &d,
                           const uint8_t *payload, uint32_t len) noexcept
{
    Post *p = nullptr;
    for (Post &q : posts_) {
        if (q.in_use && q.seq == d.msg_seq) {
            p = &q;
            break;
        }
    }
    if (p == nullptr) {
        if (psn_diff(d.msg_seq, next_seq_) >= 0) {
            return false; // not posted yet: keep it (flow control)
        }
        log(LogLevel::kError,
            "ud_mcast: group message %u from member %u matches no post",
            d.msg_seq, sender);
        session_->fail(Status::kIoError, sender);
        return true;
    }
    if (p->is_send || p->msg.root != sender || p->msg.len != d.msg_len ||
        p->msg.tag != d.tag || d.kind != 0) {
        log(LogLevel::kError,
            "ud_mcast: group message %u: posted root %u, %u bytes, tag %u; "
            "member %u sent %u bytes, tag %u",
            d.msg_seq, p->msg.root, p->msg.len, p->msg.tag, sender, d.msg_len,
            d.tag);
        session_->fail(Status::kIoError, sender);
        return true;
    }
    if (len != 0) {
        std::memcpy(static_cast<uint8_t *>(p->msg.buffer) + d.offset, payload,
                    len);
    }
    p->received += len;
    if (p->received == p->msg.len) {
        complete(p, Status::kOk);
    }
    return true;
}

void GroupChannel::sent(void *cookie) noexcept
{
    complete(static_cast<Post *>(cookie), Status::kOk);
}

bool GroupChannel::waiting_for(uint16_t sender) const noexcept
{
    for (const Post &p : posts_) {
        if (p.in_use && !p.is_send && p.msg.root == sender) {
            return true;
        }
    }
    return false;
}

void GroupChannel::failed(Status status, uint16_t) noexcept
{
    for (Post &p : posts_) {
        if (p.in_use) {
            complete(&p, status);
        }
    }
}

} // namespace uct_ud_mcast
