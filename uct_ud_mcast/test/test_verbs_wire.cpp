// SPDX-License-Identifier: BSD-3-Clause
// The verbs wire's setup paths that run without an RDMA device: device
// names, address packing, RoCE GIDs, device discovery, refusals of absent
// devices (also through uct_iface_open). With a device present, a QP is
// opened and a group join started (never run on the build machine).
#include "verbs_wire.h"

#include "ucg_test/uct_iface.h"

#include <catch2/catch.hpp>
#include <ucg_test/skip.h>

#include <arpa/inet.h>
#include <cstring>
#include <uct/api/uct.h>

using namespace uct_ud_mcast;

TEST_CASE("verbs device names parse as <device>:<port>", "[ud_mcast][verbs]")
{
    std::string dev;
    uint8_t port = 0;
    CHECK(parse_verbs_device("mlx5_0:1", &dev, &port));
    CHECK(dev == "mlx5_0");
    CHECK(port == 1);
    CHECK(parse_verbs_device("rxe_eth0:2", &dev, &port));
    CHECK(port == 2);
    for (const char *bad : {"lo", "mlx5_0", ":1", "mlx5_0:", "mlx5_0:x",
                            "mlx5_0:0", "mlx5_0:999"}) {
        INFO(bad);
        CHECK_FALSE(parse_verbs_device(bad, &dev, &port));
    }
}

TEST_CASE("verbs addresses pack into the iface address and back",
          "[ud_mcast][verbs]")
{
    VerbsAddr a{};
    for (int i = 0; i < 16; ++i) {
        a.gid[i] = static_cast<uint8_t>(0xf0 + i);
    }
    a.lid = 0x1234;
    a.qpn = 0xabcdef;
    uint8_t buf[kWireAddrBytes + 1];
    buf[kWireAddrBytes] = 0x5a;
    pack_verbs_addr(a, buf);
    CHECK(buf[kWireAddrBytes] == 0x5a); // stays within its bytes
    const VerbsAddr b = unpack_verbs_addr(buf);
    CHECK(std::memcmp(a.gid, b.gid, 16) == 0);
    CHECK(b.lid == a.lid);
    CHECK(b.qpn == a.qpn);
}

TEST_CASE("a RoCE v2 GID gives the IPv4 address rdma_cm binds to",
          "[ud_mcast][verbs]")
{
    uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3};
    CHECK(gid_ipv4(gid) == htonl(0x0a010203));
    gid[0] = 0xfe; // link-local IB GID: no IPv4
    CHECK(gid_ipv4(gid) == 0);
}

TEST_CASE("absent verbs devices are refused cleanly", "[ud_mcast][verbs]")
{
    for (const std::string &name : verbs_devices()) {
        std::string dev;
        uint8_t port;
        CHECK(parse_verbs_device(name, &dev, &port));
    }
    VerbsConfig cfg;
    std::unique_ptr<VerbsWire> w;
    cfg.device = "no_such_hca:1";
    CHECK(VerbsWire::open(cfg, &w) == Status::kNotFound);
    cfg.device = "no_port";
    CHECK(VerbsWire::open(cfg, &w) == Status::kInvalidParam);
    CHECK(w == nullptr);
}

TEST_CASE("uct_iface_open on an absent verbs port fails with a status",
          "[ud_mcast][verbs][ucx]")
{
    CHECK_THROWS(ucg_test::UctIface({"ud_mcast", "ud_mcast", "no_hca:1", {}}));
}

TEST_CASE("with an RDMA device: a UD QP opens and a group join starts",
          "[ud_mcast][verbs]")
{
    const std::vector<std::string> devs = verbs_devices();
    if (devs.empty()) {
        UCG_SKIP("no active RDMA port on this machine");
    }
    VerbsConfig cfg;
    cfg.device = devs[0];
    std::unique_ptr<VerbsWire> w;
    REQUIRE(VerbsWire::open(cfg, &w) == Status::kOk);
    uint8_t addr[kWireAddrBytes];
    w->local_addr(addr);
    CHECK(unpack_verbs_addr(addr).qpn != 0);
    CHECK(w->resolve(addr) >= 0);
    int group = -1;
    const Status st = w->join(0x1234, &group);
    CHECK((st == Status::kOk || st == Status::kInvalidParam));
}
