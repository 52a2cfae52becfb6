// SPDX-License-Identifier: BSD-3-Clause
// The runtime's fabric: point-to-point messages as UCP tagged sends and
// receives on a group's endpoints, one-to-many messages on the host's
// uct_group.h groups. Completions arrive from ucp_worker_progress.
#pragma once

#include "exec/engine.h"

#include <ucp/api/ucp.h>

#include <cstdint>
#include <vector>

namespace ucg::rt {

class UcpFabric : public exec::Fabric {
  public:
    /// `eps[r]`: the endpoint to rank r of the group; `eager[r]`: sends to
    /// rank r ask UCP to complete fast (UCP_OP_ATTR_FLAG_FAST_CMPL: eager
    /// below its RNDV_SEND_NBR_THRESH, decision 0021).
    UcpFabric(ucp_worker_h worker, const std::vector<ucp_ep_h> *eps,
              const std::vector<bool> &eager);

    ucs_status_t send(int peer, std::uint64_t tag, const exec::Iov *iov,
                      unsigned iovcnt, exec::Completion *c) override;
    ucs_status_t recv(int peer, std::uint64_t tag, const exec::Iov *iov,
                      unsigned iovcnt, exec::Completion *c) override;
    ucs_status_t group_send(exec::GroupChannel &g, const exec::GroupMsg &m,
                            exec::Completion *c) override;
    ucs_status_t group_recv(exec::GroupChannel &g, const exec::GroupMsg &m,
                            exec::Completion *c) override;
    void cancel(exec::Instance &inst) override;

  private:
    ucp_worker_h worker_;
    const std::vector<ucp_ep_h> *eps_;
    std::vector<std::uint32_t> send_attr_; ///< per rank: op_attr_mask bits
    std::vector<exec::Completion *> cancel_tmp_;
};

} // namespace ucg::rt
