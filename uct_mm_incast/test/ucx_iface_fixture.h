// SPDX-License-Identifier: BSD-3-Clause
// An mm_incast iface opened in-process through UCT (the plugin is linked).
#pragma once

#include <uct_mm_incast.h>

#include "ucg_test/uct_iface.h"

#include <string>
#include <uct/api/uct.h>
#include <utility>
#include <vector>

namespace incast_test {

using Config = std::vector<std::pair<std::string, std::string>>;

/// An mm_incast iface opened through UCT with config overrides, send and
/// receive progress enabled.
struct Iface : ucg_test::UctIface {
    explicit Iface(Config config = {})
        : UctIface({UCT_MM_INCAST_TL_NAME, UCT_MM_INCAST_TL_NAME, "memory",
                    std::move(config)})
    {
        uct_iface_progress_enable(iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
    }
};

} // namespace incast_test
