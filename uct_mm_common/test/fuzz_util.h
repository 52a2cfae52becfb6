// SPDX-License-Identifier: BSD-3-Clause
// Fuzzing a live group segment (both transports' trust tests): a list of
// the segment's control fields, a corrupter that writes seeded random
// values into them while the members run, and post/wait loops bounded in
// time (a corrupted cursor or sequence word may stall a group the way a
// stopped peer does: the member then gives up, as its caller would).
#pragma once

#include "group_test_util.h"

#include "uct_mm_common/group_link.h"
#include "uct_mm_common/log.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <sched.h>
#include <string>
#include <vector>

namespace uct_mm_common::test {

/// Whether this is a ThreadSanitizer build: the corrupter races with the
/// members by design, so the fuzz tests skip themselves there (UCG_SKIP; they
/// are labelled "trust", not "threads"; run them under ASan+UBSan).
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderTsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kUnderTsan = true;
#else
inline constexpr bool kUnderTsan = false;
#endif
#else
inline constexpr bool kUnderTsan = false;
#endif

/// Rounds of a fuzz test: UCG_FUZZ_ROUNDS, else `dflt` (0 under TSan).
inline unsigned fuzz_rounds(unsigned dflt)
{
    if (kUnderTsan) {
        return 0;
    }
    const char *env = std::getenv("UCG_FUZZ_ROUNDS");
    if (env != nullptr && *env != '\0') {
        return static_cast<unsigned>(std::strtoul(env, nullptr, 10));
    }
    return dflt;
}

/// First round of a fuzz test: UCG_FUZZ_FIRST, else 0. A round's
/// corruptions depend only on the seed and the round's number, so a
/// failure reported for round R replays with UCG_FUZZ_FIRST=R.
inline unsigned fuzz_first_round()
{
    const char *env = std::getenv("UCG_FUZZ_FIRST");
    return env != nullptr && *env != '\0'
               ? static_cast<unsigned>(std::strtoul(env, nullptr, 10))
               : 0;
}

/// Seed of the fuzz tests: UCG_FUZZ_SEED, else a fixed one.
inline std::uint64_t fuzz_seed()
{
    const char *env = std::getenv("UCG_FUZZ_SEED");
    return env != nullptr && *env != '\0' ? std::strtoull(env, nullptr, 10)
                                          : 0x5eed'f00dULL;
}

/// One control field of a segment: offset from its base and width (1, 2,
/// 4 or 8 bytes, naturally aligned), and what a forged value in it may do
/// besides failing the group (a peer of the same uid can write anything):
/// - `payload`: it is message data at other times (a CMA descriptor in a
///   slot's payload), so a round that hits it does not check its data;
/// - `forgeable`: no check word covers it, so a value that looks valid (a
///   small number, the current value nudged, a boundary) may deliver wrong
///   data;
/// - `stall`: it may make a live member look slow or absent (a cursor, a
///   member's state), so a member may wait for ever.
/// Any other field must fail the group or change nothing: a round that
/// hits only such fields delivers correct data or fails, and never stalls.
struct Field {
    std::size_t offset;
    unsigned width;
    bool payload = false;
    bool forgeable = false;
    bool stall = false;
};

/// The control fields of the common prefix of a group of `members`.
inline std::vector<Field> link_fields(std::uint32_t members)
{
    std::vector<Field> f = {
        {offsetof(LinkHeader, magic), 8},
        {offsetof(LinkHeader, layout), 4},
        {offsetof(LinkHeader, num_members), 4},
        {offsetof(LinkHeader, segment_bytes), 8},
        {.offset = offsetof(LinkHeader, attached), .width = 4, .stall = true},
        {offsetof(LinkHeader, failed), 4},
        {offsetof(LinkHeader, params_check), 8},
    };
    for (unsigned i = 0; i < 8; ++i) {
        f.push_back({kLinkParamsOffset + i * 8, 8});
    }
    for (std::uint32_t m = 0; m < members; ++m) {
        const std::size_t line = kLinkMembersOffset + m * kCacheLine;
        f.push_back({.offset = line + offsetof(MemberLine, cursor),
                     .width = 8,
                     .forgeable = true,
                     .stall = true});
        f.push_back({.offset = line + offsetof(MemberLine, pid),
                     .width = 4,
                     .stall = true});
        f.push_back({.offset = line + offsetof(MemberLine, state),
                     .width = 4,
                     .stall = true});
        f.push_back({.offset = line + offsetof(MemberLine, start_time),
                     .width = 8,
                     .stall = true});
    }
    return f;
}

/// Writes seeded random values into fields of a live segment.
class Corrupter {
  public:
    Corrupter(std::uint8_t *base, std::vector<Field> fields, std::uint64_t seed)
        : base_(base), fields_(std::move(fields)), rng_(seed)
    {
    }

