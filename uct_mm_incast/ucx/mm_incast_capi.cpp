// SPDX-License-Identifier: BSD-3-Clause
// extern "C" bridge from the C glue to the C++ core: the receive FIFO
// (consumer and producer side) and the iface's secret. Each entry runs
// inside one guard that turns a stray exception into a status and one log
// line.
#include "mm_incast_bridge.h"

#include "fifo.h"
#include "ucx_glue.h"

#include "uct_mm_common/names.h"

#include <ucs/debug/log_def.h>

#include <memory>
#include <new>

using namespace uct_mm_incast;

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

} // namespace

extern "C" void uct_mm_incast_new_secret(uint64_t secret[2]) noexcept
{
    const uct_mm_common::Secret s = uct_mm_common::random_secret();
    secret[0] = s.k0;
    secret[1] = s.k1;
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
