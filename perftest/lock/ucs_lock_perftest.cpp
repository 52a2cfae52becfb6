// SPDX-License-Identifier: BSD-3-Clause
// ucs_lock_perftest: acquire+release cost of the ucs_lock kinds against a
// process-shared pthread_mutex_t, uncontended (one process) and contended
// (N forked processes on one shared mapping), several repetitions each.
//
//   ucs_lock_perftest [--reps R] [--iters N] [--contended-iters M]
//                     [--procs 2,8] [--outside-work W]
//
// --help and --version exit 0; a bad value (--procs outside 2..64, --reps
// or an iteration count below 1) exits 2 with one line naming the flag.
//
// Every operation is acquire, increment a plain shared counter, release;
// the counter is checked afterwards. Uncontended ns/op is the thread's CPU
// time per op; contended ns/op is wall time from a
// common start to the last process's end divided by all operations.
// x_pthread is the median over repetitions of (ns/op / pthread's ns/op in
// the same repetition).
#include "ucs_lock/ucs_lock.h"

#include "tool_cli.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <pthread.h>
#include <sched.h>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

// kPthreadRobust is for reference only (what the robust list costs).
enum class Kind { kPthread, kPthreadRobust, kMutex, kSpin };
constexpr Kind kKinds[] = {Kind::kPthread, Kind::kPthreadRobust, Kind::kMutex,
                           Kind::kSpin};

const char *kind_name(Kind kind)
{
    switch (kind) {
    case Kind::kPthread:
        return "pthread_mutex (pshared)";
    case Kind::kPthreadRobust:
        return "pthread_mutex (+robust)";
    case Kind::kMutex:
        return "ucs_lock mutex";
    default:
        return "ucs_lock spin";
    }
}

struct Shared {
    ucs_lock_t lock;              // ucs kinds
    pthread_mutex_t pthread_lock; // the baseline
    alignas(64) long counter;     // under the lock
    alignas(64) std::atomic<int> ready;
    std::atomic<int> go;
    std::atomic<long> end_ns[64]; // per process
};

long now_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// CPU time of this thread: uncontended samples do not count the time other
// work on the (shared, 2-core) machine preempts us.
long cpu_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

void init_lock(Shared *s, Kind kind)
{
    if (kind == Kind::kPthread || kind == Kind::kPthreadRobust) {
        pthread_mutexattr_t attr;
        pthread_mutexattr_init(&attr);
        pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
        if (kind == Kind::kPthreadRobust) {
            pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
        }
        pthread_mutex_init(&s->pthread_lock, &attr);
        pthread_mutexattr_destroy(&attr);
        return;
    }
    const auto ucs_kind =
        kind == Kind::kMutex ? UCS_LOCK_KIND_MUTEX : UCS_LOCK_KIND_SPIN;
    if (ucs_lock_init(&s->lock, ucs_kind) != UCS_OK) {
        std::fprintf(stderr, "ucs_lock_init failed\n");
        std::exit(1);
    }
}

void destroy_lock(Shared *s, Kind kind)
{
    if (kind == Kind::kPthread || kind == Kind::kPthreadRobust) {
        pthread_mutex_destroy(&s->pthread_lock);
    } else {
        ucs_lock_destroy(&s->lock);
    }
}

// Iterations of local work between two operations (--outside-work): 0
// gives the usual tight loop, where the lock mostly stays with one process
// for long batches; some work forces more handoffs between processes.
int g_outside_work = 0;

void outside_work()
{
    for (int j = 0; j < g_outside_work; ++j) {
        asm volatile("" ::: "memory");
    }
}

// The measured loop; templated so each kind gets its own tight loop.
template <Kind kKind> void run_ops(Shared *s, long iters)
{
    for (long i = 0; i < iters; ++i) {
        outside_work();
        if constexpr (kKind == Kind::kPthread ||
                      kKind == Kind::kPthreadRobust) {
            pthread_mutex_lock(&s->pthread_lock);
            ++s->counter;
            pthread_mutex_unlock(&s->pthread_lock);
        } else {
            ucs_lock_acquire(&s->lock);
            ++s->counter;
            ucs_lock_release(&s->lock);
        }
    }
}

void run_ops(Shared *s, Kind kind, long iters)
{
    switch (kind) {
    case Kind::kPthread:
        return run_ops<Kind::kPthread>(s, iters);
    case Kind::kPthreadRobust:
        return run_ops<Kind::kPthreadRobust>(s, iters);
    case Kind::kMutex:
        return run_ops<Kind::kMutex>(s, iters);
    default:
        return run_ops<Kind::kSpin>(s, iters);
    }
}

