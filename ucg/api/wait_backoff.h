// SPDX-License-Identifier: BSD-3-Clause
// When ucg_collective_wait gives its core away (decision 0018): a pure
// step, so tests can drive it.
#pragma once

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

} // namespace ucg::rt
