// SPDX-License-Identifier: BSD-3-Clause
// measure_floor(): floor.h.
#include "floor.h"

#include "ucp_pingpong.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

namespace ucg::perftest {

namespace {

struct alignas(64) Line {
    std::atomic<std::uint64_t> value{0};
};

struct Flags {
    Line ping; ///< rank 0 writes
    Line pong; ///< rank 1 writes
};

constexpr int kBatches = 7;
constexpr int kPerBatch = 1000;
constexpr int kWarmup = 200;

// Waits until `line` holds `value`: spins, then yields (the ranks may share
// a core); false after 10 s without it.
bool wait_for(const Line &line, std::uint64_t value)
{
    unsigned spins = 0;
    double give_up = 0;
    while (line.value.load(std::memory_order_acquire) != value) {
        if (++spins < 1000) {
            continue;
        }
        std::this_thread::yield();
        if ((spins & 1023) == 0) {
            const double t = now_s();
            give_up = give_up == 0 ? t + 10 : give_up;
            if (t > give_up) {
                return false;
            }
        }
    }
    return true;
}

// Rank 0: the median over the batches of a batch's mean round trip / 2.
double ping(Flags *f)
{
    std::uint64_t i = 0;
    std::vector<double> one_way;
    for (int b = -1; b < kBatches; ++b) {
        const int n = b < 0 ? kWarmup : kPerBatch;
        const double t0 = now_s();
        for (int k = 0; k < n; ++k) {
            f->ping.value.store(++i, std::memory_order_release);
            if (!wait_for(f->pong, i)) {
                return -1;
            }
        }
        if (b >= 0) {
            one_way.push_back((now_s() - t0) * 1e6 / n / 2);
        }
    }
    return median(std::move(one_way));
}

void pong(Flags *f)
{
    const std::uint64_t total = kWarmup + std::uint64_t{kBatches} * kPerBatch;
    for (std::uint64_t i = 1; i <= total; ++i) {
        if (!wait_for(f->ping, i)) {
            return;
        }
        f->pong.value.store(i, std::memory_order_release);
    }
}

double memcpy_gbs()
{
    constexpr std::size_t kBytes = std::size_t{16} << 20;
    std::vector<char> src(kBytes, 1), dst(kBytes, 0);
    double best = 1e30;
    for (int r = 0; r < 5; ++r) {
        const double t0 = now_s();
        std::memcpy(dst.data(), src.data(), kBytes);
        best = std::min(best, now_s() - t0);
        src[static_cast<std::size_t>(r)] = dst[kBytes - 1]; // keep both live
    }
    return static_cast<double>(kBytes) / best / 1e9;
}

// Rank 0: the median over the batches of a batch's mean reading of the
// clock the rows are timed with.
double clock_ns()
{
    std::vector<double> per_read;
    for (int b = -1; b < kBatches; ++b) {
        const int n = b < 0 ? kWarmup : kPerBatch;
        const double t0 = now_s();
        for (int k = 0; k < n; ++k) {
            (void)now_s(); // a library call: never optimized away
        }
        if (b >= 0) {
            per_read.push_back((now_s() - t0) * 1e9 / n);
        }
    }
    return median(std::move(per_read));
}

struct Hello {
    char host[64];
    std::int64_t pid; ///< rank 0: its pid (the segment's name)
    std::int64_t ok;  ///< first exchange, rank 0: created; second, rank 1:
                      ///< mapped
};

} // namespace

Floor measure_floor(const Env &env)
{
    Floor out;
    std::vector<Hello> all(static_cast<std::size_t>(env.size));
    Hello mine{};
    gethostname(mine.host, sizeof(mine.host) - 1);
    mine.pid = getpid();
    const std::string prefix = "/ucg-perftest-floor-";
    std::string created; // rank 0: the segment's name, until unlinked
    Flags *flags = nullptr;
    if (env.rank == 0 && env.size > 1) {
        const std::string own = prefix + std::to_string(mine.pid);
        const int fd = shm_open(own.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd >= 0) {
            created = own;
            void *p = ftruncate(fd, sizeof(Flags)) == 0
                          ? mmap(nullptr, sizeof(Flags), PROT_READ | PROT_WRITE,
                                 MAP_SHARED, fd, 0)
                          : MAP_FAILED;
            close(fd);
            if (p != MAP_FAILED) {
                flags = new (p) Flags();
                mine.ok = 1;
            }
        }
    }
    // Rank 0's own figures first, while the others wait in the exchange
    // below: the memcpy's 32 MiB of first-touched pages take it 0.1-0.2 s
    // on this VM, which the first timed call of every other rank would
    // otherwise wait out.
    if (env.rank == 0) {
        out.memcpy_gbs = memcpy_gbs();
        out.clock_ns = clock_ns();
    }
    ucs_status_t st = env.allgather(&mine, all.data(), sizeof(mine));
    const bool same_host = st == UCS_OK && env.size > 1 &&
                           std::strncmp(all[0].host, all[1].host, 64) == 0;
    out.other_hosts = st == UCS_OK && env.size > 1 && !same_host;
    if (env.rank == 1 && same_host && all[0].ok == 1) {
        const std::string peer = prefix + std::to_string(all[0].pid);
        const int fd = shm_open(peer.c_str(), O_RDWR, 0);
        if (fd >= 0) {
            void *p = mmap(nullptr, sizeof(Flags), PROT_READ | PROT_WRITE,
                           MAP_SHARED, fd, 0);
            close(fd);
            if (p != MAP_FAILED) {
                flags = static_cast<Flags *>(p);
                mine.ok = 1;
            }
        }
    }
    // Rank 1 has the segment mapped, or never will: the name goes.
    if (st == UCS_OK) {
        st = env.allgather(&mine, all.data(), sizeof(mine));
    }
    if (!created.empty()) {
        shm_unlink(created.c_str());
    }
    if (st == UCS_OK && flags != nullptr && all[1].ok == 1) {
        if (env.rank == 0) {
            out.flag_us = ping(flags);
        } else {
            pong(flags);
        }
    }
    if (flags != nullptr) {
        munmap(flags, sizeof(Flags));
    }
    if (out.other_hosts) { // alike on every rank: they all take part
        out.ucp_us = ucp_one_way_us(env);
    }
    return out;
}

} // namespace ucg::perftest
