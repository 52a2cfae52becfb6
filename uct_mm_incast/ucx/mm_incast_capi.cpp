// SPDX-License-Identifier: BSD-3-Clause
// extern "C" entries over the C++ core: the public group API
// (uct_mm_incast.h) and the FIFO bridge for the C glue. Each runs inside
// one guard that turns a stray exception into a status and one log line;
// bad input is logged once here, where it is classified.
#include "mm_incast_bridge.h"

#include "fifo.h"
#include "group.h"
#include "ucx_glue.h"

#include <ucs/debug/log_def.h>

#include <new>

#define UCT_MM_INCAST_API extern "C"

using namespace uct_mm_incast;

struct uct_mm_incast_group {
    std::unique_ptr<Group> group;
};
struct uct_mm_incast_fifo_rx {
    FifoReceiver fifo;
};
struct uct_mm_incast_fifo_tx {
    FifoSender fifo;
};

namespace {

template <typename F> ucs_status_t guarded(const char *where, F &&f) noexcept
{
    try {
        return f();
    } catch (const std::bad_alloc &) {
        ucs_error("mm_incast: %s: out of memory", where);
        return UCS_ERR_NO_MEMORY;
    } catch (...) {
        ucs_error("mm_incast: %s: unexpected exception", where);
        return UCS_ERR_NO_MESSAGE;
    }
}

ucs_status_t to_config(const uct_mm_incast_group_params_t *p, GroupConfig *c)
{
    const uint64_t required =
        UCT_MM_INCAST_GROUP_FIELD_NAME | UCT_MM_INCAST_GROUP_FIELD_GROUP_SIZE |
        UCT_MM_INCAST_GROUP_FIELD_MEMBER_INDEX | UCT_MM_INCAST_GROUP_FIELD_ROOT;
    if ((p == nullptr) || ((p->field_mask & required) != required) ||
        (p->name == nullptr)) {
        ucs_error("mm_incast: group params need name, group_size, "
                  "member_index and root");
        return UCS_ERR_INVALID_PARAM;
    }
    c->name = p->name;
    c->group_size = p->group_size;
    c->member = p->member_index;
    c->root = p->root;
    int mode = UCT_MM_INCAST_MODE_AUTO;
    if ((p->field_mask & UCT_MM_INCAST_GROUP_FIELD_IFACE) &&
        !uct_mm_incast_iface_group_defaults(p->iface, &mode, &c->elements,
                                            &c->max_bytes)) {
        ucs_error("mm_incast: params.iface is not an mm_incast iface");
        return UCS_ERR_INVALID_PARAM;
    }
    c->mode = static_cast<uct_mm_incast_mode_t>(mode);
    const uint64_t f = p->field_mask;
    if (f & UCT_MM_INCAST_GROUP_FIELD_MODE)
        c->mode = p->mode;
    if (f & UCT_MM_INCAST_GROUP_FIELD_OP)
        c->op = p->op;
    if (f & UCT_MM_INCAST_GROUP_FIELD_DTYPE)
        c->dtype = p->dtype;
    if (f & UCT_MM_INCAST_GROUP_FIELD_MAX_BYTES)
        c->max_bytes = p->max_bytes;
    if (f & UCT_MM_INCAST_GROUP_FIELD_ELEMENTS)
        c->elements = p->elements;
    if (f & UCT_MM_INCAST_GROUP_FIELD_TIMEOUT)
        c->timeout_sec = p->timeout_sec;
    return UCS_OK;
}

} // namespace

UCT_MM_INCAST_API ucs_status_t
uct_mm_incast_group_create(const uct_mm_incast_group_params_t *params,
                           uct_mm_incast_group_h *group_p) noexcept
{
    return guarded("group_create", [&] {
        GroupConfig cfg;
        ucs_status_t status = to_config(params, &cfg);
        if (status != UCS_OK) {
            return status;
        }
        const char *why = nullptr;
        status = check_config(cfg, &why);
        if (status != UCS_OK) {
            ucs_error("mm_incast: group %s: %s (%s)", cfg.name.c_str(), why,
                      ucs_status_string(status));
            return status;
        }
        auto handle = std::make_unique<uct_mm_incast_group>();
        status = Group::create(cfg, &handle->group);
        if (status != UCS_OK) {
            ucs_error("mm_incast: group %s member %u: %s", cfg.name.c_str(),
                      cfg.member, ucs_status_string(status));
            return status;
        }
        *group_p = handle.release();
        return UCS_OK;
    });
}

UCT_MM_INCAST_API void
uct_mm_incast_group_destroy(uct_mm_incast_group_h group) noexcept
{
    delete group;
}

