// SPDX-License-Identifier: BSD-3-Clause
// Internal to plan/: message matching and the event-driven execution order
// shared by the validator and the symbolic checker.
#pragma once

#include "plan/plan.h"

#include <string>
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

/* "rank R op I (kind)" for messages. */
std::string where(const Plan &plan, int rank, int op);

/* The flattened chunk index of every slot a message carries. */
std::vector<int> chunk_sequence(const std::vector<Range> &ranges);

} // namespace ucg::plan::detail
