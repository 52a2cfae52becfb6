// SPDX-License-Identifier: BSD-3-Clause
// Test helpers for mm_incast groups (core and UCT): deterministic
// contributions, an independent member-order reference of every operator,
// and one member's part of one message with the root's checks.
#pragma once

#include "policy.h"
#include "reduce_ops.h"

#include "ucg_test/check.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

namespace incast_test {

using uct_mm_common::Coll;
using uct_mm_common::Message;

/// Calls f(T{}) with T the C++ type of a dtype these tests cover.
template <typename F> auto with_dtype(ucg_dtype_t d, F &&f)
{
    switch (d) {
    case UCG_DTYPE_INT8:
        return f(int8_t{});
    case UCG_DTYPE_INT16:
        return f(int16_t{});
    case UCG_DTYPE_INT32:
        return f(int32_t{});
    case UCG_DTYPE_INT64:
        return f(int64_t{});
    case UCG_DTYPE_UINT8:
        return f(uint8_t{});
    case UCG_DTYPE_UINT16:
        return f(uint16_t{});
    case UCG_DTYPE_UINT32:
        return f(uint32_t{});
    case UCG_DTYPE_UINT64:
        return f(uint64_t{});
    case UCG_DTYPE_FLOAT:
        return f(float{});
    default:
        return f(double{});
    }
}

/// Element i of member m's data in message k (also the root's buffer
/// before an accumulating receive).
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

/// Independent reference of a op b (integers wrap).
template <typename T> T ref_apply(ucg_op_t op, T a, T b)
{
    using W = std::conditional_t<std::is_integral_v<T>, uint64_t, T>;
    switch (op) {
    case UCG_OP_SUM:
        return static_cast<T>(W(a) + W(b));
    case UCG_OP_PROD:
        return static_cast<T>(W(a) * W(b));
    case UCG_OP_MIN:
        return b < a ? b : a;
    case UCG_OP_MAX:
        return b > a ? b : a;
    case UCG_OP_LAND:
        return T((a != T(0)) && (b != T(0)));
    case UCG_OP_LOR:
        return T((a != T(0)) || (b != T(0)));
    case UCG_OP_LXOR:
        return T((a != T(0)) != (b != T(0)));
    default:
        if constexpr (std::is_integral_v<T>) {
            if (op == UCG_OP_BAND) {
                return T(a & b);
            }
            if (op == UCG_OP_BOR) {
                return T(a | b);
            }
            return T(a ^ b);
        }
        return a;
    }
}

/// One message of a test: its kind and how the root receives it.
struct Spec {
    Coll coll = Coll::kReduce;
    uint32_t root = 0;
    ucg_op_t op = UCG_OP_SUM;
    ucg_dtype_t dtype = UCG_DTYPE_INT32;
    std::size_t count = 1;       ///< elements (GATHER: bytes) per sender
    bool accumulate = false;     ///< REDUCE receive
    bool operand = false;        ///< REDUCE receive: the root's own apart
    bool member_buffers = false; ///< GATHER receive
    uint32_t tag = 0;
};

inline std::size_t elem_bytes(const Spec &s)
{
    return s.coll == Coll::kGather ? 1 : uct_mm_incast::dtype_bytes(s.dtype);
}

/// Whether the result must equal the member-order reference bit for bit
/// (not for floating sums and products combined in arrival order).
inline bool exact(const Spec &s, uct_mm_incast_mode_t mode)
{
    const bool fp = s.dtype == UCG_DTYPE_FLOAT || s.dtype == UCG_DTYPE_DOUBLE;
    const bool order_free = s.op != UCG_OP_SUM && s.op != UCG_OP_PROD;
    return !fp || order_free || uct_mm_incast::is_slot_mode(mode);
}

/// A member's buffers for one message.
struct Buffers {
    std::vector<uint8_t> data;              ///< send source / receive dest
    std::vector<uint8_t> own;               ///< REDUCE root's operand
    std::vector<std::vector<uint8_t>> each; ///< GATHER member_buffers
    std::vector<void *> ptrs;
};

/// Fills this member's buffers for message k and returns its Message.
inline Message prepare(const Spec &s, uint32_t member, uint32_t n, uint64_t k,
                       Buffers *b)
{
    const std::size_t bytes = s.count * elem_bytes(s);
    const bool root = member == s.root;
    Message m;
    m.coll = s.coll;
    m.root = s.root;
    m.op = s.op;
    m.dtype = s.dtype;
    m.length = bytes;
    m.accumulate = root && s.accumulate;
    m.tag = s.tag;
    if (s.coll == Coll::kGather && root) {
        b->data.assign(bytes * (n - 1) + 1, 0xee);
        if (s.member_buffers) {
            b->each.assign(n, std::vector<uint8_t>(bytes + 1, 0xee));
            b->ptrs.assign(n, nullptr);
            for (uint32_t i = 0; i < n; ++i) {
                b->ptrs[i] = i == s.root ? nullptr : b->each[i].data();
            }
            m.member_buffers = b->ptrs.data();
        }
    } else {
        b->data.assign(bytes + 1, 0xee);
    }
    m.buffer = b->data.data();
    if (s.coll == Coll::kGather) {
        for (std::size_t i = 0; !root && i < bytes; ++i) {
            b->data[i] = byte_value(member, k, i);
        }
        return m;
    }
    // The root's own contribution: in dst (accumulate) or apart (operand).
    const bool own_apart = root && s.operand;
    if (own_apart) {
        b->own.assign(bytes + 1, 0xee);
        m.operand = b->own.data();
    }
    uint8_t *values = own_apart ? b->own.data() : b->data.data();
    with_dtype(s.dtype, [&](auto t) {
        using T = decltype(t);
        for (std::size_t i = 0;
             (!root || s.accumulate || s.operand) && i < s.count; ++i) {
            const T v = value<T>(member, k, i);
            std::memcpy(values + i * sizeof(T), &v, sizeof(T));
        }
        return 0;
    });
    return m;
}

/// The root's checks of message k, received in `mode`.
inline void check_root(const Spec &s, uint32_t n, uint64_t k,
                       uct_mm_incast_mode_t mode, const Buffers &b)
{
    const std::size_t bytes = s.count * elem_bytes(s);
    if (s.coll == Coll::kGather) {
        std::size_t slot = 0;
        for (uint32_t m = 0; m < n; ++m) {
            if (m == s.root) {
                continue;
            }
            const uint8_t *p = s.member_buffers ? b.each[m].data()
                                                : b.data.data() + slot * bytes;
            for (std::size_t i = 0; i < bytes; ++i) {
                UCG_CHECK_EQ(int{p[i]}, int{byte_value(m, k, i)});
            }
            ++slot;
        }
        UCG_CHECK_EQ(int{b.data.back()}, 0xee); // nothing past the result
        return;
    }
    if (n == 1 && !s.operand) {
        return; // nobody sent
    }
    with_dtype(s.dtype, [&](auto t) {
        using T = decltype(t);
        for (std::size_t i = 0; i < s.count; ++i) {
            const bool own = s.accumulate || s.operand;
            bool first = !own;
            T ref = own ? value<T>(s.root, k, i) : T{};
            for (uint32_t m = 0; m < n; ++m) {
                if (m != s.root) {
                    ref = first ? value<T>(m, k, i)
                                : ref_apply(s.op, ref, value<T>(m, k, i));
                    first = false;
                }
            }
            T got;
            std::memcpy(&got, b.data.data() + i * sizeof(T), sizeof(T));
            if (exact(s, mode)) {
                UCG_CHECK(std::memcmp(&got, &ref, sizeof(T)) == 0);
            } else {
                const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
                UCG_CHECK(std::fabs(double(got) - double(ref)) <=
                          tol * std::max(1.0, std::fabs(double(ref))));
            }
        }
        return 0;
    });
    UCG_CHECK_EQ(int{b.data[bytes]}, 0xee); // nothing past the result
}

/// The ops of reduce_ops.h's kernels for a dtype class.
inline std::vector<ucg_op_t> ops_for(ucg_dtype_t d)
{
    std::vector<ucg_op_t> ops = {UCG_OP_SUM, UCG_OP_PROD, UCG_OP_MIN,
                                 UCG_OP_MAX, UCG_OP_LAND, UCG_OP_LOR,
                                 UCG_OP_LXOR};
    if (d != UCG_DTYPE_FLOAT && d != UCG_DTYPE_DOUBLE) {
        ops.insert(ops.end(), {UCG_OP_BAND, UCG_OP_BOR, UCG_OP_BXOR});
    }
    return ops;
}

/// A dtype of each class: signed, unsigned (small and wide), floating.
inline std::vector<ucg_dtype_t> dtype_classes()
{
    return {UCG_DTYPE_INT8,   UCG_DTYPE_INT32, UCG_DTYPE_UINT16,
            UCG_DTYPE_UINT64, UCG_DTYPE_FLOAT, UCG_DTYPE_DOUBLE};
}

} // namespace incast_test
