// SPDX-License-Identifier: BSD-3-Clause
// The engine: runs one lowered program (program.h) as one collective
// instance. Ops start when their deps are done; point-to-point messages
// and one-to-many messages go through a Fabric (UCP and uct_group in the
// runtime, an in-process loopback in tests). One-to-many ops of a group are
// posted in program order, and across instances in start order
// (GroupChannel), as uct_group.h requires. No allocation after bind().
#pragma once

#include "exec/program.h"

#include <ucg/reduce.h>
#include <ucs/type/status.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ucg::exec {

class Instance;

/// Handed to the fabric with every post; the fabric calls
/// Instance::complete(c, status) once when the post completes. `priv` is
/// the fabric's (a uct_completion_t, a UCP request, the state of a
/// one-copy message: ucp_fabric.cpp).
struct Completion {
    Instance *inst = nullptr;
    std::uint32_t op = 0;
    alignas(16) unsigned char priv[160] = {};
};

struct Iov {
    void *base;
    std::size_t length;
};

/// What a one-to-many post carries (mirrors uct_group_msg_t, UCX-free).
enum class GroupColl : std::uint8_t { kBcast, kGather, kReduce };
struct GroupMsg {
    GroupColl coll = GroupColl::kBcast;
    unsigned root = 0; ///< member index
    ucg_op_t op = UCG_OP_SUM;
    ucg_dtype_t dtype = UCG_DTYPE_UINT8;
    std::size_t length = 0;
    void *buffer = nullptr;
    void *const *member_buffers = nullptr;
    bool accumulate = false;
    const void *operand = nullptr; ///< REDUCE receive: the root's own
};

/// An instance waiting to post on a channel, and which of its program's
/// groups the channel serves.
struct ChannelTurn {
    Instance *inst = nullptr;
    std::uint32_t group = 0;
};

/// One transport group as the engine sees it: its handle in the fabric
/// and the instances waiting to post on it, in start order.
struct GroupChannel {
    void *handle = nullptr;        ///< the fabric's group
    std::vector<int> members;      ///< ranks, ascending
    int my_index = 0;              ///< this rank's member index
    std::vector<ChannelTurn> fifo; ///< instances with posts to make
    std::size_t head = 0;          ///< fifo[head] posts next
    bool blocked = false;          ///< last post said NO_RESOURCE
};

/// Point-to-point and one-to-many messaging for one rank.
class Fabric {
  public:
    virtual ~Fabric() = default;
    /// Posts; UCS_OK (done, no completion), UCS_INPROGRESS (completion
    /// later), UCS_ERR_NO_RESOURCE (groups only: retry later) or an error.
    virtual ucs_status_t send(int peer, std::uint64_t tag, const Iov *iov,
                              unsigned iovcnt, Completion *c) = 0;
    virtual ucs_status_t recv(int peer, std::uint64_t tag, const Iov *iov,
                              unsigned iovcnt, Completion *c) = 0;
    virtual ucs_status_t group_send(GroupChannel &g, const GroupMsg &m,
                                    Completion *c) = 0;
    virtual ucs_status_t group_recv(GroupChannel &g, const GroupMsg &m,
                                    Completion *c) = 0;
    /// Drops what is still posted for `inst` (its completions may still
    /// come, with an error). Called on failure before the instance goes.
    virtual void cancel(Instance &inst) = 0;
};

/// How reductions combine data.
struct Reducer {
    ucg_op_t op = UCG_OP_SUM;
    ucg_dtype_t dtype = UCG_DTYPE_UINT8;
    ucg_reduce_kernel_t kernel = nullptr; ///< predefined operators
    /// User operator: inout = in (+) inout over `count` units of
    /// `unit_bytes` (MPI's operand order).
    void (*user)(const void *in, void *inout, std::size_t count,
                 void *arg) = nullptr;
    void *user_arg = nullptr;
    std::size_t unit_bytes = 1; ///< bytes per kernel element or user unit
};

/// Wire tag of a point-to-point message: UCG's bit, the group id, the
/// instance's sequence, the sender's rank and the message id (below
/// kMaxWireMessages, program.h: the id field's top bit marks answers).
std::uint64_t wire_tag(std::uint32_t group_id, std::uint32_t seq, int src,
                       std::uint32_t msg_id);
/// The tag of an answer (a one-copy ack) from `replier` to the sender of
/// the message tagged `tag`: it names the replier, as every tag names its
/// sender, so a sender's answers from two ranks to messages of one id
/// cannot meet each other's receives, nor the replier's own messages.
std::uint64_t answer_tag(std::uint64_t tag, int replier);
inline constexpr std::uint32_t kMaxWireRanks = 1u << 20;
inline constexpr std::uint32_t kMaxGroupIds = 1u << 15;
inline constexpr std::uint32_t kWireSeqs = 256;

