// SPDX-License-Identifier: BSD-3-Clause
// ucg_reduce_perftest: throughput of the ucg_reduce kernels against a
// plain memcpy of the same bytes, measured in the same run.
//
//   ucg_reduce_perftest [--reps R] [--sizes 64,4k,256k,16m] [--sample BYTES]
//
// Cases: sum int32, sum float, sum double, max int64 (dst op= src) and a
// 4-source ucg_reduce_multi (dst = s0 + s1 + s2 + s3, double); then
// memcpy and ucg_copy (ucg/copy.h) to a dst 16 bytes past src modulo
// 4 KiB, where glibc's `rep movsb` slows down (two heap buffers allocated
// one after the other sit so). GB/s counts
// the bytes of dst per second (1 GB = 1e9 B); one sample repeats the call
// until about --sample bytes of dst went through, timed in the thread's CPU
// time so preemption on a shared host is not counted. Each repetition
// times memcpy and every case at one size in turn; `x_memcpy` is the
// median over repetitions of (case GB/s / memcpy GB/s of that repetition).
#include <ucg/copy.h>
#include <ucg/reduce.h>

#include "tool_cli.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

namespace {

struct Options {
    int reps = 11;
    std::vector<std::size_t> sizes = {64, 4096, 256 << 10, 16 << 20};
    std::size_t sample_bytes = 64 << 20;
};

struct Case {
    const char *name;
    ucg_op_t op;
    ucg_dtype_t dtype;
    unsigned nsrcs; // 0: ucg_reduce(dst, src); else ucg_reduce_multi
};

constexpr Case kCases[] = {
    {"sum int32", UCG_OP_SUM, UCG_DTYPE_INT32, 0},
    {"sum float", UCG_OP_SUM, UCG_DTYPE_FLOAT, 0},
    {"sum double", UCG_OP_SUM, UCG_DTYPE_DOUBLE, 0},
    {"max int64", UCG_OP_MAX, UCG_DTYPE_INT64, 0},
    {"multi4 sum double", UCG_OP_SUM, UCG_DTYPE_DOUBLE, 4},
};
constexpr unsigned kMaxSources = 4;

long cpu_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/// Keeps the compiler from dropping or merging calls whose result it
/// cannot see used.
void clobber(void *p)
{
    asm volatile("" : : "r"(p) : "memory");
}

/// Buffers of one size: dst, the memcpy target and the sources.
class Buffers {
  public:
    explicit Buffers(std::size_t bytes) : bytes_(bytes)
    {
        for (auto *&b : all_) {
            b = static_cast<unsigned char *>(std::aligned_alloc(64, padded()));
            std::memset(b, 0, padded());
        }
        // Sources of 1.0 (double) and small integers: no denormals, and
        // repeated sums stay finite.
        for (unsigned s = 0; s < kMaxSources; ++s) {
            auto *d = reinterpret_cast<double *>(src(s));
            std::fill(d, d + bytes / sizeof(double), 1.0);
        }
    }
    ~Buffers()
    {
        for (auto *b : all_) {
            std::free(b);
        }
    }
    Buffers(const Buffers &) = delete;
    Buffers &operator=(const Buffers &) = delete;

    unsigned char *dst() const { return all_[0]; }
    unsigned char *copy() const { return all_[1]; }
    unsigned char *src(unsigned s) const { return all_[2 + s]; }

