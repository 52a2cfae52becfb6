// SPDX-License-Identifier: BSD-3-Clause
// The MPI baseline of ucg_perftest: the same collective, buffers and
// timing on the MPI library of the same processes (--baseline mpi).
#include "bench.h"

#include "data.h"
#include "timed_loop.h"

#ifdef UCG_PERFTEST_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <numeric>
#include <vector>

namespace ucg::perftest {

#ifdef UCG_PERFTEST_MPI

namespace {

MPI_Datatype mpi_type(const Options &opt, ucg_coll_type_t coll)
{
    if (!is_reduction(coll)) {
        return MPI_BYTE;
    }
    switch (opt.dtype) {
    case UCG_DTYPE_DOUBLE:
        return MPI_DOUBLE;
    case UCG_DTYPE_INT32:
        return MPI_INT32_T;
    case UCG_DTYPE_INT64:
        return MPI_INT64_T;
    default:
        return MPI_FLOAT;
    }
}

// The v forms' counts and displacements as MPI takes them, made once
// before the loop: nothing but the collective runs inside the timer.
struct IntCounts {
    explicit IntCounts(const Case &c)
        : counts(c.counts.begin(), c.counts.end()),
          displs(c.displs.begin(), c.displs.end())
    {
    }
    std::vector<int> counts, displs;
};

int call(Case &c, IntCounts &v, MPI_Datatype t)
{
    const int n = static_cast<int>(c.count);
    void *s = c.src.data(), *d = c.dst.data();
    std::vector<int> &counts = v.counts, &displs = v.displs;
    const MPI_Comm w = MPI_COMM_WORLD;
    switch (c.coll) {
    case UCG_COLL_BARRIER:
        return MPI_Barrier(w);
    case UCG_COLL_BCAST:
        return MPI_Bcast(d, n, t, 0, w);
    case UCG_COLL_REDUCE:
        return MPI_Reduce(s, d, n, t, MPI_SUM, 0, w);
    case UCG_COLL_ALLREDUCE:
        return MPI_Allreduce(s, d, n, t, MPI_SUM, w);
    case UCG_COLL_GATHER:
        return MPI_Gather(s, n, t, d, n, t, 0, w);
    case UCG_COLL_GATHERV:
        return MPI_Gatherv(s, n, t, d, counts.data(), displs.data(), t, 0, w);
    case UCG_COLL_SCATTER:
        return MPI_Scatter(s, n, t, d, n, t, 0, w);
    case UCG_COLL_SCATTERV:
        return MPI_Scatterv(s, counts.data(), displs.data(), t, d, n, t, 0, w);
    case UCG_COLL_ALLGATHER:
        return MPI_Allgather(s, n, t, d, n, t, w);
    case UCG_COLL_ALLGATHERV:
        return MPI_Allgatherv(s, n, t, d, counts.data(), displs.data(), t, w);
    case UCG_COLL_ALLTOALL:
        return MPI_Alltoall(s, n, t, d, n, t, w);
    case UCG_COLL_ALLTOALLV:
        return MPI_Alltoallv(s, counts.data(), displs.data(), t, d,
                             counts.data(), displs.data(), t, w);
    case UCG_COLL_REDUCE_SCATTER:
        return MPI_Reduce_scatter(s, d, counts.data(), t, MPI_SUM, w);
    case UCG_COLL_REDUCE_SCATTER_BLOCK:
        return MPI_Reduce_scatter_block(s, d, n, t, MPI_SUM, w);
    case UCG_COLL_SCAN:
        return MPI_Scan(s, d, n, t, MPI_SUM, w);
    default:
        return MPI_Exscan(s, d, n, t, MPI_SUM, w);
    }
}

} // namespace

bool have_mpi()
{
    return true;
}

ucs_status_t bench_mpi(const Env &env, const Options &opt, ucg_coll_type_t coll,
                       std::size_t bytes, Stats *out)
{
    Case c(env.rank, env.size, coll, bytes, elem_bytes(opt, coll));
    IntCounts v(c);
    const MPI_Datatype t = mpi_type(opt, coll);
    const int warm = iterations(opt, bytes, true);
    const int iters = iterations(opt, bytes, false);
    long errors = 0;
    LoopSteps steps;
    if (opt.validate) {
        steps.prepare = [&](int i) { c.fill(i, opt.dtype); };
        steps.check = [&](int i) { errors += c.check(i, opt.dtype); };
    }
    steps.call = [&] {
        return call(c, v, t) == MPI_SUCCESS ? UCS_OK : UCS_ERR_IO_ERROR;
    };
    steps.sync = [] {
        return MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS ? UCS_OK
                                                          : UCS_ERR_IO_ERROR;
    };
    LoopTimes times;
    ucs_status_t st = timed_loop(coll, warm, iters, steps, &times);
    if (st == UCS_OK && opt.span) {
        st = row_span(env, opt, iters, steps.call, steps.sync, &out->span_us);
    }
    if (st != UCS_OK) {
        return st;
    }
    const double avg = iters > 0 ? times.total_us / iters : 0;
    double lo, hi, sum;
    MPI_Allreduce(&avg, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&avg, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&avg, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&times.first_us, &out->first_us, 1, MPI_DOUBLE, MPI_MAX,
                  MPI_COMM_WORLD);
    MPI_Allreduce(&errors, &out->errors, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    out->avg_us = sum / env.size;
    out->min_us = lo;
    out->max_us = hi;
    out->iters = iters;
    out->plan = "MPI";
    out->ran = true;
    return UCS_OK;
}

#else

bool have_mpi()
{
    return false;
}

ucs_status_t bench_mpi(const Env &, const Options &, ucg_coll_type_t,
                       std::size_t, Stats *)
{
    return UCS_ERR_UNSUPPORTED;
}

#endif

} // namespace ucg::perftest
