// SPDX-License-Identifier: BSD-3-Clause
// The runtime's mcast channel (issue 10): with UCG_MCAST=1 and ranks
// posing as several hosts, a bcast whose world level a rule sets to mcast
// runs over ud_mcast groups of the hosts' leaders (UDP multicast on the
// loopback here), for several sizes (0, one packet, more than one) and
// every root, with and without lost packets; without multicast the same
// rule falls back to the cost model.
#include "coll_ref.h"
#include "rank_env.h"

#include <catch2/catch.hpp>
#include <ucg_test/check.h>
#include <ucg_test/skip.h>

#include <arpa/inet.h>
#include <cstdlib>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace ucg::test {

namespace {

// kLoOnly: with multicast on, UCP opens ud_mcast on every device it
// lists; when the emulated cluster's bridges lived in this namespace, an
// iface opened on one that just lost its address failed the context
// ("interface ucgbr0 has no IPv4 address", in 1 of 4 suite runs beside
// builds; decision 0024 moved them out). These ranks share lo, so the
// cases keep to it, whatever devices the machine has.

// The whole bcast hierarchical, its world level (the hosts' leaders) mcast.
const char *const kMcastTune =
    "bcast:0-inf:hierarchical;bcast@world:0-inf:mcast";

using ucg::test::ScopedEnv;

// Whether a UDP datagram sent to a multicast group on the loopback comes
// back to a member of it (ud_mcast's UDP wire needs that here).
bool loopback_multicast_works()
{
    const int rx = socket(AF_INET, SOCK_DGRAM, 0);
    const int tx = socket(AF_INET, SOCK_DGRAM, 0);
    bool ok = rx >= 0 && tx >= 0;
    sockaddr_in group{};
    group.sin_family = AF_INET;
    group.sin_addr.s_addr = inet_addr("239.192.77.77");
    sockaddr_in any = group;
    any.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof(any);
    ip_mreq mreq{};
    mreq.imr_multiaddr = group.sin_addr;
    mreq.imr_interface.s_addr = htonl(INADDR_LOOPBACK);
    in_addr lo{};
    lo.s_addr = htonl(INADDR_LOOPBACK);
    ok = ok && bind(rx, reinterpret_cast<sockaddr *>(&any), sizeof(any)) == 0 &&
         getsockname(rx, reinterpret_cast<sockaddr *>(&any), &len) == 0 &&
         setsockopt(rx, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq)) ==
             0 &&
         setsockopt(tx, IPPROTO_IP, IP_MULTICAST_IF, &lo, sizeof(lo)) == 0;
    group.sin_port = any.sin_port;
    const char msg[] = "ucg";
    ok = ok &&
         sendto(tx, msg, sizeof(msg), 0, reinterpret_cast<sockaddr *>(&group),
                sizeof(group)) == static_cast<ssize_t>(sizeof(msg));
    pollfd p{rx, POLLIN, 0};
    ok = ok && poll(&p, 1, 1000) == 1;
    for (int fd : {rx, tx}) {
        if (fd >= 0) {
            close(fd);
        }
    }
    return ok;
}

// Runs bcast of each count from each root and checks every output; true
// where every call's plan used mcast, false where none did (a mix fails).
bool bcast_all(ucg_group_h g, int rank, int size,
               std::initializer_list<std::size_t> counts)
{
    int with = 0, without = 0;
    for (std::size_t count : counts) {
        for (int root = 0; root < size; ++root) {
            RefCase c;
            c.coll = UCG_COLL_BCAST;
            c.size = size;
            c.rank = rank;
            c.root = root;
            c.count = count;
            c.prepare();
            ucg_coll_args_t a = c.args();
            ucg_coll_h h;
            UCG_CHECK(ucg_collective_init(g, &a, &h) == UCS_OK);
            const std::string name = ucg_collective_plan_name(h);
            ucg_collective_free(h);
            if (count != 0) { // nothing to move: no plan
                ++(name.find("world: mcast") != std::string::npos ? with
                                                                  : without);
            }
            run_case(g, c, 2);
        }
    }
    UCG_CHECK(with == 0 || without == 0);
    return with > 0;
}

} // namespace

