// SPDX-License-Identifier: BSD-3-Clause
// Runs every rank of a plan through the engine on the loopback fabric
// (int32 sums) and compares every output element with a reference
// computed here from the collective's definition.
#pragma once

#include "plan/plan.h"

#include <cstdint>
#include <string>

namespace ucg::exec::test {

/// Empty when every rank finished with the expected output; else what
/// went wrong (deadlock, a wrong element, a lowering error). A barrier is
/// run once per rank with that rank starting last, after the others have
/// gone quiet: no other rank may have finished by then.
std::string run_and_check(const plan::Plan &plan, std::uint64_t count,
                          bool synchronous_sends);

} // namespace ucg::exec::test
