// SPDX-License-Identifier: BSD-3-Clause
// What mm_incast takes from ucg_reduce (whose own tests cover every
// kernel): the multi-source reduction it combines with, accumulating or
// not, in member order; an atomic kernel for every pair of the types the
// tests use; the pairs REDUCE messages may not use.
#include "incast_test_util.h"

#include <catch2/catch.hpp>

using namespace incast_test;
using uct_mm_incast::atomic_reduce_fn;
using uct_mm_incast::check_pair;
using uct_mm_incast::reduce_multi;
using uct_mm_incast::Status;

namespace {

constexpr std::size_t kCount = 37;
constexpr uint32_t kSources = 3;

template <typename T> void check_multi(ucg_op_t op, ucg_dtype_t d, bool acc)
{
    std::vector<std::vector<T>> src(kSources, std::vector<T>(kCount));
    std::vector<const void *> ptrs;
    for (uint32_t m = 0; m < kSources; ++m) {
        for (std::size_t i = 0; i < kCount; ++i) {
            src[m][i] = value<T>(m, 1, i);
        }
        ptrs.push_back(src[m].data());
    }
    std::vector<T> dst(kCount), ref(kCount);
    for (std::size_t i = 0; i < kCount; ++i) {
        dst[i] = value<T>(9, 1, i);
        T r = acc ? ref_apply(op, dst[i], src[0][i]) : src[0][i];
        for (uint32_t m = 1; m < kSources; ++m) {
            r = ref_apply(op, r, src[m][i]);
        }
        ref[i] = r;
    }
    reduce_multi(op, d, dst.data(), ptrs.data(), kSources, kCount, acc);
    CHECK(std::memcmp(dst.data(), ref.data(), kCount * sizeof(T)) == 0);
}

} // namespace

TEST_CASE("reduce_multi combines in member order, accumulating or not",
          "[mm][incast][reduce]")
{
    for (ucg_dtype_t d : dtype_classes()) {
        for (ucg_op_t op : ops_for(d)) {
            REQUIRE(check_pair(op, d) == Status::kOk);
            REQUIRE(atomic_reduce_fn(op, d) != nullptr); // lock-free here
            for (bool acc : {false, true}) {
                INFO("dtype " << d << " op " << op << " acc " << acc);
                with_dtype(d, [&](auto t) {
                    check_multi<decltype(t)>(op, d, acc);
                    return 0;
                });
            }
        }
    }
}

TEST_CASE("pairs without a kernel are refused", "[mm][incast][reduce]")
{
    CHECK(check_pair(UCG_OP_BAND, UCG_DTYPE_FLOAT) == Status::kInvalidParam);
    CHECK(check_pair(UCG_OP_MAXLOC, UCG_DTYPE_INT32) == Status::kInvalidParam);
    CHECK(check_pair(UCG_OP_USER, UCG_DTYPE_INT32) == Status::kInvalidParam);
    CHECK(check_pair(UCG_OP_LAST, UCG_DTYPE_INT32) == Status::kInvalidParam);
    CHECK(check_pair(UCG_OP_SUM, UCG_DTYPE_LAST) == Status::kInvalidParam);
}
