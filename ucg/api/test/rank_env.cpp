// SPDX-License-Identifier: BSD-3-Clause
// Forked ranks for the runtime's tests (rank_env.h).
#include "rank_env.h"

#include "local_launch.h"

#include <catch2/catch.hpp>
#include <ucg_test/check.h>
#include <ucg_test/fork_ranks.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <new>
#include <sched.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace ucg::test {

namespace {

// The running rank's context and group parameters (one rank per child).
ucg_context_h g_ctx = nullptr;
ucg_group_params_t g_params{};

// The out-of-band allgather of a member the scheduler may leave behind:
// where `late`, each exchange returns to it 300 ms after the others.
struct LateOob {
    launch::BoardOob board;
    bool late;
};

ucs_status_t late_allgather(void *arg, const void *sendbuf, void *recvbuf,
                            std::size_t length)
{
    auto *oob = static_cast<LateOob *>(arg);
    const ucs_status_t st =
        launch::board_allgather(&oob->board, sendbuf, recvbuf, length);
    if (oob->late) {
        ::usleep(300 * 1000);
    }
    return st;
}

} // namespace

void oob_barrier()
{
    char none = 0;
    std::vector<char> all(g_params.size);
    UCG_CHECK(g_params.oob_allgather(g_params.oob_arg, &none, all.data(), 1) ==
              UCS_OK);
}

ucs_status_t second_group(ucg_group_h, int, int, ucg_group_h *out)
{
    return ucg_group_create(g_ctx, &g_params, out);
}

ucg_context_h rank_context()
{
    return g_ctx;
}

void run_ranks(int size, int hosts,
               const std::function<void(ucg_group_h, int)> &body,
               double timeout_sec, const char *tune,
               const std::vector<int> &may_be_killed,
               const ucg_context_params_t *context_params)
{
    std::unique_ptr<launch::Board> board(launch::Board::create(size, 4096));
    REQUIRE(board != nullptr);
    ucg_test::ForkOptions opts(size);
    opts.timeout =
        std::chrono::milliseconds(static_cast<long>(timeout_sec * 1000));
    opts.may_be_killed = may_be_killed;
    const auto result = ucg_test::run_fork_ranks(opts, [&](int rank) {
        ucg_context_h ctx;
        UCG_CHECK(ucg_context_create(context_params, &ctx) == UCS_OK);
        launch::BoardOob oob{board.get(), rank};
        const std::string host = "host" + std::to_string(rank % hosts);
        ucg_group_params_t p{};
        p.field_mask = UCG_GROUP_PARAM_FIELD_SIZE | UCG_GROUP_PARAM_FIELD_RANK |
                       UCG_GROUP_PARAM_FIELD_OOB | UCG_GROUP_PARAM_FIELD_HOST;
        p.size = static_cast<unsigned>(size);
        p.rank = static_cast<unsigned>(rank);
        p.oob_allgather = launch::board_allgather;
        p.oob_arg = &oob;
        p.host_id = host.c_str();
        if (tune != nullptr) {
            p.field_mask |= UCG_GROUP_PARAM_FIELD_TUNE;
            p.tune = tune;
        }
        ucg_group_h g;
        UCG_CHECK(ucg_group_create(ctx, &p, &g) == UCS_OK);
        g_ctx = ctx;
        g_params = p;
        body(g, rank);
        ucg_group_destroy(g);
        ucg_context_destroy(ctx);
    });
    INFO(result.summary());
    REQUIRE(result.ok);
}

bool expect_group_create(int size, ucs_status_t expect,
                         const std::function<void(int)> &setup, int late_rank)
{
    std::unique_ptr<launch::Board> board(launch::Board::create(size, 4096));
    REQUIRE(board != nullptr);
    const ucg_test::ForkOptions opts(size, std::chrono::seconds(60));
    const auto result = ucg_test::run_fork_ranks(opts, [&](int rank) {
        if (setup) {
            setup(rank);
        }
        ucg_context_h ctx;
        UCG_CHECK(ucg_context_create(nullptr, &ctx) == UCS_OK);
        LateOob oob{{board.get(), rank}, rank == late_rank};
        ucg_group_params_t p{};
        p.field_mask = UCG_GROUP_PARAM_FIELD_SIZE | UCG_GROUP_PARAM_FIELD_RANK |
                       UCG_GROUP_PARAM_FIELD_OOB;
        p.size = static_cast<unsigned>(size);
        p.rank = static_cast<unsigned>(rank);
        p.oob_allgather = late_allgather;
        p.oob_arg = &oob;
        ucg_group_h g = nullptr;
        const ucs_status_t st = ucg_group_create(ctx, &p, &g);
        if (st == UCS_OK) {
            ucg_group_destroy(g);
        }
        ucg_context_destroy(ctx);
        UCG_CHECK(st == expect);
    });
    INFO(result.summary());
    return result.ok;
}

