// SPDX-License-Identifier: BSD-3-Clause
// The UCP/uct_group fabric (ucp_fabric.h). A posted UCP request is kept
// in the completion's private bytes so a failed collective can cancel it;
// a one-copy message keeps its whole state there (CmaSlot).
#include "api/ucp_fabric.h"

#include "api/internal.h"

#include <uct_group.h>

#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <new>
#include <string>

namespace ucg::rt {

namespace {

using exec::Completion;

constexpr std::uint32_t kCmaMagic = 0x55434743; // "UCGC"
/// The ack's word: the receiver read the bytes, or wants them sent.
constexpr std::uint32_t kAckRead = 1;
constexpr std::uint32_t kAckSend = 2;

/// What a one-copy message's tag carries first.
struct CmaDesc {
    std::uint32_t magic;
    std::uint32_t count; ///< pieces named; 0: the data follows through UCP
    std::int32_t pid;
    std::uint32_t reserved;
    std::uint64_t pid_ns; ///< the sender's pid namespace
    std::uint64_t bytes;  ///< the message's length
    exec::Iov iov[kCmaMaxIov];
};
constexpr std::size_t kDescHeader = offsetof(CmaDesc, iov);

std::size_t total_bytes(const exec::Iov *iov, unsigned n)
{
    std::size_t bytes = 0;
    for (unsigned i = 0; i < n; ++i) {
        bytes += iov[i].length;
    }
    return bytes;
}

// This process's pid namespace: a pid in a descriptor names the sender
// only where it is the receiver's namespace too. 0 where unknown.
std::uint64_t pid_namespace()
{
    struct stat st;
    if (stat("/proc/self/ns/pid", &st) != 0) {
        return 0;
    }
    return (static_cast<std::uint64_t>(st.st_dev) << 32) ^ st.st_ino;
}

// Read once per process (every group's fabric and the hello ask).
int yama_scope()
{
    static const int scope = [] {
        std::ifstream f("/proc/sys/kernel/yama/ptrace_scope");
        int v = 0;
        return f >> v ? v : 0;
    }();
    return scope;
}

// Yama's ptrace_scope 1 lets a process read only its descendants' memory
// unless they allow any reader (as UCX's cma transport does).
void allow_readers()
{
    if (yama_scope() == 1) {
        (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    }
}

bool probe_read_peers()
{
    const int scope = yama_scope();
    if (scope >= 3 || (scope == 2 && geteuid() != 0)) {
        return false;
    }
    std::uint32_t from = 0x5543474d, to = 0;
    const iovec local{&to, sizeof(to)};
    const iovec remote{&from, sizeof(from)};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
               static_cast<ssize_t>(sizeof(to)) &&
           to == from;
}

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
    u.operand = m.operand;
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

bool can_read_peers()
{
    static const bool can = probe_read_peers();
    return can;
}

/// A one-copy message's state, in its completion's private bytes. `req`
/// first: the UCP receive cancel() cancels, as for a plain message.
struct UcpFabric::CmaSlot {
    void *req;
    UcpFabric *fabric;
    const exec::Iov *iov; ///< this side's pieces
    std::uint32_t iovcnt;
    std::int32_t peer;
    std::uint64_t tag;
    std::uint32_t pending; ///< parts not done (one more while posting)
    ucs_status_t status;   ///< the first error
    std::uint32_t ack;     ///< kAckRead or kAckSend
    CmaDesc desc;
};
static_assert(sizeof(UcpFabric::CmaSlot) <= sizeof(Completion::priv));
static_assert(offsetof(UcpFabric::CmaSlot, req) == 0);

namespace {

using CmaSlot = UcpFabric::CmaSlot;

CmaSlot *slot_of(Completion *c)
{
    return std::launder(reinterpret_cast<CmaSlot *>(c->priv));
}

// The slot keeps its first error.
void slot_error(CmaSlot *s, ucs_status_t status)
{
    if (status != UCS_OK && s->status == UCS_OK) {
        s->status = status;
    }
}

void part_done(Completion *c, ucs_status_t status)
{
    CmaSlot *s = slot_of(c);
    slot_error(s, status);
    if (--s->pending == 0) {
        exec::Instance::complete(c, s->status);
    }
}

void part_send_done(void *req, ucs_status_t status, void *user_data)
{
    ucp_request_free(req);
    part_done(static_cast<Completion *>(user_data), status);
}

void part_recv_done(void *req, ucs_status_t status, const ucp_tag_recv_info_t *,
                    void *user_data)
{
    auto *c = static_cast<Completion *>(user_data);
    slot_of(c)->req = nullptr;
    ucp_request_free(req);
    part_done(c, status);
}

// A receive of the fabric's own whose bytes take a next step (the
// descriptor: UcpFabric::cma_on_desc, the ack: cma_on_ack).
template <void (UcpFabric::*Step)(Completion *, std::size_t)>
void step_recv_done(void *req, ucs_status_t status,
                    const ucp_tag_recv_info_t *info, void *user_data)
{
    auto *c = static_cast<Completion *>(user_data);
    CmaSlot *s = slot_of(c);
    s->req = nullptr;
    ucp_request_free(req);
    if (status == UCS_OK) {
        (s->fabric->*Step)(c, info->length);
    }
    part_done(c, status);
}

// A one-copy message's state, one part (its posting) pending.
CmaSlot *new_slot(Completion *c, UcpFabric *f, int peer, std::uint64_t tag,
                  const exec::Iov *iov, unsigned iovcnt)
{
    auto *s = new (c->priv) CmaSlot{};
    s->fabric = f;
    s->iov = iov;
    s->iovcnt = iovcnt;
    s->peer = peer;
    s->tag = tag;
    s->pending = 1;
    s->status = UCS_OK;
    return s;
}

// A receive of the fabric's own (descriptor, ack, forwarded data): its
// callback always runs, so each part ends in one place. It may run inside
// ucp_tag_recv_nbx (a message that already waits: UCP completes it there),
// hence post_part.
ucp_request_param_t own_recv_param(ucp_tag_recv_nbx_callback_t cb, void *c)
{
    ucp_request_param_t p;
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                     UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    p.cb.recv = cb;
    p.user_data = c;
    return p;
}

// The slot's request while a receive part is being posted: its callback,
// run inside the post, sets the slot's request to null.
char posting_mark;
void *const kPosting = &posting_mark;

// Posts one receive part of the slot (`count` of `p`'s datatype at `buf`
// on `tag`): the part counts before the post, whose callback may end it
// there, and the slot keeps the request only while it is outstanding.
void post_part(ucp_worker_h worker, CmaSlot *s, void *buf, std::size_t count,
               std::uint64_t tag, ucp_request_param_t *p)
{
    ++s->pending;
    s->req = kPosting;
    void *req = ucp_tag_recv_nbx(worker, buf, count, tag, ~0ULL, p);
    if (UCS_PTR_IS_ERR(req)) {
        s->req = nullptr;
        slot_error(s, UCS_PTR_STATUS(req));
        --s->pending; // the slot's own part holds it above 0
    } else if (s->req == kPosting) {
        s->req = req;
    }
}

// A receive part of `len` bytes at `buf` (the descriptor, the ack).
void post_own(ucp_worker_h worker, CmaSlot *s, void *buf, std::size_t len,
              std::uint64_t tag, ucp_tag_recv_nbx_callback_t cb, void *c)
{
    ucp_request_param_t p = own_recv_param(cb, c);
    p.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    p.datatype = ucp_dt_make_contig(1);
    post_part(worker, s, buf, len, tag, &p);
}

} // namespace

UcpFabric::UcpFabric(ucp_worker_h worker, int rank,
                     const std::vector<ucp_ep_h> *eps,
                     const std::vector<std::uint64_t> &fast_below,
                     const std::vector<bool> &near, std::uint64_t cma_thresh,
                     CmaState *cma, const std::vector<bool> &socket,
                     StageState *stage)
    : worker_(worker), rank_(rank), eps_(eps), fast_below_(fast_below),
      near_(near), cma_broken_(near.size(), false), cma_thresh_(cma_thresh),
      pid_(getpid()), pid_ns_(pid_namespace()), cma_(cma), socket_(socket),
      stage_(stage)
{
    if (cma_thresh_ != 0) {
        allow_readers();
    }
}

std::uint32_t UcpFabric::send_attr(int peer, std::size_t bytes) const
{
    const std::uint32_t attr =
        UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    return bytes < fast_below_[static_cast<std::size_t>(peer)]
               ? attr | UCP_OP_ATTR_FLAG_FAST_CMPL
               : attr;
}

bool UcpFabric::one_copy(int peer, const exec::Iov *iov, unsigned iovcnt) const
{
    return cma_thresh_ != 0 && near_[static_cast<std::size_t>(peer)] &&
           total_bytes(iov, iovcnt) >= cma_thresh_;
}

ucs_status_t UcpFabric::send(int peer, std::uint64_t tag, const exec::Iov *iov,
                             unsigned iovcnt, Completion *c)
{
    if (one_copy(peer, iov, iovcnt)) {
        return cma_send(peer, tag, iov, iovcnt, c);
    }
    if (const std::size_t bytes = total_bytes(iov, iovcnt); stage_contiguous(
            socket_[static_cast<std::size_t>(peer)], iovcnt, bytes)) {
        return staged_send(peer, tag, iov, iovcnt, bytes, c);
    }
    return ucp_send(peer, tag, iov, iovcnt, send_done, c);
}

ucs_status_t UcpFabric::ucp_send(int peer, std::uint64_t tag,
                                 const exec::Iov *iov, unsigned iovcnt,
                                 ucp_send_nbx_callback_t done, Completion *c)
{
    ucp_request_param_t p;
    p.op_attr_mask = send_attr(peer, total_bytes(iov, iovcnt));
    p.cb.send = done;
    p.user_data = c;
    void *buf;
    std::size_t count;
    describe(iov, iovcnt, &p, &buf, &count);
    return posted(c, ucp_tag_send_nbx((*eps_)[static_cast<std::size_t>(peer)],
                                      buf, count, tag, &p));
}

struct UcpFabric::StagedSlot {
    void *req;
    UcpFabric *fabric;
    std::uint32_t buffer; ///< its index in staging_
};
static_assert(sizeof(UcpFabric::StagedSlot) <= sizeof(Completion::priv));
static_assert(offsetof(UcpFabric::StagedSlot, req) == 0);

namespace {

void staged_send_done(void *req, ucs_status_t status, void *user_data)
{
    auto *c = static_cast<Completion *>(user_data);
    const auto *s =
        std::launder(reinterpret_cast<UcpFabric::StagedSlot *>(c->priv));
    s->fabric->unstage(s->buffer);
    send_done(req, status, user_data);
}

} // namespace

// The pieces copied into a free buffer (one that holds them, else one
// grown, else a new one) and sent from there as one contiguous message.
ucs_status_t UcpFabric::staged_send(int peer, std::uint64_t tag,
                                    const exec::Iov *iov, unsigned iovcnt,
                                    std::size_t bytes, Completion *c)
{
    std::size_t pick = staging_.size();
    for (std::size_t i = 0; i < staging_.size(); ++i) {
        if (!staging_[i].busy &&
            (pick == staging_.size() || staging_[i].capacity >= bytes)) {
            pick = i;
        }
    }
    if (pick == staging_.size()) {
        staging_.emplace_back();
    }
    Staging &b = staging_[pick];
    if (b.capacity < bytes) {
        b.bytes = std::make_unique_for_overwrite<std::byte[]>(bytes);
        b.capacity = bytes;
    }
    std::byte *to = b.bytes.get();
    for (unsigned i = 0; i < iovcnt; ++i) {
        std::memcpy(to, iov[i].base, iov[i].length);
        to += iov[i].length;
    }
    ++stage_->sends;
    stage_->bytes += bytes;
    b.busy = true;
    new (c->priv) StagedSlot{nullptr, this, static_cast<std::uint32_t>(pick)};
    const exec::Iov whole{b.bytes.get(), bytes};
    const ucs_status_t st = ucp_send(peer, tag, &whole, 1, staged_send_done, c);
    if (st != UCS_INPROGRESS) {
        b.busy = false; // done inline, or never posted
    }
    return st;
}

ucs_status_t UcpFabric::recv(int peer, std::uint64_t tag, const exec::Iov *iov,
                             unsigned iovcnt, Completion *c)
{
    if (one_copy(peer, iov, iovcnt)) {
        return cma_recv(peer, tag, iov, iovcnt, c);
    }
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

// The sender: the ack's receive (unless the data follows), then the
// descriptor, then (where it follows) the data; done when every part is.
ucs_status_t UcpFabric::cma_send(int peer, std::uint64_t tag,
                                 const exec::Iov *iov, unsigned iovcnt,
                                 Completion *c)
{
    CmaSlot *s = new_slot(c, this, peer, tag, iov, iovcnt);
    const auto r = static_cast<std::size_t>(peer);
    const bool follows = iovcnt > kCmaMaxIov || cma_broken_[r];
    CmaDesc &d = s->desc;
    d.magic = kCmaMagic;
    d.count = follows ? 0 : iovcnt;
    d.pid = pid_;
    d.pid_ns = pid_ns_;
    d.bytes = total_bytes(iov, iovcnt);
    for (unsigned i = 0; i < d.count; ++i) {
        d.iov[i] = iov[i];
    }
    if (!follows) {
        post_own(worker_, s, &s->ack, sizeof(s->ack),
                 exec::answer_tag(tag, peer),
                 step_recv_done<&UcpFabric::cma_on_ack>, c);
        if (s->status != UCS_OK) {
            return s->status;
        }
    }
    cma_send_own(c, &d, kDescHeader + d.count * sizeof(exec::Iov), tag);
    if (s->status != UCS_OK && s->req != nullptr) {
        ucp_request_cancel(worker_, s->req); // its callback ends it
    }
    if (follows && s->status == UCS_OK) {
        ++cma_->forwarded;
        cma_send_data(c);
    }
    return --s->pending == 0 ? s->status : UCS_INPROGRESS;
}

// One part: `len` bytes at `buf` (in the slot: the descriptor, the ack)
// to the slot's peer on `tag`.
void UcpFabric::cma_send_own(Completion *c, const void *buf, std::size_t len,
                             std::uint64_t tag)
{
    CmaSlot *s = slot_of(c);
    ucp_request_param_t p;
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                     UCP_OP_ATTR_FIELD_DATATYPE;
    p.cb.send = part_send_done;
    p.user_data = c;
    p.datatype = ucp_dt_make_contig(1);
    cma_posted(s, ucp_tag_send_nbx((*eps_)[static_cast<std::size_t>(s->peer)],
                                   buf, len, tag, &p));
}

// A part's send posted: an error is the slot's, a request one more part.
void UcpFabric::cma_posted(CmaSlot *s, void *req)
{
    if (UCS_PTR_IS_ERR(req)) {
        s->status = UCS_PTR_STATUS(req);
    } else if (req != nullptr) {
        ++s->pending;
    }
}

// The bytes themselves through UCP, as a plain send would go.
void UcpFabric::cma_send_data(Completion *c)
{
    CmaSlot *s = slot_of(c);
    ucp_request_param_t p;
    p.op_attr_mask = send_attr(s->peer, total_bytes(s->iov, s->iovcnt));
    p.cb.send = part_send_done;
    p.user_data = c;
    void *buf;
    std::size_t count;
    describe(s->iov, s->iovcnt, &p, &buf, &count);
    cma_posted(s, ucp_tag_send_nbx((*eps_)[static_cast<std::size_t>(s->peer)],
                                   buf, count, s->tag, &p));
}

void UcpFabric::cma_on_ack(Completion *c, std::size_t length)
{
    CmaSlot *s = slot_of(c);
    if (length != sizeof(s->ack)) {
        slot_error(s, UCS_ERR_MESSAGE_TRUNCATED);
        return;
    }
    if (s->ack == kAckRead) {
        return;
    }
    // The receiver could not read this process's memory: send these bytes,
    // and tell it that later ones follow.
    cma_broken_[static_cast<std::size_t>(s->peer)] = true;
    cma_send_data(c);
}

ucs_status_t UcpFabric::cma_recv(int peer, std::uint64_t tag,
                                 const exec::Iov *iov, unsigned iovcnt,
                                 Completion *c)
{
    CmaSlot *s = new_slot(c, this, peer, tag, iov, iovcnt);
    post_own(worker_, s, &s->desc, sizeof(s->desc), tag,
             step_recv_done<&UcpFabric::cma_on_desc>, c);
    // Done here where descriptor and bytes were waiting.
    return --s->pending == 0 ? s->status : UCS_INPROGRESS;
}

// The receiver has the descriptor: read the bytes and ack, or post the
// receive of the bytes that follow.
void UcpFabric::cma_on_desc(Completion *c, std::size_t length)
{
    CmaSlot *s = slot_of(c);
    const CmaDesc &d = s->desc;
    const std::size_t want = total_bytes(s->iov, s->iovcnt);
    if (length < kDescHeader || d.magic != kCmaMagic || d.count > kCmaMaxIov ||
        length != kDescHeader + d.count * sizeof(exec::Iov) ||
        d.bytes != want) {
        log_error("a one-copy message from rank %d does not match its "
                  "receive of %zu bytes (%zu bytes came, not a descriptor "
                  "of as many)",
                  s->peer, want, length);
        slot_error(s, UCS_ERR_MESSAGE_TRUNCATED);
        return;
    }
    const bool read = d.count > 0 && cma_read(s, s->peer);
    if (!read) {
        ucp_request_param_t p = own_recv_param(part_recv_done, c);
        void *buf;
        std::size_t count;
        describe(s->iov, s->iovcnt, &p, &buf, &count);
        post_part(worker_, s, buf, count, s->tag, &p);
        if (s->status != UCS_OK) {
            return;
        }
    }
    if (d.count == 0) {
        return; // the data follows unasked
    }
    s->ack = read ? kAckRead : kAckSend;
    cma_send_own(c, &s->ack, sizeof(s->ack), exec::answer_tag(s->tag, rank_));
}

// Piece by piece of both lists: each call reads what the current local and
// remote pieces have in common (one call for one piece each).
bool UcpFabric::cma_read(CmaSlot *s, int peer)
{
    const CmaDesc &d = s->desc;
    const char *why = nullptr;
    int err = 0;
    if (pid_ns_ == 0 || d.pid_ns != pid_ns_) {
        why = "it runs in another pid namespace";
    } else {
        unsigned li = 0, ri = 0;
        std::size_t loff = 0, roff = 0;
        while (li < s->iovcnt && ri < d.count) {
            const exec::Iov &l = s->iov[li];
            const exec::Iov &r = d.iov[ri];
            if (loff == l.length) {
                ++li, loff = 0;
                continue;
            }
            if (roff == r.length) {
                ++ri, roff = 0;
                continue;
            }
            const std::size_t n = std::min(l.length - loff, r.length - roff);
            const iovec lv{static_cast<char *>(l.base) + loff, n};
            const iovec rv{static_cast<char *>(r.base) + roff, n};
            const ssize_t got = cma_->reader(d.pid, &lv, 1, &rv, 1, 0);
            if (got <= 0) {
                err = got < 0 ? errno : EFAULT;
                why = std::strerror(err);
                break;
            }
            loff += static_cast<std::size_t>(got);
            roff += static_cast<std::size_t>(got);
        }
    }
    if (why != nullptr) {
        ++cma_->failed;
        if (!warned_) {
            warned_ = true;
            log_warn("cannot read the memory of rank %d (pid %d): %s; its "
                     "messages of %llu bytes and more go through UCP",
                     peer, d.pid, why,
                     static_cast<unsigned long long>(cma_thresh_));
        }
        return false;
    }
    ++cma_->reads;
    cma_->read_bytes += d.bytes;
    return true;
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
