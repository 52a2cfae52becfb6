// SPDX-License-Identifier: BSD-3-Clause
// bench_mm_incast: mm_incast gather and reduce (int32 sum), each mode,
// against N-1 point-to-point sends to the root over UCX's posix transport
// plus a local reduction. Forks N ranks itself. For every N, size and
// variant: `reps` runs of `iters` back-to-back incasts (both sides may
// run ahead by 8 incasts: ring depth / credit window); it reports the
// time per incast at the root, median/min/max over the runs, and the
// ratio of medians to the p2p baseline (< 1: faster than p2p).
//
// usage: bench_mm_incast [-n 2,4,8] [-s 8,64,...] [-r reps] [-t time_ms]
#include "group.h"
#include "p2p_posix.h"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace uct_mm_incast;

namespace {

struct Shared {
    std::atomic<uint64_t> arrived;    ///< barrier counter
    std::atomic<uint64_t> generation; ///< barrier generation
    double results[64];               ///< root: us per incast, per rep
    bench::PosixAddress addrs[16];
};

void barrier(Shared *sh, int n, uint64_t *gen)
{
    const uint64_t g = ++*gen;
    if (sh->arrived.fetch_add(1) + 1 == static_cast<uint64_t>(n) * g) {
        sh->generation.store(g);
    }
    Backoff backoff;
    while (sh->generation.load() < g) {
        backoff.pause();
    }
}

struct Variant {
    const char *name;
    bool p2p;
    uct_mm_incast_mode_t mode;
};

std::vector<std::size_t> parse_list(const char *s)
{
    std::vector<std::size_t> v;
    for (const char *p = s; *p != '\0';) {
        char *end;
        v.push_back(std::strtoull(p, &end, 10));
        p = (*end == ',') ? end + 1 : end;
    }
    return v;
}

double now_us()
{
    return std::chrono::duration<double, std::micro>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

uint64_t iters_for(std::size_t bytes, int n)
{
    const uint64_t budget = (64ull << 20) / (bytes * (n - 1) + 256);
    return std::clamp<uint64_t>(budget, 20, 2000);
}

// One run of `iters` incasts with mm_incast; returns us per incast (root).
double run_mm(int rank, int n, std::size_t bytes, bool reduce,
              uct_mm_incast_mode_t mode, uint64_t iters, int tag, Shared *sh,
              uint64_t *gen, pid_t parent)
{
    GroupConfig c;
    c.name =
        "/mmincast-bench-" + std::to_string(parent) + "-" + std::to_string(tag);
    c.group_size = static_cast<uint32_t>(n);
    c.member = static_cast<uint32_t>(rank);
    c.root = 0;
    c.mode = mode;
    c.op = reduce ? UCT_MM_INCAST_OP_SUM : UCT_MM_INCAST_OP_GATHER;
    c.dtype = UCT_MM_INCAST_DTYPE_INT32;
    c.max_bytes = bytes;
    c.elements = 8;
    std::unique_ptr<Group> g;
    if (Group::create(c, &g) != UCS_OK) {
        std::fprintf(stderr, "bench: group create failed\n");
        _exit(2);
    }
    std::vector<std::byte> buf(bytes * n, std::byte{1});
    barrier(sh, n, gen);
    const double t0 = now_us();
    for (uint64_t k = 0; k < iters; ++k) {
        std::size_t len;
        Backoff backoff;
        if (rank == 0) {
            while (g->recv(buf.data(), buf.size(), &len) != UCS_OK) {
                backoff.pause();
            }
        } else {
            while (g->send(buf.data(), bytes) != UCS_OK) {
                backoff.pause();
            }
        }
    }
    const double t = (now_us() - t0) / static_cast<double>(iters);
    barrier(sh, n, gen);
    return t;
}

double run_p2p(bench::PosixRank &p, int rank, int n, std::size_t bytes,
               bool reduce, uint64_t iters, Shared *sh, uint64_t *gen)
{
    std::vector<std::byte> buf(bytes * n, std::byte{1});
    p.reset();
    barrier(sh, n, gen);
    const double t0 = now_us();
    for (uint64_t k = 0; k < iters; ++k) {
        if (rank == 0) {
            p.root_incast(k, bytes, reduce, 0, n, buf.data());
        } else {
            p.send_incast(k, bytes, 0, buf.data());
        }
    }
    const double t = (now_us() - t0) / static_cast<double>(iters);
    if (rank != 0) {
        p.drain(iters);
    }
    barrier(sh, n, gen);
    return t;
}

} // namespace

int main(int argc, char **argv)
{
    std::vector<std::size_t> ns = {2, 4, 8};
    std::vector<std::size_t> sizes = {8, 64, 512, 4096, 32768, 262144, 1048576};
    int reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "-n"))
            ns = parse_list(argv[i + 1]);
        if (!std::strcmp(argv[i], "-s"))
            sizes = parse_list(argv[i + 1]);
        if (!std::strcmp(argv[i], "-r"))
            reps = std::atoi(argv[i + 1]);
    }
    const Variant variants[] = {
        {"p2p-posix", true, UCT_MM_INCAST_MODE_AUTO},
        {"batched", false, UCT_MM_INCAST_MODE_BATCHED},
        {"centralized", false, UCT_MM_INCAST_MODE_CENTRALIZED},
        {"locked", false, UCT_MM_INCAST_MODE_LOCKED},
        {"atomic", false, UCT_MM_INCAST_MODE_ATOMIC}};
    auto *sh = static_cast<Shared *>(mmap(nullptr, sizeof(Shared),
                                          PROT_READ | PROT_WRITE,
                                          MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    const pid_t parent = getpid();
    std::printf("%-3s %-6s %8s %-12s %6s %10s %10s %10s %8s\n", "N", "coll",
                "bytes", "variant", "iters", "median_us", "min_us", "max_us",
                "ratio");
    int tag = 0;
    for (std::size_t n : ns) {
        for (int reduce = 0; reduce < 2; ++reduce) {
            for (std::size_t bytes : sizes) {
                double base_median = 0;
                for (const Variant &v : variants) {
                    if (!reduce && !v.p2p &&
                        (v.mode == UCT_MM_INCAST_MODE_LOCKED ||
                         v.mode == UCT_MM_INCAST_MODE_ATOMIC)) {
                        continue; // gather needs slots
                    }
                    const uint64_t iters =
                        iters_for(bytes, static_cast<int>(n));
                    ++tag;
                    sh->arrived.store(0);
                    sh->generation.store(0);
                    std::vector<pid_t> kids;
                    for (std::size_t r = 0; r < n; ++r) {
                        pid_t pid = fork();
                        if (pid == 0) {
                            uint64_t gen = 0;
                            const int rank = static_cast<int>(r);
                            bench::PosixRank p;
                            if (v.p2p) {
                                p.open(rank, sh->addrs);
                                barrier(sh, static_cast<int>(n), &gen);
                                p.connect(static_cast<int>(n));
                                barrier(sh, static_cast<int>(n), &gen);
                            }
                            for (int rep = 0; rep < reps; ++rep) {
                                const double t =
                                    v.p2p ? run_p2p(p, rank,
                                                    static_cast<int>(n), bytes,
                                                    reduce, iters, sh, &gen)
                                          : run_mm(rank, static_cast<int>(n),
                                                   bytes, reduce, v.mode, iters,
                                                   tag * 100 + rep, sh, &gen,
                                                   parent);
                                if (rank == 0) {
                                    sh->results[rep] = t;
                                }
                            }
                            if (v.p2p) {
                                barrier(sh, static_cast<int>(n), &gen);
                                p.close();
                            }
                            _exit(0);
                        }
                        kids.push_back(pid);
                    }
                    bool ok = true;
                    for (pid_t k : kids) {
                        int st = 0;
                        waitpid(k, &st, 0);
                        ok = ok && WIFEXITED(st) && (WEXITSTATUS(st) == 0);
                    }
                    if (!ok) {
                        std::printf("%-3zu %-6s %8zu %-12s FAILED\n", n,
                                    reduce ? "reduce" : "gather", bytes,
                                    v.name);
                        continue;
                    }
                    std::vector<double> r(sh->results, sh->results + reps);
                    std::sort(r.begin(), r.end());
                    const double median = r[r.size() / 2];
                    if (v.p2p) {
                        base_median = median;
                    }
                    std::printf("%-3zu %-6s %8zu %-12s %6llu %10.3f %10.3f "
                                "%10.3f %8.3f\n",
                                n, reduce ? "reduce" : "gather", bytes, v.name,
                                static_cast<unsigned long long>(iters), median,
                                r.front(), r.back(),
                                base_median > 0 ? median / base_median : 0.0);
                    std::fflush(stdout);
                }
            }
        }
    }
    return 0;
}
