// SPDX-License-Identifier: BSD-3-Clause
// Reductions with every operator and datatype MPI combines (and a user
// operator), nonblocking collectives in flight together, on two groups at
// once, and one persistent collective started a thousand times.
#include "coll_ref.h"
#include "rank_env.h"

#include <catch2/catch.hpp>
#include <ucg_test/check.h>

#include <memory>
#include <vector>

namespace ucg::test {

namespace {

// Every (op, dtype) pair the kernels accept, through reduce and
// allreduce, at a small odd count and at one segment plus one.
void every_pair(ucg_group_h g, int rank, int size)
{
    for (int op = 0; op < UCG_OP_USER; ++op) {
        for (int dt = 0; dt < UCG_DTYPE_LAST; ++dt) {
            const auto o = static_cast<ucg_op_t>(op);
            const auto d = static_cast<ucg_dtype_t>(dt);
            if (ucg_reduce_check(o, d) != UCS_OK) {
                continue;
            }
            for (auto coll : {UCG_COLL_ALLREDUCE, UCG_COLL_REDUCE,
                              UCG_COLL_REDUCE_SCATTER_BLOCK}) {
                for (std::size_t count : {std::size_t{5}, std::size_t{1025}}) {
                    RefCase c;
                    c.coll = coll;
                    c.size = size;
                    c.rank = rank;
                    c.root = size - 1;
                    c.count = count;
                    c.op = o;
                    c.dtype = d;
                    c.prepare();
                    run_case(g, c, 1);
                }
            }
        }
    }
}

RefCase make(ucg_coll_type_t coll, int rank, int size, std::size_t count,
             int iter)
{
    RefCase c;
    c.coll = coll;
    c.size = size;
    c.rank = rank;
    c.root = size / 2;
    c.count = count;
    c.iter = iter;
    c.prepare();
    return c;
}

ucg_coll_h init(ucg_group_h g, RefCase &c)
{
    ucg_coll_args_t a = c.args();
    ucg_coll_h h = nullptr;
    UCG_CHECK(ucg_collective_init(g, &a, &h) == UCS_OK);
    return h;
}

// Starts several collectives before waiting for any, then checks all.
void in_flight(const std::vector<ucg_group_h> &groups, int rank, int size)
{
    const std::vector<ucg_coll_type_t> kinds = {
        UCG_COLL_ALLREDUCE, UCG_COLL_BCAST,    UCG_COLL_ALLGATHER,
        UCG_COLL_REDUCE,    UCG_COLL_ALLTOALL, UCG_COLL_BARRIER};
    std::vector<RefCase> cases;
    std::vector<ucg_coll_h> hs;
    cases.reserve(kinds.size() * groups.size() * 2);
    for (ucg_group_h g : groups) {
        for (int round = 0; round < 2; ++round) {
            for (ucg_coll_type_t k : kinds) {
                const std::size_t count = round == 0 ? 33 : 20000;
                cases.push_back(
                    make(k, rank, size, count, static_cast<int>(cases.size())));
                hs.push_back(init(g, cases.back()));
            }
        }
    }
    for (ucg_coll_h h : hs) {
        UCG_CHECK(ucg_collective_start(h) == UCS_OK);
    }
    for (std::size_t i = hs.size(); i-- > 0;) { // complete out of order
        UCG_CHECK(ucg_collective_wait(hs[i]) == UCS_OK);
        const std::string err = cases[i].check();
        if (!err.empty()) {
            ucg_test::fail_check(__FILE__, __LINE__, "output", err);
        }
        ucg_collective_free(hs[i]);
    }
}

} // namespace

TEST_CASE("every operator and datatype reduces exactly", "[ucg][fork]")
{
    for (int size : {2, 3}) {
        run_ranks(size, size == 3 ? 2 : 1, [size](ucg_group_h g, int rank) {
            every_pair(g, rank, size);
        });
    }
}

TEST_CASE("a commutative user operator reduces like sum", "[ucg][fork]")
{
    run_ranks(4, 2, [](ucg_group_h g, int rank) {
        for (auto coll :
             {UCG_COLL_ALLREDUCE, UCG_COLL_REDUCE, UCG_COLL_REDUCE_SCATTER}) {
            for (std::size_t count : {std::size_t{1}, std::size_t{9000}}) {
                RefCase c = make(coll, rank, 4, count, 0);
                c.user_op = &kUserSum;
                c.prepare();
                run_case(g, c, 2);
            }
        }
    });
}

namespace {

// A user operator over elements of `run` int32s: its count is in whole
// elements (MPI's: a derived type's), so a chunk that ended inside one
// would lose the rest of that element.
void sum_runs(const void *in, void *inout, std::size_t count, void *arg)
{
    const std::size_t n = count * *static_cast<const std::uint32_t *>(arg);
    const auto *a = static_cast<const std::int32_t *>(in);
    auto *b = static_cast<std::int32_t *>(inout);
    for (std::size_t i = 0; i < n; ++i) {
        b[i] += a[i];
    }
}

} // namespace

TEST_CASE("a user operator's elements are never split between chunks",
          "[ucg][fork]")
{
    run_ranks(4, 1, [](ucg_group_h g, int rank) {
        std::uint32_t run = 513; // 2052 bytes: no power-of-two chunk fits
        const ucg_user_op_t op = {sum_runs, &run, 1};
        for (auto coll : {UCG_COLL_ALLREDUCE, UCG_COLL_REDUCE_SCATTER_BLOCK,
                          UCG_COLL_REDUCE}) {
            const std::size_t count = 10; // elements (per rank: blocks)
            const std::size_t blocks =
                coll == UCG_COLL_REDUCE_SCATTER_BLOCK ? 4 : 1;
            const std::size_t ints = count * blocks * run;
            std::vector<std::int32_t> src(ints), dst(ints, -1);
            for (std::size_t i = 0; i < ints; ++i) {
                src[i] = rank + static_cast<std::int32_t>(i);
            }
            ucg_coll_args_t a{};
            a.field_mask = UCG_COLL_ARGS_FIELD_OP |
                           UCG_COLL_ARGS_FIELD_USER_OP |
                           UCG_COLL_ARGS_FIELD_ROOT;
            a.coll = coll;
            a.root = 1;
            a.op = UCG_OP_USER;
            a.user_op = &op;
            a.src = {src.data(),
                     count * blocks,
                     {UCG_DTYPE_INT32, run},
                     nullptr,
                     nullptr};
            a.dst = {
                dst.data(), count, {UCG_DTYPE_INT32, run}, nullptr, nullptr};
            ucg_coll_h h = nullptr;
            UCG_CHECK(ucg_collective_init(g, &a, &h) == UCS_OK);
            UCG_CHECK(ucg_collective_start(h) == UCS_OK);
            UCG_CHECK(ucg_collective_wait(h) == UCS_OK);
            ucg_collective_free(h);
            if (coll == UCG_COLL_REDUCE && rank != 1) {
                continue;
            }
            // this rank's block: block `rank` of the whole for the scatter
            const std::size_t first =
                blocks > 1 ? static_cast<std::size_t>(rank) * count * run : 0;
            std::size_t wrong = 0;
            for (std::size_t i = 0; i < count * run; ++i) {
                const auto want =
                    static_cast<std::int32_t>(6 + 4 * (first + i));
                wrong += dst[i] != want;
            }
            UCG_CHECK(wrong == 0);
        }
    });
}

TEST_CASE("a non-commutative user operator reduces in rank order",
          "[ucg][fork]")
{
    for (int size : {3, 5}) {
        run_ranks(size, 2, [size](ucg_group_h g, int rank) {
            for (auto coll : {UCG_COLL_REDUCE, UCG_COLL_ALLREDUCE,
                              UCG_COLL_SCAN, UCG_COLL_EXSCAN}) {
                for (std::size_t count : {std::size_t{1}, std::size_t{3000}}) {
                    RefCase c = make(coll, rank, size, count, 0);
                    c.dtype = UCG_DTYPE_UINT64;
                    c.user_op = &kUserAffine;
                    c.prepare();
                    run_case(g, c, 2);
                }
            }
            // No rank-order plan: refused, so a caller can fall back.
            RefCase c = make(UCG_COLL_REDUCE_SCATTER_BLOCK, rank, size, 4, 0);
            c.dtype = UCG_DTYPE_UINT64;
            c.user_op = &kUserAffine;
            c.prepare();
            ucg_coll_args_t a = c.args();
            ucg_coll_h h;
            UCG_CHECK(ucg_collective_init(g, &a, &h) == UCS_ERR_UNSUPPORTED);
        });
    }
}

TEST_CASE("nonblocking collectives complete together and on two groups",
          "[ucg][fork]")
{
    // One host: the small ones run as direct messages among the plans.
    for (const auto &[size, hosts] : {std::pair{3, 1}, {3, 2}, {4, 2}}) {
        run_ranks(size, hosts, [size](ucg_group_h g, int rank) {
            in_flight({g}, rank, size);
            // A second group over the same processes, used at once.
            ucg_group_h g2 = nullptr;
            UCG_CHECK(second_group(g, rank, size, &g2) == UCS_OK);
            in_flight({g, g2}, rank, size);
            ucg_group_destroy(g2);
        });
    }
}

TEST_CASE("a reduce's in-place flag counts at its root only", "[ucg][fork]")
{
    // Every rank passes the flag; the non-roots' src is still their input
    // (it was read from the nothing a non-root's dst stands for).
    run_ranks(3, 1, [](ucg_group_h g, int rank) {
        for (std::size_t count : {std::size_t{5}, std::size_t{3000}}) {
            RefCase c = make(UCG_COLL_REDUCE, rank, 3, count, 0);
            c.in_place = true;
            c.prepare();
            ucg_coll_args_t a = c.args();
            a.flags |= UCG_COLL_FLAG_IN_PLACE;
            ucg_coll_h h = nullptr;
            UCG_CHECK(ucg_collective_init(g, &a, &h) == UCS_OK);
            UCG_CHECK(ucg_collective_start(h) == UCS_OK);
            UCG_CHECK(ucg_collective_wait(h) == UCS_OK);
            const std::string err = c.check();
            if (!err.empty()) {
                ucg_test::fail_check(__FILE__, __LINE__, "output", err);
            }
            ucg_collective_free(h);
        }
    });
}

TEST_CASE("a persistent collective starts a thousand times", "[ucg][fork]")
{
    run_ranks(3, 1, [](ucg_group_h g, int rank) {
        RefCase c = make(UCG_COLL_ALLREDUCE, rank, 3, 16, 0);
        ucg_coll_h h = init(g, c);
        for (int i = 0; i < 1000; ++i) {
            c.refill(i);
            UCG_CHECK(ucg_collective_start(h) == UCS_OK);
            UCG_CHECK(ucg_collective_wait(h) == UCS_OK);
            const std::string err = c.check();
            if (!err.empty()) {
                ucg_test::fail_check(__FILE__, __LINE__, "output", err);
            }
        }
        ucg_collective_free(h);
    });
}

} // namespace ucg::test
