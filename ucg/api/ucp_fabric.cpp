// SPDX-License-Identifier: BSD-3-Clause
// The UCP/uct_group fabric (ucp_fabric.h). A posted UCP request is kept
// in the completion's private bytes so a failed collective can cancel it.
#include "api/ucp_fabric.h"

#include <uct_group.h>

#include <cstddef>
#include <cstring>

namespace ucg::rt {

namespace {

using exec::Completion;

static_assert(sizeof(exec::Iov) == sizeof(ucp_dt_iov_t) &&
              offsetof(exec::Iov, length) == offsetof(ucp_dt_iov_t, length));
static_assert(sizeof(uct_completion_t) <= sizeof(Completion::priv));

void set_request(Completion *c, void *req)
{
    std::memcpy(c->priv, &req, sizeof(req));
}

void *request(const Completion *c)
{
    void *req;
    std::memcpy(&req, c->priv, sizeof(req));
    return req;
}

void send_done(void *req, ucs_status_t status, void *user_data)
{
    auto *c = static_cast<Completion *>(user_data);
    set_request(c, nullptr);
    ucp_request_free(req);
    exec::Instance::complete(c, status);
}

void recv_done(void *req, ucs_status_t status, const ucp_tag_recv_info_t *,
               void *user_data)
{
    send_done(req, status, user_data);
}

// The data argument and datatype of an iov list: one buffer as is, more
// as UCP's iov datatype (same layout as exec::Iov).
void describe(const exec::Iov *iov, unsigned n, ucp_request_param_t *p,
              void **buf, std::size_t *count)
{
    p->op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    if (n <= 1) {
        p->datatype = ucp_dt_make_contig(1);
        *buf = n == 1 ? iov[0].base : nullptr;
        *count = n == 1 ? iov[0].length : 0;
    } else {
        p->datatype = ucp_dt_make_iov();
        *buf = const_cast<exec::Iov *>(iov);
        *count = n;
    }
}

ucs_status_t posted(Completion *c, void *req)
{
    if (req == nullptr) {
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(req)) {
        return UCS_PTR_STATUS(req);
    }
    set_request(c, req);
    return UCS_INPROGRESS;
}

void group_done(uct_completion_t *self)
{
    auto *c = reinterpret_cast<Completion *>(
        reinterpret_cast<unsigned char *>(self) - offsetof(Completion, priv));
    exec::Instance::complete(c, self->status);
}

uct_group_msg_t to_uct(const exec::GroupMsg &m)
{
    uct_group_msg_t u{};
    switch (m.coll) {
    case exec::GroupColl::kBcast:
        u.coll = UCT_GROUP_COLL_BCAST;
        break;
    case exec::GroupColl::kGather:
        u.coll = UCT_GROUP_COLL_GATHER;
        break;
    case exec::GroupColl::kReduce:
        u.coll = UCT_GROUP_COLL_REDUCE;
        break;
    }
    u.root = m.root;
    u.op = m.op;
    u.dtype = m.dtype;
    u.length = m.length;
    u.buffer = m.buffer;
    u.member_buffers = m.member_buffers;
    u.flags = m.accumulate ? UCT_GROUP_MSG_FLAG_ACCUMULATE : 0;
    return u;
}

uct_completion_t *uct_comp(Completion *c)
{
    auto *comp = reinterpret_cast<uct_completion_t *>(c->priv);
    comp->func = group_done;
    comp->count = 1;
    comp->status = UCS_OK;
    return comp;
}

} // namespace

UcpFabric::UcpFabric(ucp_worker_h worker, const std::vector<ucp_ep_h> *eps,
                     const std::vector<bool> &eager)
    : worker_(worker), eps_(eps)
{
    const std::uint32_t attr =
        UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    for (const bool e : eager) {
        send_attr_.push_back(e ? attr | UCP_OP_ATTR_FLAG_FAST_CMPL : attr);
    }
}

ucs_status_t UcpFabric::send(int peer, std::uint64_t tag, const exec::Iov *iov,
                             unsigned iovcnt, Completion *c)
{
    ucp_request_param_t p;
    p.op_attr_mask = send_attr_[static_cast<std::size_t>(peer)];
    p.cb.send = send_done;
    p.user_data = c;
    void *buf;
    std::size_t count;
    describe(iov, iovcnt, &p, &buf, &count);
    return posted(c, ucp_tag_send_nbx((*eps_)[static_cast<std::size_t>(peer)],
                                      buf, count, tag, &p));
}

ucs_status_t UcpFabric::recv(int, std::uint64_t tag, const exec::Iov *iov,
                             unsigned iovcnt, Completion *c)
{
    ucp_request_param_t p;
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.recv = recv_done;
    p.user_data = c;
    void *buf;
    std::size_t count;
    describe(iov, iovcnt, &p, &buf, &count);
    // The tag names the sender (wire_tag), so the mask is full.
    return posted(c, ucp_tag_recv_nbx(worker_, buf, count, tag, ~0ULL, &p));
}

ucs_status_t UcpFabric::group_send(exec::GroupChannel &g,
                                   const exec::GroupMsg &m, Completion *c)
{
    const uct_group_msg_t u = to_uct(m);
    return uct_group_send(static_cast<uct_group_h>(g.handle), &u, uct_comp(c));
}

ucs_status_t UcpFabric::group_recv(exec::GroupChannel &g,
                                   const exec::GroupMsg &m, Completion *c)
{
    const uct_group_msg_t u = to_uct(m);
    return uct_group_recv(static_cast<uct_group_h>(g.handle), &u, uct_comp(c));
}

void UcpFabric::cancel(exec::Instance &inst)
{
    cancel_tmp_.clear();
    inst.outstanding_p2p(&cancel_tmp_);
    for (Completion *c : cancel_tmp_) {
        if (void *req = request(c)) {
            ucp_request_cancel(worker_, req);
        }
    }
}

} // namespace ucg::rt