class Instance {
  public:
    /// `channels[g]` serves program group g (same member list).
    Instance(std::shared_ptr<const Program> prog, Fabric *fabric,
             const Reducer &reducer, std::uint32_t group_id,
             std::vector<GroupChannel *> channels);
    Instance(const Instance &) = delete;
    Instance &operator=(const Instance &) = delete;

    /// The user's buffers (input may alias output where the plan allows).
    void bind(const void *input, void *output);
    /// Starts; the instance must not be in flight. `seq` numbers it among
    /// the group's instances (wire tags).
    ucs_status_t start(std::uint32_t seq);
    /// Runs the ready ops; returns how many completed.
    unsigned drain();
    /// UCS_OK, UCS_INPROGRESS or the error it failed with.
    ucs_status_t status() const { return status_; }
    bool in_flight() const { return status_ == UCS_INPROGRESS; }
    /// Posts still held by the fabric (0 once it is safe to free).
    std::uint32_t outstanding() const { return outstanding_; }
    bool has_ready() const { return !ready_.empty(); }
    void fail(ucs_status_t status);
    /// Completions of the point-to-point posts still held by the fabric.
    void outstanding_p2p(std::vector<Completion *> *out);
    /// Events since the last call (for stall detection).
    std::uint64_t events() const { return events_; }

    /// What a wait on this instance could sleep on (decision 0029).
    enum class Pending {
        kOther, ///< a one-to-many post, a ready op or a blocked channel:
                ///< only polling moves it
        kNear,  ///< point-to-point posts only, none with a far peer
        kFar,   ///< point-to-point posts only, one with a peer `far` names
    };
    /// `far[r]`: rank r is reached over a network (another host).
    Pending pending(const std::vector<bool> &far) const;

    /// The fabric's completion callback.
    static void complete(Completion *c, ucs_status_t status);
    /// Posts what is next on a channel while it is ready (engine-internal;
    /// public for the runtime's retry of blocked channels).
    static void post_channel(GroupChannel &ch);

    const Program &program() const { return *prog_; }

  private:
    void ready(std::uint32_t op);
    void run(std::uint32_t op);
    void finish(std::uint32_t op);
    ucs_status_t post_p2p(std::uint32_t op);
    /// Posts message k of program group g (Program::group_ops[g][k]).
    ucs_status_t post_group(std::uint32_t g, std::uint32_t k);
    void on_posted(std::uint32_t op, ucs_status_t st);
    void apply_received(std::uint32_t op);
    std::uint8_t *at(const Segment &s) const;
    void copy_segments(std::uint32_t dst, std::uint32_t ndst,
                       const std::uint8_t *src, std::uint64_t bytes);
    void pack(std::uint32_t src, std::uint32_t nsrc, std::uint8_t *to) const;
    void zip(std::uint32_t dst, std::uint32_t ndst, std::uint32_t src,
             std::uint32_t nsrc, bool reduce, bool src_first);
    /// A reduce receive's dst = its operand (src) (+) `received`.
    void reduce_operand(std::uint32_t op, const std::uint8_t *received);
    void reduce_into(std::uint8_t *dst, const std::uint8_t *src,
                     std::size_t bytes, bool src_first);
    void *group_buffer(std::uint32_t op) const;
    GroupMsg group_msg(std::uint32_t op) const;

    std::shared_ptr<const Program> prog_;
    Fabric *fabric_;
    Reducer reducer_;
    std::uint32_t group_id_;
    std::uint32_t seq_ = 0;
    std::vector<GroupChannel *> channels_;
    std::uint8_t *base_[kNumBufs] = {};
    std::vector<std::uint8_t> scratch_, staging_, user_tmp_;
    std::vector<std::uint32_t> deps_left_;
    std::vector<std::uint8_t> state_; ///< per op: bits (engine.cpp)
    std::vector<Completion> comps_;
    std::vector<std::uint32_t> ready_;
    std::vector<std::uint32_t> group_next_; ///< per group: next op index
    /// Per segment, then per op its staging area: stable addresses, as a
    /// fabric may read them until the post completes (UCP iov).
    std::vector<Iov> iov_;
    std::vector<Iov> stage_iov_;
    std::vector<void *> member_ptrs_; ///< Program::parts as addresses
    /// What each one-to-many post carries, group after group in
    /// Program::group_ops order: all but the addresses from the program
    /// (constructor), the addresses from bind().
    std::vector<GroupMsg> group_msgs_;
    /// Per group: where its messages start in group_msgs_.
    std::vector<std::uint32_t> group_first_;

    std::uint32_t remaining_ = 0;
    std::uint32_t outstanding_ = 0;
    std::uint32_t group_outstanding_ = 0; ///< one-to-many among outstanding_
    std::uint64_t events_ = 0;
    ucs_status_t status_ = UCS_OK;
    bool draining_ = false;
};

} // namespace ucg::exec
