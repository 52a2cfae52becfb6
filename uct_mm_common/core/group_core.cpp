// SPDX-License-Identifier: BSD-3-Clause
// The post checks every mm group shares.
#include "uct_mm_common/group_core.h"

namespace uct_mm_common {

Status check_common(bool send, const Message &msg, std::uint32_t member,
                    std::uint32_t size, const GroupLimits &limits,
                    const char **why) noexcept
{
    const auto kind = static_cast<unsigned>(msg.coll);
    if (kind > static_cast<unsigned>(Coll::kReduce) ||
        (limits.caps & (std::uint64_t{1} << kind)) == 0) {
        *why = "message kind not supported by this transport";
        return Status::kInvalidParam;
    }
    if (msg.root >= size) {
        *why = "root out of range";
        return Status::kInvalidParam;
    }
    const bool root_sends = msg.coll == Coll::kBcast;
    if (send != ((msg.root == member) == root_sends)) {
        *why = send ? "this member receives that message"
                    : "this member sends that message";
        return Status::kInvalidParam;
    }
    if (msg.length > limits.max_length) {
        *why = "length over max_length";
        return Status::kInvalidParam;
    }
    if (msg.operand != nullptr &&
        (send || msg.coll != Coll::kReduce || msg.accumulate)) {
        *why = "an operand on other than a REDUCE receive without ACCUMULATE";
        return Status::kInvalidParam;
    }
    if (msg.length != 0 && msg.buffer == nullptr &&
        !(msg.coll == Coll::kGather && !send &&
          msg.member_buffers != nullptr)) {
        *why = "no buffer";
        return Status::kInvalidParam;
    }
    return Status::kOk;
}

} // namespace uct_mm_common
