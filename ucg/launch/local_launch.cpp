// SPDX-License-Identifier: BSD-3-Clause
// Local launch (local_launch.h): a double-buffered allgather on shared
// memory, safe because a rank starting round k+1 has seen every rank
// arrive in round k, so all of them finished reading round k-1's buffer.
#include "local_launch.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <new>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace ucg::launch {

struct Board::Shared {
    std::atomic<std::uint64_t> arrived; // ranks that wrote this round, total
    std::uint32_t nranks;
    std::uint32_t reserved;
    std::uint64_t max_bytes;
    // then 2 x nranks x max_bytes of data
    std::uint8_t *data(unsigned parity, int rank)
    {
        auto *base = reinterpret_cast<std::uint8_t *>(this + 1);
        return base + (static_cast<std::size_t>(parity) * nranks +
                       static_cast<std::size_t>(rank)) *
                          max_bytes;
    }
};

Board *Board::create(int nranks, std::size_t max_bytes)
{
    const std::size_t bytes =
        sizeof(Shared) + 2 * static_cast<std::size_t>(nranks) * max_bytes;
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        return nullptr;
    }
    auto *b = new Board();
    b->shared_ = new (p) Shared{};
    b->shared_->nranks = static_cast<std::uint32_t>(nranks);
    b->shared_->max_bytes = max_bytes;
    b->map_bytes_ = bytes;
    return b;
}

Board::~Board()
{
    munmap(shared_, map_bytes_);
}

int Board::nranks() const
{
    return static_cast<int>(shared_->nranks);
}

ucs_status_t Board::allgather(int rank, const void *mine, void *all,
                              std::size_t length, double timeout_sec)
{
    if (length > shared_->max_bytes) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    const unsigned parity = rounds_ % 2;
    const std::uint64_t want = std::uint64_t{shared_->nranks} * (rounds_ + 1);
    ++rounds_;
    std::memcpy(shared_->data(parity, rank), mine, length);
    shared_->arrived.fetch_add(1, std::memory_order_acq_rel);
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration<double>(timeout_sec);
    for (unsigned spins = 0;
         shared_->arrived.load(std::memory_order_acquire) < want; ++spins) {
        if (spins > 64) {
            sched_yield(); // more ranks than cores
        }
        if ((spins & 1023) == 0 &&
            std::chrono::steady_clock::now() > deadline) {
            return UCS_ERR_TIMED_OUT;
        }
    }
    auto *out = static_cast<std::uint8_t *>(all);
    for (std::uint32_t r = 0; r < shared_->nranks; ++r) {
        std::memcpy(out + r * length,
                    shared_->data(parity, static_cast<int>(r)), length);
    }
    return UCS_OK;
}

ucs_status_t Board::barrier(int rank)
{
    return allgather(rank, nullptr, nullptr, 0);
}

ucs_status_t board_allgather(void *arg, const void *sendbuf, void *recvbuf,
                             std::size_t length)
{
    auto *o = static_cast<BoardOob *>(arg);
    return o->board->allgather(o->rank, sendbuf, recvbuf, length);
}

int run_local(int nranks, const std::function<int(int, Board &)> &body,
              std::string *why)
{
    Board *board = Board::create(nranks, 64 * 1024);
    if (board == nullptr) {
        *why = "cannot map the launch board";
        return 1;
    }
    std::vector<pid_t> pids;
    for (int r = 0; r < nranks; ++r) {
        const pid_t pid = fork();
        if (pid == 0) {
            int rc = 1;
            try {
                rc = body(r, *board);
            } catch (...) {
                rc = 1;
            }
            std::fflush(nullptr);
            _exit(rc);
        }
        pids.push_back(pid);
    }
    int first = 0;
    for (int r = 0; r < nranks; ++r) {
        int status = 0;
        while (waitpid(pids[static_cast<std::size_t>(r)], &status, 0) < 0 &&
               errno == EINTR) {
        }
        int code = 0;
        if (WIFSIGNALED(status)) {
            code = 128 + WTERMSIG(status);
            *why += "rank " + std::to_string(r) + ": killed by signal " +
                    std::to_string(WTERMSIG(status)) + "\n";
        } else if (WEXITSTATUS(status) != 0) {
            code = WEXITSTATUS(status);
            *why += "rank " + std::to_string(r) + ": exit status " +
                    std::to_string(code) + "\n";
        }
        if (first == 0) {
            first = code;
        }
    }
    delete board;
    return first;
}

} // namespace ucg::launch
