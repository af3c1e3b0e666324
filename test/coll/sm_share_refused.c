/*
 * coll sm's shared single copy when the kernel really refuses the helper's
 * writes (not coll_sm_share_refuse's pretence): a bcast root, or a gather
 * sender, writes chunks of a 1 MiB single copy into the reader's buffer
 * with process_vm_writev (sm_share.c).  On the communicator of world
 * ranks 0 and 1: first bcasts from rank 0 and gathers to rank 1 until
 * rank 1 counted chunks written by the other (coll_sm_bcast_chunks_in,
 * coll_sm_gather_chunks_in; at most 200 rounds); then rank 1 becomes
 * non-dumpable and rank 0 gives up CAP_SYS_PTRACE, so that the kernel
 * refuses rank 0's writes into rank 1 (EPERM, checked with a write of our
 * own) while rank 1 still reads rank 0; then 20 more of each, every
 * element checked: the reader copies the refused chunks itself, and the
 * helper stops helping on that communicator at its first refusal (at most
 * one chunk counted per communicator afterwards).  Single copy is forced
 * (RAIL_COLL_SM_SINGLE_COPY_MIN, set here before MPI_Init unless given).
 * Skipped (77) where sharing cannot happen (one process, an oversubscribed
 * node, no cross-process reads) or the refusal cannot be provoked.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "coll_test.h"
#include "test/ptrace_cap.h"
#include "test/pvar.h"
#include "sm_util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#define PER ((1 << 20) / (int)sizeof(int))
#define WARM_MAX 200
#define AFTER 20

static int me, n;

/* One bcast from rank 0 and one gather to rank 1 of 1 MiB on pair (rank p
 * of it), every element checked; round i. */
static void round_of(MPI_Comm pair, MPI_Comm gcomm, int p, int *buf, int *all, int i)
{
    for (int k = 0; k < PER; k++)
        buf[k] = p == 0 ? k * 7 + i : -1;
    MPI_OK(MPI_Bcast(buf, PER, MPI_INT, 0, pair));
    for (int k = 0; k < PER; k++)
        if (buf[k] != k * 7 + i)
            CHECK(0, "bcast %d: [%d] = %d, expected %d", i, k, buf[k], k * 7 + i);
    for (int k = 0; k < PER; k++)
        buf[k] = p * 17 + k * 3 + i;
    MPI_OK(MPI_Gather(buf, PER, MPI_INT, all, PER, MPI_INT, 1, gcomm));
    for (int r = 0; p == 1 && r < 2; r++)
        for (int k = 0; k < PER; k++)
            if (all[(size_t)r * PER + k] != r * 17 + k * 3 + i)
                CHECK(0, "gather %d: block %d [%d] = %d", i, r, k, all[(size_t)r * PER + k]);
}

/* Rank 0's CAP_SYS_PTRACE out of its effective set (where it has it), rank
 * 1 non-dumpable: a process without the capability may not write into a
 * non-dumpable one. */
static void refuse_writes_into_1(int p)
{
    if (p == 0) {
        CHECK(test_drop_cap_sys_ptrace() == 0, "capset: %s", strerror(errno));
    } else {
        CHECK(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0, "PR_SET_DUMPABLE: %s", strerror(errno));
    }
}

int main(int argc, char **argv)
{
    setenv("RAIL_COLL_SM_SINGLE_COPY_MIN", "65536", 0);
    t_init(&argc, &argv);
    me = t_rank;
    n = t_size;
    if (n < 2)
        check_mpi_skip("one process: nothing to share");
    if (node_oversubscribed(n))
        check_mpi_skip("oversubscribed node: coll sm does not share copies there");
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    MPI_Comm pair, gcomm;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, me < 2 ? 0 : MPI_UNDEFINED, me, &pair));
    int *buf = malloc((size_t)PER * sizeof(int)), *all = malloc((size_t)PER * 2 * sizeof(int));
    CHECK(buf && all, "out of memory");
    int ok = 1, all_ok = 0;
    unsigned long long b0 = 0, g0 = 0;
    if (pair != MPI_COMM_NULL) {
        MPI_OK(MPI_Comm_dup(pair, &gcomm));
        b0 = pvar_count("coll_sm_bcast_chunks_in");
        g0 = pvar_count("coll_sm_gather_chunks_in");
        int have = 0, i;
        for (i = 0; i < WARM_MAX && !have; i++) {
            round_of(pair, gcomm, me, buf, all, i);
            int got = me == 0 || (pvar_count("coll_sm_bcast_chunks_in") > b0 &&
                                  pvar_count("coll_sm_gather_chunks_in") > g0);
            MPI_OK(MPI_Allreduce(&got, &have, 1, MPI_INT, MPI_MIN, pair));
        }
        ok = have;
    }
    MPI_OK(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (!all_ok)
        check_mpi_skip("no chunk written by the other process in 200 rounds (no cross-process "
                       "writes here, or coll sm does not serve the pair)");

    /* the refusal, and a write of our own to see it */
    ok = 1;
    if (pair != MPI_COMM_NULL) {
        refuse_writes_into_1(me);
        MPI_OK(MPI_Barrier(pair));
        uint64_t where[2] = { (uint64_t)getpid(), (uint64_t)(uintptr_t)buf };
        MPI_OK(MPI_Bcast(where, 2, MPI_UINT64_T, 1, pair));
        if (me == 0) {
            int x = 5;
            struct iovec l = { &x, sizeof(x) }, r = { (void *)(uintptr_t)where[1], sizeof(x) };
            ok = process_vm_writev((pid_t)where[0], &l, 1, &r, 1, 0) < 0 && errno == EPERM;
        }
    }
    MPI_OK(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (!all_ok)
        check_mpi_skip("the kernel did not refuse a write into a non-dumpable process");

    if (pair != MPI_COMM_NULL) {
        unsigned long long b1 = pvar_count("coll_sm_bcast_chunks_in"),
                           g1 = pvar_count("coll_sm_gather_chunks_in");
        for (int i = 0; i < AFTER; i++)
            round_of(pair, gcomm, me, buf, all, WARM_MAX + i);
        unsigned long long db = pvar_count("coll_sm_bcast_chunks_in") - b1,
                           dg = pvar_count("coll_sm_gather_chunks_in") - g1;
        /* rank 1 counts what the other claimed for it (written or refused) */
        CHECK(db <= 1 && dg <= 1,
              "after the kernel refused its writes, the helper went on claiming chunks: %llu "
              "of bcasts, %llu of gathers in %d rounds (at most 1 each: its first refusal)",
              db, dg, AFTER);
        if (me == 1)
            printf("sm_share_refused: chunks written by the other before the refusal: %llu "
                   "(bcast), %llu (gather); claimed after it: %llu, %llu\n",
                   b1 - b0, g1 - g0, db, dg);
        MPI_OK(MPI_Comm_free(&gcomm));
        MPI_OK(MPI_Comm_free(&pair));
    }
    free(buf);
    free(all);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("sm_share_refused: passed at np %d\n", n);
    MPI_T_finalize();
    MPI_OK(MPI_Finalize());
    return 0;
}
