// SPDX-License-Identifier: BSD-3-Clause
// Random elements for the tests, edge values mixed in.
#include "reduce_ref.h"
#include "ref_layout.h"

#include <cmath>
#include <limits>

namespace reduce_test {
namespace {

uint64_t random_integer(std::size_t bytes, std::mt19937_64 &rng)
{
    const uint64_t top = uint64_t{1} << (8 * bytes - 1);
    switch (rng() % 8) {
    case 0:
        return 0;
    case 1:
        return 1;
    case 2:
        return ~uint64_t{0}; // -1, or the largest unsigned
    case 3:
        return top; // the lowest signed
    case 4:
        return top - 1; // the largest signed
    default:
        return rng();
    }
}

long double random_floating(std::size_t bytes, bool with_nan,
                            std::mt19937_64 &rng)
{
    const bool single = bytes == 4;
    switch (rng() % 16) {
    case 0:
        return 0.0L;
    case 1:
        return -0.0L;
    case 2:
        return std::numeric_limits<float>::infinity();
    case 3:
        return -std::numeric_limits<float>::infinity();
    case 4:
        return with_nan ? std::numeric_limits<float>::quiet_NaN() : 2.0L;
    case 5:
        return single ? std::numeric_limits<float>::max()
                      : std::numeric_limits<double>::max();
    case 6:
        return single ? std::numeric_limits<float>::denorm_min()
                      : std::numeric_limits<double>::denorm_min();
    case 7:
        return 1.0L;
    default: {
        const auto mantissa = static_cast<double>(static_cast<int64_t>(rng()));
        return std::ldexp(mantissa, static_cast<int>(rng() % 41) - 83);
    }
    }
}

void random_element(const Desc &d, char *p, bool with_nan, std::mt19937_64 &rng)
{
    const auto small = [&] {
        return static_cast<long double>(static_cast<int>(rng() % 17) - 8) / 2;
    };
    switch (d.cls) {
    case Cls::kInt:
    case Cls::kUint:
        return store_u(p, d.size, random_integer(d.size, rng));
    case Cls::kBool:
        return store_u(p, 1, rng() & 1);
    case Cls::kFloating:
        return store_f(p, d.scalar, random_floating(d.scalar, with_nan, rng));
    case Cls::kComplex:
        store_f(p, d.scalar, small());
        return store_f(p + d.size / 2, d.scalar, small());
    default: // few distinct values and indices: many ties
        if (d.int_value) {
            store_u(p, d.scalar, static_cast<uint64_t>(rng() % 5) - 2);
        } else {
            const bool nan = with_nan && (rng() % 16 == 0);
            store_f(p, d.scalar,
                    nan ? std::numeric_limits<float>::quiet_NaN() : small());
        }
        return store_u(p + d.size / 2, 4, rng() % 4);
    }
}

} // namespace

std::vector<unsigned char> random_elements(ucg_dtype_t dtype, std::size_t count,
                                           std::mt19937_64 &rng, bool with_nan)
{
    const Desc d = describe(dtype);
    std::vector<unsigned char> out(count * d.size);
    for (std::size_t i = 0; i < count; ++i) {
        random_element(d, reinterpret_cast<char *>(out.data()) + i * d.size,
                       with_nan, rng);
    }
    return out;
}

} // namespace reduce_test
