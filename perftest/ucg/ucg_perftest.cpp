// SPDX-License-Identifier: BSD-3-Clause
// ucg_perftest: OSU-style latency of UCG's collectives. `-n N` forks N
// local ranks (out-of-band over shared memory); under mpirun it uses MPI
// for the out-of-band exchange and, with --baseline mpi, times the MPI
// library's own collective in the same processes.
#include "bench.h"
#include "calibrate.h"
#include "local_launch.h"
#include "report.h"

#include "tool_cli.h"
#include "ucp_pingpong.h"

#ifdef UCG_PERFTEST_MPI
#include <mpi.h>
#endif

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>

namespace ucg::perftest {

namespace {

const std::map<std::string, ucg_coll_type_t> &coll_names()
{
    static const std::map<std::string, ucg_coll_type_t> m = [] {
        std::map<std::string, ucg_coll_type_t> out;
        for (int c = 0; c < UCG_COLL_LAST; ++c) {
            const auto t = static_cast<ucg_coll_type_t>(c);
            out[ucg_coll_type_name(t)] = t;
        }
        return out;
    }();
    return m;
}

// "8:1m" -> sizes; k/m/g suffixes.
bool parse_size(const std::string &s, std::size_t *out)
{
    char *end;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (end == s.c_str()) {
        return false;
    }
    std::size_t mult = 1;
    const std::string suf = end;
    if (suf == "k" || suf == "K") {
        mult = 1 << 10;
    } else if (suf == "m" || suf == "M") {
        mult = 1 << 20;
    } else if (suf == "g" || suf == "G") {
        mult = std::size_t{1} << 30;
    } else if (!suf.empty()) {
        return false;
    }
    *out = static_cast<std::size_t>(v) * mult;
    return true;
}

double now_us()
{
    using namespace std::chrono;
    return duration<double, std::micro>(steady_clock::now().time_since_epoch())
        .count();
}

// One rank's whole run. Returns the process exit code.
int run_rank(Env &env, const Options &opt)
{
    if (opt.calibrate_links && env.size != 2) {
        if (env.rank == 0) {
            std::fprintf(stderr, "ucg_perftest: --calibrate-links: run 2 "
                                 "ranks, one at each end of the link\n");
        }
        return 1;
    }
    ucg_context_h ctx;
    if (ucg_context_create(nullptr, &ctx) != UCS_OK) {
        return 1;
    }
    auto oob = [](void *arg, const void *s, void *r, std::size_t n) {
        return (*static_cast<Env *>(arg)).allgather(s, r, n);
    };
    ucg_group_params_t gp{};
    gp.field_mask = UCG_GROUP_PARAM_FIELD_SIZE | UCG_GROUP_PARAM_FIELD_RANK |
                    UCG_GROUP_PARAM_FIELD_OOB | UCG_GROUP_PARAM_FIELD_FLAGS;
    gp.size = static_cast<unsigned>(env.size);
    gp.rank = static_cast<unsigned>(env.rank);
    gp.oob_allgather = oob;
    gp.oob_arg = &env;
    // Calibration times UCP's point-to-point path: one message per bcast.
    gp.flags =
        opt.no_shm || opt.calibrate_links ? UCG_GROUP_FLAG_NO_ONE_TO_MANY : 0;
    const std::string host = posed_host(env, opt);
    if (!host.empty()) {
        gp.field_mask |= UCG_GROUP_PARAM_FIELD_HOST;
        gp.host_id = host.c_str();
    }
    if (!opt.tune.empty()) {
        gp.field_mask |= UCG_GROUP_PARAM_FIELD_TUNE;
        gp.tune = opt.tune.c_str();
    }
    const double t0 = now_us();
    ucg_group_h group;
    ucs_status_t st = ucg_group_create(ctx, &gp, &group);
    double create_us = now_us() - t0;
    if (st != UCS_OK) {
        std::fprintf(stderr, "ucg_perftest: rank %d: group creation: %s\n",
                     env.rank, ucs_status_string(st));
        ucg_context_destroy(ctx);
        return 1;
    }
    if (opt.calibrate_turn) {
        const int rc = calibrate_turn(env, ctx, group);
        ucg_group_destroy(group);
        ucg_context_destroy(ctx);
        return rc;
    }
    if (opt.calibrate_links) {
        const int rc = calibrate_links(env, opt, ctx, group);
        ucg_group_destroy(group);
        ucg_context_destroy(ctx);
        return rc;
    }
    // --span on machines with clocks of their own (or a test's skewed
    // clocks): each row's span on rank 0's clock (decision 0063).
    std::unique_ptr<ClockOffsets> clocks;
    if (opt.span && (opt.test_clock_skew_us != 0 || !one_clock(env))) {
        clocks = std::make_unique<ClockOffsets>(env);
        if (clocks->status() != UCS_OK) {
            std::fprintf(stderr,
                         "ucg_perftest: rank %d: --span: no UCP ping-pong "
                         "with rank 0 for the clocks' offsets: %s\n",
                         env.rank, ucs_status_string(clocks->status()));
            clocks.reset();
            ucg_group_destroy(group);
            ucg_context_destroy(ctx);
            return 1;
        }
        env.clocks = clocks.get();
    }
    std::vector<double> all(static_cast<std::size_t>(env.size));
    env.allgather(&create_us, all.data(), sizeof(double));
    create_us = *std::max_element(all.begin(), all.end());
    const Floor floor = measure_floor(env);
    int rc = 0;
    {
        Report report(opt, env, create_us, floor);
        for (ucg_coll_type_t coll : opt.colls) {
            if (env.rank == 0) {
                report.begin(coll);
            }
            const std::size_t eb = elem_bytes(opt, coll);
            const bool sized = coll != UCG_COLL_BARRIER;
            for (std::size_t b = std::max(opt.min_bytes, eb);
                 b <= (sized ? opt.max_bytes : b); b *= 2) {
                Row row{coll, sized ? b : 0, {}, {}};
                st = bench_ucg(env, opt, ctx, group, coll, row.bytes, &row.ucg);
                if (st == UCS_OK && opt.baseline_mpi) {
                    st = bench_mpi(env, opt, coll, row.bytes, &row.mpi);
                }
                if (st != UCS_OK) {
                    std::fprintf(stderr,
                                 "ucg_perftest: rank %d: %s, %zu "
                                 "bytes: %s\n",
                                 env.rank, ucg_coll_type_name(coll), b,
                                 ucs_status_string(st));
                    rc = 1;
                    break;
                }
                if (env.rank == 0) {
                    report.row(row);
                }
                if (row.ucg.errors != 0 || row.mpi.errors != 0) {
                    rc = 2;
                }
                if (!sized) {
                    break;
                }
            }
            if (rc == 1) {
                break;
            }
        }
        if (env.rank == 0 && !report.finish()) {
            rc = rc != 0 ? rc : 1;
        }
    }
    ucg_group_destroy(group);
    ucg_context_destroy(ctx);
    return rc;
}

bool under_mpirun()
{
    return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr ||
           std::getenv("PMI_SIZE") != nullptr ||
           std::getenv("PMIX_RANK") != nullptr;
}

} // namespace

} // namespace ucg::perftest

