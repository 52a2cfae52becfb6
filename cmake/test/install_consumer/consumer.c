/* SPDX-License-Identifier: BSD-3-Clause */
/* A program outside the tree, built against an installed UCG: forks two
 * ranks that create a group (out-of-band allgather on an anonymous shared
 * mapping) and check one bcast. Exit 0 on success. */
#define _GNU_SOURCE /* MAP_ANONYMOUS */
#include <ucg/ucg.h>

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum { NRANKS = 2, SLOT = 4096, COUNT = 65536 };

/* Double-buffered: a rank entering round k+1 has seen every rank arrive in
 * round k, so all of them have read round k-1's slots. */
typedef struct board {
    atomic_ulong arrived;
    unsigned char data[2][NRANKS][SLOT];
} board_t;

typedef struct oob {
    board_t *board;
    unsigned rank;
    unsigned long round;
} oob_t;

static ucs_status_t oob_allgather(void *arg, const void *sendbuf, void *recvbuf,
                                  size_t length)
{
    oob_t *o = arg;
    const unsigned parity = (unsigned)(o->round % 2);
    const unsigned long want = (unsigned long)NRANKS * (o->round + 1);
    if (length > SLOT) {
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    ++o->round;
    memcpy(o->board->data[parity][o->rank], sendbuf, length);
    atomic_fetch_add(&o->board->arrived, 1);
    for (unsigned spins = 0; atomic_load(&o->board->arrived) < want; ++spins) {
        if (spins > 64) {
            sched_yield();
        }
    }
    for (unsigned r = 0; r < NRANKS; ++r) {
        memcpy((unsigned char *)recvbuf + r * length, o->board->data[parity][r],
               length);
    }
    return UCS_OK;
}

static int run_rank(board_t *board, unsigned rank)
{
    static unsigned char buf[COUNT];
    oob_t oob = {board, rank, 0};
    ucg_context_h ctx;
    ucg_group_h group;
    ucg_coll_h coll;
    ucs_status_t st;
    int bad = 0;

    alarm(30); /* a hang fails the test */
    if (ucg_context_create(NULL, &ctx) != UCS_OK) {
        fprintf(stderr, "rank %u: ucg_context_create failed\n", rank);
        return 1;
    }
    ucg_group_params_t gp = {.field_mask = UCG_GROUP_PARAM_FIELD_SIZE |
                                           UCG_GROUP_PARAM_FIELD_RANK |
                                           UCG_GROUP_PARAM_FIELD_OOB,
                             .size = NRANKS,
                             .rank = rank,
                             .oob_allgather = oob_allgather,
                             .oob_arg = &oob};
    st = ucg_group_create(ctx, &gp, &group);
    if (st != UCS_OK) {
        fprintf(stderr, "rank %u: ucg_group_create: %s\n", rank,
                ucs_status_string(st));
        ucg_context_destroy(ctx);
        return 1;
    }
    for (size_t i = 0; i < COUNT; ++i) {
        buf[i] = rank == 0 ? (unsigned char)(i * 7 + 1) : 0;
    }
    ucg_coll_args_t a = {
        .field_mask = UCG_COLL_ARGS_FIELD_ROOT,
        .coll = UCG_COLL_BCAST,
        .root = 0,
        .dst = {.buffer = buf, .count = COUNT, .dtype = {UCG_DTYPE_UINT8, 1}}};
    st = ucg_collective_init(group, &a, &coll);
    if (st == UCS_OK) {
        st = ucg_collective_start(coll);
        if (st == UCS_OK) {
            st = ucg_collective_wait(coll);
        }
        if (st == UCS_OK && rank == 1) {
            printf("rank 1: bcast of %d bytes over %s\n", COUNT,
                   ucg_collective_plan_name(coll));
        }
        ucg_collective_free(coll);
    }
    if (st != UCS_OK) {
        fprintf(stderr, "rank %u: bcast: %s\n", rank, ucs_status_string(st));
        bad = 1;
    }
    for (size_t i = 0; !bad && i < COUNT; ++i) {
        if (buf[i] != (unsigned char)(i * 7 + 1)) {
            fprintf(stderr, "rank %u: byte %zu is %u\n", rank, i, buf[i]);
            bad = 1;
        }
    }
    /* Nobody leaves before every member is done with the bcast. */
    char none = 0, all[NRANKS];
    if (oob_allgather(&oob, &none, all, 1) != UCS_OK) {
        bad = 1;
    }
    ucg_group_destroy(group);
    ucg_context_destroy(ctx);
    return bad;
}

int main(void)
{
    board_t *board = mmap(NULL, sizeof(board_t), PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (board == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    atomic_init(&board->arrived, 0);
    pid_t pids[NRANKS];
    for (unsigned r = 0; r < NRANKS; ++r) {
        pids[r] = fork();
        if (pids[r] == 0) {
            const int rc = run_rank(board, r);
            fflush(stdout);
            _exit(rc);
        }
        if (pids[r] < 0) {
            perror("fork");
            return 1;
        }
    }
    int failed = 0;
    for (unsigned r = 0; r < NRANKS; ++r) {
        int status = 0;
        if (waitpid(pids[r], &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            fprintf(stderr, "rank %u failed (status 0x%x)\n", r, status);
            failed = 1;
        }
    }
    munmap(board, sizeof(board_t));
    if (!failed) {
        printf("install consumer: bcast verified on %d ranks\n", NRANKS);
    }
    return failed;
}
