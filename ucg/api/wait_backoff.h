// SPDX-License-Identifier: BSD-3-Clause
// When ucg_collective_wait gives its core away (decision 0018): a pure
// step, so tests can drive it.
#pragma once

#include <cstdint>

namespace ucg::rt {

/// Polls in a row that found nothing before an oversubscribed wait sleeps
/// on the transports' events (UCG_WAIT_SLEEP sets another; decision 0029).
inline constexpr unsigned kWaitSleepAfter = 512;

/// One wait's backoff: after each poll, whether to yield.
/// Oversubscribed (more ranks than cores on the host), the peer waited for
/// may need this very core: yield after a poll that moved nothing, as Open
/// MPI's progress does; never after one that completed an op of the
/// collective (the next step's message may be there already); after a
/// poll that moved only something else (a message landing for a later op,
/// a send completing), only every kOtherPolls-th in a row, so a wait still
/// backs off whatever UCP reports (yielding after each made a linear
/// barrier switch twice as often as Open MPI's). With a core each: spin
/// (a message is often a few hundred ns away), then yield now and then:
/// every yield hands a loaded core to another process for a whole time
/// slice, and a peer waiting on us then yields too.
///
/// Oversubscribed, after `sleep_after` polls in a row that moved nothing
/// (0: never), the wait may sleep on the transports' events instead of
/// yielding (decision 0029): the caller decides whether what it waits for
/// raises one.
class WaitBackoff {
  public:
    static constexpr unsigned kOtherPolls = 16;
    static constexpr unsigned kSpinPolls = 1024;
    static constexpr unsigned kSpinEvery = 64;

    explicit WaitBackoff(bool oversubscribed, unsigned sleep_after = 0) noexcept
        : over_(oversubscribed), sleep_after_(sleep_after)
    {
    }

    /// After a yield_after() that said yield: whether to sleep instead.
    bool may_sleep() const noexcept
    {
        return over_ && sleep_after_ != 0 && idle_ >= sleep_after_;
    }

    /// `ours`: the poll completed an op of the collective waited for;
    /// `moved`: it moved anything (UCP, a channel).
    bool yield_after(bool ours, bool moved) noexcept
    {
        const unsigned n = polls_++;
        idle_ = moved || ours ? 0 : idle_ + 1;
        if (!over_) {
            return n >= kSpinPolls && n % kSpinEvery == 0;
        }
        others_ = ours || !moved ? 0 : others_ + 1;
        return !ours && (!moved || others_ % kOtherPolls == 0);
    }

  private:
    bool over_;
    unsigned sleep_after_;
    unsigned polls_ = 0;
    unsigned idle_ = 0;   ///< polls in a row that moved nothing
    unsigned others_ = 0; ///< polls in a row that moved only something else
};

/// Whether this process's core is shared with processes its groups do
/// not count (decision 0031): emulated hosts pinned to one CPU, another
/// job's ranks. A group counts only its own members, so a rank alone on
/// its core spins between yields (WaitBackoff), and a peer that needs
/// that core waits up to a time slice for each message. A yield that
/// returns kLateYieldNs or more after it began says another process ran
/// on the core: the next kSharedWaits waits then yield as oversubscribed
/// ones do, and every late yield among them renews that.
class CoreShare {
  public:
    static constexpr std::uint64_t kLateYieldNs = 20000;
    static constexpr unsigned kSharedWaits = 64;

    void yielded(std::uint64_t ns) noexcept
    {
        if (ns >= kLateYieldNs) {
            left_ = kSharedWaits;
        }
    }
    void wait_ended() noexcept { left_ -= left_ != 0 ? 1 : 0; }
    bool shared() const noexcept { return left_ != 0; }

  private:
    unsigned left_ = 0;
};

} // namespace ucg::rt
