// SPDX-License-Identifier: BSD-3-Clause
// The reference model (coll_ref.h). Reductions are folded in rank order
// with the shared kernels on small integer-valued data, so every predefined
// operator and type is exact whatever order the plan combines in.
#include "coll_ref.h"

#include <complex>
#include <cstring>
#include <numeric>
#include <sstream>

namespace ucg::test {

namespace {

constexpr std::uint8_t kSentinel = 0xee;

std::uint8_t byte_of(int r, std::size_t b, std::size_t i, int iter)
{
    return static_cast<std::uint8_t>(r * 31 + static_cast<int>(b) * 17 +
                                     static_cast<int>(i) * 7 + iter * 13 + 1);
}

long value_of(int r, std::size_t i, int iter)
{
    return (r * 7 + static_cast<long>(i) * 3 + iter) % 11 - 5;
}

template <class T> void put(std::uint8_t *p, T v)
{
    std::memcpy(p, &v, sizeof(T));
}

template <class V> void put_pair(std::uint8_t *p, long v, int index)
{
    struct {
        V value;
        int index;
    } s{};
    s.value = static_cast<V>(v);
    s.index = index;
    std::memcpy(p, &s, sizeof(s));
}

// Element `v` (with `index` for pair types) of `dt` at p; zero padding.
void store(ucg_dtype_t dt, std::uint8_t *p, long v, int index)
{
    std::memset(p, 0, ucg_dtype_size(dt));
    switch (dt) {
    case UCG_DTYPE_INT8:
    case UCG_DTYPE_UINT8:
        return put(p, static_cast<std::int8_t>(v));
    case UCG_DTYPE_INT16:
    case UCG_DTYPE_UINT16:
        return put(p, static_cast<std::int16_t>(v));
    case UCG_DTYPE_INT32:
    case UCG_DTYPE_UINT32:
        return put(p, static_cast<std::int32_t>(v));
    case UCG_DTYPE_INT64:
    case UCG_DTYPE_UINT64:
        return put(p, static_cast<std::int64_t>(v));
    case UCG_DTYPE_FLOAT:
        return put(p, static_cast<float>(v));
    case UCG_DTYPE_DOUBLE:
        return put(p, static_cast<double>(v));
    case UCG_DTYPE_LONG_DOUBLE:
        return put(p, static_cast<long double>(v));
    case UCG_DTYPE_BOOL:
        return put(p, static_cast<bool>(v & 1));
    case UCG_DTYPE_FLOAT_COMPLEX:
        return put(p, std::complex<float>(static_cast<float>(v),
                                          static_cast<float>(1 - v)));
    case UCG_DTYPE_DOUBLE_COMPLEX:
        return put(p, std::complex<double>(static_cast<double>(v),
                                           static_cast<double>(1 - v)));
    case UCG_DTYPE_LONG_DOUBLE_COMPLEX:
        return put(p,
                   std::complex<long double>(static_cast<long double>(v),
                                             static_cast<long double>(1 - v)));
    case UCG_DTYPE_FLOAT_INT:
        return put_pair<float>(p, v, index);
    case UCG_DTYPE_DOUBLE_INT:
        return put_pair<double>(p, v, index);
    case UCG_DTYPE_LONG_INT:
        return put_pair<long>(p, v, index);
    case UCG_DTYPE_2INT:
        return put_pair<int>(p, v, index);
    case UCG_DTYPE_SHORT_INT:
        return put_pair<short>(p, v, index);
    case UCG_DTYPE_LONG_DOUBLE_INT:
        return put_pair<long double>(p, v, index);
    default:
        return;
    }
}

bool long_double_based(ucg_dtype_t dt)
{
    return dt == UCG_DTYPE_LONG_DOUBLE || dt == UCG_DTYPE_LONG_DOUBLE_INT ||
           dt == UCG_DTYPE_LONG_DOUBLE_COMPLEX;
}

// Equal as values: x87 long doubles carry 6 bytes of padding nobody writes.
bool same(ucg_dtype_t dt, const std::uint8_t *a, const std::uint8_t *b)
{
    if (!long_double_based(dt)) {
        return std::memcmp(a, b, ucg_dtype_size(dt)) == 0;
    }
    long double x, y;
    std::memcpy(&x, a, sizeof(x));
    std::memcpy(&y, b, sizeof(y));
    if (x != y) {
        return false;
    }
    if (dt == UCG_DTYPE_LONG_DOUBLE_COMPLEX) {
        std::memcpy(&x, a + 16, sizeof(x));
        std::memcpy(&y, b + 16, sizeof(y));
        return x == y;
    }
    if (dt == UCG_DTYPE_LONG_DOUBLE_INT) {
        return std::memcmp(a + 16, b + 16, sizeof(int)) == 0;
    }
    return true;
}

struct Blocks {
    std::vector<std::size_t> counts, displs;
    std::size_t extent = 0; // elements
};

// Counts around `count` (unequal for v forms) with one element of gap
// between blocks, so a block written at a wrong place is caught.
Blocks blocks_of(int size, std::size_t count, bool vary, int salt)
{
    Blocks b;
    std::size_t at = 0;
    for (int i = 0; i < size; ++i) {
        const std::size_t c =
            vary ? count + static_cast<std::size_t>((i + salt) % 3) : count;
        b.counts.push_back(c);
        b.displs.push_back(at);
        at += c + (vary ? 1 : 0);
    }
    b.extent = at;
    return b;
}

bool is_vector(ucg_coll_type_t c)
{
    return c == UCG_COLL_GATHERV || c == UCG_COLL_SCATTERV ||
           c == UCG_COLL_ALLGATHERV || c == UCG_COLL_ALLTOALLV ||
           c == UCG_COLL_REDUCE_SCATTER;
}

} // namespace

const ucg_user_op_t kUserSum = {
    [](const void *in, void *inout, std::size_t count, void *) {
        const auto *a = static_cast<const std::int32_t *>(in);
        auto *b = static_cast<std::int32_t *>(inout);
        for (std::size_t i = 0; i < count; ++i) {
            b[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(a[i]) +
                                             static_cast<std::uint32_t>(b[i]));
        }
    },
    nullptr, 1};

// x -> a x + b over uint32, packed as a (low) and b (high) in a uint64;
// in (+) inout applies `in` first: associative, not commutative.
const ucg_user_op_t kUserAffine = {
    [](const void *in, void *inout, std::size_t count, void *) {
        const auto *f = static_cast<const std::uint64_t *>(in);
        auto *g = static_cast<std::uint64_t *>(inout);
        for (std::size_t i = 0; i < count; ++i) {
            const auto fa = static_cast<std::uint32_t>(f[i]);
            const auto fb = static_cast<std::uint32_t>(f[i] >> 32);
            const auto ga = static_cast<std::uint32_t>(g[i]);
            const auto gb = static_cast<std::uint32_t>(g[i] >> 32);
            const std::uint32_t a = ga * fa;
            const std::uint32_t b = ga * fb + gb;
            g[i] = std::uint64_t{b} << 32 | a;
        }
    },
    nullptr, 0};

bool reduces(ucg_coll_type_t c)
{
    return c == UCG_COLL_REDUCE || c == UCG_COLL_ALLREDUCE ||
           c == UCG_COLL_REDUCE_SCATTER || c == UCG_COLL_REDUCE_SCATTER_BLOCK ||
           c == UCG_COLL_SCAN || c == UCG_COLL_EXSCAN;
}

bool rooted(ucg_coll_type_t c)
{
    return c == UCG_COLL_BCAST || c == UCG_COLL_REDUCE ||
           c == UCG_COLL_GATHER || c == UCG_COLL_GATHERV ||
           c == UCG_COLL_SCATTER || c == UCG_COLL_SCATTERV;
}

void RefCase::prepare()
{
    refill(iter);
}

ucg_coll_args_t RefCase::args()
{
    ucg_coll_args_t a{};
    a.field_mask = UCG_COLL_ARGS_FIELD_ROOT | UCG_COLL_ARGS_FIELD_OP |
                   UCG_COLL_ARGS_FIELD_FLAGS;
    a.coll = coll;
    a.root = static_cast<unsigned>(root);
    a.op = user_op != nullptr ? UCG_OP_USER : op;
    if (user_op != nullptr) {
        a.field_mask |= UCG_COLL_ARGS_FIELD_USER_OP;
        a.user_op = user_op;
    }
    const bool mine = !rooted(coll) || rank == root;
    a.flags = in_place && mine ? UCG_COLL_FLAG_IN_PLACE : 0;
    const ucg_datatype_t dt{reduces(coll) ? dtype : UCG_DTYPE_UINT8, 1};
    a.src = {src.data(), count, dt, scounts.data(), sdispls.data()};
    a.dst = {dst.data(), count, dt, dcounts.data(), ddispls.data()};
    if (coll == UCG_COLL_GATHERV || coll == UCG_COLL_ALLGATHERV) {
        a.src.count = scounts[0]; // this rank's own block
    }
    if (coll == UCG_COLL_SCATTERV) {
        a.dst.count = dcounts[0];
    }
    if (coll == UCG_COLL_REDUCE_SCATTER) {
        a.dst.displs = nullptr;
    }
    return a;
}

void RefCase::refill(int it)
{
    iter = it;
    const bool vec = is_vector(coll);
    const auto me = static_cast<std::size_t>(rank);
    const bool red = reduces(coll);
    const ucg_dtype_t dt = red ? dtype : UCG_DTYPE_UINT8;
    const std::size_t es = ucg_dtype_size(dt);
    const std::size_t blocks = static_cast<std::size_t>(size);
    // Layouts. alltoallv's count from r to b is count + (r + b) % 3 on both
    // sides (the salt), which in-place alltoallv needs.
    const int salt = coll == UCG_COLL_ALLTOALLV ? rank : 0;
    Blocks db = blocks_of(size, count, vec, salt);
    Blocks sb = db;
    switch (coll) {
    case UCG_COLL_GATHERV:
    case UCG_COLL_ALLGATHERV:
        sb = blocks_of(1, db.counts[me], false, 0);
        break;
    case UCG_COLL_SCATTERV:
        db = blocks_of(1, sb.counts[me], false, 0);
        break;
    case UCG_COLL_REDUCE_SCATTER:
    case UCG_COLL_REDUCE_SCATTER_BLOCK: {
        std::size_t at = 0;
        for (std::size_t b = 0; b < blocks; ++b) { // contiguous input
            sb.displs[b] = at;
            at += sb.counts[b];
        }
        sb.extent = at;
        break;
    }
    default:
        break;
    }
    if (!vec) { // uniform blocks, no gaps
        sb = blocks_of(
            coll == UCG_COLL_GATHER || coll == UCG_COLL_ALLGATHER ? 1 : size,
            count, false, 0);
        db = blocks_of(coll == UCG_COLL_SCATTER ? 1 : size, count, false, 0);
        if (coll == UCG_COLL_REDUCE_SCATTER_BLOCK) {
            db = blocks_of(size, count, false, 0);
        }
    }
    scounts = sb.counts;
    sdispls = sb.displs;
    dcounts = db.counts;
    ddispls = db.displs;
    std::size_t s_elems = 0, d_elems = 0;
    const bool one_block = coll == UCG_COLL_BCAST || coll == UCG_COLL_REDUCE ||
                           coll == UCG_COLL_ALLREDUCE ||
                           coll == UCG_COLL_SCAN || coll == UCG_COLL_EXSCAN;
    if (one_block) {
        s_elems = coll == UCG_COLL_BCAST ? 0 : count;
        d_elems = count;
    } else if (coll == UCG_COLL_REDUCE_SCATTER ||
               coll == UCG_COLL_REDUCE_SCATTER_BLOCK) {
        s_elems = sb.extent;
        d_elems = in_place ? sb.extent : db.counts[me];
    } else if (coll != UCG_COLL_BARRIER) {
        s_elems = sb.extent;
        d_elems = db.extent;
    }
    src.assign(std::max<std::size_t>(s_elems * es, 1), 0);
    dst.assign(std::max<std::size_t>(d_elems * es, 1), kSentinel);
    const bool at_root = rank == root;
    const bool place = in_place && (!rooted(coll) || at_root);
    auto at = [es](std::vector<std::uint8_t> &v, std::size_t i) {
        return v.data() + i * es;
    };
    // Inputs.
    auto contribution = [&](int r, std::size_t first, std::size_t n) {
        std::vector<std::uint8_t> c(n * es);
        for (std::size_t i = 0; i < n; ++i) {
            const long v = value_of(r, first + i, iter);
            if (user_op == &kUserAffine) { // a and b from the rank and v
                const auto a = static_cast<std::uint32_t>(2 * v + 1);
                const auto b = static_cast<std::uint32_t>(v * 7 + r * 13 + 1);
                put(c.data() + i * es, std::uint64_t{b} << 32 | a);
            } else {
                store(dt, c.data() + i * es, v, r);
            }
        }
        return c;
    };
    auto put_bytes = [&](std::vector<std::uint8_t> &v, std::size_t off, int r,
                         std::size_t b, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) {
            v[off + i] = byte_of(r, b, i, iter);
        }
    };
    if (red) {
        const std::size_t n = s_elems;
        const auto mine = contribution(rank, 0, n);
        auto &to = place ? dst : src;
        if (!mine.empty()) {
            std::memcpy(to.data(), mine.data(), mine.size());
        }
    } else if (coll == UCG_COLL_BCAST) {
        if (at_root) {
            put_bytes(dst, 0, root, 0, count);
        }
    } else if (coll == UCG_COLL_GATHER || coll == UCG_COLL_GATHERV ||
               coll == UCG_COLL_ALLGATHER || coll == UCG_COLL_ALLGATHERV) {
        put_bytes(src, 0, rank, 0, sb.counts[0]);
        if (place) {
            put_bytes(dst, db.displs[me], rank, 0, db.counts[me]);
        }
    } else if (coll == UCG_COLL_SCATTER || coll == UCG_COLL_SCATTERV) {
        if (at_root) {
            for (std::size_t b = 0; b < blocks; ++b) {
                put_bytes(src, sb.displs[b], rank, b, sb.counts[b]);
            }
        }
    } else if (coll == UCG_COLL_ALLTOALL || coll == UCG_COLL_ALLTOALLV) {
        for (std::size_t b = 0; b < blocks; ++b) {
            put_bytes(place ? dst : src, (place ? db : sb).displs[b], rank, b,
                      (place ? db : sb).counts[b]);
        }
    }
    expect = dst;
    // Expected outputs.
    auto fold = [&](int lo, int hi, std::size_t first, std::size_t n) {
        auto acc = contribution(lo, first, n);
        for (int r = lo + 1; r < hi; ++r) {
            auto c = contribution(r, first, n);
            if (user_op != nullptr) { // acc = acc (+) c, MPI's operand order
                user_op->func(acc.data(), c.data(), n, user_op->arg);
                acc.swap(c);
            } else {
                ucg_reduce(op, dt, acc.data(), c.data(), n);
            }
        }
        return acc;
    };
    auto put_fold = [&](int lo, int hi, std::size_t first, std::size_t n) {
        if (n != 0 && hi > lo) {
            const auto f = fold(lo, hi, first, n);
            std::memcpy(at(expect, 0), f.data(), f.size());
        }
    };
    switch (coll) {
    case UCG_COLL_BCAST:
        put_bytes(expect, 0, root, 0, count);
        break;
    case UCG_COLL_REDUCE:
        if (at_root) {
            put_fold(0, size, 0, count);
        }
        break;
    case UCG_COLL_ALLREDUCE:
        put_fold(0, size, 0, count);
        break;
    case UCG_COLL_SCAN:
        put_fold(0, rank + 1, 0, count);
        break;
    case UCG_COLL_EXSCAN:
        put_fold(0, rank, 0, count);
        break;
    case UCG_COLL_GATHER:
    case UCG_COLL_GATHERV:
    case UCG_COLL_ALLGATHER:
    case UCG_COLL_ALLGATHERV:
        if (at_root || coll == UCG_COLL_ALLGATHER ||
            coll == UCG_COLL_ALLGATHERV) {
            for (std::size_t b = 0; b < blocks; ++b) {
                put_bytes(expect, db.displs[b], static_cast<int>(b), 0,
                          db.counts[b]);
            }
        }
        break;
    case UCG_COLL_SCATTER:
    case UCG_COLL_SCATTERV:
        if (!place) {
            put_bytes(expect, 0, root, me, db.counts[0]);
        }
        break;
    case UCG_COLL_ALLTOALL:
    case UCG_COLL_ALLTOALLV:
        for (std::size_t b = 0; b < blocks; ++b) {
            put_bytes(expect, db.displs[b], static_cast<int>(b), me,
                      db.counts[b]);
        }
        break;
    case UCG_COLL_REDUCE_SCATTER:
    case UCG_COLL_REDUCE_SCATTER_BLOCK:
        put_fold(0, size, sb.displs[me], db.counts[me]);
        break;
    default:
        break;
    }
}

std::string RefCase::check() const
{
    const ucg_dtype_t dt = reduces(coll) ? dtype : UCG_DTYPE_UINT8;
    const std::size_t es = ucg_dtype_size(dt);
    for (std::size_t i = 0; i + es <= dst.size(); i += es) {
        if (!same(dt, dst.data() + i, expect.data() + i)) {
            std::ostringstream os;
            os << ucg_coll_type_name(coll) << " rank " << rank << "/" << size
               << " root " << root << " count " << count
               << (in_place ? " in place" : "") << " op " << ucg_op_name(op)
               << " " << ucg_dtype_name(dt) << ": byte " << i << " is "
               << int(dst[i]) << ", expected " << int(expect[i]);
            return os.str();
        }
    }
    return {};
}

} // namespace ucg::test
