// SPDX-License-Identifier: BSD-3-Clause
// The runtime's fabric: point-to-point messages as UCP tagged sends and
// receives on a group's endpoints, one-to-many messages on the host's
// uct_group.h groups. Completions arrive from ucp_worker_progress.
//
// One copy between ranks of a machine (decision 0027): from a threshold
// the group agrees on, a message to a rank of the same machine goes as a
// descriptor (the sender's pid and buffer addresses) on the message's tag;
// the receiver reads the bytes straight from the sender's memory
// (process_vm_readv) and answers with a 4-byte ack on the message's
// answer tag (exec::answer_tag: the tag naming the receiver, so the acks
// of two receivers of a sender's messages of one id cannot cross). Where the
// read fails (no permission, another pid namespace) the ack says so and the
// sender sends the bytes as a tagged message; the sender then says "the data
// follows" in its later descriptors to that rank, as it does for a message of
// more than kCmaMaxIov pieces.
//
// A message in pieces to a peer over a socket, from UCP's rendezvous size,
// goes out from one contiguous copy (stage_contiguous, decision 0053): the
// fabric keeps a buffer per send in flight and reuses it.
#pragma once

#include "exec/engine.h"

#include <ucp/api/ucp.h>

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ucg::rt {

/// The pieces a descriptor names; a message in more pieces goes through UCP.
inline constexpr unsigned kCmaMaxIov = 4;

/// Whether this process may read the memory of other processes of its
/// machine as far as it can tell alone: process_vm_readv works (no seccomp
/// filter refuses it) and Yama's ptrace_scope allows it (1 after allowing
/// any reader, 2 only as root, 3 never). Probed once.
bool can_read_peers();

/// The one-copy path's counters and its read call, kept by the group (a
/// plain struct tests reach without the fabric's type).
struct CmaState {
    /// process_vm_readv's signature (tests replace it).
    using Reader = ssize_t (*)(pid_t, const iovec *, unsigned long,
                               const iovec *, unsigned long, unsigned long);
    Reader reader = process_vm_readv;
    std::uint64_t reads = 0;      ///< messages read from a sender's memory
    std::uint64_t read_bytes = 0; ///< their bytes
    std::uint64_t failed = 0;     ///< reads that failed (then sent by UCP)
    std::uint64_t forwarded = 0;  ///< descriptors saying "the data follows"
};

/// The contiguous copies of messages in pieces (stage_contiguous), kept by
/// the group for tests and tools.
struct StageState {
    std::uint64_t sends = 0; ///< messages sent from a contiguous copy
    std::uint64_t bytes = 0; ///< their bytes
};

class UcpFabric : public exec::Fabric {
  public:
    /// `rank`: this member's rank in the group; `eps[r]`: the endpoint to
    /// rank r of the group; `fast_below[r]`: sends to rank r of fewer
    /// bytes ask UCP to complete fast (UCP_OP_ATTR_FLAG_FAST_CMPL: eager
    /// below its RNDV_SEND_NBR_THRESH, decisions 0021 and 0059; 0 none,
    /// UINT64_MAX every size); `near[r]`: rank r
    /// runs on this machine, so messages of at least `cma_thresh` bytes
    /// (0: none) take the one-copy path (every member must use the same
    /// threshold), counted in `*cma` (which outlives the fabric);
    /// `socket[r]`: rank r is reached over a socket with UCG's own
    /// rendezvous threshold, so messages in pieces go out from one copy
    /// (stage_contiguous), counted in `*stage` (which outlives the fabric).
    UcpFabric(ucp_worker_h worker, int rank, const std::vector<ucp_ep_h> *eps,
              const std::vector<std::uint64_t> &fast_below,
              const std::vector<bool> &near, std::uint64_t cma_thresh,
              CmaState *cma, const std::vector<bool> &socket,
              StageState *stage);

    ucs_status_t send(int peer, std::uint64_t tag, const exec::Iov *iov,
                      unsigned iovcnt, exec::Completion *c) override;
    ucs_status_t recv(int peer, std::uint64_t tag, const exec::Iov *iov,
                      unsigned iovcnt, exec::Completion *c) override;
    ucs_status_t group_send(exec::GroupChannel &g, const exec::GroupMsg &m,
                            exec::Completion *c) override;
    ucs_status_t group_recv(exec::GroupChannel &g, const exec::GroupMsg &m,
                            exec::Completion *c) override;
    void cancel(exec::Instance &inst) override;

    // The one-copy steps (ucp_fabric.cpp's callbacks call them).
    struct CmaSlot;
    // A contiguous copy's send (ucp_fabric.cpp's callback frees its buffer).
    struct StagedSlot;
    void unstage(std::uint32_t buffer) { staging_[buffer].busy = false; }
    void cma_on_desc(exec::Completion *c, std::size_t length);
    void cma_on_ack(exec::Completion *c, std::size_t length);
    void cma_send_data(exec::Completion *c);

  private:
    /// A send's op_attr_mask bits (fast_below_).
    std::uint32_t send_attr(int peer, std::size_t bytes) const;
    bool one_copy(int peer, const exec::Iov *iov, unsigned iovcnt) const;
    ucs_status_t cma_send(int peer, std::uint64_t tag, const exec::Iov *iov,
                          unsigned iovcnt, exec::Completion *c);
    ucs_status_t cma_recv(int peer, std::uint64_t tag, const exec::Iov *iov,
                          unsigned iovcnt, exec::Completion *c);
    void cma_send_own(exec::Completion *c, const void *buf, std::size_t len,
                      std::uint64_t tag);
    static void cma_posted(CmaSlot *s, void *req);
    /// A tagged send through UCP, `done` called on its completion.
    ucs_status_t ucp_send(int peer, std::uint64_t tag, const exec::Iov *iov,
                          unsigned iovcnt, ucp_send_nbx_callback_t done,
                          exec::Completion *c);
    ucs_status_t staged_send(int peer, std::uint64_t tag, const exec::Iov *iov,
                             unsigned iovcnt, std::size_t bytes,
                             exec::Completion *c);
    /// Reads a descriptor's pieces into the slot's buffers; false on failure.
    bool cma_read(CmaSlot *s, int peer);

    ucp_worker_h worker_;
    int rank_;
    const std::vector<ucp_ep_h> *eps_;
    std::vector<std::uint64_t> fast_below_; ///< per rank: FAST_CMPL below
    std::vector<bool> near_;
    std::vector<bool> cma_broken_; ///< per rank: a read from it failed
    std::uint64_t cma_thresh_;
    pid_t pid_;
    std::uint64_t pid_ns_; ///< this process's pid namespace (0: unknown)
    CmaState *cma_;
    /// A buffer for one contiguous copy; busy while its send is in flight.
    struct Staging {
        std::unique_ptr<std::byte[]> bytes;
        std::size_t capacity = 0;
        bool busy = false;
    };
    std::vector<bool> socket_;
    std::vector<Staging> staging_;
    StageState *stage_;
    bool warned_ = false;
    std::vector<exec::Completion *> cancel_tmp_;
};

} // namespace ucg::rt
