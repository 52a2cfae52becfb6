// SPDX-License-Identifier: BSD-3-Clause
// ucg_perftest's loops (bench.h): buffers and arguments per collective,
// the timed loop, validation against a reference computed here.
#include "bench.h"

#include "data.h"
#include "timed_loop.h"
#include "ucp_pingpong.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <numeric>

namespace ucg::perftest {

namespace {

// Every rank's value of x; the min, max and mean over ranks.
struct OverRanks {
    double min, max, mean;
};
OverRanks over_ranks(const Env &env, double x)
{
    std::vector<double> all(static_cast<std::size_t>(env.size));
    env.allgather(&x, all.data(), sizeof(x));
    const auto [lo, hi] = std::minmax_element(all.begin(), all.end());
    return {*lo, *hi,
            std::accumulate(all.begin(), all.end(), 0.0) /
                static_cast<double>(all.size())};
}

long sum_over_ranks(const Env &env, long x)
{
    std::vector<long> all(static_cast<std::size_t>(env.size));
    env.allgather(&x, all.data(), sizeof(x));
    return std::accumulate(all.begin(), all.end(), 0L);
}

ucg_coll_args_t make_args(Case &c, ucg_coll_type_t coll, const Options &opt)
{
    ucg_coll_args_t a{};
    a.field_mask = UCG_COLL_ARGS_FIELD_ROOT | UCG_COLL_ARGS_FIELD_OP;
    a.coll = coll;
    a.root = 0;
    a.op = UCG_OP_SUM;
    const ucg_datatype_t dt{c.reduction ? opt.dtype : UCG_DTYPE_UINT8, 1};
    a.src = {c.src.data(), c.count, dt, c.counts.data(), c.displs.data()};
    a.dst = {c.dst.data(), c.count, dt, c.counts.data(), c.displs.data()};
    if (coll == UCG_COLL_REDUCE_SCATTER) {
        a.dst.displs = nullptr;
    }
    return a;
}

} // namespace

ucs_status_t run_one(ucg_coll_h coll)
{
    const ucs_status_t st = ucg_collective_start(coll);
    return st != UCS_OK ? st : ucg_collective_wait(coll);
}

ucs_status_t run_once(ucg_group_h group, const ucg_coll_args_t &args)
{
    ucg_coll_h h;
    ucs_status_t st = ucg_collective_init(group, &args, &h);
    if (st == UCS_OK) {
        st = run_one(h);
        ucg_collective_free(h);
    }
    return st;
}

BootId boot_id()
{
    BootId id;
    std::ifstream("/proc/sys/kernel/random/boot_id")
        .read(id.text, sizeof(id.text) - 1);
    return id;
}

bool one_clock(const Env &env)
{
    const BootId id = boot_id();
    std::vector<BootId> all(static_cast<std::size_t>(env.size));
    if (id.text[0] == '\0' ||
        env.allgather(&id, all.data(), sizeof(BootId)) != UCS_OK) {
        return false;
    }
    return std::all_of(all.begin(), all.end(), [&id](const BootId &other) {
        return std::memcmp(other.text, id.text, sizeof(id.text)) == 0;
    });
}

double span_clock(const Env &env, const Options &opt)
{
    return now_us() + env.rank * opt.test_clock_skew_us;
}

ucs_status_t row_span(const Env &env, const Options &opt, int iters,
                      const std::function<ucs_status_t()> &call,
                      const std::function<ucs_status_t()> &sync,
                      double *span_us)
{
    SpanSteps span{call, sync,
                   [&env](const double *mine, double *all, std::size_t n) {
                       return env.allgather(mine, all, n * sizeof(double));
                   },
                   env.size, nullptr};
    // On rank 0's clock: this rank's less its offset, measured now.
    double offset = 0;
    if (env.clocks != nullptr) {
        const ucs_status_t st =
            env.clocks->measure([&] { return span_clock(env, opt); }, &offset);
        if (st != UCS_OK) {
            return st;
        }
    }
    span.clock = [&] { return span_clock(env, opt) - offset; };
    SpanTimes spans;
    const ucs_status_t st =
        timed_span(std::min(iters, kSpanIters), span, &spans);
    *span_us = spans.mean_us;
    return st;
}

int iterations(const Options &opt, std::size_t bytes, bool warm)
{
    const bool large = bytes > 8192; // OSU's LARGE_MESSAGE_SIZE
    if (warm) {
        return opt.warmup >= 0 ? opt.warmup : (large ? 10 : 200);
    }
    return opt.iters >= 0 ? opt.iters : (large ? 100 : 1000);
}

std::string posed_host(const Env &env, const Options &opt)
{
    return opt.hosts > 0 ? "host" + std::to_string(env.rank % opt.hosts) : "";
}

std::size_t elem_bytes(const Options &opt, ucg_coll_type_t coll)
{
    return is_reduction(coll) ? ucg_dtype_size(opt.dtype) : 1;
}

ucs_status_t bench_ucg(const Env &env, const Options &opt, ucg_context_h,
                       ucg_group_h group, ucg_coll_type_t coll,
                       std::size_t bytes, Stats *out)
{
    Case c(env.rank, env.size, coll, bytes, elem_bytes(opt, coll));
    ucg_coll_args_t args = make_args(c, coll, opt);
    ucg_coll_args_t bargs{};
    bargs.coll = UCG_COLL_BARRIER;
    ucg_coll_h barrier, h = nullptr;
    ucs_status_t st = ucg_collective_init(group, &bargs, &barrier);
    if (st != UCS_OK) {
        return st;
    }
    const double t_init = now_us();
    if (!opt.oneoff) {
        st = ucg_collective_init(group, &args, &h);
    }
    const double init_us = now_us() - t_init;
    const int warm = iterations(opt, bytes, true);
    const int iters = iterations(opt, bytes, false);
    long errors = 0;
    LoopSteps steps;
    if (opt.validate) {
        steps.prepare = [&](int i) { c.fill(i, opt.dtype); };
        steps.check = [&](int i) { errors += c.check(i, opt.dtype); };
    }
    steps.call = [&] {
        return opt.oneoff ? run_once(group, args) : run_one(h);
    };
    steps.sync = [&] { return run_one(barrier); };
    LoopTimes times;
    if (st == UCS_OK) {
        st = timed_loop(coll, warm, iters, steps, &times);
    }
    if (st == UCS_OK && opt.span) {
        st = row_span(env, opt, iters, steps.call, steps.sync, &out->span_us);
    }
    if (st == UCS_OK && !opt.oneoff) {
        out->plan = ucg_collective_plan_name(h);
        out->pred_us = ucg_collective_predicted_us(h);
    } else if (opt.oneoff) {
        out->plan = "(one-off calls)";
    }
    ucg_collective_free(h);
    ucg_collective_free(barrier);
    if (st != UCS_OK) {
        return st;
    }
    const double avg = iters > 0 ? times.total_us / iters : 0;
    const OverRanks r = over_ranks(env, avg);
    out->avg_us = r.mean;
    out->min_us = r.min;
    out->max_us = r.max;
    out->iters = iters;
    out->first_us = over_ranks(env, times.first_us).max;
    out->init_us = over_ranks(env, init_us).max;
    out->errors = sum_over_ranks(env, errors);
    out->ran = true;
    return UCS_OK;
}

} // namespace ucg::perftest
