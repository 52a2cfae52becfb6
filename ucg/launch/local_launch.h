// SPDX-License-Identifier: BSD-3-Clause
// Local launch without MPI: forks N ranks of this program and gives them an
// out-of-band allgather over an anonymous shared mapping made before the
// fork (no name in /dev/shm, nothing to clean up). Used by ucg_perftest -n
// and by the runtime's tests.
#pragma once

#include <ucs/type/status.h>

#include <cstddef>
#include <functional>
#include <string>

namespace ucg::launch {

/// The shared board the ranks of one launch meet on.
class Board {
  public:
    /// Maps a board for `nranks` ranks and messages up to `max_bytes`.
    static Board *create(int nranks, std::size_t max_bytes);
    ~Board();
    Board(const Board &) = delete;
    Board &operator=(const Board &) = delete;

    /// Every rank passes `length` bytes and gets everyone's, rank order.
    /// Blocking, with backoff; UCS_ERR_TIMED_OUT when a rank does not come
    /// within `timeout_sec` (it died), UCS_ERR_EXCEEDS_LIMIT over max_bytes.
    ucs_status_t allgather(int rank, const void *mine, void *all,
                           std::size_t length, double timeout_sec = 60);
    /// An allgather of nothing.
    ucs_status_t barrier(int rank);
    int nranks() const;

  private:
    Board() = default;
    struct Shared;
    Shared *shared_ = nullptr;
    std::size_t map_bytes_ = 0;
    unsigned rounds_ = 0; ///< this process's rounds so far
};

/// ucg_group_params_t's out-of-band callback over a board; arg points to
/// a BoardOob.
struct BoardOob {
    Board *board;
    int rank;
};
ucs_status_t board_allgather(void *arg, const void *sendbuf, void *recvbuf,
                             std::size_t length);

/// Forks `nranks` children that run `body(rank, board)` and exit with its
/// return value; waits for all. Returns 0 when every rank returned 0, else
/// the first failure's code (a rank killed by a signal: 128 + signal),
/// with one line per failure in *why.
int run_local(int nranks, const std::function<int(int, Board &)> &body,
              std::string *why);

} // namespace ucg::launch
