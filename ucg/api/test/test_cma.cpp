// SPDX-License-Identifier: BSD-3-Clause
// One copy between ranks of a machine (api/ucp_fabric.h, decision 0027):
// from UCG_CMA_THRESH a message is read from the sender's memory; a read
// that fails falls back to UCP, and the sender's later messages to that
// rank say "the data follows"; members with other thresholds refuse the
// group together.
#include "api/internal.h"
#include "api/ucp_settings.h"
#include "rank_env.h"

#include <catch2/catch.hpp>
#include <ucg_test/check.h>
#include <ucg_test/skip.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <sched.h>
#include <sys/uio.h>
#include <unistd.h>

namespace {

using ucg::test::online_cpus;
using ucg::test::ref_case;
using ucg::test::RefCase;
using ucg::test::ScopedEnv;

bool root_done_alone(std::size_t bytes)
{
    return ucg::test::root_done_alone(bytes, std::chrono::milliseconds(500));
}

constexpr std::size_t kCount = 160000; // bytes per block

// Runs `f` with this process (and the ranks it forks) bound to its first
// CPU, then restores its CPUs; returns what `f` returned.
template <class F> bool on_one_cpu(F f)
{
    cpu_set_t all, one;
    REQUIRE(sched_getaffinity(0, sizeof(all), &all) == 0);
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &all)) {
            CPU_SET(c, &one);
            break;
        }
    }
    REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0);
    const bool result = f();
    REQUIRE(sched_setaffinity(0, sizeof(all), &all) == 0);
    return result;
}

ssize_t refuse_reads(pid_t, const iovec *, unsigned long, const iovec *,
                     unsigned long, unsigned long)
{
    errno = EPERM;
    return -1;
}

} // namespace

TEST_CASE("a bcast on one host goes through the ring at every size, but "
          "where the user asks mm_bcast for CMA it is read from the root's "
          "buffer while each rank has a core, through the ring where ranks "
          "share a core",
          "[ucg][cma][fork]")
{
    if (online_cpus() < 2) {
        UCG_SKIP("fewer cores than two ranks");
    }
    // A ring of 64 x 64 KiB holds a whole 1 MiB call.
    ScopedEnv seg("UCX_MM_BCAST_GROUP_SEG_SIZE", "64k");
    // UCG asks for no CMA of its own (decision 0049).
    CHECK(root_done_alone(64 << 10));
    CHECK(root_done_alone(1 << 20));
    ScopedEnv cma("UCX_MM_BCAST_CMA_THRESH", "32k");
    CHECK(root_done_alone(16 << 10));
    CHECK_FALSE(root_done_alone(64 << 10));
    CHECK_FALSE(root_done_alone(1 << 20));
    {
        ScopedEnv off("UCG_CMA_THRESH", "off");
        CHECK(root_done_alone(64 << 10));
    }
    // Both ranks on one CPU: oversubscribed.
    CHECK(on_one_cpu([] { return root_done_alone(64 << 10); }));
}

TEST_CASE("messages between ranks of one machine from UCG_CMA_THRESH are "
          "read from the sender's memory, smaller ones are not",
          "[ucg][cma][fork]")
{
    ScopedEnv env("UCG_CMA_THRESH", "64k");
    // Three ranks posing as two hosts: one machine, so every pair reads.
    ucg::test::run_ranks(
        3, 2,
        [](ucg_group_h g, int rank) {
            for (const ucg_coll_type_t coll :
                 {UCG_COLL_ALLGATHER, UCG_COLL_ALLTOALL}) {
                RefCase small = ref_case(coll, 3, rank, 1000);
                ucg::test::run_case(g, small, 2);
            }
            UCG_CHECK(g->cma.reads == 0);
            for (const ucg_coll_type_t coll :
                 {UCG_COLL_ALLGATHER, UCG_COLL_ALLTOALL}) {
                RefCase big = ref_case(coll, 3, rank, kCount);
                ucg::test::run_case(g, big, 2);
            }
            const ucg::rt::CmaState &s = g->cma;
            UCG_CHECK(s.reads >= 2);
            UCG_CHECK(s.read_bytes >= s.reads * kCount);
            UCG_CHECK(s.failed == 0 && s.forwarded == 0);
        },
        120, "allgather:0-inf:linear;alltoall:0-inf:linear");
}

TEST_CASE("UCG_CMA_THRESH=off reads nothing, and a rank whose reads fail gets "
          "the bytes through UCP, and later ones unasked",
          "[ucg][cma][fork]")
{
    SECTION("off")
    {
        ScopedEnv env("UCG_CMA_THRESH", "off");
        ucg::test::run_ranks(2, 1, [](ucg_group_h g, int rank) {
            RefCase c = ref_case(UCG_COLL_ALLGATHER, 2, rank, kCount);
            ucg::test::run_case(g, c, 2);
            UCG_CHECK(g->cma.reads == 0);
        });
    }
    SECTION("reads refused")
    {
        ScopedEnv env("UCG_CMA_THRESH", "4k");
        ucg::test::run_ranks(
            2, 1,
            [](ucg_group_h g, int rank) {
                if (rank == 1) {
                    g->cma.reader = refuse_reads;
                }
                // Four calls: rank 0's first message to rank 1 finds the
                // read refused, its later ones say the data follows.
                RefCase c = ref_case(UCG_COLL_ALLGATHER, 2, rank, kCount);
                ucg::test::run_case(g, c, 4);
                const ucg::rt::CmaState &s = g->cma;
                if (rank == 1) {
                    UCG_CHECK(s.failed == 1 && s.reads == 0);
                } else {
                    UCG_CHECK(s.reads >= 4 && s.forwarded >= 3);
                }
            },
            120, "allgather:0-inf:linear");
    }
}

