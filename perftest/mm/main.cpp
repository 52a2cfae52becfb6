// SPDX-License-Identifier: BSD-3-Clause
// ucg_mm_perftest: shared-memory one-to-many transports (mm_bcast fan-out,
// mm_incast fan-in) against the floor (cache-line ping-pong) and UCX
// point-to-point, in one table. Usage:
//   ucg_mm_perftest [-n 2,4,8] [-s 8,4096,...] [-i scale]
//                   [-b pingpong,bcast,incast]
#include "bench_common.h"
#include "benches.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace ucg_mm_bench;

namespace {

template <typename T> std::vector<T> parse_list(const char *arg)
{
    std::vector<T> out;
    std::stringstream ss(arg);
    std::string item;
    while (std::getline(ss, item, ',')) {
        out.push_back(static_cast<T>(std::stoull(item)));
    }
    return out;
}

} // namespace

int main(int argc, char **argv)
{
    Options opts;
    std::string which = "pingpong,bcast,incast";
    int c;
    while ((c = getopt(argc, argv, "n:s:i:b:h")) != -1) {
        switch (c) {
        case 'n':
            opts.group_sizes = parse_list<int>(optarg);
            break;
        case 's':
            opts.msg_bytes = parse_list<std::size_t>(optarg);
            break;
        case 'i':
            opts.iter_scale = std::atof(optarg);
            break;
        case 'b':
            which = optarg;
            break;
        default:
            std::fprintf(stderr,
                         "usage: %s [-n 2,4,8] [-s bytes,...] [-i scale] "
                         "[-b pingpong,bcast,incast]\n",
                         argv[0]);
            return c == 'h' ? 0 : 2;
        }
    }
    for (int n : opts.group_sizes) {
        if (n < 2 || n > 8) {
            std::fprintf(stderr, "group sizes must be 2..8\n");
            return 2;
        }
    }
    int rc = 0;
    print_header();
    if (which.find("pingpong") != std::string::npos) {
        rc |= bench_pingpong(opts);
    }
    if (which.find("bcast") != std::string::npos) {
        rc |= bench_bcast(opts);
    }
    if (which.find("incast") != std::string::npos) {
        rc |= bench_incast(opts);
    }
    return rc;
}
