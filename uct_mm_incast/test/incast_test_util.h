// SPDX-License-Identifier: BSD-3-Clause
// Test helpers for mm_incast: deterministic contributions, an independent
// reference reduction (member order), and one member's run of many incasts.
#pragma once

#include "group.h"

#include <ucg_test/check.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace incast_test {

/// Prefix of the segments this test process names (ucg_test's
/// "/ucgt-<pid>-..."), so a sweep never touches a concurrent test's.
inline std::string own_shm_prefix()
{
    return "ucgt-" + std::to_string(getpid()) + "-";
}

using namespace uct_mm_incast;

template <typename F> auto with_dtype(uct_mm_incast_dtype_t d, F &&f)
{
    switch (d) {
    case UCT_MM_INCAST_DTYPE_INT8:
        return f(int8_t{});
    case UCT_MM_INCAST_DTYPE_INT16:
        return f(int16_t{});
    case UCT_MM_INCAST_DTYPE_INT32:
        return f(int32_t{});
    case UCT_MM_INCAST_DTYPE_INT64:
        return f(int64_t{});
    case UCT_MM_INCAST_DTYPE_UINT8:
        return f(uint8_t{});
    case UCT_MM_INCAST_DTYPE_UINT16:
        return f(uint16_t{});
    case UCT_MM_INCAST_DTYPE_UINT32:
        return f(uint32_t{});
    case UCT_MM_INCAST_DTYPE_UINT64:
        return f(uint64_t{});
    case UCT_MM_INCAST_DTYPE_FLOAT:
        return f(float{});
    default:
        return f(double{});
    }
}

/// Contribution of member m to incast k, element i.
template <typename T> T value(uint32_t m, uint64_t k, std::size_t i)
{
    const auto v = static_cast<int>((m * 7 + k * 3 + i) % 13);
    if constexpr (std::is_floating_point_v<T>) {
        return (v % 5 == 0) ? T(0) : T(1) + static_cast<T>(v) / T(8);
    } else if constexpr (std::is_signed_v<T>) {
        return static_cast<T>(v - 6);
    } else {
        return static_cast<T>(v);
    }
}

inline uint8_t byte_value(uint32_t m, uint64_t k, std::size_t i)
{
    return static_cast<uint8_t>(m * 31 + k * 7 + i * 13 + 1);
}

/// Independent reference of a op b (wrapping integer arithmetic).
template <typename T> T ref_apply(uct_mm_incast_op_t op, T a, T b)
{
    using W = std::conditional_t<std::is_integral_v<T>, uint64_t, T>;
    switch (op) {
    case UCT_MM_INCAST_OP_SUM:
        return static_cast<T>(W(a) + W(b));
    case UCT_MM_INCAST_OP_PROD:
        return static_cast<T>(W(a) * W(b));
    case UCT_MM_INCAST_OP_MIN:
        return std::min(a, b);
    case UCT_MM_INCAST_OP_MAX:
        return std::max(a, b);
    case UCT_MM_INCAST_OP_LAND:
        return T((a != T(0)) && (b != T(0)));
    case UCT_MM_INCAST_OP_LOR:
        return T((a != T(0)) || (b != T(0)));
    default:
        if constexpr (std::is_integral_v<T>) {
            if (op == UCT_MM_INCAST_OP_BAND)
                return T(a & b);
            if (op == UCT_MM_INCAST_OP_BOR)
                return T(a | b);
            return T(a ^ b);
        }
        return a;
    }
}

/// Whether the result must match the member-order reference exactly.
inline bool exact(const GroupConfig &c, uct_mm_incast_mode_t mode)
{
    const bool fp = (c.dtype == UCT_MM_INCAST_DTYPE_FLOAT) ||
                    (c.dtype == UCT_MM_INCAST_DTYPE_DOUBLE);
    const bool order_free =
        (c.op != UCT_MM_INCAST_OP_SUM) && (c.op != UCT_MM_INCAST_OP_PROD);
    return !fp || order_free || (mode == UCT_MM_INCAST_MODE_BATCHED) ||
           (mode == UCT_MM_INCAST_MODE_CENTRALIZED);
}