UCT_MM_INCAST_API ucs_status_t uct_mm_incast_group_query(
    uct_mm_incast_group_h group, uct_mm_incast_group_attr_t *attr) noexcept
{
    attr->mode = group->group->mode();
    attr->max_bytes = group->group->max_bytes();
    attr->elements = group->group->elements();
    attr->num_senders = group->group->num_senders();
    return UCS_OK;
}

UCT_MM_INCAST_API ucs_status_t uct_mm_incast_group_send(
    uct_mm_incast_group_h group, const void *buffer, size_t length) noexcept
{
    const ucs_status_t status = group->group->send(buffer, length);
    if ((status != UCS_OK) && (status != UCS_ERR_NO_RESOURCE)) {
        ucs_error("mm_incast: send of %zu bytes: %s", length,
                  ucs_status_string(status));
    }
    return status;
}

UCT_MM_INCAST_API ucs_status_t
uct_mm_incast_group_recv(uct_mm_incast_group_h group, void *buffer,
                         size_t capacity, size_t *length_p) noexcept
{
    const ucs_status_t status = group->group->recv(buffer, capacity, length_p);
    if (UCS_STATUS_IS_ERR(status)) {
        ucs_error("mm_incast: recv: %s", ucs_status_string(status));
    }
    return status;
}

UCT_MM_INCAST_API int
uct_mm_incast_atomic_supported(uct_mm_incast_op_t op,
                               uct_mm_incast_dtype_t dtype) noexcept
{
    return atomic_reduce_fn(op, dtype) != nullptr;
}

UCT_MM_INCAST_API const char *
uct_mm_incast_mode_name(uct_mm_incast_mode_t mode) noexcept
{
    static const char *const names[] = {"auto", "batched", "centralized",
                                        "locked", "atomic"};
    return ((mode >= 0) && (mode < UCT_MM_INCAST_MODE_LAST)) ? names[mode]
                                                             : "invalid";
}

// ---- FIFO bridge (internal, hidden) ----

extern "C" ucs_status_t
uct_mm_incast_fifo_rx_create(unsigned elements, size_t max_payload,
                             uct_mm_incast_fifo_rx_t **rx_p) noexcept
{
    return guarded("fifo_rx_create", [&] {
        auto rx = std::make_unique<uct_mm_incast_fifo_rx>();
        ucs_status_t status = rx->fifo.init(elements, max_payload);
        if (status == UCS_OK) {
            *rx_p = rx.release();
        }
        return status;
    });
}

extern "C" void
uct_mm_incast_fifo_rx_destroy(uct_mm_incast_fifo_rx_t *rx) noexcept
{
    delete rx;
}

extern "C" int
uct_mm_incast_fifo_rx_fd(const uct_mm_incast_fifo_rx_t *rx) noexcept
{
    return rx->fifo.fd();
}

extern "C" size_t
uct_mm_incast_fifo_rx_bytes(const uct_mm_incast_fifo_rx_t *rx) noexcept
{
    return rx->fifo.bytes();
}

extern "C" unsigned uct_mm_incast_fifo_rx_poll(uct_mm_incast_fifo_rx_t *rx,
                                               unsigned max,
                                               uct_mm_incast_fifo_cb_t cb,
                                               void *arg) noexcept
{
    return rx->fifo.poll(max, [&](uint8_t id, std::byte *data, uint32_t len) {
        cb(arg, id, data, len);
    });
}

extern "C" ucs_status_t
uct_mm_incast_fifo_tx_create(int pid, int fd, size_t bytes,
                             uct_mm_incast_fifo_tx_t **tx_p) noexcept
{
    return guarded("fifo_tx_create", [&] {
        auto tx = std::make_unique<uct_mm_incast_fifo_tx>();
        ucs_status_t status = tx->fifo.attach(pid, fd, bytes);
        if (status == UCS_OK) {
            *tx_p = tx.release();
        }
        return status;
    });
}

extern "C" void
uct_mm_incast_fifo_tx_destroy(uct_mm_incast_fifo_tx_t *tx) noexcept
{
    delete tx;
}

extern "C" size_t
uct_mm_incast_fifo_tx_max_payload(const uct_mm_incast_fifo_tx_t *tx) noexcept
{
    return tx->fifo.max_payload();
}

extern "C" void *uct_mm_incast_fifo_tx_claim(uct_mm_incast_fifo_tx_t *tx,
                                             uint64_t *index_p) noexcept
{
    return tx->fifo.claim(index_p);
}

extern "C" void uct_mm_incast_fifo_tx_publish(uct_mm_incast_fifo_tx_t *tx,
                                              uint64_t index, uint8_t am_id,
                                              uint32_t length) noexcept
{
    tx->fifo.publish(index, am_id, length);
}

extern "C" int uct_mm_incast_fifo_tx_full(uct_mm_incast_fifo_tx_t *tx) noexcept
{
    return tx->fifo.full();
}
