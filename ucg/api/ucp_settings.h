// SPDX-License-Identifier: BSD-3-Clause
// What UCG's own UCP context asks of UCX unless the user chose it
// (decisions 0019 and 0021): pure steps, so tests can drive them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ucg::rt {

/// UCX's shared-memory transports (sysv, posix, xpmem) send a message that
/// fits one FIFO element inline; a larger one takes a descriptor and one
/// more copy. The default element (128 B, about 100 B of payload) puts
/// that step right among collectives' small messages; UCG's own UCP
/// context asks for this size instead (UCX's MM_FIFO_ELEM_SIZE).
inline constexpr const char *kShmFifoElemBytes = "512";

/// Sends to a rank of the same machine carry UCP_OP_ATTR_FLAG_FAST_CMPL
/// (when the machine has a core per rank), which makes UCP send them
/// eagerly below RNDV_SEND_NBR_THRESH instead of below its own rendezvous
/// threshold (about 16 KiB here): UCG's own context asks for this one
/// (UCX's default: 256 KiB).
inline constexpr const char *kNearEagerBytes = "512k";

/// From this size a message between ranks of one machine is read from the
/// sender's memory (one copy, ucp_fabric.h) instead of copied through
/// UCX's FIFO twice; UCG_CMA_THRESH sets another (decision 0027).
inline constexpr std::uint64_t kCmaThresh = 16384;

/// mm_bcast's receivers read the root's buffer (CMA, one copy) from
/// kBcastCmaThresh in calls below kBcastCmaMaxBytes, where each member of the
/// host has a core (the group says otherwise, group.cpp): np=2 here, 64
/// KiB 3.4 us against 5.3 through the ring, 256 KiB 9.6-10.3 against 17.5,
/// but 1 MiB 88-95 against 66-80 and 2 MiB 298-309 against 182-189
/// (decision 0027).
/// The limit is per call, not per message (the runtime cuts a large bcast
/// into messages of half the ring: each alone would read by CMA), so the
/// runtime marks the messages of such calls (UCT_GROUP_MSG_FLAG_NO_CMA)
/// instead of setting UCX_MM_BCAST_CMA_MAX.
inline constexpr const char *kBcastCmaThresh = "32k";
inline constexpr std::size_t kBcastCmaMaxBytes = std::size_t{1} << 20;

/// Whether the environment `envp` (NULL-terminated) sets a UCX variable
/// whose name ends in `suffix` (UCX_...SUFFIX, or UCG_UCX_...SUFFIX, as
/// UCG's context reads its configuration with the "UCG" prefix).
inline bool user_sets_ucx(const char *const *envp, const char *suffix) noexcept
{
    const std::size_t n = std::strlen(suffix);
    for (; envp != nullptr && *envp != nullptr; ++envp) {
        const char *e = *envp;
        if (std::strncmp(e, "UCX_", 4) != 0 &&
            std::strncmp(e, "UCG_UCX_", 8) != 0) {
            continue;
        }
        const char *eq = std::strchr(e, '=');
        if (eq != nullptr && static_cast<std::size_t>(eq - e) >= n &&
            std::strncmp(eq - n, suffix, n) == 0) {
            return true;
        }
    }
    return false;
}

/// A FIFO element size (UCX_*FIFO_ELEM_SIZE): then the user's value
/// stands.
inline bool user_sets_fifo_elem(const char *const *envp) noexcept
{
    return user_sets_ucx(envp, "FIFO_ELEM_SIZE");
}

/// mm_bcast's CMA range (UCX_MM_BCAST_CMA_THRESH or _CMA_MAX).
inline bool user_sets_bcast_cma(const char *const *envp) noexcept
{
    return user_sets_ucx(envp, "MM_BCAST_CMA_THRESH") ||
           user_sets_ucx(envp, "MM_BCAST_CMA_MAX");
}

/// Whether UCP may open transport `tl`: no UCX_TLS (UCG_UCX_TLS), one that
/// names it, or an exclusion list ("^...") that does not. (A setting for
/// a transport UCP does not open draws UCX's "invalid configurations"
/// warning.)
inline bool tls_may_open(const char *const *envp, const char *tl) noexcept
{
    for (; envp != nullptr && *envp != nullptr; ++envp) {
        const char *e = *envp;
        const char *v = std::strncmp(e, "UCX_TLS=", 8) == 0        ? e + 8
                        : std::strncmp(e, "UCG_UCX_TLS=", 12) == 0 ? e + 12
                                                                   : nullptr;
        if (v != nullptr) {
            const bool named = std::strstr(v, tl) != nullptr;
            return *v == '^' ? !named : named;
        }
    }
    return true;
}

/// A rendezvous threshold of UCX's own (UCX_RNDV_THRESH, which then also
/// bounds FAST_CMPL sends, or UCX_RNDV_SEND_NBR_THRESH).
inline bool user_sets_rndv(const char *const *envp) noexcept
{
    return user_sets_ucx(envp, "_RNDV_THRESH") ||
           user_sets_ucx(envp, "_RNDV_SEND_NBR_THRESH");
}

} // namespace ucg::rt
