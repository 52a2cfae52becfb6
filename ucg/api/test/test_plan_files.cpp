// SPDX-License-Identifier: BSD-3-Clause
// Plan files (UCG_PLAN_FILES, issue 11 point 4): a plan written by
// `ucg_plan print` runs a collective on forked ranks in place of the
// selector's, where a call fits it (its root, a chunk per element at
// least, an operator it is right for); a file that fails its checks
// fails group creation with UCS_ERR_INVALID_PARAM.
#include "coll_ref.h"
#include "rank_env.h"

#include <catch2/catch.hpp>
#include <ucg_test/check.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace ucg::test {

namespace {

const std::string kDir = UCG_API_TESTDATA;
const std::string kAllreduce = kDir + "/allreduce_ring_3.plan"; // 3 chunks
const std::string kBcast = kDir + "/bcast_root1_3.plan";        // root 1

using ucg::test::ScopedEnv;

RefCase make(ucg_coll_type_t coll, int rank, std::size_t count)
{
    RefCase c;
    c.coll = coll;
    c.size = 3;
    c.rank = rank;
    c.count = count;
    return c;
}

ucs_status_t self_allgather(void *, const void *s, void *r, std::size_t n)
{
    std::memcpy(r, s, n);
    return UCS_OK;
}

// A one-rank group with these plan files: its creation's status.
ucs_status_t solo_create(const std::string &files)
{
    ucg_context_h ctx;
    REQUIRE(ucg_context_create(nullptr, &ctx) == UCS_OK);
    ucg_group_params_t p{};
    p.field_mask = UCG_GROUP_PARAM_FIELD_SIZE | UCG_GROUP_PARAM_FIELD_RANK |
                   UCG_GROUP_PARAM_FIELD_OOB | UCG_GROUP_PARAM_FIELD_PLAN_FILES;
    p.size = 1;
    p.oob_allgather = self_allgather;
    p.plan_files = files.c_str();
    ucg_group_h g = nullptr;
    const ucs_status_t st = ucg_group_create(ctx, &p, &g);
    if (st == UCS_OK) {
        ucg_group_destroy(g);
    }
    ucg_context_destroy(ctx);
    return st;
}

} // namespace

TEST_CASE("a plan file runs allreduce and bcast on 3 ranks", "[ucg][fork]")
{
    const ScopedEnv env("UCG_PLAN_FILES",
                        "allreduce=" + kAllreduce + ";bcast=" + kBcast);
    for (int hosts : {1, 3}) {
        INFO(hosts << " hosts");
        run_ranks(3, hosts, [](ucg_group_h g, int rank) {
            const std::string ar = "file:" + kAllreduce;
            for (std::size_t count : {3, 7, 8193}) {
                for (bool in_place : {false, true}) {
                    RefCase c = make(UCG_COLL_ALLREDUCE, rank, count);
                    c.in_place = in_place;
                    c.prepare();
                    UCG_CHECK(run_case(g, c, 2) == ar);
                }
            }
            // Fewer elements than the plan's 3 chunks: the selector's.
            RefCase small = make(UCG_COLL_ALLREDUCE, rank, 2);
            small.prepare();
            UCG_CHECK(run_case(g, small, 2) != ar);
            // A commutative user operator runs the file (point to point);
            // a non-commutative one needs rank order, which a ring is not.
            RefCase user = make(UCG_COLL_ALLREDUCE, rank, 100);
            user.user_op = &kUserSum;
            user.prepare();
            UCG_CHECK(run_case(g, user, 2) == ar);
            RefCase affine = make(UCG_COLL_ALLREDUCE, rank, 100);
            affine.dtype = UCG_DTYPE_UINT64;
            affine.user_op = &kUserAffine;
            affine.prepare();
            UCG_CHECK(run_case(g, affine, 2) != ar);
            // The bcast file serves root 1 only.
            for (int root : {0, 1, 2}) {
                RefCase b = make(UCG_COLL_BCAST, rank, 1000);
                b.root = root;
                b.prepare();
                UCG_CHECK((run_case(g, b, 2) == "file:" + kBcast) ==
                          (root == 1));
            }
        });
    }
}

TEST_CASE("a plan file that fails its checks fails group creation",
          "[ucg][plan_files]")
{
    // Good ones, to show the others fail for their reason only.
    const std::string one = kDir + "/allreduce_1.plan";
    CHECK(solo_create("") == UCS_OK);
    CHECK(solo_create(";") == UCS_OK);
    CHECK(solo_create("allreduce=" + one + ";") == UCS_OK);
    // A 3-rank plan on a 1-rank group.
    CHECK(solo_create("allreduce=" + kAllreduce) == UCS_ERR_INVALID_PARAM);
    // A corrupted line (bad_op.plan:8).
    CHECK(solo_create("allreduce=" + kDir + "/bad_op.plan") ==
          UCS_ERR_INVALID_PARAM);
    // Named for another collective, missing, unknown or doubled names.
    CHECK(solo_create("bcast=" + kAllreduce) == UCS_ERR_INVALID_PARAM);
    CHECK(solo_create("allreduce=" + kDir + "/no_such.plan") ==
          UCS_ERR_INVALID_PARAM);
    CHECK(solo_create("frob=" + kAllreduce) == UCS_ERR_INVALID_PARAM);
    CHECK(solo_create("allreduce") == UCS_ERR_INVALID_PARAM);
    CHECK(solo_create("allreduce=" + one + ";allreduce=" + one) ==
          UCS_ERR_INVALID_PARAM);
}

TEST_CASE("a plan file that fails validation fails group creation on "
          "every rank",
          "[ucg][fork]")
{
    const ScopedEnv env("UCG_PLAN_FILES",
                        "allreduce=" + kDir + "/unmatched.plan");
    REQUIRE(expect_group_create(3, UCS_ERR_INVALID_PARAM));
}

} // namespace ucg::test
