// SPDX-License-Identifier: BSD-3-Clause
// ucg_mcast_perftest: ud_mcast (UDP multicast wire) broadcast to N
// receivers against N sends over UCX tcp, measured in the same run:
// latency at 8 B for each N, throughput at 64 KiB with injected loss, and
// the bytes the reliability protocol adds per delivered byte.
#include "bench.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <getopt.h>
#include <new>
#include <sstream>
#include <string>
#include <sys/mman.h>

using namespace ucg_mcast_bench;

namespace {

void usage(FILE *out, const char *prog)
{
    std::fprintf(out,
                 "usage: %s [--reps R] [--rounds I] [--msgs M] "
                 "[--receivers 2,4,8]\n"
                 "          [--loss 0,0.01,0.05] [--bw-receivers N] "
                 "[--dev lo] [--block]\n"
                 "--block: idle waits sleep on the iface event fd (1 ms "
                 "at most) instead of sched_yield\n"
                 "Needs libuct_udmcast.so loaded (linked; or LD_PRELOAD).\n",
                 prog);
}

template <typename T> std::vector<T> parse_list(const char *arg)
{
    std::vector<T> out;
    std::stringstream ss(arg);
    std::string item;
    while (std::getline(ss, item, ',')) {
        out.push_back(static_cast<T>(std::stod(item)));
    }
    return out;
}

Board *new_board()
{
    void *p = mmap(nullptr, sizeof(Board), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        die("mmap");
    }
    return new (p) Board();
}

// Runs one measurement on n + 1 ranks; returns the stats of the results.
Stats measure(unsigned n, const Options &o,
              const std::function<void(unsigned, Board *)> &body,
              Board **board_out = nullptr)
{
    Board *b = new_board();
    if (!run_ranks(n + 1, b, body)) {
        die("a rank failed");
    }
    const Stats s = stats(b->result, o.reps);
    if (board_out != nullptr) {
        *board_out = b;
    } else {
        munmap(b, sizeof(Board));
    }
    return s;
}

void latency_table(const Options &o)
{
    std::printf("latency, 8 B: the root sends to N receivers, the last one "
                "answers 8 B; us per round over %u reps of %u rounds\n",
                o.reps, o.lat_rounds);
    std::printf("%-3s %-26s %-26s %s\n", "N", "ud_mcast min/med/max",
                "tcp fan-out min/med/max", "ud/tcp");
    double first = 0, last = 0;
    for (unsigned n : o.receivers) {
        const Stats m = measure(
            n, o, [&](unsigned r, Board *b) { mcast_latency(r, b, n, o); });
        const Stats t = measure(
            n, o, [&](unsigned r, Board *b) { tcp_latency(r, b, n, o); });
        std::printf("%-3u %7.2f %7.2f %7.2f     %7.2f %7.2f %7.2f     %.2f\n",
                    n, m.min, m.median, m.max, t.min, t.median, t.max,
                    m.median / t.median);
        std::fflush(stdout);
        first = first == 0 ? m.median : first;
        last = m.median;
    }
    std::printf("ud_mcast N=%u / N=%u (medians): %.2f\n\n", o.receivers.back(),
                o.receivers.front(), last / first);
}

void bandwidth_table(const Options &o)
{
    const unsigned n = o.bw_receivers;
    const double per_rep = static_cast<double>(o.bw_msgs) * kBwBytes;
    std::printf("throughput, 64 KiB x %u messages to N=%u receivers; MB/s "
                "each receiver gets (min/med/max over %u reps)\n",
                o.bw_msgs, n, o.reps);
    const Stats t =
        measure(n, o, [&](unsigned r, Board *b) { tcp_bandwidth(r, b, n, o); });
    std::printf("%-18s %8.1f %8.1f %8.1f\n", "tcp fan-out",
                per_rep / t.max / 1e6, per_rep / t.median / 1e6,
                per_rep / t.min / 1e6);
    for (double loss : o.losses) {
        Board *b = nullptr;
        const Stats m = measure(
            n, o,
            [&](unsigned r, Board *bb) { mcast_bandwidth(r, bb, n, loss, o); },
            &b);
        double extra = 0;
        for (unsigned rep = 0; rep < o.reps; ++rep) {
            for (unsigned r = 0; r <= n; ++r) {
                extra += static_cast<double>(b->overhead[rep][r]);
            }
        }
        extra /= per_rep * n * o.reps;
        munmap(b, sizeof(Board));
        char label[64];
        std::snprintf(label, sizeof(label), "ud_mcast loss %.0f%%", loss * 100);
        std::printf("%-18s %8.1f %8.1f %8.1f   x%.2f of tcp   reliability "
                    "bytes per delivered byte %.4f\n",
                    label, per_rep / m.max / 1e6, per_rep / m.median / 1e6,
                    per_rep / m.min / 1e6, t.median / m.median, extra);
        std::fflush(stdout);
    }
}

bool parse(int argc, char **argv, Options *o, bool *help)
{
    static const option longs[] = {
        {"reps", required_argument, nullptr, 'r'},
        {"rounds", required_argument, nullptr, 'i'},
        {"msgs", required_argument, nullptr, 'm'},
        {"receivers", required_argument, nullptr, 'n'},
        {"loss", required_argument, nullptr, 'l'},
        {"bw-receivers", required_argument, nullptr, 'b'},
        {"dev", required_argument, nullptr, 'd'},
        {"block", no_argument, nullptr, 'k'},
        {"help", no_argument, nullptr, 'h'},
        {nullptr, 0, nullptr, 0}};
    opterr = 0;
    int c;
    int at = 0;
    while ((c = getopt_long(argc, argv, "h", longs, &at)) != -1) {
        try {
            switch (c) {
            case 'r':
                o->reps = static_cast<unsigned>(std::stoul(optarg));
                break;
            case 'i':
                o->lat_rounds = static_cast<unsigned>(std::stoul(optarg));
                break;
            case 'm':
                o->bw_msgs = static_cast<unsigned>(std::stoul(optarg));
                break;
            case 'n':
                o->receivers = parse_list<unsigned>(optarg);
                break;
            case 'l':
                o->losses = parse_list<double>(optarg);
                break;
            case 'b':
                o->bw_receivers = static_cast<unsigned>(std::stoul(optarg));
                break;
            case 'd':
                o->dev = optarg;
                break;
            case 'k':
                o->block = true;
                break;
            case 'h':
                *help = true;
                return true;
            default:
                std::fprintf(stderr,
                             "ucg_mcast_perftest: unknown option '%s'\n",
                             argv[optind - 1]);
                return false;
            }
        } catch (const std::exception &) {
            std::fprintf(stderr,
                         "ucg_mcast_perftest: bad value '%s' for --%s\n",
                         optarg, longs[at].name);
            return false;
        }
    }
    if (optind != argc) {
        std::fprintf(stderr, "ucg_mcast_perftest: unexpected '%s'\n",
                     argv[optind]);
        return false;
    }
    bool ok = o->reps >= 1 && o->reps <= kMaxReps && o->lat_rounds >= 1 &&
              o->bw_msgs >= 1 && !o->receivers.empty() &&
              o->bw_receivers >= 1 && o->bw_receivers < kMaxRanks;
    for (unsigned n : o->receivers) {
        ok = ok && n >= 1 && n < kMaxRanks;
    }
    for (double l : o->losses) {
        ok = ok && l >= 0 && l < 0.5;
    }
    if (!ok) {
        std::fprintf(stderr,
                     "ucg_mcast_perftest: --reps 1..%u, receivers "
                     "1..%u, loss in [0, 0.5)\n",
                     kMaxReps, kMaxRanks - 1);
    }
    return ok;
}

} // namespace

int main(int argc, char **argv)
{
    Options o;
    bool help = false;
    if (!parse(argc, argv, &o, &help)) {
        usage(stderr, argv[0]);
        return 2;
    }
    if (help) {
        usage(stdout, argv[0]);
        return 0;
    }
    g_block = o.block;
    std::printf("waits: %s\n\n",
                o.block ? "block on the event fd" : "spin, then sched_yield");
    latency_table(o);
    bandwidth_table(o);
    return 0;
}
