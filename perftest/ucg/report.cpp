// SPDX-License-Identifier: BSD-3-Clause
// Tables, CSV and the gnuplot figure of ucg_perftest (report.h).
#include "report.h"
#include "timed_loop.h"

#include "ucp_pingpong.h"

#include <cstdlib>
#include <fstream>
#include <set>

namespace ucg::perftest {

namespace {

const char *dtype_label(const Options &opt, ucg_coll_type_t coll)
{
    return elem_bytes(opt, coll) == 1 &&
                   !(coll == UCG_COLL_REDUCE || coll == UCG_COLL_ALLREDUCE)
               ? "bytes"
               : ucg_dtype_name(opt.dtype);
}

} // namespace

Report::Report(const Options &opt, const Env &env, double group_create_us,
               const Floor &floor)
    : opt_(opt), env_(env)
{
    if (env.rank != 0) {
        return; // rank 0 reports
    }
    std::printf("# ucg_perftest %d.%d: %d ranks (%s), %s\n", UCG_API_MAJOR,
                UCG_API_MINOR, env.size, env.launcher.c_str(),
                opt.oneoff ? "init+start+wait+free per call"
                           : "persistent: init once, start+wait per call");
    std::printf("# timing: OSU 7 (each iteration timed alone, a barrier "
                "before the first and between iterations outside the timer, "
                "barriers back to back as osu_barrier times them; "
                "min/max/avg over ranks of each rank's mean)\n");
    if (opt.span) {
        std::printf("# Span(us): then up to %d calls more, each from a start "
                    "the ranks agreed on (%.0f us after the latest clock "
                    "reading, twice that after a rank came late, up to %.0f "
                    "us) to the last rank's end, their mean (calls a rank "
                    "reached late left out); what Pred predicts\n",
                    kSpanIters, kSpanMarginUs, kSpanMaxMarginUs);
        std::printf("# Span clock: %s\n",
                    env.clocks == nullptr
                        ? "one for every rank (one kernel's steady clock)"
                        : "rank 0's: before each row's span, rank 0 "
                          "ping-pongs every rank and each rank's clock "
                          "less the midpoint of the shortest of its round "
                          "trips is its offset");
    }
    std::printf("# group creation: %.1f us (slowest rank); First(us): the "
                "first call, init included (slowest rank)\n",
                group_create_us);
    if (floor.flag_us > 0) {
        std::printf("# floor: one cache line from rank 0 to rank 1 in %.3f us "
                    "(half a flag ping-pong, median of 7 x 1000)",
                    floor.flag_us);
    } else if (env.size == 1) {
        std::printf("# floor: one rank, no cache line to pass");
    } else if (floor.other_hosts && floor.ucp_us > 0) {
        std::printf("# floor: ranks 0 and 1 on different hosts: UCP's 8 B tag "
                    "ping-pong, %.3f us one way (half a round trip, median of "
                    "%d x %d)",
                    floor.ucp_us, kPingBatches, kPingPerBatch);
    } else if (floor.other_hosts) {
        std::printf("# floor: ranks 0 and 1 on different hosts, no shared "
                    "cache line, no UCP ping-pong");
    } else {
        std::printf("# floor: no flag ping-pong between ranks 0 and 1 "
                    "(shared memory failed or no answer)");
    }
    std::printf("; memcpy of 16 MiB on rank 0: %.1f GB/s (best of 5); a "
                "reading of the clock: %.0f ns (one lies inside every row)\n",
                floor.memcpy_gbs, floor.clock_ns);
    if (!opt.csv.empty()) {
        csv_ = std::fopen(opt.csv.c_str(), "w");
        if (csv_ == nullptr) {
            std::fprintf(stderr, "ucg_perftest: --csv %s: cannot write\n",
                         opt.csv.c_str());
        } else {
            std::fprintf(csv_, "collective,bytes,avg_us,min_us,max_us,"
                               "iterations,plan,mpi_avg_us,mpi_min_us,"
                               "mpi_max_us,ratio,first_us,pred_us,"
                               "span_us,mpi_span_us\n");
        }
    }
}

Report::~Report()
{
    if (csv_ != nullptr) {
        std::fclose(csv_);
    }
}

void Report::begin(ucg_coll_type_t coll)
{
    std::printf("\n# UCG %s latency, %s%s\n", ucg_coll_type_name(coll),
                dtype_label(opt_, coll),
                opt_.validate ? ", every result validated" : "");
    std::printf("%-10s %12s %12s %12s %8s %10s %9s", "# Size", "Avg(us)",
                "Min(us)", "Max(us)", "Iters", "First(us)", "Pred(us)");
    if (opt_.span) {
        std::printf(" %9s", "Span(us)");
    }
    if (opt_.baseline_mpi) {
        std::printf(" %12s %7s", "MPI Avg(us)", "Ratio");
    }
    if (opt_.baseline_mpi && opt_.span) {
        std::printf(" %12s %9s", "MPISpan(us)", "SpanRatio");
    }
    std::printf("  Plan\n");
}

void Report::row(const Row &r)
{
    rows_.push_back(r);
    const double first = r.ucg.init_us + r.ucg.first_us;
    std::printf("%-10zu %12.2f %12.2f %12.2f %8d %10.2f", r.bytes, r.ucg.avg_us,
                r.ucg.min_us, r.ucg.max_us, r.ucg.iters, first);
    if (r.ucg.pred_us >= 0) {
        std::printf(" %9.2f", r.ucg.pred_us);
    } else {
        std::printf(" %9s", "-");
    }
    if (opt_.span && r.ucg.span_us >= 0) {
        std::printf(" %9.2f", r.ucg.span_us);
    } else if (opt_.span) {
        std::printf(" %9s", "-");
    }
    const double ratio =
        r.mpi.ran && r.mpi.avg_us > 0 ? r.ucg.avg_us / r.mpi.avg_us : 0;
    if (opt_.baseline_mpi) {
        std::printf(" %12.2f %7.2f", r.mpi.avg_us, ratio);
    }
    if (opt_.baseline_mpi && opt_.span) {
        if (r.mpi.span_us > 0 && r.ucg.span_us >= 0) {
            std::printf(" %12.2f %9.2f", r.mpi.span_us,
                        r.ucg.span_us / r.mpi.span_us);
        } else {
            std::printf(" %12s %9s", "-", "-");
        }
    }
    std::printf("  %s", r.ucg.plan.c_str());
    if (r.ucg.errors != 0 || r.mpi.errors != 0) {
        std::printf("  VALIDATION FAILED (%ld wrong)", r.ucg.errors);
    }
    std::printf("\n");
    std::fflush(stdout);
    if (csv_ != nullptr) {
        std::fprintf(csv_, "%s,%zu,%.3f,%.3f,%.3f,%d,\"%s\",",
                     ucg_coll_type_name(r.coll), r.bytes, r.ucg.avg_us,
                     r.ucg.min_us, r.ucg.max_us, r.ucg.iters,
                     r.ucg.plan.c_str());
        if (r.mpi.ran) {
            std::fprintf(csv_, "%.3f,%.3f,%.3f,%.3f,", r.mpi.avg_us,
                         r.mpi.min_us, r.mpi.max_us, ratio);
        } else {
            std::fprintf(csv_, ",,,,");
        }
        std::fprintf(csv_, "%.3f,", first);
        if (r.ucg.pred_us >= 0) {
            std::fprintf(csv_, "%.3f", r.ucg.pred_us);
        }
        std::fprintf(csv_, ",");
        if (r.ucg.span_us >= 0) {
            std::fprintf(csv_, "%.3f", r.ucg.span_us);
        }
        std::fprintf(csv_, ",");
        if (r.mpi.ran && r.mpi.span_us >= 0) {
            std::fprintf(csv_, "%.3f", r.mpi.span_us);
        }
        std::fprintf(csv_, "\n");
    }
}

bool Report::finish()
{
    if (opt_.plot.empty()) {
        return true;
    }
    const std::string data = opt_.plot + ".dat";
    std::ofstream d(data);
    std::set<int> colls;
    for (const Row &r : rows_) {
        colls.insert(r.coll);
    }
    int index = 0;
    std::string plots;
    for (int c : colls) {
        d << "# " << ucg_coll_type_name(static_cast<ucg_coll_type_t>(c))
          << "\n";
        for (const Row &r : rows_) {
            if (r.coll == c) {
                d << r.bytes << " " << r.ucg.avg_us << " "
                  << (r.mpi.ran ? r.mpi.avg_us : 0.0) << "\n";
            }
        }
        d << "\n\n";
        const std::string name =
            ucg_coll_type_name(static_cast<ucg_coll_type_t>(c));
        plots += (plots.empty() ? "" : ", ") + std::string("'") + data +
                 "' index " + std::to_string(index) +
                 " using 1:2 with linespoints title 'UCG " + name + "'";
        if (opt_.baseline_mpi) {
            plots += ", '" + data + "' index " + std::to_string(index) +
                     " using 1:3 with linespoints dashtype 2 title 'MPI " +
                     name + "'";
        }
        ++index;
    }
    d.close();
    const std::string script = opt_.plot + ".gp";
    std::ofstream s(script);
    s << "set terminal pngcairo size 1000,650 noenhanced\nset output '"
      << opt_.plot
      << "'\nset logscale xy 2\nset xlabel 'message size (bytes)'\n"
      << "set ylabel 'latency (us)'\nset key top left\nset grid\n"
      << "set title 'ucg_perftest, " << env_.size << " ranks'\nplot " << plots
      << "\n";
    s.close();
    const std::string cmd = "gnuplot '" + script + "'";
    if (std::system(cmd.c_str()) != 0) {
        std::fprintf(stderr, "ucg_perftest: --plot: gnuplot failed (is "
                             "gnuplot installed?)\n");
        return false;
    }
    std::printf("# figure: %s\n", opt_.plot.c_str());
    return true;
}

} // namespace ucg::perftest
