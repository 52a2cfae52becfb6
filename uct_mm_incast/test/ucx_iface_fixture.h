// SPDX-License-Identifier: BSD-3-Clause
// An mm_incast iface opened in-process through UCT (the plugin is linked).
#pragma once

#include <uct_mm_incast.h>

#include "ucg_test/uct_iface.h"

#include <uct/api/uct.h>

namespace incast_test {

/// An mm_incast iface opened through UCT with a mode and FIFO size.
struct Iface : ucg_test::UctIface {
    explicit Iface(const char *mode, const char *fifo_size = "64")
        : UctIface({UCT_MM_INCAST_TL_NAME,
                    UCT_MM_INCAST_TL_NAME,
                    "memory",
                    {{"MODE", mode}, {"FIFO_SIZE", fifo_size}}})
    {
    }
};

} // namespace incast_test