template <typename T>
void check_reduced(const GroupConfig &c, uct_mm_incast_mode_t mode, uint64_t k,
                   const std::vector<std::byte> &buf, std::size_t count)
{
    for (std::size_t i = 0; i < count; ++i) {
        bool first = true;
        T ref{};
        for (uint32_t m = 0; m < c.group_size; ++m) {
            if (m == c.root)
                continue;
            ref = first ? value<T>(m, k, i)
                        : ref_apply(c.op, ref, value<T>(m, k, i));
            first = false;
        }
        T got;
        std::memcpy(&got, buf.data() + i * sizeof(T), sizeof(T));
        if (exact(c, mode)) {
            UCG_CHECK(std::memcmp(&got, &ref, sizeof(T)) == 0);
        } else {
            const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
            UCG_CHECK(std::fabs(double(got) - double(ref)) <=
                      tol * std::max(1.0, std::fabs(double(ref))));
        }
    }
}

inline void check_gather(const GroupConfig &c, uint64_t k,
                         const std::vector<std::byte> &buf, std::size_t bytes)
{
    std::size_t off = 0;
    for (uint32_t m = 0; m < c.group_size; ++m) {
        if (m == c.root)
            continue;
        for (std::size_t i = 0; i < bytes; ++i, ++off) {
            if (static_cast<uint8_t>(buf[off]) != byte_value(m, k, i)) {
                UCG_CHECK_EQ(static_cast<int>(buf[off]),
                             static_cast<int>(byte_value(m, k, i)));
            }
        }
    }
}

/// One member runs `iters` incasts of `bytes` each and checks the root's
/// results. Fails (UCG_CHECK) on any error or after `deadline_sec`.
inline void run_member(const GroupConfig &c, uint64_t iters, std::size_t bytes,
                       double deadline_sec = 15.0)
{
    std::unique_ptr<Group> g;
    UCG_CHECK_EQ(static_cast<int>(Group::create(c, &g)), 0);
    const auto start = std::chrono::steady_clock::now();
    const bool gather = (c.op == UCT_MM_INCAST_OP_GATHER);
    const std::size_t tsize = gather ? 1 : dtype_size(c.dtype);
    const std::size_t count = bytes / tsize;
    std::vector<std::byte> buf(std::max<std::size_t>(bytes * c.group_size, 1));
    Backoff backoff;
    for (uint64_t k = 0; k < iters; ++k) {
        ucs_status_t st;
        if (c.member == c.root) {
            std::size_t len = 0;
            while ((st = g->recv(buf.data(), buf.size(), &len)) ==
                   UCS_INPROGRESS) {
                backoff.pause();
                UCG_CHECK(std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count() < deadline_sec);
            }
            UCG_CHECK_EQ(static_cast<int>(st), 0);
            if (gather) {
                UCG_CHECK_EQ(len, bytes * (c.group_size - 1));
                check_gather(c, k, buf, bytes);
            } else if (c.group_size > 1) {
                UCG_CHECK_EQ(len, count * tsize);
                with_dtype(c.dtype, [&](auto t) {
                    check_reduced<decltype(t)>(c, g->mode(), k, buf, count);
                    return 0;
                });
            }
        } else {
            if (gather) {
                for (std::size_t i = 0; i < bytes; ++i) {
                    buf[i] = std::byte{byte_value(c.member, k, i)};
                }
            } else {
                with_dtype(c.dtype, [&](auto t) {
                    using T = decltype(t);
                    for (std::size_t i = 0; i < count; ++i) {
                        T v = value<T>(c.member, k, i);
                        std::memcpy(buf.data() + i * sizeof(T), &v, sizeof(T));
                    }
                    return 0;
                });
            }
            while ((st = g->send(buf.data(), count * tsize)) ==
                   UCS_ERR_NO_RESOURCE) {
                backoff.pause();
                UCG_CHECK(std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - start)
                              .count() < deadline_sec);
            }
            UCG_CHECK_EQ(static_cast<int>(st), 0);
        }
        backoff.reset();
    }
}

inline const char *mode_str(uct_mm_incast_mode_t m)
{
    static const char *names[] = {"auto", "batched", "centralized", "locked",
                                  "atomic"};
    return names[m];
}

} // namespace incast_test
