// SPDX-License-Identifier: BSD-3-Clause
// Claiming a slot of a multi-producer ring so that a producer killed between
// its claim and its publish does not stall the ring forever.
//
// Every slot has a 64-bit sequence word. Its values:
//   pos + 1                   published: the message of position pos is ready
//   0                         never used (as "published" for pos < 0)
//   kClaimBit | pid << 32 | (pos mod 2^32)
//                             claimed for position pos by process pid
// A producer claims position h by CAS on the slot's word (from the value the
// slot's previous position left there) *before* it moves the shared head
// from h to h + 1; any producer that finds the slot of `head` claimed or
// published moves the head on for it. So the claimer of every unpublished
// position is written in the slot itself: a consumer stalled on a claim whose
// process is dead skips the position (the message was never complete).
// Positions are compared modulo 2^32; a ring is far smaller than that.
#pragma once

#include "uct_mm_common/backoff.h"
#include "uct_mm_common/liveness.h"
#include "uct_mm_common/log.h"

#include <atomic>
#include <cstdint>

namespace uct_mm_common {

inline constexpr std::uint64_t kClaimBit = std::uint64_t{1} << 63;

/// The sequence word of position `pos` claimed by process `pid`.
inline constexpr std::uint64_t claim_word(std::uint64_t pos,
                                          std::int32_t pid) noexcept
{
    return kClaimBit |
           (std::uint64_t{static_cast<std::uint32_t>(pid) & 0x7fffffffU}
            << 32) |
           (pos & 0xffffffffU);
}

/// True if `word` is a claim (not yet published) of position `pos`.
inline constexpr bool is_claim_of(std::uint64_t word,
                                  std::uint64_t pos) noexcept
{
    return (word & kClaimBit) != 0 && ((word ^ pos) & 0xffffffffU) == 0;
}

/// The process that made the claim `word`.
inline constexpr std::int32_t claimer_of(std::uint64_t word) noexcept
{
    return static_cast<std::int32_t>((word >> 32) & 0x7fffffffU);
}

/// True if a slot whose word is `word` may be claimed for position `pos` of
/// a ring of `slots` slots: the slot's previous position was published (or
/// skipped, its claimer dead), or the slot was never used.
inline constexpr bool free_for(std::uint64_t word, std::uint64_t pos,
                               std::uint64_t slots) noexcept
{
    if (pos < slots) {
        return word == 0;
    }
    const std::uint64_t prev = pos - slots;
    return word == prev + 1 || is_claim_of(word, prev);
}

/// Claims the next position of a ring. `head` is the shared next position;
/// `word_of(pos)` returns the slot's std::atomic<uint64_t> sequence word;
/// `has_room(pos)` says whether every consumer is done with the slot's
/// previous position. Returns false when the ring is full.
template <class WordOf, class HasRoom>
bool claim_slot(std::atomic<std::uint64_t> &head, std::uint64_t slots,
                std::int32_t pid, WordOf &&word_of, HasRoom &&has_room,
                std::uint64_t *pos_p) noexcept
{
    std::uint64_t h = head.load(std::memory_order_acquire);
    for (;;) {
        if (!has_room(h)) {
            return false;
        }
        std::atomic<std::uint64_t> &word = word_of(h);
        std::uint64_t w = word.load(std::memory_order_acquire);
        if (w == h + 1 || is_claim_of(w, h)) {
            // Position h is taken: move the head on for its claimer.
            std::uint64_t expected = h;
            head.compare_exchange_strong(expected, h + 1,
                                         std::memory_order_acq_rel,
                                         std::memory_order_relaxed);
            h = head.load(std::memory_order_acquire);
            continue;
        }
        if (!free_for(w, h, slots)) {
            h = head.load(std::memory_order_acquire); // h is stale
            continue;
        }
        // seq_cst: a p2p FIFO's producer then reads the owner's doorbell
        // flag (ring_layout.h, HeadLine::armed).
        if (word.compare_exchange_strong(w, claim_word(h, pid),
                                         std::memory_order_seq_cst,
                                         std::memory_order_relaxed)) {
            std::uint64_t expected = h;
            head.compare_exchange_strong(expected, h + 1,
                                         std::memory_order_acq_rel,
                                         std::memory_order_relaxed);
            *pos_p = h;
            return true;
        }
        h = head.load(std::memory_order_acquire);
    }
}

/// A consumer stalled on position `pos` whose slot word is `word`: true if
/// the position was claimed by a process that is now dead, so the consumer
/// may skip it. Reads /proc: call it rarely (after a stall).
inline bool claimer_dead(std::uint64_t word, std::uint64_t pos) noexcept
{
    if (!is_claim_of(word, pos)) {
        return false;
    }
    return !process_alive(ProcessId{claimer_of(word), 0, 0});
}

/// What a consumer stalled on a claimed position runs on every poll that
/// finds it unpublished: the /proc check only every kCheckNs, so a slow but
/// live producer costs nothing and a dead one is skipped within ~2 kCheckNs.
class StallWatch {
  public:
    static constexpr std::uint64_t kCheckNs = 20'000'000;

    /// True if the consumer at `pos`, whose slot word is `word`, may skip it;
    /// then logs one warning naming `what` (e.g. "mm_bcast ring position").
    bool should_skip(std::uint64_t word, std::uint64_t pos,
                     const char *what) noexcept
    {
        if (!is_claim_of(word, pos)) {
            return false;
        }
        const std::uint64_t now = now_ns();
        if (pos != pos_) {
            pos_ = pos;
            next_check_ = now + kCheckNs;
            return false;
        }
        if (now < next_check_) {
            return false;
        }
        next_check_ = now + kCheckNs;
        if (!claimer_dead(word, pos)) {
            return false;
        }
        log(LogLevel::kWarn,
            "%s %llu skipped: its producer (pid %d) died before publishing it",
            what, static_cast<unsigned long long>(pos), claimer_of(word));
        return true;
    }

  private:
    std::uint64_t pos_ = ~std::uint64_t{0};
    std::uint64_t next_check_ = 0;
};

} // namespace uct_mm_common
