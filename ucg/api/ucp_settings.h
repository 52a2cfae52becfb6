// SPDX-License-Identifier: BSD-3-Clause
// What UCG's own UCP context asks of UCX unless the user chose it
// (decisions 0019, 0021, 0028 and 0038): pure steps, so tests can drive them,
// and the one question to UCX they need (rdma_device_found).
#pragma once

#include <uct/api/uct.h>

#include <algorithm>
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

/// Where UCX finds no RDMA device, its network transport is a socket
/// (tcp): a rendezvous there copies as much as an eager send does and adds
/// round trips, each a wait for the peer's turn on a loaded host. UCP
/// computes its threshold at 16-32 KiB; UCG's own context asks for this
/// one then (UCX's RNDV_THRESH, decision 0028): on the emulated cluster,
/// 2 hosts x 2 ranks, bcast 512 KiB-1 MiB 0.20-0.28x Open MPI against
/// 0.84-1.71x, gather 32 KiB 0.50x against 1.49x. From 4 MiB the
/// rendezvous stands (alltoall 4-16 MiB was 0.9-1.0x with it, 1.1-1.2x
/// without).
inline constexpr const char *kSocketEagerBytes = "4m";

/// Where UCX finds no RDMA device, its `tcp` transport receives into
/// segments of UCX_TCP_RX_SEG_SIZE (64 KiB by default), which also bound
/// an eager message's fragments: a message of 2 MiB goes out as 32
/// sends, each read into a segment and copied out alone. UCG's own
/// context asks for this size instead (decision 0038): on the emulated
/// cluster, 4 hosts x 2 ranks (hosts running cubic), alltoall 1-2 MiB
/// 0.76-1.03x Open MPI against 0.95-1.26x, scatter 1-2 MiB 0.40-0.59x
/// against 0.61-0.88x, allgather 1 MiB 0.86-0.94x against 1.03-1.09x.
inline constexpr const char *kSocketSegBytes = "512k";

/// kSocketEagerBytes in bytes: from here UCG's own context sends a message
/// over a socket by rendezvous.
inline constexpr std::size_t kSocketRndvBytes = std::size_t{4} << 20;

/// Whether a message of `iovcnt` pieces and `bytes` bytes to a peer goes
/// out from one contiguous copy (decision 0053): UCX 1.13's rendezvous over
/// `tcp` moves a sender's iov at a tenth of a contiguous buffer's rate (4
/// MiB in 4 pieces between two emulated hosts: 4.6 ms against 0.56 ms
/// contiguous and 0.69 ms eager), so one memcpy first pays. `socket`: the
/// peer is reached over a socket with UCG's own threshold
/// (kSocketRndvBytes); elsewhere (shared memory, RDMA, a threshold of the
/// user's) UCP's iov path stands.
inline bool stage_contiguous(bool socket, unsigned iovcnt,
                             std::size_t bytes) noexcept
{
    return socket && iovcnt > 1 && bytes >= kSocketRndvBytes;
}

/// Whether a UCT component `name` that found devices drives an RDMA
/// network (verbs, Cray's uGNI), whose rendezvous moves a message without
/// copying it: then UCP's own threshold stands.
inline bool rdma_component(const char *name) noexcept
{
    return std::strcmp(name, "ib") == 0 || std::strcmp(name, "ugni") == 0;
}

/// Whether UCX found a device of an RDMA network (a memory domain of such
/// a component); where it cannot list its components, as if it did.
inline bool rdma_device_found() noexcept
{
    uct_component_h *components = nullptr;
    unsigned count = 0;
    if (uct_query_components(&components, &count) != UCS_OK) {
        return true;
    }
    bool found = false;
    for (unsigned i = 0; i < count && !found; ++i) {
        uct_component_attr_t a{};
        a.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                       UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        found = uct_component_query(components[i], &a) == UCS_OK &&
                a.md_resource_count != 0 && rdma_component(a.name);
    }
    uct_release_component_list(components);
    return found;
}

