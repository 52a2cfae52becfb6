// SPDX-License-Identifier: BSD-3-Clause
// Claiming a slot of a multi-producer ring so that a producer killed between
// its claim and its publish does not stall the ring forever.
//
// Every slot has a 64-bit sequence word. Its values:
//   pos + 1                   published: the message of position pos is ready
//   0                         never used (as "published" for pos < 0)
//   kClaimBit | pid << 41 | (start time mod 2^17) << 24 | (pos mod 2^24)
//                             claimed for position pos by process pid, which
//                             started at that time (clock ticks since boot)
// A producer claims position h by CAS on the slot's word (from the value the
// slot's previous position left there) *before* it moves the shared head
// from h to h + 1; any producer that finds the slot of `head` claimed or
// published moves the head on for it. So the claimer of every unpublished
// position is written in the slot itself: a consumer stalled on a claim whose
// process is dead skips the position (the message was never complete). The
// start time tells a reused pid from the claimer (a stranger with the same
// pid and start time modulo 2^17 ticks, about 22 minutes, is the one case
// left). A consumer decides to skip only on a word it loaded *after* it found
// the claimer dead: a producer that published and then died is delivered.
// Positions are compared modulo 2^24; a ring is far smaller than that.
#pragma once

#include "uct_mm_common/backoff.h"
#include "uct_mm_common/liveness.h"
#include "uct_mm_common/log.h"

#include <atomic>
#include <cstdint>

namespace uct_mm_common {

inline constexpr std::uint64_t kClaimBit = std::uint64_t{1} << 63;
inline constexpr unsigned kClaimPidShift = 41;   ///< 22 bits: any Linux pid
inline constexpr unsigned kClaimStartShift = 24; ///< 17 bits of start time
inline constexpr std::uint64_t kClaimPosMask = (std::uint64_t{1} << 24) - 1;
inline constexpr std::uint64_t kClaimStartMask = (std::uint64_t{1} << 17) - 1;
inline constexpr std::uint64_t kClaimPidMask = (std::uint64_t{1} << 22) - 1;

/// The sequence word of position `pos` claimed by process `id`.
inline constexpr std::uint64_t claim_word(std::uint64_t pos,
                                          const ProcessId &id) noexcept
{
    return kClaimBit |
           ((std::uint64_t{static_cast<std::uint32_t>(id.pid)} & kClaimPidMask)
            << kClaimPidShift) |
           ((id.start_time & kClaimStartMask) << kClaimStartShift) |
           (pos & kClaimPosMask);
}

/// True if `word` is a claim (not yet published) of position `pos`.
inline constexpr bool is_claim_of(std::uint64_t word,
                                  std::uint64_t pos) noexcept
{
    return (word & kClaimBit) != 0 && ((word ^ pos) & kClaimPosMask) == 0;
}

/// The process that made the claim `word`.
inline constexpr std::int32_t claimer_of(std::uint64_t word) noexcept
{
    return static_cast<std::int32_t>((word >> kClaimPidShift) & kClaimPidMask);
}

/// The low bits of the claimer's start time.
inline constexpr std::uint64_t claimer_start_of(std::uint64_t word) noexcept
{
    return (word >> kClaimStartShift) & kClaimStartMask;
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

/// Claims the next position of a ring for process `self` (pid and start
/// time). `head` is the shared next position;
/// `word_of(pos)` returns the slot's std::atomic<uint64_t> sequence word;
/// `has_room(pos)` says whether every consumer is done with the slot's
/// previous position. Returns false when the ring is full, or when the
/// head's slot holds a word no producer writes (a corrupt peer).
template <class WordOf, class HasRoom>
bool claim_slot(std::atomic<std::uint64_t> &head, std::uint64_t slots,
                const ProcessId &self, WordOf &&word_of, HasRoom &&has_room,
                std::uint64_t *pos_p) noexcept
{
    std::uint64_t h = head.load(std::memory_order_acquire);
    // A slot word that is neither free, claimed nor published for the head
    // (written by a corrupt peer) would hold the loop for ever: after
    // kStuckSpins such looks at one head, report the ring full; the
    // caller's stall checks decide what happens to the FIFO.
    constexpr unsigned kStuckSpins = 64;
    std::uint64_t stuck_at = h;
    unsigned stuck = 0;
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
            stuck = h == stuck_at ? stuck + 1 : 0;
            stuck_at = h;
            if (stuck >= kStuckSpins) {
                return false;
            }
            h = head.load(std::memory_order_acquire); // h is stale
            continue;
        }
        // seq_cst: a p2p FIFO's producer then reads the owner's doorbell
        // flag (ring_layout.h, HeadLine::armed).
        if (word.compare_exchange_strong(w, claim_word(h, self),
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
/// the position was claimed by a process that is now dead (gone, a zombie,
/// or its pid now another process's), so the consumer may skip it. Reads
/// /proc: call it rarely (after a stall).
inline bool claimer_dead(std::uint64_t word, std::uint64_t pos) noexcept
{
    if (!is_claim_of(word, pos)) {
        return false;
    }
    const std::int32_t pid = claimer_of(word);
    if (!process_alive(ProcessId{pid, 0, 0})) {
        return true;
    }
    const std::uint64_t start = process_start_time(pid);
    return start != 0 && (start & kClaimStartMask) != claimer_start_of(word);
}

/// Tests only: called by StallWatch between its load of a stalled slot's
/// word and its liveness check (the window where a producer may publish and
/// die).
inline void (*g_stall_watch_probe)() = nullptr;

/// What a consumer stalled on a claimed position runs on every poll that
/// finds it unpublished: the /proc check only every kCheckNs, so a slow but
/// live producer costs nothing and a dead one is skipped within ~2 kCheckNs.
class StallWatch {
  public:
    static constexpr std::uint64_t kCheckNs = 20'000'000;

    /// True if the consumer at `pos`, whose slot's sequence word is `seq`,
    /// may skip it: the word held a claim whose process is dead, and still
    /// holds it after that was found (a message published before its
    /// producer died is delivered, not skipped). Then logs one warning
    /// naming `what` (e.g. "mm_bcast ring position").
    bool should_skip(const std::atomic<std::uint64_t> &seq, std::uint64_t pos,
                     const char *what) noexcept
    {
        const std::uint64_t word = seq.load(std::memory_order_acquire);
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
        if (g_stall_watch_probe != nullptr) {
            g_stall_watch_probe();
        }
        if (!claimer_dead(word, pos) ||
            seq.load(std::memory_order_acquire) != word) {
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