TEST_CASE("a one-copy message whose descriptor and bytes wait before its "
          "receive is posted completes once",
          "[ucg][cma][fork]")
{
    // Eager bytes (below the rendezvous threshold) after a descriptor:
    // UCP completes a receive of a message that already waits inside
    // ucp_tag_recv_nbx, callback included. The root refuses reads, so
    // the later messages to it say "the data follows", and posts late,
    // so rank 1's descriptor and bytes wait for it; rank 2 sends later
    // still. Completed twice, the receive from rank 1 would end the
    // root's reduce before rank 2's input is in.
    ScopedEnv env("UCG_CMA_THRESH", "4k");
    ScopedEnv rndv("UCX_RNDV_THRESH", "4m");
    ucg::test::run_ranks(
        3, 3,
        [](ucg_group_h g, int rank) {
            if (rank == 0) {
                g->cma.reader = refuse_reads;
            }
            RefCase c = ref_case(UCG_COLL_REDUCE, 3, rank, 2000); // 8000 B
            ucg::test::run_case(g, c, 1); // the reads that fail
            for (int i = 0; i < 3; ++i) {
                if (rank == 0) { // rank 1's messages into UCP's queue
                    usleep(50000);
                    for (int k = 0; k < 100; ++k) {
                        ucp_worker_progress(g->ctx->worker);
                    }
                } else if (rank == 2) {
                    usleep(150000);
                }
                c.refill(i + 1);
                ucg::test::run_case(g, c, 1);
            }
            if (rank != 0) {
                UCG_CHECK(g->cma.forwarded >= 3);
            }
        },
        20, "reduce:0-inf:linear");
}

TEST_CASE("each receiver's ack reaches the slot of its own message when a "
          "sender's messages to two ranks share an id",
          "[ucg][cma][fork]")
{
    // A linear bcast from rank 0: its first message to rank 1 and to rank
    // 2 have id 0 alike. The slow rank refuses reads and posts late, so
    // the other rank's "read" ack comes first: meeting the slow rank's
    // slot, it would leave that rank waiting for bytes never sent.
    const int slow = GENERATE(1, 2);
    ScopedEnv env("UCG_CMA_THRESH", "4k");
    ucg::test::run_ranks(
        3, 3,
        [slow](ucg_group_h g, int rank) {
            if (rank == slow) {
                g->cma.reader = refuse_reads;
                usleep(300000);
            }
            RefCase c = ref_case(UCG_COLL_BCAST, 3, rank, kCount);
            ucg::test::run_case(g, c, 3);
            const ucg::rt::CmaState &s = g->cma;
            if (rank == 0) {
                UCG_CHECK(s.forwarded >= 2);
            } else if (rank == slow) {
                UCG_CHECK(s.failed == 1 && s.reads == 0);
            } else {
                UCG_CHECK(s.reads == 3 && s.failed == 0);
            }
        },
        20, "bcast:0-inf:linear");
}

TEST_CASE("where ranks share a core, a message between them goes out eagerly "
          "while it fits half the receiver's FIFO, and is read from the "
          "sender's memory from there",
          "[ucg][cma][fork]")
{
    if (ucg::rt::user_sets_rndv(environ)) {
        UCG_SKIP("a rendezvous threshold set (then sends keep it)");
    }
    // UCP's own rendezvous threshold (which with no RDMA network UCG would
    // set at 4 MiB): a send completes before its receive only where UCG
    // asks UCP for a fast one.
    const ScopedEnv auto_thresh("UCX_RNDV_THRESH", "auto");
    const ScopedEnv cma_default("UCG_CMA_THRESH", nullptr);
    // Both ranks on one CPU: oversubscribed, threshold kShmFifoBytes / 2.
    // The receiver drains its FIFO but posts no receive until the root's
    // send is done: only an eager send completes; a read waits for it.
    const char *tune = "bcast:0-inf:linear:segments=1";
    const bool eager = on_one_cpu([tune] {
        return ucg::test::root_done_alone(ucg::rt::kShmFifoBytes / 4,
                                          std::chrono::seconds(10), tune);
    });
    const bool read = on_one_cpu([tune] {
        return !ucg::test::root_done_alone(
            ucg::rt::kShmFifoBytes / 2, std::chrono::milliseconds(300), tune);
    });
    CHECK(eager);
    CHECK(read);
}

TEST_CASE("members with another one-copy threshold (UCG_CMA_THRESH), or one "
          "that does not parse, refuse the group together",
          "[ucg][cma][fork]")
{
    auto setup = [](const char *mine, const char *rank1) {
        return [mine, rank1](int rank) {
            UCG_CHECK(setenv("UCG_CMA_THRESH", rank == 1 ? rank1 : mine, 1) ==
                      0);
        };
    };
    CHECK(ucg::test::expect_group_create(3, UCS_ERR_INVALID_PARAM,
                                         setup("16k", "32k")));
    CHECK(ucg::test::expect_group_create(3, UCS_ERR_INVALID_PARAM,
                                         setup("16k", "off")));
    CHECK(ucg::test::expect_group_create(3, UCS_ERR_INVALID_PARAM,
                                         setup("12q", "12q")));
    CHECK(ucg::test::expect_group_create(3, UCS_OK, setup("off", "inf")));
    CHECK(ucg::test::expect_group_create(3, UCS_OK, setup("8k", "8192")));
}