  private:
    std::size_t padded() const { return (bytes_ + 63) / 64 * 64; }
    std::size_t bytes_;
    unsigned char *all_[2 + kMaxSources] = {};
};

/// GB/s of one sample of `call` moving `bytes` of dst per call.
template <typename F> double sample_gbs(std::size_t bytes, long iters, F call)
{
    const long start = cpu_ns();
    for (long i = 0; i < iters; ++i) {
        call();
    }
    const long ns = std::max(1L, cpu_ns() - start);
    return static_cast<double>(bytes) * static_cast<double>(iters) /
           static_cast<double>(ns);
}

void run_case(const Case &c, const Buffers &buf, std::size_t bytes)
{
    const std::size_t count = bytes / ucg_dtype_size(c.dtype);
    if (c.nsrcs == 0) {
        ucg_reduce(c.op, c.dtype, buf.dst(), buf.src(0), count);
    } else {
        const void *srcs[kMaxSources] = {buf.src(0), buf.src(1), buf.src(2),
                                         buf.src(3)};
        ucg_reduce_multi(c.op, c.dtype, buf.dst(), srcs, c.nsrcs, count, 0);
    }
    clobber(buf.dst());
}

double median_of(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return (n % 2) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void print_row(const char *name, std::size_t bytes,
               const std::vector<double> &gbs, double ratio)
{
    const auto [lo, hi] = std::minmax_element(gbs.begin(), gbs.end());
    std::printf("%-18s %10zu %10.2f %10.2f %10.2f %9.2f\n", name, bytes,
                median_of(gbs), *lo, *hi, ratio);
}

void run_size(const Options &opt, std::size_t bytes)
{
    constexpr std::size_t kNumCases = std::size(kCases);
    const Buffers buf(bytes);
    const long iters =
        std::max(1L, static_cast<long>(opt.sample_bytes / bytes));
    const auto copy = [&] {
        std::memcpy(buf.copy(), buf.src(0), bytes);
        clobber(buf.copy());
    };
    copy(); // warm up: first touch, caches
    for (const Case &c : kCases) {
        run_case(c, buf, bytes);
    }
    // dst 16 bytes past src(0) modulo 4 KiB.
    std::vector<unsigned char> near_buf(bytes + 4096 + 64);
    const auto sa = reinterpret_cast<std::uintptr_t>(buf.src(0));
    const auto na = reinterpret_cast<std::uintptr_t>(near_buf.data());
    unsigned char *near = near_buf.data() + (sa + 16 - na) % 4096;
    const auto near_memcpy = [&] {
        std::memcpy(near, buf.src(0), bytes);
        clobber(near);
    };
    const auto near_ucg_copy = [&] {
        ucg_copy(near, buf.src(0), bytes);
        clobber(near);
    };
    near_memcpy();
    std::vector<double> copy_gbs;
    std::vector<std::vector<double>> gbs(kNumCases + 2), ratio(kNumCases + 2);
    for (int r = 0; r < opt.reps; ++r) {
        copy_gbs.push_back(sample_gbs(bytes, iters, copy));
        for (std::size_t k = 0; k < kNumCases + 2; ++k) {
            gbs[k].push_back(
                k == kNumCases       ? sample_gbs(bytes, iters, near_memcpy)
                : k == kNumCases + 1 ? sample_gbs(bytes, iters, near_ucg_copy)
                                     : sample_gbs(bytes, iters, [&] {
                                           run_case(kCases[k], buf, bytes);
                                       }));
            ratio[k].push_back(gbs[k].back() / copy_gbs.back());
        }
    }
    print_row("memcpy", bytes, copy_gbs, 1.0);
    for (std::size_t k = 0; k < kNumCases; ++k) {
        print_row(kCases[k].name, bytes, gbs[k], median_of(ratio[k]));
    }
    print_row("memcpy +16/4K", bytes, gbs[kNumCases],
              median_of(ratio[kNumCases]));
    print_row("ucg_copy +16/4K", bytes, gbs[kNumCases + 1],
              median_of(ratio[kNumCases + 1]));
}

/// "64", "4k", "16m" -> bytes; 0 when malformed.
std::size_t parse_bytes(const std::string &text)
{
    char *end = nullptr;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || (end == text.c_str()) || (text[0] == '-')) {
        return 0;
    }
    const std::string suffix = end;
    if (suffix.empty()) {
        return v;
    }
    if (suffix == "k" || suffix == "K") {
        return v << 10;
    }
    if (suffix == "m" || suffix == "M") {
        return v << 20;
    }
    return 0;
}

/// A byte count of dst (k/m suffixes): a multiple of 8, at least 8.
CLI::Validator dst_bytes()
{
    return CLI::Validator(
        [](std::string &text) -> std::string {
            const std::size_t b = parse_bytes(text);
            if (b < 8 || b % 8 != 0) {
                return "expected a multiple of 8 bytes (k/m suffixes), got '" +
                       text + "'";
            }
            return {};
        },
        "BYTES");
}

/// Parses argv into opt; the exit status when the tool should stop.
std::optional<int> parse_args(int argc, char **argv, Options &opt)
{
    CLI::App app{"ucg_reduce_perftest: reduction kernel throughput against "
                 "memcpy. Prints GB/s of dst (median, min, max over "
                 "repetitions) and x_memcpy, the median ratio to memcpy of "
                 "the same bytes in the same repetition. Exit status: 0 done, "
                 "2 bad command line.",
                 "ucg_reduce_perftest"};
    ucg::tools::add_version(app);
    std::vector<std::string> sizes;
    std::string sample = "64m";
    app.add_option("--reps", opt.reps, "repetitions per size")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    app.add_option("--sizes", sizes,
                   "dst bytes, comma separated, k/m suffixes (default "
                   "64,4k,256k,16m)")
        ->delimiter(',')
        ->check(dst_bytes());
    app.add_option("--sample", sample, "dst bytes per timed sample")
        ->check(dst_bytes())
        ->capture_default_str();
    if (const auto rc = ucg::tools::parse(app, argc, argv)) {
        return rc;
    }
    if (!sizes.empty()) {
        opt.sizes.clear();
        for (const std::string &text : sizes) {
            opt.sizes.push_back(parse_bytes(text));
        }
    }
    opt.sample_bytes = parse_bytes(sample);
    return std::nullopt;
}

} // namespace

int main(int argc, char **argv)
{
    Options opt;
    if (const auto status = parse_args(argc, argv, opt)) {
        return *status;
    }
    std::printf("ucg_reduce_perftest: %d reps, %zu dst bytes per sample; "
                "GB/s of dst bytes (thread CPU time)\n",
                opt.reps, opt.sample_bytes);
    std::printf("%-18s %10s %10s %10s %10s %9s\n", "case", "bytes", "median",
                "min", "max", "x_memcpy");
    for (std::size_t bytes : opt.sizes) {
        run_size(opt, bytes);
    }
    return 0;
}
