// SPDX-License-Identifier: BSD-3-Clause
// One rank's UCT objects for the mm_bcast UCT tests: the component, md,
// worker and iface, opened through the public UCT API (the plugin is
// linked, so its constructor registered the transport).
#pragma once

#include "uct_mm_bcast.h"

#include "ucg_test/check.h"
#include "ucg_test/uct_iface.h"

#include <string>
#include <uct/api/uct.h>
#include <utility>
#include <vector>

namespace uct_mm_bcast::test {

using Config = std::vector<std::pair<std::string, std::string>>;

/// An mm_bcast iface with send and receive progress enabled.
struct UctRank : ucg_test::UctIface {
    explicit UctRank(Config config = {})
        : UctIface({"mm_bcast", "mm_bcast", "memory", std::move(config)})
    {
        uct_iface_progress_enable(iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    }
};

} // namespace uct_mm_bcast::test
