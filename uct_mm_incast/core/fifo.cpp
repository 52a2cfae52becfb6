// SPDX-License-Identifier: BSD-3-Clause
// Multi-producer, single-consumer receive FIFO in shared memory.
#include "fifo.h"

#include "uct_mm_common/log.h"

#include <new>
#include <unistd.h>

namespace uct_mm_incast {

std::size_t fifo_bytes(uint32_t elements, std::size_t max_payload)
{
    return kFifoElemsOffset +
           elements * align_up(sizeof(FifoElem) + max_payload, kCacheLine);
}

ucs_status_t FifoReceiver::init(uint32_t elements, std::size_t max_payload)
{
    if ((elements == 0) || (max_payload == 0) ||
        (max_payload > (std::size_t{1} << 24))) {
        return UCS_ERR_INVALID_PARAM;
    }
    ucs_status_t status = Mapping::create_anon(
        "mm_incast_fifo", fifo_bytes(elements, max_payload), &map_);
    if (status != UCS_OK) {
        return status;
    }
    base_ = static_cast<std::byte *>(map_.data());
    elements_ = elements;
    stride_ = align_up(sizeof(FifoElem) + max_payload, kCacheLine);
    auto *hdr = new (base_) FifoHeader{};
    hdr->elements = elements;
    hdr->elem_stride = stride_;
    hdr->max_payload = max_payload; // what the iface advertises
    new (base_ + kCacheLine) FifoHead{};
    tail_line_ = new (base_ + 2 * kCacheLine) FifoTail{};
    for (uint32_t i = 0; i < elements; ++i) {
        new (elem(i)) FifoElem{};
    }
    hdr->magic = kFifoMagic;
    return UCS_OK;
}

void FifoReceiver::drop_oversized(uint32_t length) const
{
    uct_mm_common::log(uct_mm_common::LogLevel::kError,
                       "mm_incast FIFO: dropped an element of %u bytes, over "
                       "its %zu",
                       length, stride_ - sizeof(FifoElem));
}

bool FifoReceiver::skip_dead_claim(uint64_t word)
{
    if (!watch_.should_skip(word, tail_, "mm_incast FIFO element")) {
        return false;
    }
    ++tail_;
    tail_line_->tail.store(tail_, std::memory_order_release);
    return true;
}

ucs_status_t FifoSender::attach(int pid, int fd, std::size_t bytes)
{
    ucs_status_t status = Mapping::open_peer(pid, fd, bytes, &map_);
    if (status != UCS_OK) {
        return status;
    }
    base_ = static_cast<std::byte *>(map_.data());
    auto *hdr = reinterpret_cast<FifoHeader *>(base_);
    // The receiver's header: the geometry must be what init() writes and
    // fit the mapping, or elem() would place claims outside it.
    if ((hdr->magic != kFifoMagic) || (hdr->elements == 0) ||
        (hdr->max_payload == 0) ||
        (hdr->max_payload > (std::size_t{1} << 24)) ||
        (hdr->elem_stride !=
         align_up(sizeof(FifoElem) + hdr->max_payload, kCacheLine)) ||
        (fifo_bytes(hdr->elements, hdr->max_payload) > bytes)) {
        map_.reset();
        return UCS_ERR_INVALID_ADDR;
    }
    elements_ = hdr->elements;
    stride_ = hdr->elem_stride;
    max_payload_ = hdr->max_payload;
    head_ = reinterpret_cast<FifoHead *>(base_ + kCacheLine);
    tail_line_ = reinterpret_cast<FifoTail *>(base_ + 2 * kCacheLine);
    self_pid_ = static_cast<int32_t>(getpid());
    return UCS_OK;
}

bool FifoSender::room_for(uint64_t index)
{
    if (index < cached_tail_ + elements_) {
        return true;
    }
    cached_tail_ = tail_line_->tail.load(std::memory_order_acquire);
    return index < cached_tail_ + elements_;
}

bool FifoSender::full()
{
    return !room_for(head_->head.load(std::memory_order_relaxed));
}

std::byte *FifoSender::claim(uint64_t *index_p)
{
    // The element is claimed (with this process's pid) before the head
    // moves: see uct_mm_common/slot_claim.h.
    const bool ok = uct_mm_common::claim_slot(
        head_->head, elements_, self_pid_,
        [this](uint64_t i) -> std::atomic<uint64_t> & { return elem(i)->seq; },
        [this](uint64_t i) { return room_for(i); }, index_p);
    return ok ? reinterpret_cast<std::byte *>(elem(*index_p) + 1) : nullptr;
}

void FifoSender::publish(uint64_t index, uint8_t am_id, uint32_t length)
{
    FifoElem *e = elem(index);
    e->length = length;
    e->am_id = am_id;
    e->seq.store(index + 1, std::memory_order_release);
}

} // namespace uct_mm_incast