std::string run_case(ucg_group_h g, RefCase &c, int repeats)
{
    ucg_coll_args_t a = c.args();
    ucg_coll_h h;
    const ucs_status_t st = ucg_collective_init(g, &a, &h);
    if (st != UCS_OK) {
        ucg_test::fail_check(__FILE__, __LINE__, "init",
                             std::string(ucg_coll_type_name(c.coll)) + ": " +
                                 ucs_status_string(st));
    }
    for (int i = 0; i < repeats; ++i) {
        if (i > 0) {
            c.refill(c.iter + 1);
        }
        UCG_CHECK(ucg_collective_start(h) == UCS_OK);
        const ucs_status_t done = ucg_collective_wait(h);
        if (done != UCS_OK) {
            ucg_test::fail_check(__FILE__, __LINE__, "wait",
                                 std::string(ucg_coll_type_name(c.coll)) +
                                     " (" + ucg_collective_plan_name(h) +
                                     "): " + ucs_status_string(done));
        }
        const std::string err = c.check();
        if (!err.empty()) {
            ucg_test::fail_check(__FILE__, __LINE__, "output",
                                 err + " (" + ucg_collective_plan_name(h) +
                                     ")");
        }
    }
    const std::string name = ucg_collective_plan_name(h);
    ucg_collective_free(h);
    return name;
}

ScopedEnv::ScopedEnv(const char *name, const char *value) : name_(name)
{
    const char *old = std::getenv(name);
    had_ = old != nullptr;
    old_ = had_ ? old : "";
    REQUIRE((value != nullptr ? setenv(name, value, 1) : unsetenv(name)) == 0);
}

ScopedEnv::~ScopedEnv()
{
    if (had_) {
        setenv(name_, old_.c_str(), 1);
    } else {
        unsetenv(name_);
    }
}

int online_cpus()
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
}

bool root_done_alone(std::size_t bytes, std::chrono::milliseconds wait,
                     const char *tune)
{
    void *shared =
        mmap(nullptr, sizeof(std::atomic<int>) * 2, PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    REQUIRE(shared != MAP_FAILED);
    auto *flag = new (shared) std::atomic<int>[2] {};
    run_ranks(
        2, 1,
        [flag, bytes, wait](ucg_group_h g, int rank) {
            std::vector<unsigned char> buf(bytes, rank == 0 ? 0x5a : 0);
            ucg_coll_args_t a{};
            a.coll = UCG_COLL_BCAST;
            a.dst.buffer = buf.data();
            a.dst.count = bytes;
            a.dst.dtype = {UCG_DTYPE_UINT8, 1};
            ucg_coll_h h = nullptr;
            UCG_CHECK(ucg_collective_init(g, &a, &h) == UCS_OK);
            if (rank == 0) {
                UCG_CHECK(ucg_collective_start(h) == UCS_OK);
                const auto until = std::chrono::steady_clock::now() + wait;
                ucs_status_t st = UCS_INPROGRESS;
                while (st == UCS_INPROGRESS &&
                       std::chrono::steady_clock::now() < until) {
                    st = ucg_collective_test(h);
                }
                flag[1].store(st == UCS_OK ? 1 : 2);
                flag[0].store(1);
                UCG_CHECK(ucg_collective_wait(h) == UCS_OK);
            } else {
                while (flag[0].load() == 0) {
                    ucg_progress(g_ctx);
                    sched_yield();
                }
                UCG_CHECK(ucg_collective_start(h) == UCS_OK);
                UCG_CHECK(ucg_collective_wait(h) == UCS_OK);
                UCG_CHECK(buf.front() == 0x5a && buf.back() == 0x5a);
            }
            ucg_collective_free(h);
        },
        120, tune);
    const bool alone = flag[1].load() == 1;
    munmap(shared, sizeof(std::atomic<int>) * 2);
    return alone;
}

} // namespace ucg::test
