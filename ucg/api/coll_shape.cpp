// SPDX-License-Identifier: BSD-3-Clause
// Argument checks and shapes of every collective (coll_shape.h). Counts
// become bytes (element = one byte) for collectives that only move data,
// and elements of the base type for reductions, so chunk boundaries fall
// on elements.
#include "api/coll_shape.h"

#include "api/internal.h"

#include <cstring>
#include <numeric>
#include <type_traits>

namespace ucg::rt {

namespace {

using exec::BufferLayout;
using plan::Collective;

// A byte of storage for collectives whose buffers hold nothing.
std::uint8_t g_nothing;

bool rooted(ucg_coll_type_t c)
{
    return c == UCG_COLL_BCAST || c == UCG_COLL_REDUCE ||
           c == UCG_COLL_GATHER || c == UCG_COLL_GATHERV ||
           c == UCG_COLL_SCATTER || c == UCG_COLL_SCATTERV;
}

bool reduction(ucg_coll_type_t c)
{
    return c == UCG_COLL_REDUCE || c == UCG_COLL_ALLREDUCE ||
           c == UCG_COLL_REDUCE_SCATTER || c == UCG_COLL_REDUCE_SCATTER_BLOCK ||
           c == UCG_COLL_SCAN || c == UCG_COLL_EXSCAN;
}

ucs_status_t bad(const char *what, ucs_status_t st = UCS_ERR_INVALID_PARAM)
{
    log_error("ucg_collective_init: %s", what);
    return st;
}

// An enum field as the caller stored it: C lets any int sit in an enum,
// and loading an out-of-range one as the C++ enum is undefined.
template <class E> int raw(const E &e)
{
    std::underlying_type_t<E> v;
    std::memcpy(&v, &e, sizeof(v));
    return static_cast<int>(v);
}

std::uint64_t run_of(const ucg_datatype_t &dt)
{
    return dt.run == 0 ? 1 : dt.run;
}

// Checks one side's buffer: a datatype in range, a buffer where there is
// data, count arrays for v collectives.
ucs_status_t check_side(const ucg_buffer_t &b, bool vec, int size,
                        const char *name)
{
    const int base = raw(b.dtype.base);
    if (base < 0 || base >= UCG_DTYPE_LAST || datatype_bytes(b.dtype) == 0) {
        log_error("ucg_collective_init: %s datatype %d is out of range", name,
                  base);
        return UCS_ERR_INVALID_PARAM;
    }
    if (vec) {
        if (b.counts == nullptr || b.displs == nullptr) {
            log_error("ucg_collective_init: %s needs counts and displs", name);
            return UCS_ERR_INVALID_PARAM;
        }
        const bool any = std::any_of(b.counts, b.counts + size,
                                     [](std::size_t c) { return c != 0; });
        if (any && b.buffer == nullptr) {
            log_error("ucg_collective_init: %s buffer is NULL", name);
            return UCS_ERR_INVALID_PARAM;
        }
    } else if (b.count != 0 && b.buffer == nullptr) {
        log_error("ucg_collective_init: %s buffer is NULL with count %zu", name,
                  b.count);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

ucs_status_t check_op(const ucg_coll_args_t &a)
{
    if (!(a.field_mask & UCG_COLL_ARGS_FIELD_OP)) {
        return bad("a reduction needs an op");
    }
    if (const int op = raw(a.op); op < 0 || op >= UCG_OP_LAST) {
        log_error("ucg_collective_init: op %d is out of range", op);
        return UCS_ERR_INVALID_PARAM;
    }
    if (a.op == UCG_OP_USER) {
        if (!(a.field_mask & UCG_COLL_ARGS_FIELD_USER_OP) ||
            a.user_op == nullptr || a.user_op->func == nullptr) {
            return bad("UCG_OP_USER needs user_op with a function");
        }
        return UCS_OK;
    }
    if (const int dt = raw(a.dst.dtype.base); dt < 0 || dt >= UCG_DTYPE_LAST) {
        log_error("ucg_collective_init: datatype %d is out of range", dt);
        return UCS_ERR_INVALID_PARAM;
    }
    // Both in range: only a pair without a kernel is left to refuse.
    const ucs_status_t st = ucg_reduce_check(a.op, a.dst.dtype.base);
    if (st != UCS_OK) {
        log_error("ucg_collective_init: op %s does not apply to %s",
                  ucg_op_name(a.op), ucg_dtype_name(a.dst.dtype.base));
    }
    return st;
}

std::vector<std::uint64_t> scaled(const std::size_t *v, int size,
                                  std::uint64_t by)
{
    std::vector<std::uint64_t> out(static_cast<std::size_t>(size));
    for (int i = 0; i < size; ++i) {
        out[static_cast<std::size_t>(i)] = v[i] * by;
    }
    return out;
}

struct Ctx {
    const ucg_coll_args_t &a;
    int rank, size, root;
    bool in_place, at_root;
    std::uint64_t sb, db; // bytes per src / dst datatype element
};

// The unit a reduction's chunks split on. A predefined operator works on
// the base type, so a datatype's run may be split (finer chunks balance
// better); a user operator's count is in whole datatype elements (MPI's
// derived type), so a chunk may not end inside one: it would lose the
// rest of that element.
struct ReductionUnit {
    std::uint64_t bytes;    // of one unit
    std::uint64_t per_elem; // units per datatype element
};

ReductionUnit reduction_unit(const ucg_coll_args_t &a, const ucg_datatype_t &dt)
{
    if (a.op == UCG_OP_USER) {
        return {datatype_bytes(dt), 1};
    }
    return {ucg_dtype_size(dt.base), run_of(dt)};
}

// Reductions of one block (reduce, allreduce, scan, exscan): chunks split
// on reduction units.
ucs_status_t one_block_reduction(const Ctx &c, CollShape *s)
{
    const bool dst_used = s->collective != Collective::kReduce || c.at_root;
    // A reduce's non-root has no dst: its in-place flag is ignored, as MPI
    // ignores MPI_IN_PLACE anywhere but at the root.
    const bool src_used = !(c.in_place && dst_used);
    if ((src_used && check_side(c.a.src, false, c.size, "src") != UCS_OK) ||
        (dst_used && check_side(c.a.dst, false, c.size, "dst") != UCS_OK)) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (src_used && dst_used &&
        (c.a.src.count != c.a.dst.count ||
         c.a.src.dtype.base != c.a.dst.dtype.base ||
         run_of(c.a.src.dtype) != run_of(c.a.dst.dtype))) {
        return bad("a reduction's src and dst differ in count or datatype");
    }
    const ucg_buffer_t &b = src_used ? c.a.src : c.a.dst;
    const ReductionUnit u = reduction_unit(c.a, b.dtype);
    const std::uint64_t es = u.bytes;
    const std::uint64_t count = b.count * u.per_elem;
    s->layout.elem_bytes = es;
    s->layout.input = BufferLayout::uniform(1, count, es);
    s->layout.output = BufferLayout::uniform(dst_used ? 1 : 0, count, es);
    s->layout.scratch_count = count;
    s->select_bytes = count * es;
    s->trivial = count == 0;
    s->output = dst_used ? c.a.dst.buffer : &g_nothing;
    s->input = src_used ? c.a.src.buffer : nullptr;
    s->copy_bytes = src_used ? 0 : count * es; // the plan writes out first
    return UCS_OK;
}

ucs_status_t bcast(const Ctx &c, CollShape *s)
{
    if (check_side(c.a.dst, false, c.size, "dst") != UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }
    const std::uint64_t n = c.a.dst.count * c.db;
    s->layout.input = BufferLayout::uniform(c.at_root ? 1 : 0, n, 1);
    s->layout.output = BufferLayout::uniform(1, n, 1);
    s->layout.scratch_count = n;
    s->input = c.a.dst.buffer; // the root's data is already in place
    s->output = c.a.dst.buffer;
    s->select_bytes = n;
    s->trivial = n == 0;
    return UCS_OK;
}

// Gather, allgather and their v forms: one input block, P output blocks
// (at the root only for gather). In place, this rank's block of the output
// is the input: the plan copies it onto itself.
ucs_status_t gather_like(const Ctx &c, bool vec, bool all, CollShape *s)
{
    const bool has_out = all || c.at_root;
    const bool src_used = !(c.in_place && has_out);
    if ((src_used && check_side(c.a.src, false, c.size, "src") != UCS_OK) ||
        (has_out && check_side(c.a.dst, vec, c.size, "dst") != UCS_OK)) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (has_out) {
        s->layout.output =
            vec ? BufferLayout::vector(scaled(c.a.dst.counts, c.size, c.db),
                                       scaled(c.a.dst.displs, c.size, 1), c.db)
                : BufferLayout::uniform(c.size, c.a.dst.count * c.db, 1);
    }
    const auto me = static_cast<std::size_t>(c.rank);
    std::uint64_t mine = c.a.src.count * c.sb;
    if (!src_used) {
        mine = s->layout.output.count[me];
        s->input = static_cast<std::uint8_t *>(c.a.dst.buffer) +
                   s->layout.output.offset[me];
    } else {
        s->input = c.a.src.buffer;
        if (has_out && !vec && mine != s->layout.output.count[me]) {
            return bad("src bytes differ from a block of dst");
        }
    }
    s->layout.input = BufferLayout::uniform(1, mine, 1);
    s->layout.scratch_count = mine;
    s->output = has_out ? c.a.dst.buffer : &g_nothing;
    s->select_bytes = vec ? 0 : mine;
    s->forced = vec ? (all ? "ring" : "linear") : nullptr;
    s->trivial = !vec && mine == 0;
    return UCS_OK;
}

ucs_status_t scatter_like(const Ctx &c, bool vec, CollShape *s)
{
    const bool dst_used = !(c.in_place && c.at_root);
    if ((c.at_root && check_side(c.a.src, vec, c.size, "src") != UCS_OK) ||
        (dst_used && check_side(c.a.dst, false, c.size, "dst") != UCS_OK)) {
        return UCS_ERR_INVALID_PARAM;
    }
    if (c.at_root) {
        s->layout.input =
            vec ? BufferLayout::vector(scaled(c.a.src.counts, c.size, c.sb),
                                       scaled(c.a.src.displs, c.size, 1), c.sb)
                : BufferLayout::uniform(c.size, c.a.src.count * c.sb, 1);
        s->input = c.a.src.buffer;
    }
    const auto me = static_cast<std::size_t>(c.rank);
    std::uint64_t mine = c.a.dst.count * c.db;
    if (!dst_used) { // the root's block stays in src, copied onto itself
        mine = s->layout.input.count[me];
        s->output = static_cast<std::uint8_t *>(c.a.src.buffer) +
                    s->layout.input.offset[me];
    } else {
        s->output = c.a.dst.buffer;
        if (c.at_root && !vec && mine != s->layout.input.count[me]) {
            return bad("dst bytes differ from a block of src");
        }
    }
    s->layout.output = BufferLayout::uniform(1, mine, 1);
    s->layout.scratch_count = mine;
    s->select_bytes = vec ? 0 : mine;
    s->forced = vec ? "linear" : nullptr;
    s->trivial = !vec && mine == 0;
    return UCS_OK;
}

ucs_status_t alltoall_like(const Ctx &c, bool vec, CollShape *s)
{
    if ((!c.in_place && check_side(c.a.src, vec, c.size, "src") != UCS_OK) ||
        check_side(c.a.dst, vec, c.size, "dst") != UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }
    const ucg_buffer_t &in = c.in_place ? c.a.dst : c.a.src;
    const std::uint64_t ib = c.in_place ? c.db : c.sb;
    auto layout = [&](const ucg_buffer_t &b, std::uint64_t eb) {
        return vec ? BufferLayout::vector(scaled(b.counts, c.size, eb),
                                          scaled(b.displs, c.size, 1), eb)
                   : BufferLayout::uniform(c.size, b.count * eb, 1);
    };
    s->layout.input = layout(in, ib);
    s->layout.output = layout(c.a.dst, c.db);
    const std::uint64_t blk = vec ? 0 : c.a.dst.count * c.db;
    if (!vec && !c.in_place && c.a.src.count * c.sb != blk) {
        return bad("src and dst blocks differ in bytes");
    }
    s->layout.scratch_count = blk;
    s->input = c.in_place ? nullptr : c.a.src.buffer;
    s->output = c.a.dst.buffer;
    s->copy_bytes = c.in_place ? s->layout.output.extent(1) : 0;
    s->select_bytes = blk;
    s->forced = vec ? "pairwise" : nullptr;
    s->trivial = !vec && blk == 0;
    return UCS_OK;
}

ucs_status_t reduce_scatter(const Ctx &c, bool block, CollShape *s)
{
    if (check_side(c.a.dst, false, c.size, "dst") != UCS_OK ||
        (!c.in_place && check_side(c.a.src, false, c.size, "src") != UCS_OK) ||
        (!block && c.a.dst.counts == nullptr)) {
        return bad("reduce_scatter needs dst (with counts) and src");
    }
    const ReductionUnit u = reduction_unit(c.a, c.a.dst.dtype);
    const std::uint64_t es = u.bytes;
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(c.size));
    std::vector<std::uint64_t> displs(counts.size());
    std::uint64_t total = 0;
    for (std::size_t b = 0; b < counts.size(); ++b) {
        counts[b] = (block ? c.a.dst.count : c.a.dst.counts[b]) * u.per_elem;
        displs[b] = total;
        total += counts[b];
    }
    if (total != 0 && !c.in_place && c.a.src.buffer == nullptr) {
        return bad("src buffer is NULL");
    }
    s->layout.elem_bytes = es;
    s->layout.input = BufferLayout::vector(counts, displs, es);
    s->layout.output =
        BufferLayout::uniform(1, counts[static_cast<std::size_t>(c.rank)], es);
    // Every reduce_scatter plan keeps input block b in scratch block b:
    // with counts, scratch has the input's blocks, and the plan is chosen
    // for the mean block (counts are alike on every rank, so every rank
    // chooses alike).
    s->layout.scratch_count = block ? c.a.dst.count * u.per_elem : 0;
    if (!block) {
        s->layout.scratch = s->layout.input;
    }
    s->input = c.in_place ? nullptr : c.a.src.buffer;
    s->output = c.a.dst.buffer;
    s->copy_bytes = c.in_place ? total * es : 0;
    s->select_bytes = total * es / static_cast<std::uint64_t>(c.size);
    s->trivial = total == 0;
    return UCS_OK;
}

ucs_status_t by_type(const Ctx &c, CollShape *s)
{
    switch (c.a.coll) {
    case UCG_COLL_BARRIER:
        s->collective = Collective::kBarrier;
        s->layout.input = BufferLayout::uniform(1, 0, 1);
        s->layout.output = BufferLayout::uniform(1, 0, 1);
        s->input = s->output = &g_nothing;
        return UCS_OK;
    case UCG_COLL_BCAST:
        s->collective = Collective::kBcast;
        return bcast(c, s);
    case UCG_COLL_REDUCE:
        s->collective = Collective::kReduce;
        return one_block_reduction(c, s);
    case UCG_COLL_ALLREDUCE:
        s->collective = Collective::kAllreduce;
        return one_block_reduction(c, s);
    case UCG_COLL_GATHER:
    case UCG_COLL_GATHERV:
        s->collective = Collective::kGather;
        return gather_like(c, c.a.coll == UCG_COLL_GATHERV, false, s);
    case UCG_COLL_ALLGATHER:
    case UCG_COLL_ALLGATHERV:
        s->collective = Collective::kAllgather;
        return gather_like(c, c.a.coll == UCG_COLL_ALLGATHERV, true, s);
    case UCG_COLL_SCATTER:
    case UCG_COLL_SCATTERV:
        s->collective = Collective::kScatter;
        return scatter_like(c, c.a.coll == UCG_COLL_SCATTERV, s);
    case UCG_COLL_ALLTOALL:
    case UCG_COLL_ALLTOALLV:
        s->collective = Collective::kAlltoall;
        return alltoall_like(c, c.a.coll == UCG_COLL_ALLTOALLV, s);
    case UCG_COLL_REDUCE_SCATTER:
    case UCG_COLL_REDUCE_SCATTER_BLOCK:
        s->collective = Collective::kReduceScatter;
        return reduce_scatter(c, c.a.coll == UCG_COLL_REDUCE_SCATTER_BLOCK, s);
    case UCG_COLL_SCAN:
        s->collective = Collective::kScan;
        return one_block_reduction(c, s);
    default:
        s->collective = Collective::kExscan;
        return one_block_reduction(c, s);
    }
}

} // namespace

std::size_t datatype_bytes(const ucg_datatype_t &dt)
{
    return ucg_dtype_size(dt.base) * (dt.run == 0 ? 1 : dt.run);
}

ucs_status_t coll_shape(const ucg_coll_args_t &a, int rank, int size,
                        CollShape *s)
{
    if (a.coll < 0 || a.coll >= UCG_COLL_LAST) {
        return bad("collective type out of range");
    }
    const int root = (a.field_mask & UCG_COLL_ARGS_FIELD_ROOT)
                         ? static_cast<int>(a.root)
                         : 0;
    if (rooted(a.coll) && (a.root >= static_cast<unsigned>(size))) {
        log_error("ucg_collective_init: root %u of a group of %d", a.root,
                  size);
        return UCS_ERR_INVALID_PARAM;
    }
    if (reduction(a.coll)) {
        const ucs_status_t st = check_op(a);
        if (st != UCS_OK) {
            return st;
        }
    }
    const bool in_place = (a.field_mask & UCG_COLL_ARGS_FIELD_FLAGS) &&
                          (a.flags & UCG_COLL_FLAG_IN_PLACE);
    s->root = rooted(a.coll) ? root : 0;
    s->reducing = reduction(a.coll);
    const Ctx c{a,
                rank,
                size,
                s->root,
                in_place,
                rank == s->root,
                datatype_bytes(a.src.dtype),
                datatype_bytes(a.dst.dtype)};
    return by_type(c, s);
}

} // namespace ucg::rt
