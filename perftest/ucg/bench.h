// SPDX-License-Identifier: BSD-3-Clause
// ucg_perftest's measurement: one collective at one size, timed as OSU 7
// times it (timed_loop.h), on UCG and optionally on the MPI library of the
// same processes.
#pragma once

#include <ucg/ucg.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace ucg::perftest {

class ClockOffsets;

/// Seconds on the steady clock (the floor's ping-pongs).
inline double now_s()
{
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

/// The median of `v` (the upper one of an even count); `v` not empty.
inline double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/// How the ranks of one run reach each other outside UCG.
struct Env {
    int rank = 0;
    int size = 1;
    /// Every rank's `length` bytes into `all`, rank order (blocking).
    std::function<ucs_status_t(const void *mine, void *all, std::size_t len)>
        allgather;
    bool mpi = false; ///< launched by mpirun (MPI is initialized)
    std::string launcher;
    /// --span where the ranks' machines have clocks of their own: each
    /// row's offsets to rank 0's clock (ucp_pingpong.h); nullptr: one clock.
    ClockOffsets *clocks = nullptr;
};

struct Options {
    std::vector<ucg_coll_type_t> colls;
    std::size_t min_bytes = 8;
    std::size_t max_bytes = 1 << 20;
    int iters = -1;  ///< -1: OSU's 1000 (100 above 8 KiB)
    int warmup = -1; ///< -1: OSU's 200 (10 above 8 KiB)
    bool validate = false;
    bool oneoff = false; ///< init + start + wait + free per iteration
    bool no_shm = false;
    bool calibrate_links = false; ///< measure the link (calibrate.h)
    bool span = false;            ///< time each row's span too (timed_loop.h)
    bool calibrate_turn = false;  ///< measure a poll turn (calibrate.h)
    /// Tests of --span's offsets on one machine: rank r's span clock reads
    /// r x this many us ahead, and the offsets are measured (decision 0063).
    double test_clock_skew_us = 0;
    int hosts = 0; ///< > 0: rank r poses as host "host<r % hosts>"
    bool baseline_mpi = false;
    ucg_dtype_t dtype = UCG_DTYPE_FLOAT;
    std::string tune;
    std::string csv;
    std::string plot;
};

/// One measurement, over all ranks (OSU: each rank's average latency,
/// then the min, max and average of those over ranks).
struct Stats {
    double avg_us = 0, min_us = 0, max_us = 0;
    int iters = 0;
    double first_us = 0; ///< first iteration, max over ranks
    double init_us = 0;  ///< ucg_collective_init, max over ranks
    double pred_us = -1; ///< the cost model's (UCG; < 0: none)
    double span_us = -1; ///< --span: mean span (< 0: none)
    long errors = 0;     ///< wrong elements (validation), all ranks
    std::string plan;
    bool ran = false;
};

/// Runs one collective at one size on UCG. Returns an error for a failed
/// call (the run stops), else fills *out on every rank.
ucs_status_t bench_ucg(const Env &env, const Options &opt, ucg_context_h ctx,
                       ucg_group_h group, ucg_coll_type_t coll,
                       std::size_t bytes, Stats *out);

/// The same with the MPI library (only when env.mpi).
ucs_status_t bench_mpi(const Env &env, const Options &opt, ucg_coll_type_t coll,
                       std::size_t bytes, Stats *out);

/// OSU's iteration counts: `warm` untimed ones, else timed ones
/// (opt.warmup / opt.iters where set).
int iterations(const Options &opt, std::size_t bytes, bool warm);

/// Calls of a row's span (--span): its timed iterations, at most this
/// many (each waits kSpanMarginUs or more for its start).
inline constexpr int kSpanIters = 100;

/// This kernel's boot id (/proc/sys/kernel/random/boot_id), alike in
/// every namespace and container of one machine; empty where unreadable.
struct BootId {
    char text[40] = {};
};
BootId boot_id();

/// Whether every rank reads one clock: the same kernel (boot id), as
/// hosts emulated on one machine do. Blocking (an allgather).
bool one_clock(const Env &env);

/// This rank's own clock for a row's span, us: the steady clock
/// (opt.test_clock_skew_us ahead per rank in tests).
double span_clock(const Env &env, const Options &opt);

/// A row's span (--span, timed_loop.h): up to kSpanIters `call`s after
/// `sync`s, on rank 0's clock where env.clocks measures offsets (before
/// it starts); *span_us < 0 where no call counted.
ucs_status_t row_span(const Env &env, const Options &opt, int iters,
                      const std::function<ucs_status_t()> &call,
                      const std::function<ucs_status_t()> &sync,
                      double *span_us);

/// Starts `coll` and waits for it.
ucs_status_t run_one(ucg_coll_h coll);

/// Inits a collective of `args` on `group`, runs it once and frees it.
ucs_status_t run_once(ucg_group_h group, const ucg_coll_args_t &args);

/// Whether this perftest build has MPI.
bool have_mpi();

/// Sizes in bytes of one element of the run's datatype for `coll`
/// (reductions use opt.dtype, data movement bytes).
std::size_t elem_bytes(const Options &opt, ucg_coll_type_t coll);

/// The host this rank poses as with --hosts ("host<rank % N>"), else "".
std::string posed_host(const Env &env, const Options &opt);

} // namespace ucg::perftest
