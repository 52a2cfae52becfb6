// SPDX-License-Identifier: BSD-3-Clause
// The hwloc probe reports this process's host and honours overrides.
#include "topology/hwloc_probe.h"

#include <catch2/catch.hpp>

#include <cstdlib>

using namespace ucg::topology;

TEST_CASE("probe reports the host and honours UCG_TOPO_* overrides",
          "[topology]")
{
    auto plain = probe_locality();
    REQUIRE(plain.ok());
    CHECK(!plain->host.empty());
    setenv("UCG_TOPO_HOST", "fake7", 1);
    setenv("UCG_TOPO_SOCKET", "3", 1);
    auto faked = probe_locality();
    setenv("UCG_TOPO_SOCKET", "x", 1);
    auto bad = probe_locality();
    unsetenv("UCG_TOPO_HOST");
    unsetenv("UCG_TOPO_SOCKET");
    REQUIRE(faked.ok());
    CHECK(faked->host == "fake7");
    CHECK(faked->socket == 3);
    REQUIRE(!bad.ok());
    CHECK_THAT(bad.error().message, Catch::Contains("UCG_TOPO_SOCKET"));
}
