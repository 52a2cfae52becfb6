// SPDX-License-Identifier: BSD-3-Clause
// Stock UCX tools with the plugin LD_PRELOADed: ucx_info lists the
// transport and its UCX_MM_INCAST_* config; ucx_perftest runs am_lat and
// am_bw (short and bcopy) between two processes over it.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

// Sanitized builds preload the sanitizer runtime too (see CMakeLists.txt);
// the stock tools are not leak-clean, so leak checks are off for them.
const std::string kPreload = std::string("ASAN_OPTIONS=detect_leaks=0 "
                                         "LD_PRELOAD=") +
                             MM_INCAST_PRELOAD;

/// Runs a shell command; returns its exit status and stdout+stderr.
int run(const std::string &cmd, std::string *out)
{
    FILE *p = popen((cmd + " 2>&1").c_str(), "r");
    REQUIRE(p != nullptr);
    std::array<char, 4096> buf{};
    out->clear();
    while (fgets(buf.data(), buf.size(), p) != nullptr) {
        *out += buf.data();
    }
    return pclose(p);
}

int next_port()
{
    static int n = 0;
    return 20000 + (getpid() * 7 + n++ * 13) % 20000;
}

/// Server in the background, client in the foreground once the server
/// listens (its port in LISTEN state in /proc/net/tcp*, up to 30 s), both
/// under timeout; both must exit 0 and the client print its result. UCT
/// mode unless `ucp_args` is given (then UCP over UCX_TLS=mm_incast).
void perftest(const std::string &test, const std::string &layout,
              const std::string &ucp_args = "")
{
    const int port = next_port();
    char hex[8];
    std::snprintf(hex, sizeof(hex), "%04X", port);
    const std::string mode = ucp_args.empty()
                                 ? " -d memory -x mm_incast -D " + layout
                                 : " " + ucp_args;
    const std::string base =
        kPreload + " UCX_TLS=mm_incast timeout 30 ucx_perftest" + mode +
        " -t " + test + " -n 2000 -w 100 -s 64 -p " + std::to_string(port);
    std::string out;
    const std::string cmd =
        "s=$(mktemp); (" + base +
        " > $s 2>&1; echo \"server exit $?\" >> $s) & "
        "for i in $(seq 300); do grep -Eq ':" +
        hex +
        " [0-9A-F]+:0000 0A ' /proc/net/tcp /proc/net/tcp6 && break; "
        "sleep 0.1; done; " +
        base + " localhost; c=$?; wait; cat $s; rm -f $s; exit $c";
    const int rc = run(cmd, &out);
    INFO(cmd << "\n" << out);
    CHECK(rc == 0);
    CHECK(out.find("Final:") != std::string::npos);
    CHECK(out.find("server exit 0") != std::string::npos);
}

} // namespace

TEST_CASE("ucx_info -d lists mm_incast with its capabilities",
          "[mm_incast][ucx]")
{
    std::string out;
    REQUIRE(run(kPreload + " ucx_info -d", &out) == 0);
    INFO(out);
    CHECK(out.find("Transport: mm_incast") != std::string::npos);
    CHECK(out.find("Component: mm_incast") != std::string::npos);
    CHECK(out.find("am_short") != std::string::npos);
    CHECK(out.find("am_bcopy") != std::string::npos);
    CHECK(out.find("connection: to iface") != std::string::npos);
    CHECK(out.find("error handling: peer failure, ep_check") !=
          std::string::npos);
}

TEST_CASE("ucx_info -c shows UCX_MM_INCAST_* settings", "[mm_incast][ucx]")
{
    std::string out;
    REQUIRE(run(kPreload + " UCX_MM_INCAST_MODE=locked ucx_info -c", &out) ==
            0);
    INFO(out);
    CHECK(out.find("UCX_MM_INCAST_MODE=locked") != std::string::npos);
    // AUTO's crossovers, with today's table as the defaults.
    for (const char *line : {"UCX_MM_INCAST_AUTO_ATOMIC_MAX=8\n",
                             "UCX_MM_INCAST_AUTO_LOCKED_MIN=32K\n",
                             "UCX_MM_INCAST_AUTO_LOCKED_MIN_GROUP=4\n",
                             "UCX_MM_INCAST_AUTO_PAIR_GROUP=2\n",
                             "UCX_MM_INCAST_AUTO_PAIR_LOCKED_MIN=inf\n",
                             "UCX_MM_INCAST_AUTO_GATHER_BATCHED_MAX_GROUP=4\n",
                             "UCX_MM_INCAST_DIRECT_SIZE=4K\n",
                             "UCX_MM_INCAST_DIRECT_MAX_GROUP=16\n",
                             "UCX_MM_INCAST_STREAM_THRESH=inf\n"}) {
        INFO(line);
        CHECK(out.find(line) != std::string::npos);
    }
    // The same suffixes as mm_bcast's for the same things.
    for (const char *name :
         {"FIFO_SIZE", "SEG_SIZE", "MAX_GROUP_SIZE", "TIMEOUT",
          "ATTACH_TIMEOUT", "MAX_OUTSTANDING", "GROUP_RING_SIZE",
          "GROUP_SEG_SIZE", "STREAM_THRESH"}) {
        INFO(name);
        CHECK(out.find(std::string("UCX_MM_INCAST_") + name + "=") !=
              std::string::npos);
    }
}

TEST_CASE("ucx_perftest am_lat runs over mm_incast", "[mm_incast][ucx]")
{
    perftest("am_lat", "short");
    perftest("am_lat", "bcopy");
}

TEST_CASE("ucx_perftest am_bw runs over mm_incast", "[mm_incast][ucx]")
{
    perftest("am_bw", "short");
    perftest("am_bw", "bcopy");
}

TEST_CASE("ucx_perftest tag_lat over mm_incast with peer error handling",
          "[mm_incast][ucx]")
{
    perftest("tag_lat", "", "-e"); // UCP endpoints in peer error mode
}
