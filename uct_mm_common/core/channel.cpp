// SPDX-License-Identifier: BSD-3-Clause
// Channel: sends, CMA pull and completion, delivery, failure detection.
#include "uct_mm_common/channel.h"

#include "uct_mm_common/log.h"

#include <cerrno>
#include <sys/uio.h>

namespace uct_mm_common {

void Channel::init(const Ring &ring, const ChannelConfig &cfg)
{
    ring_ = ring;
    cfg_ = cfg;
    state_ = Status::kOk;
    refused_ = false;
    last_activity_ns_ = 0;
    next_check_ns_ = 0;
}

std::size_t Channel::max_cma_header() const noexcept
{
    const std::size_t fixed =
        sizeof(CmaDescriptor) + cfg_.max_iov * sizeof(RemoteIov);
    return max_inline() > fixed ? max_inline() - fixed : 0;
}

void Channel::fail(Status st, int member) noexcept
{
    if (state_ != Status::kOk) {
        return;
    }
    state_ = st;
    ring_.leave(); // reads nothing more: senders may complete (readers_done)
    if (member >= 0) {
        ring_.mark_failed(member);
        log(LogLevel::kError, "%s: member %d of the p2p FIFO failed (%s)",
            cfg_.name, member, status_name(st));
    } else {
        log(LogLevel::kError,
            "%s: p2p FIFO stalled for %u ms with members never attached",
            cfg_.name, cfg_.timeout_ms);
    }
}

Status Channel::on_full() noexcept
{
    check_health();
    return state_ != Status::kOk ? state_ : Status::kNoResource;
}

Status Channel::send_short(std::uint8_t am_id, std::uint64_t header,
                           const void *data, std::size_t length) noexcept
{
    std::size_t sent;
    return send_packed(
        am_id,
        [&](std::uint8_t *dest) {
            std::memcpy(dest, &header, sizeof(header));
            if (length != 0) {
                std::memcpy(dest + sizeof(header), data, length);
            }
            return sizeof(header) + length;
        },
        &sent);
}

Status Channel::send_cma(std::uint8_t am_id, const void *header,
                         std::uint32_t hdr_bytes, const RemoteIov *iov,
                         std::uint32_t iovcnt, void *cookie) noexcept
{
    if (state_ != Status::kOk) {
        return state_;
    }
    std::uint64_t pos;
    if (ring_.claim(&pos) != Status::kOk) {
        return on_full();
    }
    std::uint8_t *p = ring_.payload(pos);
    CmaDescriptor desc{};
    desc.pid = static_cast<std::int32_t>(getpid());
    desc.iovcnt = iovcnt;
    desc.hdr_bytes = hdr_bytes;
    for (std::uint32_t i = 0; i < iovcnt; ++i) {
        desc.total += iov[i].length;
    }
    std::memcpy(p, &desc, sizeof(desc));
    std::memcpy(p + sizeof(desc), iov, iovcnt * sizeof(RemoteIov));
    if (hdr_bytes != 0) {
        std::memcpy(p + sizeof(desc) + iovcnt * sizeof(RemoteIov), header,
                    hdr_bytes);
    }
    const std::size_t used =
        sizeof(desc) + iovcnt * sizeof(RemoteIov) + hdr_bytes;
    try {
        cma_.push_back({pos, cookie});
    } catch (...) {
        // Published or not, the slot must be filled: send it as empty.
        publish(pos, 0, am_id, SlotKind::kInline);
        return Status::kNoMemory;
    }
    publish(pos, static_cast<std::uint32_t>(used), am_id, SlotKind::kCma);
    last_activity_ns_ = 0;
    return Status::kOk;
}

Status Channel::skip_oversized(std::uint64_t pos, std::uint8_t am_id,
                               std::size_t length) noexcept
{
    publish(pos, 0, am_id, SlotKind::kSkip);
    log(LogLevel::kError, "%s: packed %zu bytes, over the slot's %zu",
        cfg_.name, length, max_inline());
    return Status::kExceedsLimit;
}

bool Channel::drop_sender_message(std::int32_t pid, Status st) noexcept
{
    const std::uint64_t start =
        pid > 0 ? process_start_time(static_cast<pid_t>(pid)) : 0;
    if (start == 0) {
        log(LogLevel::kWarn,
            "%s: sender pid %d is gone: its zero-copy message is dropped, the "
            "FIFO goes on",
            cfg_.name, pid);
        return true;
    }
    if (!ring_.mark_sender_failed(ProcessId{pid, 0, start})) {
        return false;
    }
    log(LogLevel::kError,
        "%s: a zero-copy message of pid %d cannot be read (%s): that sender "
        "fails, the FIFO goes on",
        cfg_.name, pid, status_name(st));
    return true;
}

unsigned Channel::progress_completions(CompleteFn fn, void *arg) noexcept
{
    unsigned done = 0;
    while (!cma_.empty()) {
        const PendingCma front = cma_.front();
        const bool passed = ring_.all_passed(front.pos, ring_.my_index());
        if (passed && state_ == Status::kOk && ring_.my_index() == kNoOrigin &&
            ring_.sender_failed()) {
            // A receiver could not read one of ours (and logged why): which
            // one is not known, so every send from now on fails.
            state_ = Status::kIoError;
            refused_ = true;
            log(LogLevel::kError,
                "%s: the receiver refused a zero-copy message of this "
                "process: its sends to it fail",
                cfg_.name);
        }
        if (!passed && state_ == Status::kOk) {
            check_health();
            if (state_ == Status::kOk) {
                break;
            }
        }
        if (!passed) {
            // Failed: the buffer is the caller's again only once no live
            // member can still copy from it (a failed member leaves; a
            // live one may be in process_vm_readv now). /proc once a ms.
            const std::uint64_t now = now_ns();
            if (now < next_readers_check_ns_) {
                break;
            }
            next_readers_check_ns_ = now + 1000000;
            if (!ring_.readers_done(front.pos, ring_.my_index())) {
                break;
            }
        }
        cma_.pop_front();
        fn(arg, front.cookie, passed && !refused_ ? Status::kOk : state_);
        last_activity_ns_ = 0;
        ++done;
    }
    return done;
}

// Every value of the descriptor is the producer's (shared memory): the
// iov array and the header must fit the slot, the iov lengths must add up
// to the total, and the total must be within this member's max_zcopy;
// kIoError (logged) otherwise, kPeerDead when the producer cannot be read.
Status Channel::pull_cma(const std::uint8_t *payload, std::size_t *length_p,
                         std::int32_t *pid_p) noexcept
{
    CmaDescriptor desc;
    std::memcpy(&desc, payload, sizeof(desc));
    *pid_p = desc.pid;
    const std::size_t room = ring_.geometry().payload_capacity() - sizeof(desc);
    const std::size_t iov_bytes = std::size_t{desc.iovcnt} * sizeof(RemoteIov);
    if (desc.iovcnt > kMaxPullIov || desc.iovcnt > room / sizeof(RemoteIov) ||
        desc.hdr_bytes > room - iov_bytes || desc.total > cfg_.max_zcopy) {
        log(LogLevel::kError,
            "%s: CMA descriptor of %u iovs, %u header bytes and %llu "
            "bytes does not fit its slot or max_zcopy",
            cfg_.name, desc.iovcnt, desc.hdr_bytes,
            static_cast<unsigned long long>(desc.total));
        return Status::kIoError;
    }
    RemoteIov riov[kMaxPullIov];
    const std::uint8_t *hdr = payload + sizeof(desc) + iov_bytes;
    std::size_t sum = 0;
    for (std::uint32_t i = 0; i < desc.iovcnt; ++i) {
        RemoteIov v;
        std::memcpy(&v, payload + sizeof(desc) + i * sizeof(RemoteIov),
                    sizeof(v));
        sum += v.length;
        if (v.length > desc.total || sum > desc.total) {
            log(LogLevel::kError,
                "%s: CMA descriptor iovs do not add up to its total",
                cfg_.name);
            return Status::kIoError;
        }
        riov[i] = v;
    }
    if (sum != desc.total) {
        log(LogLevel::kError,
            "%s: CMA descriptor iovs do not add up to its total", cfg_.name);
        return Status::kIoError;
    }
    const std::size_t need = desc.hdr_bytes + desc.total;
    if (bounce_.size() < need) {
        try {
            bounce_.resize(need);
        } catch (...) {
            return Status::kNoMemory;
        }
    }
    std::memcpy(bounce_.data(), hdr, desc.hdr_bytes);
    std::size_t copied = 0;
    for (std::uint32_t i = 0; i < desc.iovcnt; ++i) {
        std::size_t off = 0;
        while (off < riov[i].length) {
            iovec local{bounce_.data() + desc.hdr_bytes + copied,
                        riov[i].length - off};
            iovec remote{reinterpret_cast<void *>(riov[i].address + off),
                         riov[i].length - off};
            const ssize_t n =
                process_vm_readv(desc.pid, &local, 1, &remote, 1, 0);
            if (n <= 0) {
                log(LogLevel::kError,
                    "%s: process_vm_readv from pid %d failed: %s", cfg_.name,
                    desc.pid, std::strerror(errno));
                return Status::kPeerDead;
            }
            off += static_cast<std::size_t>(n);
            copied += static_cast<std::size_t>(n);
        }
    }
    *length_p = need;
    return Status::kOk;
}

unsigned Channel::deliver(unsigned max, DeliverFn fn, void *arg) noexcept
{
    unsigned n = 0;
    while (n < max && state_ == Status::kOk) {
        const SlotHeader *sh = ring_.peek();
        if (sh == nullptr) {
            break;
        }
        const std::uint8_t *payload = ring_.peek_payload();
        // The header is the producer's (shared memory): each field read
        // once, checked, and only the copy used.
        const SlotKind kind = __atomic_load_n(&sh->kind, __ATOMIC_RELAXED);
        const std::uint32_t slot_length =
            __atomic_load_n(&sh->length, __ATOMIC_RELAXED);
        const std::uint8_t am_id =
            __atomic_load_n(&sh->am_id, __ATOMIC_RELAXED);
        const std::uint16_t origin =
            __atomic_load_n(&sh->origin, __ATOMIC_RELAXED);
        if (kind == SlotKind::kCma) {
            std::size_t length = 0;
            std::int32_t pid = 0;
            const Status st = pull_cma(payload, &length, &pid);
            if (st == Status::kOk) {
                fn(arg, am_id, bounce_.data(), length);
            } else if (origin != kNoOrigin || !drop_sender_message(pid, st)) {
                fail(st, origin); // a member fails its group
                break;
            }
        } else if (kind == SlotKind::kSkip) {
            // A send that failed after its claim: nothing to deliver.
        } else if (kind != SlotKind::kInline ||
                   slot_length > ring_.geometry().payload_capacity()) {
            log(LogLevel::kError,
                "%s: a slot of kind %u and %u bytes does not fit the "
                "p2p FIFO",
                cfg_.name, static_cast<unsigned>(kind), slot_length);
            fail(Status::kIoError, origin);
            break;
        } else {
            if (g_deliver_probe != nullptr) {
                g_deliver_probe(const_cast<SlotHeader *>(sh));
            }
            // Delivered in place: the slot stays ours until consume().
            fn(arg, am_id, const_cast<std::uint8_t *>(payload), slot_length);
        }
        ring_.consume();
        ++n;
    }
    if (n != 0) {
        last_activity_ns_ = 0;
        idle_polls_ = 0;
    } else {
        idle();
    }
    return n;
}

void Channel::check_health() noexcept
{
    if (state_ != Status::kOk) {
        return;
    }
    const std::uint64_t now = now_ns();
    if (last_activity_ns_ == 0) {
        last_activity_ns_ = now;
    }
    if (now < next_check_ns_) {
        return;
    }
    const std::uint64_t timeout_ns = std::uint64_t{cfg_.timeout_ms} * 1000000;
    next_check_ns_ = now + timeout_ns / 4;
    const int failed = ring_.failed_member();
    if (failed >= 0) {
        state_ = Status::kPeerDead; // another member classified and logged
        ring_.leave();              // reads nothing more
        return;
    }
    if (now - last_activity_ns_ < timeout_ns) {
        return;
    }
    const int dead = ring_.find_dead_member();
    if (dead >= 0) {
        fail(Status::kPeerDead, dead);
    } else if (ring_.absent_members() != 0 &&
               now - last_activity_ns_ > 4 * timeout_ns) {
        fail(Status::kTimeout, -1);
    }
}

} // namespace uct_mm_common