// One repetition with `procs` processes (1: this process); ns per op.
double measure(Shared *s, Kind kind, int procs, long iters)
{
    s->counter = 0;
    init_lock(s, kind);
    double ns_per_op;
    if (procs == 1) {
        run_ops(s, kind, iters / 10); // warm up
        s->counter = 0;
        const long start = cpu_ns();
        run_ops(s, kind, iters);
        ns_per_op = static_cast<double>(cpu_ns() - start) / iters;
    } else {
        s->ready.store(0);
        s->go.store(0);
        std::vector<pid_t> pids;
        for (int p = 0; p < procs; ++p) {
            const pid_t pid = fork();
            if (pid == 0) {
                s->ready.fetch_add(1);
                while (s->go.load() == 0) {
                    sched_yield();
                }
                run_ops(s, kind, iters);
                s->end_ns[p].store(now_ns());
                _exit(0);
            }
            pids.push_back(pid);
        }
        while (s->ready.load() < procs) {
            sched_yield();
        }
        const long start = now_ns();
        s->go.store(1);
        long end = start;
        for (int p = 0; p < procs; ++p) {
            int status = 0;
            waitpid(pids[static_cast<std::size_t>(p)], &status, 0);
            end = std::max(end, s->end_ns[p].load());
        }
        ns_per_op = static_cast<double>(end - start) / (iters * procs);
    }
    if (s->counter != iters * procs) {
        std::fprintf(stderr, "%s: counter %ld, expected %ld: LOST UPDATES\n",
                     kind_name(kind), s->counter, iters * procs);
        std::exit(1);
    }
    destroy_lock(s, kind);
    return ns_per_op;
}

struct Row {
    double median, min, max; // ns per op
    double ratio;            // median over reps of ns / pthread's ns
};

double median_of(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Repetitions interleave the kinds, so a burst of load from elsewhere hits
// all of them; each ratio compares samples of the same repetition.
std::vector<Row> measure_rows(Shared *s, int procs, long iters, int reps)
{
    constexpr std::size_t kNum = std::size(kKinds);
    std::vector<std::vector<double>> ns(kNum), ratio(kNum);
    for (int r = 0; r < reps; ++r) {
        double sample[kNum];
        for (std::size_t k = 0; k < kNum; ++k) {
            sample[k] = measure(s, kKinds[k], procs, iters);
            ns[k].push_back(sample[k]);
        }
        for (std::size_t k = 0; k < kNum; ++k) {
            ratio[k].push_back(sample[k] / sample[0]);
        }
    }
    std::vector<Row> rows;
    for (std::size_t k = 0; k < kNum; ++k) {
        const auto [lo, hi] = std::minmax_element(ns[k].begin(), ns[k].end());
        rows.push_back({median_of(ns[k]), *lo, *hi, median_of(ratio[k])});
    }
    return rows;
}

} // namespace

static int tool_main(int argc, char **argv)
{
    int reps = 7;
    long iters = 2000000;
    long contended_iters = 200000;
    std::vector<int> procs_list = {2, 8};
    CLI::App app{"ucs_lock_perftest: ucs_lock kinds against a process-shared "
                 "pthread mutex, uncontended and contended. Exit status: 0 "
                 "done, 1 failed, 2 bad command line.",
                 "ucs_lock_perftest"};
    ucg::tools::add_version(app);
    app.add_option("--reps", reps, "repetitions per measurement")
        ->check(ucg::tools::at_least(1))
        ->capture_default_str();
    app.add_option("--iters", iters, "operations, uncontended")
        ->check(ucg::tools::at_least(1))
        ->capture_default_str();
    app.add_option("--contended-iters", contended_iters,
                   "operations per process, contended")
        ->check(ucg::tools::at_least(1))
        ->capture_default_str();
    app.add_option("--outside-work", g_outside_work,
                   "loop iterations outside the lock per operation")
        ->check(ucg::tools::at_least(0))
        ->capture_default_str();
    app.add_option("--procs", procs_list,
                   "comma-separated process counts, contended (2..64)")
        ->delimiter(',')
        ->check(CLI::Range(2, 64))
        ->capture_default_str();
    if (const auto rc = ucg::tools::parse(app, argc, argv)) {
        return *rc;
    }
    void *mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        std::perror("mmap");
        return 1;
    }
    auto *s = new (mem) Shared{};

    std::vector<int> all_procs = {1};
    all_procs.insert(all_procs.end(), procs_list.begin(), procs_list.end());
    std::printf("ucs_lock_perftest: %d reps; %ld ops uncontended, %ld ops "
                "per process contended; outside work %d; %ld cpus online\n",
                reps, iters, contended_iters, g_outside_work,
                sysconf(_SC_NPROCESSORS_ONLN));
    std::printf("%-24s %5s %10s %10s %10s %10s\n", "lock", "procs", "median_ns",
                "min_ns", "max_ns", "x_pthread");
    bool goal_met = true;
    for (int procs : all_procs) {
        const long n = procs == 1 ? iters : contended_iters;
        const std::vector<Row> rows = measure_rows(s, procs, n, reps);
        for (std::size_t k = 0; k < rows.size(); ++k) {
            const Row &row = rows[k];
            std::printf("%-24s %5d %10.1f %10.1f %10.1f %10.2f\n",
                        kind_name(kKinds[k]), procs, row.median, row.min,
                        row.max, row.ratio);
            const bool reference = kKinds[k] == Kind::kPthreadRobust;
            if (kKinds[k] == Kind::kSpin && procs == 1 && row.ratio > 1.0) {
                goal_met = false;
            }
            if (procs > 1 && !reference && row.ratio > 2.0) {
                goal_met = false;
            }
        }
    }
    if (g_outside_work == 0) {
        std::printf("goal (spin uncontended <= pthread, all contended <= 2x "
                    "pthread): %s\n",
                    goal_met ? "met" : "NOT met");
    }
    munmap(mem, sizeof(Shared));
    return 0;
}

int main(int argc, char **argv)
{
    return ucg::tools::guarded_main("ucs_lock_perftest",
                                    [&] { return tool_main(argc, argv); });
}