    /// Writes one value into one random field. Values: random bits,
    /// boundaries, small numbers, or the current value nudged; the last
    /// two may forge a value a reader expects. forged() is then true if
    /// the field is forgeable (a peer of the same uid can always forge
    /// data, so such a round's data is not checked, only its memory
    /// safety), as it is after any hit of a payload field; may_stall()
    /// after any hit of a stall field.
    void hit()
    {
        bool looks_valid = false;
        const Field &f = fields_[rng_() % fields_.size()];
        std::uint8_t *p = base_ + f.offset;
        const std::uint64_t cur = load(p, f.width);
        std::uint64_t v = 0;
        switch (rng_() % 8) {
        case 0:
        case 1:
        case 2:
            v = rng_();
            break;
        case 3: {
            const std::uint64_t edges[] = {0, ~std::uint64_t{0},
                                           std::uint64_t{1} << 63,
                                           std::uint64_t{1} << 31};
            v = edges[rng_() % 4];
            if (v == 0 || v == ~std::uint64_t{0}) {
                looks_valid = true; // "not yet", "left"
            }
            break;
        }
        case 4:
        case 5:
            v = rng_() % 1024;
            looks_valid = true;
            break;
        default:
            v = cur + (rng_() % 33) - 16;
            looks_valid = true;
            break;
        }
        if (f.width < 8 && (v >> (f.width * 8)) != 0 && (rng_() & 1) != 0) {
            looks_valid = true; // truncated: as likely as small
        }
        // What the field will hold decides, not how it was drawn: an edge
        // truncated to the field's width can be 0 ("free", "not yet").
        const std::uint64_t mask = f.width < 8
                                       ? (std::uint64_t{1} << (f.width * 8)) - 1
                                       : ~std::uint64_t{0};
        const std::uint64_t held = v & mask;
        if (held < 1024 || held == mask || held - cur + 16 <= 32) {
            looks_valid = true;
        }
        // Flagged before the store: a member that sees the value sees the
        // flag.
        if (f.payload || (f.forgeable && looks_valid)) {
            forged_.store(true);
        }
        if (f.stall) {
            may_stall_.store(true);
        }
        store(p, f.width, v);
        ++hits_;
        if (trace_.size() < 2048) {
            trace_ += "[" + std::to_string(f.offset) + "/" +
                      std::to_string(f.width) + ": " + std::to_string(cur) +
                      " -> " + std::to_string(load(p, f.width)) + "] ";
        }
    }

    /// Hits `count` fields, yielding a random while before each, until
    /// `stop` is set.
    void run(unsigned count, const std::atomic<bool> &stop)
    {
        for (unsigned i = 0; i < count && !stop.load(); ++i) {
            const unsigned spins = static_cast<unsigned>(rng_() % 16);
            for (unsigned s = 0; s < spins && !stop.load(); ++s) {
                sched_yield();
            }
            if (!stop.load()) {
                hit();
            }
        }
    }

    bool forged() const noexcept { return forged_.load(); }
    bool may_stall() const noexcept { return may_stall_.load(); }
    /// The fields written so far and their values (for a failure's report).
    const std::string &trace() const noexcept { return trace_; }
    unsigned hits() const noexcept { return hits_; }

