// SPDX-License-Identifier: BSD-3-Clause
// The physical floor: one flag per direction, each on its own cache line,
// bounced between two processes: round trip, and one-way = round trip / 2.
#include "bench_common.h"
#include "benches.h"

#include <new>
#include <sched.h>

namespace ucg_mm_bench {
namespace {

struct PingPong {
    alignas(64) std::atomic<std::uint64_t> ping; ///< written by rank 0
    alignas(64) std::atomic<std::uint64_t> pong; ///< written by rank 1
};
static_assert(sizeof(PingPong) == 128);

void wait_for(const std::atomic<std::uint64_t> &flag, std::uint64_t value)
{
    unsigned spins = 0;
    while (flag.load(std::memory_order_acquire) != value) {
        if (++spins > 2000) { // two processes may share one core
            sched_yield();
            spins = 0;
        }
    }
}

} // namespace

int bench_pingpong(const Options &opts)
{
    const int iters = static_cast<int>(20000 * opts.iter_scale) + 1;
    SharedBoard<PingPong> shared;
    Board *board = shared.board();
    PingPong *pp = shared.result();
    const bool ok = run_ranks(2, board, [&](int rank, Board *b) {
        constexpr int kBatch = 100; // time batches: clock cost is ~20 ns
        int n = 0;
        for (int i = 1; i <= iters; i += kBatch) {
            const double t0 = now_us();
            for (int j = i; j < i + kBatch; ++j) {
                if (rank == 0) {
                    pp->ping.store(j, std::memory_order_release);
                    wait_for(pp->pong, j);
                } else {
                    wait_for(pp->ping, j);
                    pp->pong.store(j, std::memory_order_release);
                }
            }
            if (rank == 0 && n < kMaxSamples) {
                b->samples_us[n++] = (now_us() - t0) / kBatch;
            }
        }
        b->num_samples = n;
    });
    // The round trip is the floor of a send that ends when the sender
    // knows every receiver has the data (bcast, incast): one hop each way.
    const Stats rtt = summarize(board->samples_us, board->num_samples);
    const Stats one_way{rtt.median_us / 2, rtt.min_us / 2, rtt.max_us / 2};
    print_row({"pingpong", 2, 8, "round-trip", rtt, 0, rtt.median_us});
    print_row({"pingpong", 2, 8, "one-way", one_way, 0, rtt.median_us});
    return ok ? 0 : 1;
}

} // namespace ucg_mm_bench
