// SPDX-License-Identifier: BSD-3-Clause
#include "ucg_test/check.h"
#include "ucg_test/thread_ranks.h"

#include <atomic>
#include <catch2/catch.hpp>

using namespace ucg_test;

TEST_CASE("thread ranks run every rank once", "[support][threads]")
{
    std::atomic<int> mask{0};
    run_thread_ranks(5, [&](int rank) { mask.fetch_or(1 << rank); });
    CHECK(mask.load() == 0x1f);
}

TEST_CASE("thread ranks rethrow a rank's failure", "[support][threads]")
{
    REQUIRE_THROWS_WITH(
        run_thread_ranks(3, [](int rank) { UCG_CHECK_EQ(rank, 0); }),
        Catch::Contains("check failed: rank == 0"));
}

TEST_CASE("shared mapping is zeroed and writable", "[support]")
{
    SharedMapping m(4096);
    CHECK(m.as<unsigned char>()[4095] == 0);
    m.as<unsigned char>()[4095] = 7;
    CHECK(m.as<unsigned char>()[4095] == 7);
}
