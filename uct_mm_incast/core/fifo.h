// SPDX-License-Identifier: BSD-3-Clause
// The per-iface receive FIFO that makes mm_incast an ordinary two-member
// UCT transport: many producers (any ep connected to the iface, even one
// the receiver has no ep to), one consumer (the iface's progress).
//
//  offset 0   FifoHeader  (receiver, once: geometry)
//  64         FifoHead    (producers: CAS on head to claim; the deliberate
//                          shared line, producers only)
//  128        FifoTail    (receiver: consumed count; producers read it)
//  192        FifoElem[elements], elem_stride bytes each (owner: the
//             producer that claimed it, until the receiver consumes it):
//             [ seq(8) | length(4) | am_id(1) | pad(3) | payload ... ]
//             seq == index + 1 publishes it; flag and payload start share
//             the first cache line.
//
// A producer claims index h when h < tail + elements: it writes its claim
// (pid, h) into the element's seq with a CAS, then moves the head h -> h+1
// (uct_mm_common/slot_claim.h), fills the element and stores seq = h + 1
// (release). The receiver checks one element per idle poll (O(1)),
// delivers, and stores tail = index + 1; stalled on the claim of a dead
// producer, it skips the element.
#pragma once

#include "shm.h"
#include "uct_mm_common/cacheline.h"
#include "uct_mm_common/slot_claim.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace uct_mm_incast {

using uct_mm_common::align_up;
using uct_mm_common::kCacheLine;

inline constexpr uint64_t kFifoMagic = 0x6f666966'6d6d01ULL;

struct alignas(kCacheLine) FifoHeader {
    uint64_t magic;       ///< receiver: kFifoMagic
    uint32_t elements;    ///< receiver: ring size
    uint32_t reserved;    ///< zero
    uint64_t elem_stride; ///< receiver: bytes per element, 64-aligned
    uint64_t max_payload; ///< receiver: payload bytes per element
};
struct alignas(kCacheLine) FifoHead {
    std::atomic<uint64_t> head; ///< producers: next index to claim
};
struct alignas(kCacheLine) FifoTail {
    std::atomic<uint64_t> tail; ///< receiver: elements consumed
};
struct FifoElem {
    std::atomic<uint64_t> seq; ///< producer: its claim, then index + 1
    uint32_t length;           ///< producer: payload bytes
    uint8_t am_id;             ///< producer: active message id
    uint8_t pad[3];            ///< zero
};
static_assert(sizeof(FifoHeader) == kCacheLine);
static_assert(sizeof(FifoHead) == kCacheLine);
static_assert(sizeof(FifoTail) == kCacheLine);
static_assert(sizeof(FifoElem) == 16);
inline constexpr std::size_t kFifoElemsOffset = 3 * kCacheLine;

std::size_t fifo_bytes(uint32_t elements, std::size_t max_payload);

class FifoReceiver {
  public:
    /// An anonymous segment (memfd) that producers open by pid and fd.
    ucs_status_t init(uint32_t elements, std::size_t max_payload);
    int fd() const { return map_.fd(); }
    std::size_t bytes() const { return map_.size(); }

    /// Delivers up to `max` elements in order: cb(am_id, data, length).
    template <typename F> unsigned poll(unsigned max, F &&cb)
    {
        unsigned n = 0;
        while (n < max) {
            FifoElem *e = elem(tail_);
            const uint64_t seq = e->seq.load(std::memory_order_acquire);
            if (seq != tail_ + 1) {
                if (skip_dead_claim(seq)) {
                    continue;
                }
                break;
            }
            // The producer's length: never past the element (dropped).
            const uint32_t length = e->length;
            if (length <= stride_ - sizeof(FifoElem)) {
                cb(e->am_id, reinterpret_cast<std::byte *>(e + 1), length);
            } else {
                drop_oversized(length);
            }
            ++tail_;
            tail_line_->tail.store(tail_, std::memory_order_release);
            ++n;
        }
        return n;
    }

  private:
    FifoElem *elem(uint64_t i) const
    {
        return reinterpret_cast<FifoElem *>(base_ + kFifoElemsOffset +
                                            (i % elements_) * stride_);
    }
    /// Logs an element whose length does not fit it (not delivered).
    void drop_oversized(uint32_t length) const;
    /// Stalled on element tail_ (sequence word `word`): skips it if its
    /// producer died after claiming it (checked every StallWatch::kCheckNs).
    bool skip_dead_claim(uint64_t word);

    Mapping map_;
    std::byte *base_ = nullptr;
    FifoTail *tail_line_ = nullptr;
    uct_mm_common::StallWatch watch_;
    uint64_t tail_ = 0;
    uint32_t elements_ = 0;
    std::size_t stride_ = 0;
};

class FifoSender {
  public:
    ucs_status_t attach(int pid, int fd, std::size_t bytes);
    std::size_t max_payload() const { return max_payload_; }

    /// Claims the next element; nullptr when the ring is full. On success,
    /// fill the returned payload area and call publish(*index_p, ...).
    std::byte *claim(uint64_t *index_p);
    void publish(uint64_t index, uint8_t am_id, uint32_t length);
    bool full();

  private:
    FifoElem *elem(uint64_t i) const
    {
        return reinterpret_cast<FifoElem *>(base_ + kFifoElemsOffset +
                                            (i % elements_) * stride_);
    }
    /// Whether the receiver has consumed element index - elements (rereads
    /// the tail only when the cached one says no).
    bool room_for(uint64_t index);

    Mapping map_;
    std::byte *base_ = nullptr;
    FifoHead *head_ = nullptr;
    FifoTail *tail_line_ = nullptr;
    uint64_t cached_tail_ = 0; ///< a lower bound of the real tail
    int32_t self_pid_ = 0;     ///< written into claims
    uint32_t elements_ = 0;
    std::size_t stride_ = 0;
    std::size_t max_payload_ = 0;
};

} // namespace uct_mm_incast
