// SPDX-License-Identifier: BSD-3-Clause
// uct_group_h over GroupCore: posts, completions from a worker progress
// callback that exists only while the group has work.
#include "group_glue.h"

#include "ucx_glue.h"

extern "C" {
#include <ucs/async/async.h>
#include <ucs/debug/log_def.h>
#include <uct/base/uct_iface.h>
}

#include <cstring>
#include <new>

namespace uct_mm_common {
namespace {

struct GroupHandle {
    uct_group super; ///< must stay first: uct_group_h points here
    const char *tl = nullptr;
    std::unique_ptr<GroupCore> core;
    uct_worker_h worker = nullptr;
    uct_worker_cb_id_t cb_id = UCS_CALLBACKQ_ID_NULL;
    bool in_progress = false; ///< progress_cb is on the stack
    bool destroyed = false;   ///< destroyed from a completion callback
    unsigned idle_calls = 0;  ///< progress calls in a row that found no work
};

GroupHandle *to_handle(uct_group_h group)
{
    return reinterpret_cast<GroupHandle *>(group);
}

void complete(void *arg, void *cookie, Status st)
{
    // A group destroyed from an earlier completion drops the rest.
    if (cookie != nullptr && !static_cast<GroupHandle *>(arg)->destroyed) {
        uct_invoke_completion(static_cast<uct_completion_t *>(cookie),
                              to_ucs_status(st));
    }
}

void disarm(GroupHandle *h)
{
    uct_worker_progress_unregister_safe(h->worker, &h->cb_id);
}

unsigned progress_cb(void *arg);

int is_ours(const ucs_callbackq_elem_t *elem, void *h)
{
    return elem->cb == progress_cb && elem->arg == h;
}

// Before h is freed: a fast-path callback removed by _unregister_safe
// stays in the worker's array, and is called, until the queue's next
// purge; remove_if purges at once (also one an idle disarm left there).
void disarm_for_good(GroupHandle *h)
{
    disarm(h);
    auto *w = ucs_derived_of(h->worker, uct_priv_worker_t);
    UCS_ASYNC_BLOCK(w->async);
    ucs_callbackq_remove_if(&w->super.progress_q, is_ours, h);
    UCS_ASYNC_UNBLOCK(w->async);
}

unsigned progress_cb(void *arg)
{
    auto *h = static_cast<GroupHandle *>(arg);
    h->in_progress = true;
    const unsigned n = h->core->progress(complete, h);
    h->in_progress = false;
    if (h->destroyed) {
        disarm_for_good(h);
        delete h; // destroyed by a completion callback: now it is safe
    } else if (n != 0 || h->core->busy()) {
        h->idle_calls = 0;
    } else if (++h->idle_calls >= kIdleProgressCalls) {
        disarm(h); // idle: no cost in the worker's progress until a post
    }
    return n;
}

void arm(GroupHandle *h)
{
    // Adds the callback only when none is registered (cb_id NULL). FAST:
    // UCX moves it out of the slow path, whose every call takes the queue's
    // lock; it stays while messages follow each other (kIdleProgressCalls),
    // so a message costs no registration (N=2 8 B bcast 0.30-0.37 us ->
    // 0.25-0.30, perftest/mm/RESULTS.md).
    h->idle_calls = 0;
    uct_worker_progress_register_safe(h->worker, progress_cb, h,
                                      UCS_CALLBACKQ_FLAG_FAST, &h->cb_id);
}

Message to_message(const uct_group_msg_t *m)
{
    Message msg;
    msg.coll = static_cast<Coll>(raw(m->coll)); // checked by the caller
    msg.root = m->root;
    msg.op = op_of(m->op);
    msg.dtype = dtype_of(m->dtype);
    msg.length = m->length;
    msg.buffer = m->buffer;
    msg.member_buffers = m->member_buffers;
    msg.accumulate = (m->flags & UCT_GROUP_MSG_FLAG_ACCUMULATE) != 0;
    msg.no_cma = (m->flags & UCT_GROUP_MSG_FLAG_NO_CMA) != 0;
    msg.operand = m->operand;
    msg.tag = m->tag;
    return msg;
}

ucs_status_t post(uct_group_h group, const uct_group_msg_t *m,
                  uct_completion_t *comp, bool send)
{
    GroupHandle *h = to_handle(group);
    if (m == nullptr) {
        ucs_error("%s: group post without a message", h->tl);
        return UCS_ERR_INVALID_PARAM;
    }
    const int coll = raw(m->coll);
    if (coll < 0 || coll > UCT_GROUP_COLL_REDUCE ||
        (m->flags & ~unsigned{UCT_GROUP_MSG_FLAG_ACCUMULATE |
                              UCT_GROUP_MSG_FLAG_NO_CMA}) != 0) {
        ucs_error("%s: group message kind %d or flags %#x unknown", h->tl, coll,
                  m->flags);
        return UCS_ERR_INVALID_PARAM;
    }
    const Message msg = to_message(m);
    const char *why = "";
    const Status chk = h->core->check(send, msg, &why);
    if (chk != Status::kOk) {
        ucs_error("%s: group %s of %zu bytes (root %u): %s", h->tl,
                  send ? "send" : "recv", msg.length, msg.root, why);
        return to_ucs_status(chk);
    }
    const Status st = h->core->post(send, msg, comp);
    if (st == Status::kInProgress || h->core->busy()) {
        arm(h);
    }
    return to_ucs_status(st);
}

ucs_status_t group_send(uct_group_h group, const uct_group_msg_t *msg,
                        uct_completion_t *comp) noexcept
{
    UCT_MM_GUARD("uct_group_send", post(group, msg, comp, true));
}

ucs_status_t group_recv(uct_group_h group, const uct_group_msg_t *msg,
                        uct_completion_t *comp) noexcept
{
    UCT_MM_GUARD("uct_group_recv", post(group, msg, comp, false));
}

ucs_status_t group_status(uct_group_h group) noexcept
{
    return to_ucs_status(to_handle(group)->core->state());
}

void group_destroy(uct_group_h group) noexcept
{
    GroupHandle *h = to_handle(group);
    if (h->in_progress) {
        h->destroyed = true; // progress_cb deletes it when it unwinds
        return;
    }
    disarm_for_good(h);
    delete h; // the core leaves its segment
}

const uct_group_ops_t g_ops = {group_send, group_recv, group_status,
                               group_destroy};

} // namespace

ucs_status_t check_group_params(const char *tl, const uct_group_params_t *p,
                                unsigned max_group_size,
                                uct_group_h *group_p) noexcept
{
    const uint64_t required =
        UCT_GROUP_PARAM_FIELD_KEY | UCT_GROUP_PARAM_FIELD_MEMBER_INDEX |
        UCT_GROUP_PARAM_FIELD_GROUP_SIZE | UCT_GROUP_PARAM_FIELD_MEMBER_ADDRS;
    if (p == nullptr || group_p == nullptr ||
        (p->field_mask & required) != required || p->member_addrs == nullptr) {
        ucs_error("%s: group_create needs every group parameter", tl);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->group_size == 0 || p->group_size > max_group_size) {
        ucs_error("%s: group of %u members: the limit is %u", tl, p->group_size,
                  max_group_size);
        return p->group_size == 0 ? UCS_ERR_INVALID_PARAM
                                  : UCS_ERR_EXCEEDS_LIMIT;
    }
    if (p->member_index >= p->group_size) {
        ucs_error("%s: member %u of a group of %u", tl, p->member_index,
                  p->group_size);
        return UCS_ERR_INVALID_PARAM;
    }
    for (unsigned i = 0; i < p->group_size; ++i) {
        if (p->member_addrs[i] == nullptr) {
            ucs_error("%s: no iface address for member %u", tl, i);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    return UCS_OK;
}

ucs_status_t wrap_group(const char *tl, std::unique_ptr<GroupCore> core,
                        uct_worker_h worker, uct_group_h *group_p) noexcept
{
    auto *h = new (std::nothrow) GroupHandle();
    if (h == nullptr) {
        ucs_error("%s: no memory for a group", tl);
        return UCS_ERR_NO_MEMORY;
    }
    h->super.ops = &g_ops;
    h->tl = tl;
    h->core = std::move(core);
    h->worker = worker;
    if (h->core->busy()) {
        arm(h); // connecting: members attach during progress
    }
    *group_p = &h->super;
    return UCS_OK;
}

GroupCore *core_of(uct_group_h group) noexcept
{
    if (group == nullptr || group->ops != &g_ops) {
        return nullptr;
    }
    return to_handle(group)->core.get();
}

void fill_group_attr(const GroupLimits &limits, uct_group_attr_t *attr) noexcept
{
    attr->cap_flags = limits.caps;
    attr->max_group_size = limits.max_group_size;
    attr->max_outstanding = limits.max_outstanding;
    attr->max_length = limits.max_length;
    attr->seg_length = limits.seg_length;
}

} // namespace uct_mm_common
