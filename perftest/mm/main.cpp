// SPDX-License-Identifier: BSD-3-Clause
// ucg_mm_perftest: shared-memory one-to-many transports (mm_bcast fan-out,
// mm_incast fan-in) against the floor (cache-line ping-pong) and UCX
// point-to-point, in one table. Usage (--help for all):
//   ucg_mm_perftest [-n 2,4,8] [-s 8,4096,...] [-i scale]
//                   [-b pingpong,bcast,incast] [--calibrate]
#include "bench_common.h"
#include "benches.h"

#include "tool_cli.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace ucg_mm_bench;

static int tool_main(int argc, char **argv)
{
    Options opts;
    std::vector<std::string> which = {"pingpong", "bcast", "incast"};
    CLI::App app{"ucg_mm_perftest: mm_bcast and mm_incast against the "
                 "cache-line floor and UCX point-to-point (posix). Exit "
                 "status: 0 done, 1 a benchmark failed, 2 bad command line.",
                 "ucg_mm_perftest"};
    ucg::tools::add_version(app);
    app.add_option("-n,--group-sizes", opts.group_sizes,
                   "comma-separated group sizes")
        ->delimiter(',')
        ->check(CLI::Range(2, kMaxRanks))
        ->capture_default_str();
    app.add_option("-s,--sizes", opts.msg_bytes,
                   "comma-separated message sizes in bytes")
        ->delimiter(',')
        ->check(ucg::tools::at_least(1))
        ->capture_default_str();
    app.add_option("-i,--iter-scale", opts.iter_scale,
                   "multiplies the per-size iteration counts")
        ->check(ucg::tools::positive_finite())
        ->capture_default_str();
    app.add_option("-b,--benchmarks", which, "comma-separated benchmarks")
        ->delimiter(',')
        ->check(CLI::IsMember({"pingpong", "bcast", "incast"}))
        ->capture_default_str();
    bool calibrate = false;
    app.add_flag("--calibrate", calibrate,
                 "measure the transports' paths at these sizes and group "
                 "sizes and print the UCX_MM_* thresholds (export lines) "
                 "that make the automatic choice the fastest measured");
    if (const auto rc = ucg::tools::parse(app, argc, argv)) {
        return *rc;
    }
    const auto wants = [&which](const char *b) {
        return std::find(which.begin(), which.end(), b) != which.end();
    };
    if (calibrate) {
        if (app.count("--iter-scale") == 0) {
            opts.iter_scale = 0.25; // a short sweep: 250 iterations a point
        }
        return run_calibrate(opts, wants("incast"), wants("bcast"));
    }
    int rc = 0;
    print_header();
    if (wants("pingpong")) {
        rc |= bench_pingpong(opts);
    }
    if (wants("bcast")) {
        rc |= bench_bcast(opts);
    }
    if (wants("incast")) {
        rc |= bench_incast(opts);
    }
    return rc;
}

int main(int argc, char **argv)
{
    return ucg::tools::guarded_main("ucg_mm_perftest",
                                    [&] { return tool_main(argc, argv); });
}
