// SPDX-License-Identifier: BSD-3-Clause
// extern "C" bridge from the C glue to the C++ core: the receive FIFO
// (consumer and producer side) and the iface's secret. Each entry runs
// inside one guard that turns a stray exception into a status and one log
// line.
#include "mm_incast_bridge.h"

#include "ucx_glue.h"

#include "uct_mm_common/channel.h"
#include "uct_mm_common/fifo_segment.h"
#include "uct_mm_common/names.h"

#include <ucs/debug/log_def.h>

#include <memory>
#include <new>

using uct_mm_common::Channel;
using uct_mm_common::ChannelConfig;
using uct_mm_common::FifoSegment;
using uct_mm_common::Status;
using uct_mm_common::to_ucs_status;

struct uct_mm_incast_fifo_rx {
    FifoSegment fifo;
    Channel ch;                   ///< reader of `fifo`
    uct_mm_common::Doorbell bell; ///< rung by senders while armed
};
struct uct_mm_incast_fifo_tx {
    FifoSegment fifo; ///< the peer's FIFO (this process produces into it)
    Channel ch;
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

// mm_incast sends no CMA messages: a CMA slot in its FIFO (a corrupted
// peer) fails the reader instead of being pulled.
ChannelConfig channel_config(unsigned timeout_ms)
{
    ChannelConfig cfg;
    cfg.name = "mm_incast";
    cfg.timeout_ms = timeout_ms;
    cfg.max_zcopy = 0;
    cfg.max_iov = 0;
    return cfg;
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
uct_mm_incast_fifo_rx_create(unsigned slots, unsigned slot_bytes,
                             unsigned timeout_ms,
                             uct_mm_incast_fifo_rx_t **rx_p) noexcept
{
    return guarded("fifo_rx_create", [&] {
        auto rx = std::make_unique<uct_mm_incast_fifo_rx>();
        const Status st = FifoSegment::create(slots, slot_bytes, &rx->fifo);
        if (st != Status::kOk) {
            return to_ucs_status(st);
        }
        rx->ch.init(rx->fifo.ring(), channel_config(timeout_ms));
        // Without a doorbell the iface advertises no events (always polled).
        (void)rx->bell.open(rx->fifo.bell());
        *rx_p = rx.release();
        return UCS_OK;
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

extern "C" int
uct_mm_incast_fifo_rx_event_fd(const uct_mm_incast_fifo_rx_t *rx) noexcept
{
    return rx->bell.fd();
}

extern "C" int uct_mm_incast_fifo_rx_arm(uct_mm_incast_fifo_rx_t *rx) noexcept
{
    rx->bell.drain();
    return rx->ch.arm() ? 1 : 0;
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
    return rx->ch.poll(max, cb, arg);
}

extern "C" ucs_status_t
uct_mm_incast_fifo_tx_create(int pid, int fd, size_t bytes, unsigned timeout_ms,
                             uct_mm_incast_fifo_tx_t **tx_p) noexcept
{
    return guarded("fifo_tx_create", [&] {
        auto tx = std::make_unique<uct_mm_incast_fifo_tx>();
        const Status st = FifoSegment::attach(pid, fd, bytes, &tx->fifo);
        if (st != Status::kOk) {
            return to_ucs_status(st);
        }
        tx->ch.init(tx->fifo.ring(), channel_config(timeout_ms));
        tx->ch.set_bell(tx->fifo.bell());
        *tx_p = tx.release();
        return UCS_OK;
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
    return tx->ch.max_inline();
}

extern "C" ucs_status_t
uct_mm_incast_fifo_tx_send(uct_mm_incast_fifo_tx_t *tx, uint8_t am_id,
                           uct_mm_incast_fifo_pack_t pack, void *arg,
                           size_t *length_p) noexcept
{
    return to_ucs_status(tx->ch.send_packed(
        am_id, [&](std::uint8_t *dest) { return pack(dest, arg); }, length_p));
}

extern "C" ucs_status_t
uct_mm_incast_fifo_tx_state(const uct_mm_incast_fifo_tx_t *tx) noexcept
{
    return to_ucs_status(tx->ch.state());
}

extern "C" int uct_mm_incast_fifo_tx_full(uct_mm_incast_fifo_tx_t *tx) noexcept
{
    return !tx->ch.ring().has_space();
}