  private:
    static std::uint64_t load(const std::uint8_t *p, unsigned w)
    {
        switch (w) {
        case 1:
            return __atomic_load_n(p, __ATOMIC_RELAXED);
        case 2:
            return __atomic_load_n(reinterpret_cast<const std::uint16_t *>(p),
                                   __ATOMIC_RELAXED);
        case 4:
            return __atomic_load_n(reinterpret_cast<const std::uint32_t *>(p),
                                   __ATOMIC_RELAXED);
        default:
            return __atomic_load_n(reinterpret_cast<const std::uint64_t *>(p),
                                   __ATOMIC_RELAXED);
        }
    }
    static void store(std::uint8_t *p, unsigned w, std::uint64_t v)
    {
        switch (w) {
        case 1:
            __atomic_store_n(p, static_cast<std::uint8_t>(v), __ATOMIC_RELAXED);
            break;
        case 2:
            __atomic_store_n(reinterpret_cast<std::uint16_t *>(p),
                             static_cast<std::uint16_t>(v), __ATOMIC_RELAXED);
            break;
        case 4:
            __atomic_store_n(reinterpret_cast<std::uint32_t *>(p),
                             static_cast<std::uint32_t>(v), __ATOMIC_RELAXED);
            break;
        default:
            __atomic_store_n(reinterpret_cast<std::uint64_t *>(p), v,
                             __ATOMIC_RELAXED);
            break;
        }
    }

    std::uint8_t *base_;
    std::vector<Field> fields_;
    std::mt19937_64 rng_;
    std::atomic<bool> forged_{false};
    std::atomic<bool> may_stall_{false};
    unsigned hits_ = 0;
    std::string trace_;
};

/// How one member's part of a fuzz round ended.
enum class Outcome { kOk, kError, kStalled };

/// Bounds of a member's waits: it gives up once nothing moved for
/// `quiet_ms` after the corrupter stopped, if the corrupter hit a field
/// that may stall a group; otherwise only at the round's deadline, far
/// beyond any wait a correct group needs (a stall then fails the test).
struct Bound {
    const std::atomic<bool> *corrupter_done;
    std::chrono::steady_clock::time_point deadline;
    const Corrupter *corrupter = nullptr; ///< null: any stall is excused
    unsigned quiet_ms = 20;

    /// Whether a wait that last moved at `last_move` gives up now.
    bool gives_up(std::chrono::steady_clock::time_point last_move) const
    {
        const auto now = std::chrono::steady_clock::now();
        return now > deadline ||
               (corrupter_done->load() &&
                (corrupter == nullptr || corrupter->may_stall()) &&
                now - last_move > std::chrono::milliseconds(quiet_ms));
    }

    /// Whether a member that gave up may have: a stall field was hit.
    bool stall_excused() const
    {
        return corrupter == nullptr || corrupter->may_stall();
    }
};

/// Posts (retrying while kNoResource) and progresses until `p` completes,
/// the group fails or the member gives up (kStalled).
inline Outcome post_wait_bounded(GroupCore &g, bool send, const Message &m,
                                 Pending *p, const Bound &b)
{
    using clock = std::chrono::steady_clock;
    Backoff backoff;
    bool posted = false;
    auto last_move = clock::now();
    while (!p->done) {
        if (!posted) {
            const Status st = g.post(send, m, p);
            if (st != Status::kNoResource) {
                posted = true;
                if (st != Status::kInProgress) {
                    p->done = true;
                    p->status = st;
                    break;
                }
            }
        }
        if (g.progress(on_complete, nullptr) != 0) {
            backoff.reset();
            last_move = clock::now();
            continue;
        }
        if (b.gives_up(last_move)) {
            return Outcome::kStalled;
        }
        backoff.pause();
    }
    return p->status == Status::kOk ? Outcome::kOk : Outcome::kError;
}

/// Counts the core's log lines instead of printing them (thousands of
/// rounds fail thousands of groups), while it lives.
class QuietLog {
  public:
    QuietLog() { set_log_sink(count); }
    ~QuietLog() { set_log_sink(nullptr); }
    QuietLog(const QuietLog &) = delete;
    QuietLog &operator=(const QuietLog &) = delete;
    static unsigned lines() { return lines_.load(); }

  private:
    static void count(LogLevel, const char *) { ++lines_; }
    static inline std::atomic<unsigned> lines_{0};
};

/// Totals of a fuzz test's rounds (every member's outcome of every round).
struct FuzzTally {
    std::atomic<unsigned> ok{0};        ///< completed, data checked correct
    std::atomic<unsigned> unchecked{0}; ///< completed in a forged round
    std::atomic<unsigned> errors{0};    ///< the group failed (named status)
    std::atomic<unsigned> stalls{0};    ///< gave up waiting
    std::atomic<unsigned> stuck{0};     ///< stalled, no stall field hit
    std::atomic<unsigned> wrong{0};     ///< completed, wrong data, not forged
    std::atomic<unsigned> hits{0};      ///< fields written
};

} // namespace uct_mm_common::test
