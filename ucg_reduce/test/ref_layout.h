// SPDX-License-Identifier: BSD-3-Clause
// How the reference reads and writes elements: each dtype's class and
// layout, and little-endian loads and stores of its numbers.
#pragma once

#include <ucg/reduce.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>

namespace reduce_test {

enum class Cls { kInt, kUint, kFloating, kBool, kComplex, kPair };

/// A dtype as the reference sees it. `scalar` is the byte width of an
/// integer, or 4/8/16 for float/double/long double (of the value or of a
/// complex part); pair values of integer type are flagged `int_value`.
struct Desc {
    Cls cls;
    std::size_t size;   // bytes of the element
    std::size_t scalar; // bytes of one number in it
    bool int_value;     // pairs: the value is a signed integer
};

inline Desc describe(ucg_dtype_t dtype)
{
    static const Desc kDescs[] = {
        {Cls::kInt, 1, 1, true},         {Cls::kInt, 2, 2, true},
        {Cls::kInt, 4, 4, true},         {Cls::kInt, 8, 8, true},
        {Cls::kUint, 1, 1, true},        {Cls::kUint, 2, 2, true},
        {Cls::kUint, 4, 4, true},        {Cls::kUint, 8, 8, true},
        {Cls::kFloating, 4, 4, false},   {Cls::kFloating, 8, 8, false},
        {Cls::kFloating, 16, 16, false}, {Cls::kBool, 1, 1, true},
        {Cls::kComplex, 8, 4, false},    {Cls::kComplex, 16, 8, false},
        {Cls::kComplex, 32, 16, false},  {Cls::kPair, 8, 4, false},
        {Cls::kPair, 16, 8, false},      {Cls::kPair, 16, 8, true},
        {Cls::kPair, 8, 4, true},        {Cls::kPair, 8, 2, true},
        {Cls::kPair, 32, 16, false}};
    static_assert(std::size(kDescs) == UCG_DTYPE_LAST);
    return kDescs[dtype];
}

inline uint64_t load_u(const void *p, std::size_t bytes)
{
    uint64_t v = 0;
    std::memcpy(&v, p, bytes); // little endian
    return v;
}

inline int64_t load_s(const void *p, std::size_t bytes)
{
    const unsigned shift = 64 - 8 * static_cast<unsigned>(bytes);
    return static_cast<int64_t>(load_u(p, bytes) << shift) >> shift;
}

inline void store_u(void *p, std::size_t bytes, uint64_t v)
{
    std::memcpy(p, &v, bytes);
}

inline long double load_f(const void *p, std::size_t bytes)
{
    if (bytes == 4) {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    if (bytes == 8) {
        double d;
        std::memcpy(&d, p, 8);
        return d;
    }
    long double l;
    std::memcpy(&l, p, sizeof(l));
    return l;
}

inline void store_f(void *p, std::size_t bytes, long double v)
{
    if (bytes == 4) {
        const auto f = static_cast<float>(v);
        std::memcpy(p, &f, 4);
    } else if (bytes == 8) {
        const auto d = static_cast<double>(v);
        std::memcpy(p, &d, 8);
    } else {
        std::memcpy(p, &v, 10); // the x87 bytes; padding left as it is
    }
}

/// x + y or x * y rounded as the element type would: float through double
/// (53 >= 2 * 24 + 2 bits, so the double rounding is exact).
} // namespace reduce_test