static int tool_main(int argc, char **argv)
{
    using namespace ucg::perftest;
    Options opt;
    int nranks = 0;
    std::string colls = "barrier,bcast,allreduce", sizes = "8:1m";
    std::string dtype = "float", baseline;
    CLI::App app{"ucg_perftest: OSU-style latency of UCG collectives",
                 "ucg_perftest"};
    ucg::tools::add_version(app);
    app.add_option("-n,--ranks", nranks,
                   "start N local ranks (fork); omit under mpirun")
        ->check(CLI::Range(1, 1 << 16));
    app.add_option("-c,--collectives", colls,
                   "comma-separated: barrier,bcast,reduce,allreduce,gather,"
                   "gatherv,scatter,scatterv,allgather,allgatherv,alltoall,"
                   "alltoallv,reduce_scatter,reduce_scatter_block,scan,exscan")
        ->capture_default_str();
    app.add_option("-m,--sizes", sizes, "MIN:MAX bytes, doubling (k, m, g)")
        ->capture_default_str();
    app.add_option("-i,--iterations", opt.iters,
                   "timed iterations per size (default 1000, 100 above 8 KiB)")
        ->check(CLI::Range(1, 100000000));
    app.add_option("-x,--warmup", opt.warmup,
                   "untimed iterations first (default 200, 10 above 8 KiB)")
        ->check(CLI::Range(0, 100000000));
    app.add_flag("--validate", opt.validate,
                 "check every result against a reference");
    app.add_option("--csv", opt.csv, "write every row to FILE");
    app.add_option("--plot", opt.plot, "latency against size, PNG (gnuplot)");
    app.add_option("--tune", opt.tune, "selection rules (UCG_TUNE grammar)");
    app.add_option("--baseline", baseline,
                   "mpi: time the MPI library's collective too (mpirun)")
        ->check(CLI::IsMember({"mpi"}));
    app.add_option("--dtype", dtype, "reductions: float, double, int32, int64")
        ->check(CLI::IsMember({"float", "double", "int32", "int64"}))
        ->capture_default_str();
    app.add_option("--hosts", opt.hosts,
                   "ranks pose as N hosts (rank r on host r % N): the "
                   "levels between hosts run as on N machines")
        ->check(CLI::Range(1, 1 << 20));
    app.add_flag("--no-shm", opt.no_shm,
                 "point-to-point only (no one-to-many transports)");
    app.add_flag("--span", opt.span,
                 "also time each row from a start the ranks agree on (on "
                 "rank 0's clock) to the last rank's end: the Span column, "
                 "what Pred predicts");
    // Tests only (decision 0063): skews rank r's span clock r x US ahead.
    app.add_option("--test-clock-skew", opt.test_clock_skew_us,
                   "tests: rank r's span clock r x US ahead")
        ->group("");
    app.add_flag("--oneoff", opt.oneoff,
                 "init+start+wait+free per call instead of persistent");
    app.add_flag("--calibrate-links", opt.calibrate_links,
                 "2 ranks: fit the link between them (bcast, -m sizes) and "
                 "print its level's UCG_LINKS entry as an export line");
    app.add_flag("--calibrate-turn", opt.calibrate_turn,
                 "every rank: time a poll turn where ranks share a CPU "
                 "(polling UCG and yielding, 5 x 20 ms) and print it as an "
                 "export UCG_POLL_TURN line")
        ->excludes("--calibrate-links");
    if (const auto rc = ucg::tools::parse(app, argc, argv)) {
        return *rc;
    }

    std::stringstream ss(colls);
    for (std::string name; std::getline(ss, name, ',');) {
        const auto it = coll_names().find(name);
        if (it == coll_names().end()) {
            std::fprintf(stderr, "ucg_perftest: --collectives: unknown '%s'\n",
                         name.c_str());
            return ucg::tools::kUsageError;
        }
        opt.colls.push_back(it->second);
    }
    const auto colon = sizes.find(':');
    if (colon == std::string::npos ||
        !parse_size(sizes.substr(0, colon), &opt.min_bytes) ||
        !parse_size(sizes.substr(colon + 1), &opt.max_bytes) ||
        opt.min_bytes > opt.max_bytes || opt.min_bytes == 0) {
        std::fprintf(stderr, "ucg_perftest: --sizes: expected MIN:MAX with "
                             "0 < MIN <= MAX, e.g. 8:1m\n");
        return ucg::tools::kUsageError;
    }
    if (opt.test_clock_skew_us != 0 && !opt.span) {
        std::fprintf(stderr, "ucg_perftest: --test-clock-skew: skews the "
                             "span's clocks, needs --span\n");
        return ucg::tools::kUsageError;
    }
    opt.dtype = dtype == "double"  ? UCG_DTYPE_DOUBLE
                : dtype == "int32" ? UCG_DTYPE_INT32
                : dtype == "int64" ? UCG_DTYPE_INT64
                                   : UCG_DTYPE_FLOAT;
    opt.baseline_mpi = baseline == "mpi";
    const bool mpi_launch = under_mpirun();
    if (opt.baseline_mpi && (!have_mpi() || !mpi_launch)) {
        std::fprintf(stderr,
                     "ucg_perftest: --baseline mpi: run under mpirun "
                     "(this build %s MPI)\n",
                     have_mpi() ? "has" : "lacks");
        return ucg::tools::kUsageError;
    }
    if (mpi_launch && nranks != 0) {
        std::fprintf(stderr, "ucg_perftest: -n: not under mpirun\n");
        return ucg::tools::kUsageError;
    }
#ifdef UCG_PERFTEST_MPI
    if (mpi_launch) {
        MPI_Init(&argc, &argv);
        Env env;
        MPI_Comm_rank(MPI_COMM_WORLD, &env.rank);
        MPI_Comm_size(MPI_COMM_WORLD, &env.size);
        env.mpi = true;
        env.launcher = "mpirun";
        env.allgather = [](const void *s, void *r, std::size_t n) {
            MPI_Allgather(s, static_cast<int>(n), MPI_BYTE, r,
                          static_cast<int>(n), MPI_BYTE, MPI_COMM_WORLD);
            return UCS_OK;
        };
        const int rc = run_rank(env, opt);
        MPI_Finalize();
        return rc;
    }
#endif
    if (nranks == 0) {
        nranks = 1;
    }
    std::string why;
    const int rc = ucg::launch::run_local(
        nranks,
        [&](int rank, ucg::launch::Board &board) {
            Env env;
            env.rank = rank;
            env.size = nranks;
            env.launcher = "local fork";
            env.allgather = [&board, rank](const void *s, void *r,
                                           std::size_t n) {
                return board.allgather(rank, s, r, n);
            };
            return run_rank(env, opt);
        },
        &why);
    if (rc != 0) {
        std::fprintf(stderr, "ucg_perftest: %s", why.c_str());
    }
    return rc;
}

int main(int argc, char **argv)
{
    return ucg::tools::guarded_main("ucg_perftest",
                                    [&] { return tool_main(argc, argv); });
}
