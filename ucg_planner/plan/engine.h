// SPDX-License-Identifier: BSD-3-Clause
// Internal to plan/: message matching and the event-driven execution order
// shared by the validator and the symbolic checker.
#pragma once

#include "plan/plan.h"

#include <string>
#include <utility>
#include <vector>

namespace ucg::plan::detail {

struct OpRef {
    int rank = -1;
    int op = -1;
};

struct Message {
    OpRef send;
    OpRef recv;
};

struct Matching {
    std::vector<Message> messages;
    // Per rank and op: ids of the messages it sends or receives, in peer
    // order (the order of Op::peers).
    std::vector<std::vector<std::vector<int>>> msgs_of;
};

/* Pairs sends with receives by (sender, receiver, channel, tag) in list
 * order. Appends errors for unmatched or mismatched messages. Assumes
 * well-formed peers. */
Matching match_messages(const Plan &plan, std::vector<std::string> &errors);

/* Runs the plan event by event (deps first, eager sends, a receive waits
 * for all its messages). Returns the executed ops in order; ops left out
 * are deadlocked. */
std::vector<OpRef> execution_order(const Plan &plan, const Matching &m);

/* Every member takes part in each message of a group, and all list the
 * group's ops in the same order (groups.cpp). Assumes well-formed groups
 * and a matching without errors. */
void check_groups(const Plan &plan, const Matching &m,
                  std::vector<std::string> &errors);

/* "rank R op I (kind)" for messages. */
std::string where(const Plan &plan, int rank, int op);

/* The slots [first, first + count) of a receive's dst that the message
 * of its peer at `pos` fills (all of dst but for kIncastRecv). */
std::pair<int, int> recv_part(const Op &op, int pos);

/* Whether slots [a_first, a_first + n) of `a` and [b_first, b_first + n)
 * of `b` carry the same chunk indices (both must hold that many). */
bool same_chunks(const std::vector<Range> &a, int a_first,
                 const std::vector<Range> &b, int b_first, int n);

} // namespace ucg::plan::detail
