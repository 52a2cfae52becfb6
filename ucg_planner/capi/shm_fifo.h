// SPDX-License-Identifier: BSD-3-Clause
// The shared-memory FIFO element of UCG's own UCP context (decision 0019):
// a pure step, so tests can drive it.
#pragma once

#include <cstring>

namespace ucg::rt {

/// UCX's shared-memory transports (sysv, posix, xpmem) send a message that
/// fits one FIFO element inline; a larger one takes a descriptor and one
/// more copy. The default element (128 B, about 100 B of payload) puts
/// that step right among collectives' small messages; UCG's own UCP
/// context asks for this size instead (UCX's MM_FIFO_ELEM_SIZE).
inline constexpr const char *kShmFifoElemBytes = "512";

/// Whether the environment `envp` (NULL-terminated) names a FIFO element
/// size for UCX (UCX_*FIFO_ELEM_SIZE, or UCG_UCX_*, as UCG's context reads
/// its configuration with the "UCG" prefix): then the user's value stands.
inline bool user_sets_fifo_elem(const char *const *envp) noexcept
{
    static constexpr const char kSuffix[] = "FIFO_ELEM_SIZE=";
    for (; envp != nullptr && *envp != nullptr; ++envp) {
        const char *e = *envp;
        if (std::strncmp(e, "UCX_", 4) != 0 &&
            std::strncmp(e, "UCG_UCX_", 8) != 0) {
            continue;
        }
        const char *eq = std::strchr(e, '=');
        const std::size_t n = sizeof(kSuffix) - 1;
        if (eq != nullptr && static_cast<std::size_t>(eq + 1 - e) >= n &&
            std::strncmp(eq + 1 - n, kSuffix, n) == 0) {
            return true;
        }
    }
    return false;
}

} // namespace ucg::rt
