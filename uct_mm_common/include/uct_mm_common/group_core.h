// SPDX-License-Identifier: BSD-3-Clause
// The UCX-free shape of an mm group (uct_group.h without UCX): a message
// (what varies per post), the core interface both transports implement,
// and the checks of a post that every transport shares. The glue
// (uct_mm_common/ucx/group_glue.h) puts a uct_group_h around a GroupCore.
#pragma once

#include "uct_mm_common/status.h"

#include <ucg/reduce.h>

#include <cstddef>
#include <cstdint>

namespace uct_mm_common {

/// Kinds of message (uct_group_coll_t).
enum class Coll : std::uint8_t { kBcast = 0, kGather = 1, kReduce = 2 };

/// One member's part of one message (uct_group_msg_t).
struct Message {
    Coll coll = Coll::kBcast;
    std::uint32_t root = 0;                ///< sender (BCAST) or receiver
    ucg_op_t op = UCG_OP_SUM;              ///< REDUCE
    ucg_dtype_t dtype = UCG_DTYPE_UINT8;   ///< REDUCE
    std::size_t length = 0;                ///< bytes of one sender
    void *buffer = nullptr;                ///< source or destination
    void *const *member_buffers = nullptr; ///< GATHER receive, optional
    bool accumulate = false;               ///< REDUCE receive
    /// REDUCE receive, optional: the root's own operand (length bytes),
    /// buffer = operand op contributions; not with accumulate.
    const void *operand = nullptr;
    bool no_cma = false;   ///< BCAST: never by reading the root's memory
    std::uint32_t tag = 0; ///< checked where possible
};

/// Invoked once per post that returned kInProgress: `cookie` as posted.
using CompleteFn = void (*)(void *arg, void *cookie, Status status);

/// Bits of GroupCore::caps() (as uct_group_cap_flags).
enum : std::uint64_t {
    kCapBcast = 1,
    kCapGather = 2,
    kCapReduce = 4,
    kCapHostLocal = 8
};

/// Limits of a group (uct_group_attr_t).
struct GroupLimits {
    std::uint64_t caps = 0;
    std::uint32_t max_group_size = 0;
    std::uint32_t max_outstanding = 0;
    std::size_t max_length = 0;
    std::size_t seg_length = 0;
};

/// One member of one group. Not thread-safe: one thread drives a member.
class GroupCore {
  public:
    virtual ~GroupCore() = default;

    /// Checks a post without side effects: kOk, or kInvalidParam /
    /// kExceedsLimit with a short reason for the caller's one log line.
    virtual Status check(bool send, const Message &msg,
                         const char **why) const noexcept = 0;
    /// Posts this member's part of the next message (checked): kOk (done
    /// now, no completion), kInProgress (`cookie` completes later from
    /// progress()), kNoResource (max outstanding; nothing posted), or the
    /// group's failure.
    virtual Status post(bool send, const Message &msg,
                        void *cookie) noexcept = 0;
    /// Connects, moves data, detects failures; calls fn for every post
    /// that completes. Returns how many things moved.
    virtual unsigned progress(CompleteFn fn, void *arg) noexcept = 0;
    /// True while progress() has work: posts outstanding, or connecting.
    virtual bool busy() const noexcept = 0;
    /// kOk (connected or connecting) or the failure for good.
    virtual Status state() noexcept = 0;
};

/// The checks every transport shares: kind in caps, side (BCAST sends at
/// the root, GATHER/REDUCE at the others), root in range, length within
/// max_length.
Status check_common(bool send, const Message &msg, std::uint32_t member,
                    std::uint32_t size, const GroupLimits &limits,
                    const char **why) noexcept;

/// Fixed-capacity FIFO of posts (no allocation after construction).
template <class T> class PostRing {
  public:
    explicit PostRing(std::uint32_t capacity)
        : items_(new T[capacity]), capacity_(capacity)
    {
    }
    ~PostRing() { delete[] items_; }
    PostRing(const PostRing &) = delete;
    PostRing &operator=(const PostRing &) = delete;

    bool empty() const noexcept { return head_ == tail_; }
    bool full() const noexcept { return tail_ - head_ == capacity_; }
    std::uint32_t size() const noexcept
    {
        return static_cast<std::uint32_t>(tail_ - head_);
    }
    T &front() noexcept { return at(0); }
    /// The i-th post from the front.
    T &at(std::uint32_t i) noexcept { return items_[(head_ + i) % capacity_]; }
    T &push() noexcept { return items_[tail_++ % capacity_]; }
    void pop() noexcept { ++head_; }

  private:
    T *items_;
    std::uint32_t capacity_;
    std::uint64_t head_ = 0;
    std::uint64_t tail_ = 0;
};

} // namespace uct_mm_common