TEST_CASE("mcast bcast between hosts over ud_mcast", "[ucg][fork][mcast]")
{
    if (!loopback_multicast_works()) {
        UCG_SKIP("UDP multicast on the loopback does not come back here "
                 "(ud_mcast's UDP wire needs it)");
    }
    const ScopedEnv mcast("UCG_MCAST", "1");
    const ScopedEnv devices("UCX_NET_DEVICES", "lo"); // see kLoOnly
    // Then every member drops a tenth of what it receives: roots resend,
    // and a member whose last send completed (copied into its window)
    // stays until the others have it (linger at ucg_group_destroy).
    for (const char *loss : {"0", "0.1"}) {
        const ScopedEnv drop("UCX_UD_MCAST_RX_LOSS", loss);
        // 2 hosts x 2 ranks (the host level on the shm transports), then
        // 3 hosts x 1; counts: 0, one packet, more than 8 KiB (several).
        for (auto [size, hosts] : {std::pair{4, 2}, std::pair{3, 3}}) {
            if (std::string(loss) != "0" && hosts == 3) {
                continue; // lossy runs take longer: one shape is enough
            }
            INFO(size << " ranks on " << hosts << " hosts, loss " << loss);
            run_ranks(
                size, hosts,
                [size](ucg_group_h g, int rank) {
                    UCG_CHECK(bcast_all(g, rank, size, {0, 1, 300, 20000}));
                },
                60, kMcastTune);
        }
    }
}

TEST_CASE("without multicast an mcast rule falls back", "[ucg][fork][mcast]")
{
    SECTION("UCG_MCAST unset")
    {
        const ScopedEnv mcast("UCG_MCAST", nullptr);
        run_ranks(
            4, 2,
            [](ucg_group_h g, int rank) {
                UCG_CHECK(!bcast_all(g, rank, 4, {1, 20000}));
            },
            60, kMcastTune);
    }
    SECTION("UCG_MCAST=1, UCX_TLS without ud_mcast")
    {
        const ScopedEnv mcast("UCG_MCAST", "1");
        const ScopedEnv devices("UCX_NET_DEVICES", "lo"); // see kLoOnly
        const ScopedEnv tls("UCX_TLS", "^ud_mcast");
        run_ranks(
            3, 3,
            [](ucg_group_h g, int rank) {
                UCG_CHECK(!bcast_all(g, rank, 3, {1, 20000}));
            },
            60, kMcastTune);
    }
    SECTION("UCG_MCAST=1, one host")
    {
        const ScopedEnv mcast("UCG_MCAST", "1");
        const ScopedEnv devices("UCX_NET_DEVICES", "lo"); // see kLoOnly
        run_ranks(
            2, 1,
            [](ucg_group_h g, int rank) {
                UCG_CHECK(!bcast_all(g, rank, 2, {1, 20000}));
            },
            60, kMcastTune);
    }
}

TEST_CASE("a plan file with mcast ops runs only where there is multicast",
          "[ucg][fork][mcast]")
{
    const std::string file = std::string(UCG_API_TESTDATA) +
                             "/bcast_mcast_3.plan"; // root 0, one mcast op
    const std::string spec = "bcast=" + file;
    const ScopedEnv files("UCG_PLAN_FILES", spec.c_str());
    {
        // One host (no multicast domain): refused at group creation.
        const ScopedEnv mcast("UCG_MCAST", "1");
        const ScopedEnv devices("UCX_NET_DEVICES", "lo"); // see kLoOnly
        REQUIRE(expect_group_create(3, UCS_ERR_INVALID_PARAM));
    }
    if (!loopback_multicast_works()) {
        UCG_SKIP("UDP multicast on the loopback does not come back here "
                 "(ud_mcast's UDP wire needs it)");
    }
    // Three hosts with multicast: it runs, over ud_mcast.
    const ScopedEnv mcast("UCG_MCAST", "1");
    const ScopedEnv devices("UCX_NET_DEVICES", "lo"); // see kLoOnly
    run_ranks(3, 3, [&file](ucg_group_h g, int rank) {
        for (std::size_t count : {1000, 20000}) {
            RefCase c = ref_case(UCG_COLL_BCAST, 3, rank, count);
            UCG_CHECK(run_case(g, c, 2) == "file:" + file);
        }
    });
}

} // namespace ucg::test