/// From this size a message between ranks of one machine is read from the
/// sender's memory (one copy, ucp_fabric.h) instead of copied through
/// UCX's FIFO twice; UCG_CMA_THRESH sets another (decision 0027).
inline constexpr std::uint64_t kCmaThresh = 16384;

/// What a receiver's shared-memory FIFO holds: UCX's sysv and posix
/// defaults, 64 elements of 8 KiB segments (UCX_SYSV_FIFO_SIZE,
/// UCX_SYSV_SEG_SIZE).
inline constexpr std::uint64_t kShmFifoBytes = 64 * 8192;

/// The CMA threshold between the ranks of one machine (decision 0059).
/// Where the machine's `machine_ranks` take turns on its cores
/// (`oversubscribed`), a one-copy read costs the sender a turn of its
/// receiver and then one of its own (the descriptor is read, the ack
/// comes back), while an eager message is done once copied into the
/// receiver's FIFO, if the FIFO takes it beside every other rank's: a
/// receiver hands its elements back half a FIFO at a time
/// (UCX_SYSV_FIFO_RELEASE_FACTOR 0.5), so there the threshold rises to
/// kShmFifoBytes / 2 / (machine_ranks - 1) (np=4 on two cores: 85 KiB;
/// alltoall 16-64 KiB 0.5-0.8x Open MPI against 0.93-0.99x). A user's
/// UCG_CMA_THRESH (`user_set`) and "off" (0) stand.
inline std::uint64_t machine_cma_thresh(std::uint64_t thresh, bool user_set,
                                        bool oversubscribed,
                                        std::size_t machine_ranks) noexcept
{
    if (thresh == 0 || user_set || !oversubscribed || machine_ranks < 2) {
        return thresh;
    }
    return std::max(thresh, kShmFifoBytes / 2 / (machine_ranks - 1));
}

/// Whether a host's mm_bcast group lets its receivers read the root's
/// buffer (CMA) where the user asks mm_bcast for it
/// (UCX_MM_BCAST_CMA_THRESH; UCG itself does not since its ring copies
/// are streamed, decision 0049): only where the host has one receiver. Readers
/// of one root contend in the kernel on the root's pages (each read pins them),
/// and the root waits for the slowest: on 16 cores, one rank per core,
/// np=16 bcast 64 KiB took 104 us by CMA against 15-17 through the ring
/// (np=8: 48 against 14; np=4: 1.02-1.25x Open MPI against 0.60-0.73),
/// while np=2 read in 0.47-0.62x Open MPI's time (decision 0027).
/// Nor where the host's members share cores (`oversubscribed`: the root
/// waits for each reader's turn), the threshold is off (`cma_on`) or a
/// member cannot read its peers (`all_read`).
inline bool host_bcast_reads(std::size_t host_members, bool oversubscribed,
                             bool cma_on, bool all_read) noexcept
{
    return host_members == 2 && !oversubscribed && cma_on && all_read;
}

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

/// UCX's rendezvous threshold (UCX_RNDV_THRESH; "auto" keeps UCP's own,
/// a size bounds fast-completing sends too).
inline bool user_sets_rndv_thresh(const char *const *envp) noexcept
{
    return user_sets_ucx(envp, "_RNDV_THRESH");
}

/// The threshold of fast-completing sends (UCX_RNDV_SEND_NBR_THRESH).
inline bool user_sets_rndv_nbr(const char *const *envp) noexcept
{
    return user_sets_ucx(envp, "_RNDV_SEND_NBR_THRESH");
}

/// The tcp transport's receive segment (UCX_TCP_RX_SEG_SIZE).
inline bool user_sets_tcp_seg(const char *const *envp) noexcept
{
    return user_sets_ucx(envp, "_TCP_RX_SEG_SIZE");
}

/// Either rendezvous threshold.
inline bool user_sets_rndv(const char *const *envp) noexcept
{
    return user_sets_rndv_thresh(envp) || user_sets_rndv_nbr(envp);
}

} // namespace ucg::rt
