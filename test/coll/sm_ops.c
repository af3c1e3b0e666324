/*
 * coll sm: every operation it offers (barrier, bcast, reduce, allreduce,
 * scan, exscan, gather, scatter, allgather, alltoall; allgatherv, gatherv
 * and scatterv, blocks of different lengths, one empty) against values
 * computed here, on
 * MPI_COMM_WORLD and on a communicator with another rank order:
 * predefined, vector-with-holes (holes must stay untouched) and mixed
 * send / receive types of equal signature; counts 0, 1, primes, ~1 MiB
 * (many rounds of the shared buffers, the more so with the small-chunk
 * variants of test/tests.conf); roots 0, n-1 and n/2; MPI_IN_PLACE;
 * reductions (reduce, allreduce, reduce_scatter(_block) with blocks of
 * equal and unequal lengths, one empty) SUM / MAX / MIN / MINLOC / MAXLOC
 * on both sides of the flat / slice threshold and of the slots, and a
 * non-commutative user operation (handed to the next component).  With
 * COLLTEST_DEVICE=1 every user buffer is fake device memory; with
 * COLLTEST_DEVICE=2 only odd ranks' are (the processes of one reduction
 * must agree to hand it on).  With RAIL_COLL_SM_ADAPT_ALTERNATE or
 * RAIL_COLL_SM_SINGLE_COPY_MIN (host buffers) checks that alltoalls also
 * ran by single copy, and with the former that alltoalls alternate from
 * exactly coll_sm_adapt_blocks_min bytes in all and not below.  Checks that sm set up a
 * segment for the communicators (np >= 2) and that its name is gone, and
 * that a gather's sender and a small reduce's non-root with host buffers
 * do not wait for the root (with a device component active too); with
 * COLLTEST_DEVICE=2, that a small reduce or gather with device buffers on
 * some processes and host buffers on some non-root is gathered at the root.
 * On an oversubscribed node (more processes than CPUs), checks that an
 * alltoall of 1 MiB in all goes by single copy, one of 128 KiB by the
 * probe's verdict (always by single copy with
 * RAIL_COLL_SM_OVERSUB_ALLTOALL_PATH=cma), and with
 * RAIL_COLL_SM_OVERSUB_ALLTOALL_CMA_MIN=0 neither.  With single
 * copy forced, that a bcast root writes part of a receiver's 1 MiB, and
 * gather senders part of their blocks at the root, where the node is not
 * oversubscribed (coll_sm_share_min), and not where it is; that bcasts of
 * exactly coll_sm_share_bcast_min bytes are shared and 4 KiB smaller ones
 * not.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <unistd.h>
#include "coll_test.h"
#include "sm_util.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <sys/statvfs.h>
#include <time.h>

static MPI_Comm C;
static int me, n;

#define BIG 262147L   /* prime; ~1 MiB of ints */

/* Elements of type t with the send-side count for pairing `mixed`. */
typedef struct side {
    const tdt_t *t;
    long n;
} side_t;

static void sides(int mixed, int tk, long c, side_t *s, side_t *r)
{
    *s = (side_t){ &t_types[mixed ? T_INT : tk], mixed ? 2 * c : c };
    *r = (side_t){ &t_types[mixed ? T_VEC : tk], c };
}

static void expect_block(const side_t *sd, const char *buf, long cnt, int src, int it, int holes)
{
    char want[64];
    for (long i = 0; i < cnt; i++) {
        gen_elem(sd->t, want, src, i, it);
        CHECK_ELEM(sd->t, buf + i * sd->t->ext, want, holes, i);
    }
}

/* ------------------------------------------------------------ movement */

static void test_bcast(int mixed, int tk, long c, int root)
{
    side_t s, r;
    sides(mixed, tk, c, &s, &r);
    side_t my = me == root ? s : r;
    tbuf_t b;
    tb_alloc(&b, (size_t)my.n * my.t->ext);
    snprintf(t_current, sizeof(t_current), "bcast %s%s count %ld root %d", mixed ? "mixed " : "",
             t_types[tk].name, c, root);
    if (me == root)
        gen_fill(my.t, b.h, my.n, root, 1);
    else
        t_poison(b.h, b.len);
    tb_push(&b);
    MPI_OK(MPI_Bcast(b.d, (int)my.n, my.t->dt, root, C));
    tb_pull(&b);
    expect_block(&my, b.h, my.n, root, 1, 1);
    tb_free(&b);
}

static void test_gather(int mixed, int tk, long c, int root, int inplace)
{
    side_t s, r;
    sides(mixed, tk, c, &s, &r);
    tbuf_t sb, rb;
    tb_alloc(&sb, (size_t)s.n * s.t->ext);
    tb_alloc(&rb, me == root ? (size_t)(n * r.n) * r.t->ext : 0);
    snprintf(t_current, sizeof(t_current), "gather %s%s count %ld root %d%s",
             mixed ? "mixed " : "", t_types[tk].name, c, root, inplace ? " in place" : "");
    gen_fill(s.t, sb.h, s.n, me, 2);
    t_poison(rb.h, rb.len);
    bool ip = inplace && me == root;
    if (ip)   /* the root's block is in place: in the receive layout */
        gen_fill(r.t, rb.h + (size_t)(me * r.n) * r.t->ext, r.n, me, 2);
    tb_push(&sb);
    tb_push(&rb);
    MPI_OK(MPI_Gather(ip ? MPI_IN_PLACE : sb.d, (int)s.n, s.t->dt, rb.d, (int)r.n, r.t->dt, root,
                      C));
    tb_pull(&rb);
    for (int j = 0; me == root && j < n; j++)
        expect_block(&r, rb.h + (size_t)(j * r.n) * r.t->ext, r.n, j, 2, 1);
    tb_free(&sb);
    tb_free(&rb);
}

static void test_scatter(int mixed, int tk, long c, int root, int inplace)
{
    side_t s, r;
    sides(mixed, tk, c, &s, &r);
    tbuf_t sb, rb;
    tb_alloc(&sb, me == root ? (size_t)(n * s.n) * s.t->ext : 0);
    tb_alloc(&rb, (size_t)r.n * r.t->ext);
    snprintf(t_current, sizeof(t_current), "scatter %s%s count %ld root %d%s",
             mixed ? "mixed " : "", t_types[tk].name, c, root, inplace ? " in place" : "");
    for (int j = 0; me == root && j < n; j++)
        gen_fill(s.t, sb.h + (size_t)(j * s.n) * s.t->ext, s.n, j, 3);
    t_poison(rb.h, rb.len);
    tb_push(&sb);
    tb_push(&rb);
    bool ip = inplace && me == root;
    MPI_OK(MPI_Scatter(sb.d, (int)s.n, s.t->dt, ip ? MPI_IN_PLACE : rb.d, (int)r.n, r.t->dt,
                       root, C));
    tb_pull(&rb);
    if (!ip)
        expect_block(&r, rb.h, r.n, me, 3, 1);
    tb_free(&sb);
    tb_free(&rb);
}

static void test_allgather(int mixed, int tk, long c, int inplace)
{
    side_t s, r;
    sides(mixed, tk, c, &s, &r);
    tbuf_t sb, rb;
    tb_alloc(&sb, (size_t)s.n * s.t->ext);
    tb_alloc(&rb, (size_t)(n * r.n) * r.t->ext);
    snprintf(t_current, sizeof(t_current), "allgather %s%s count %ld%s", mixed ? "mixed " : "",
             t_types[tk].name, c, inplace ? " in place" : "");
    gen_fill(s.t, sb.h, s.n, me, 4);
    t_poison(rb.h, rb.len);
    if (inplace)
        gen_fill(r.t, rb.h + (size_t)(me * r.n) * r.t->ext, r.n, me, 4);
    tb_push(&sb);
    tb_push(&rb);
    MPI_OK(MPI_Allgather(inplace ? MPI_IN_PLACE : sb.d, (int)s.n, s.t->dt, rb.d, (int)r.n,
                         r.t->dt, C));
    tb_pull(&rb);
    for (int j = 0; j < n; j++)
        expect_block(&r, rb.h + (size_t)(j * r.n) * r.t->ext, r.n, j, 4, 1);
    tb_free(&sb);
    tb_free(&rb);
}

static void test_alltoall(int mixed, int tk, long c, int inplace)
{
    side_t s, r;
    sides(mixed && !inplace, tk, c, &s, &r);
    tbuf_t sb, rb;
    tb_alloc(&sb, (size_t)(n * s.n) * s.t->ext);
    tb_alloc(&rb, (size_t)(n * r.n) * r.t->ext);
    snprintf(t_current, sizeof(t_current), "alltoall %s%s count %ld%s",
             mixed && !inplace ? "mixed " : "", t_types[tk].name, c, inplace ? " in place" : "");
    /* block j from me to j: the data of "rank" me * n + j */
    for (int j = 0; j < n; j++) {
        gen_fill(s.t, sb.h + (size_t)(j * s.n) * s.t->ext, s.n, me * n + j, 5);
        if (inplace)
            gen_fill(r.t, rb.h + (size_t)(j * r.n) * r.t->ext, r.n, me * n + j, 5);
        else
            t_poison(rb.h + (size_t)(j * r.n) * r.t->ext, (size_t)r.n * r.t->ext);
    }
    tb_push(&sb);
    tb_push(&rb);
    MPI_OK(MPI_Alltoall(inplace ? MPI_IN_PLACE : sb.d, (int)s.n, s.t->dt, rb.d, (int)r.n,
                        r.t->dt, C));
    tb_pull(&rb);
    for (int j = 0; j < n; j++)
        expect_block(&r, rb.h + (size_t)(j * r.n) * r.t->ext, r.n, j * n + me, 5, !inplace);
    tb_free(&sb);
    tb_free(&rb);
}

/* Allgatherv, gatherv, scatterv: block j holds c + j elements (none for
 * process 1), placed in reverse order with one element's gap after each;
 * send and receive types of equal signature (mixed: pairs of ints into a
 * vector with holes).  *fits: whether coll sm's slots can carry them with
 * its default parameters (the calls are then counted in coll_sm_small_v;
 * a gatherv always is). */
static long v_count(long c, int j)
{
    return j == 1 ? 0 : c + j;
}

static long v_layout(long c, MPI_Count *counts, MPI_Aint *displs, int scale)
{
    long at = 0;
    for (int j = n - 1; j >= 0; j--) {
        counts[j] = v_count(c, j) * scale;
        displs[j] = at;
        at += counts[j] + 1;
    }
    return at;
}

/* test_v's buffers: my send block filled, the receive buffer poisoned
 * (in place: my block filled in it), both pushed. */
static void v_prepare(tbuf_t *sb, tbuf_t *rb, const side_t *ms, const tdt_t *rt, size_t rlen,
                      const MPI_Aint *rdispls, long mine, bool ip, int it)
{
    tb_alloc(sb, (size_t)ms->n * ms->t->ext);
    tb_alloc(rb, rlen);
    gen_fill(ms->t, sb->h, ms->n, me, it);
    t_poison(rb->h, rb->len);
    if (ip)
        gen_fill(rt, rb->h + (size_t)rdispls[me] * rt->ext, mine, me, it);
    tb_push(sb);
    tb_push(rb);
}

/* ... every block where it belongs (check), then both freed. */
static void v_check(tbuf_t *sb, tbuf_t *rb, const tdt_t *rt, const MPI_Count *rcounts,
                    const MPI_Aint *rdispls, bool check, int it)
{
    tb_pull(rb);
    for (int j = 0; check && j < n; j++) {
        side_t rj = { rt, rcounts[j] };
        expect_block(&rj, rb->h + (size_t)rdispls[j] * rt->ext, rcounts[j], j, it, 1);
    }
    tb_free(sb);
    tb_free(rb);
}

static void test_v(int mixed, int tk, long c, int root, int inplace)
{
    side_t s, r;
    sides(mixed, tk, 1, &s, &r);
    const int sc = (int)s.n;   /* send elements per receive element */
    MPI_Count *rcounts = malloc(sizeof(MPI_Count) * (size_t)n);
    MPI_Count *scounts = malloc(sizeof(MPI_Count) * (size_t)n);
    MPI_Aint *rdispls = malloc(sizeof(MPI_Aint) * (size_t)n);
    MPI_Aint *sdispls = malloc(sizeof(MPI_Aint) * (size_t)n);
    CHECK(rcounts && scounts && rdispls && sdispls, "out of memory");
    long rtot = v_layout(c, rcounts, rdispls, 1), stot = v_layout(c, scounts, sdispls, sc);
    long mine = v_count(c, me);
    side_t ms = { s.t, mine * sc }, mr = { r.t, mine };
    tbuf_t sb, rb;
    bool ip;

    /* allgatherv */
    snprintf(t_current, sizeof(t_current), "allgatherv %s%s count %ld%s", mixed ? "mixed " : "",
             t_types[tk].name, c, inplace ? " in place" : "");
    v_prepare(&sb, &rb, &ms, r.t, (size_t)rtot * r.t->ext, rdispls, mine, inplace, 5);
    MPI_OK(MPI_Allgatherv_c(inplace ? MPI_IN_PLACE : sb.d, ms.n, s.t->dt, rb.d, rcounts, rdispls,
                            r.t->dt, C));
    v_check(&sb, &rb, r.t, rcounts, rdispls, true, 5);

    /* gatherv */
    ip = inplace && me == root;
    snprintf(t_current, sizeof(t_current), "gatherv %s%s count %ld root %d%s",
             mixed ? "mixed " : "", t_types[tk].name, c, root, ip ? " in place" : "");
    v_prepare(&sb, &rb, &ms, r.t, me == root ? (size_t)rtot * r.t->ext : 0, rdispls, mine, ip,
              6);
    MPI_OK(MPI_Gatherv_c(ip ? MPI_IN_PLACE : sb.d, ms.n, s.t->dt, rb.d, rcounts, rdispls,
                         r.t->dt, root, C));
    v_check(&sb, &rb, r.t, rcounts, rdispls, me == root, 6);

    /* scatterv */
    snprintf(t_current, sizeof(t_current), "scatterv %s%s count %ld root %d%s",
             mixed ? "mixed " : "", t_types[tk].name, c, root, ip ? " in place" : "");
    tb_alloc(&sb, me == root ? (size_t)stot * s.t->ext : 0);
    tb_alloc(&rb, (size_t)mr.n * r.t->ext);
    for (int j = 0; me == root && j < n; j++)
        gen_fill(s.t, sb.h + (size_t)sdispls[j] * s.t->ext, scounts[j], j, 7);
    t_poison(rb.h, rb.len);
    tb_push(&sb);
    tb_push(&rb);
    MPI_OK(MPI_Scatterv_c(sb.d, scounts, sdispls, s.t->dt, ip ? MPI_IN_PLACE : rb.d, mr.n,
                          r.t->dt, root, C));
    tb_pull(&rb);
    if (!ip)
        expect_block(&mr, rb.h, mine, me, 7, 1);
    tb_free(&sb);
    tb_free(&rb);
    free(rcounts);
    free(scounts);
    free(rdispls);
    free(sdispls);
}

/* test_v's three operations at counts that fit the slots and counts that
 * do not; with coll sm's default parameters, the calls through the slots
 * counted (coll_sm_small_v): allgatherv where all blocks fit, gatherv
 * always, scatterv where the root's do. */
static void v_forms(void)
{
    const long cs[] = { 0, 1, 9, 300 };
    bool defaults = true;
    extern char **environ;
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "RAIL_COLL_SM_", 13) == 0 || strncmp(*e, "RAIL_COLL=", 10) == 0)
            defaults = false;
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    for (int k = 0; k < 4; k++) {
        long c = cs[k];
        for (int ri = 0; ri < 2; ri++) {
            int root = ri ? n - 1 : 0;
            unsigned long long before = pvar_count("coll_sm_small_v");
            test_v(0, T_INT, c, root, ri);
            unsigned long long got = pvar_count("coll_sm_small_v") - before;
            long all = 0, most = 0, least = -1;
            for (int j = 0; j < n; j++) {
                all += v_count(c, j) * 4;
                if (j != root) {
                    most = v_count(c, j) * 4 > most ? v_count(c, j) * 4 : most;
                    least = least < 0 || v_count(c, j) * 4 < least ? v_count(c, j) * 4 : least;
                }
            }
            /* (the blocks' lengths before them unless all are of one) */
            size_t head = least == most ? 0 : ((size_t)(n - 1) * 4 + 7) & ~(size_t)7;
            unsigned long long want = (all > 0 && all <= 1024) + 1 +
                                      (head + (size_t)(n - 1) * (size_t)most <= 1024);
            CHECK(!defaults || n < 2 || got == want,
                  "v forms of %ld + j ints (root %d): coll_sm_small_v counted %llu, not %llu", c,
                  root, got, want);
            test_v(1, T_INT, c, root, !ri);
            test_v(0, T_VEC, c, n / 2, 0);
        }
    }
    /* a scatterv of blocks of one length (the slot then holds no lengths),
     * in reverse order */
    {
        int *x = malloc(sizeof(int) * 5 * (size_t)n), y[5], *cnt = malloc(sizeof(int) * (size_t)n);
        int *dsp = malloc(sizeof(int) * (size_t)n);
        CHECK(x && cnt && dsp, "out of memory");
        for (int j = 0; j < n; j++) {
            cnt[j] = 5;
            dsp[j] = 5 * (n - 1 - j);
            for (int i = 0; i < 5; i++)
                x[dsp[j] + i] = j * 100 + i;
        }
        unsigned long long before = pvar_count("coll_sm_small_v");
        MPI_OK(MPI_Scatterv(x, cnt, dsp, MPI_INT, y, 5, MPI_INT, n - 1, C));
        for (int i = 0; i < 5; i++)
            CHECK(y[i] == me * 100 + i, "uniform scatterv [%d] = %d", i, y[i]);
        CHECK(!defaults || n < 2 || pvar_count("coll_sm_small_v") - before == 1,
              "uniform scatterv not through the slots");
        free(x);
        free(cnt);
        free(dsp);
    }
    MPI_T_finalize();
}

/* ------------------------------------------------------------ reductions */

static void test_reduce(int tk, MPI_Op op, const char *opname, long c, int root, int inplace)
{
    smhan_reduce(C, me, n, opname, tk, op, c, root, inplace, 6);
}

/* Scan (exclusive: exscan) on C, each process's result against the
 * reference prefix in rank order; exscan's process 0 is not checked (its
 * buffer is undefined). */
static void test_scan(int tk, MPI_Op op, const char *opname, long c, int inplace, int exclusive)
{
    const tdt_t *t = &t_types[tk];
    tbuf_t sb, rb;
    snprintf(t_current, sizeof(t_current), "%s %s %s count %ld%s", exclusive ? "exscan" : "scan",
             t->name, opname, c, inplace ? " in place" : "");
    smhan_red_bufs(t, &sb, &rb, c, c, inplace, me, 8);
    if (exclusive)
        MPI_OK(MPI_Exscan(inplace ? MPI_IN_PLACE : sb.d, rb.d, (int)c, t->dt, op, C));
    else
        MPI_OK(MPI_Scan(inplace ? MPI_IN_PLACE : sb.d, rb.d, (int)c, t->dt, op, C));
    tb_pull(&rb);
    int hi = exclusive ? me - 1 : me;
    char w[64];
    for (long i = 0; hi >= 0 && i < c; i++) {
        ref_reduce(t, op, w, i, 0, hi, 8);
        CHECK_ELEM(t, rb.h + i * t->ext, w, !inplace, i);
    }
    tb_free(&sb);
    tb_free(&rb);
}

static void reductions(const long *counts, int nc)
{
    struct { int tk; MPI_Op op; const char *name; } cs[] = {
        { T_INT, MPI_SUM, "sum" },       { T_INT, MPI_MAX, "max" },
        { T_DBL, MPI_SUM, "sum" },       { T_DBL, MPI_MIN, "min" },
        { T_VEC, MPI_SUM, "sum" },       { T_DINT, MPI_MINLOC, "minloc" },
        { T_2INT, MPI_MAXLOC, "maxloc" }, { T_MAT, t_op_matmul, "matmul (user)" },
    };
    int roots[3] = { -1, 0, n - 1 };
    for (size_t k = 0; k < sizeof(cs) / sizeof(cs[0]); k++)
        for (int i = 0; i < nc; i++)
            for (int ri = 0; ri < 3; ri++)
                for (int ip = 0; ip < 2; ip++) {
                    long c = counts[i];
                    if (c > 5003 && (k % 3 != 0 || ip))   /* large: a few cases */
                        continue;
                    test_reduce(cs[k].tk, cs[k].op, cs[k].name, c, roots[ri], ip);
    /* scan, exscan: through the slots where they fit */
    for (size_t k = 0; k < sizeof(cs) / sizeof(cs[0]); k++)
        for (int i = 0; i < nc && counts[i] <= 1009; i++)
            for (int v = 0; v < 4; v++)
                test_scan(cs[k].tk, cs[k].op, cs[k].name, counts[i], v & 1, v >> 1);
                }
    /* reduce_scatter(_block): blocks of these many elements (the largest
     * ~1 MiB of input in all) */
    for (size_t k = 0; k < sizeof(cs) / sizeof(cs[0]); k++)
        for (int i = 0; i < nc; i++)
            for (int v = 0; v < 4; v++) {
                long c = counts[i] > 5003 ? counts[i] / n + 1 : counts[i];
                if (counts[i] > 5003 && k % 3 != 0)
                    continue;
                smhan_reduce_scatter(C, me, n, cs[k].name, cs[k].tk, cs[k].op, c, v & 1, v >> 1,
                                     7);
            }
}

/* ------------------------------------------------------------ driver */

/* Nobody leaves a barrier before the last process entered it: each of the
 * first three processes in turn enters 5 ms late (its entry time reaches
 * the others by bcast, a small operation through the same slots as the
 * barrier's at up to coll_sm_tree_degree + 1 processes). */
static void test_barrier_order(void)
{
    for (int late = 0; late < n && late < 3; late++) {
        if (me == late) {
            struct timespec ts = { 0, 5 * 1000 * 1000 };
            nanosleep(&ts, NULL);
        }
        double enter = t_now();
        MPI_OK(MPI_Barrier(C));
        double leave = t_now();
        MPI_OK(MPI_Bcast(&enter, 1, MPI_DOUBLE, late, C));
        CHECK(leave >= enter, "barrier: left at %.6f before process %d entered at %.6f", leave,
              late, enter);
    }
}

/* The root's side of a "waits for nobody" test: process 0's message with
 * `tag`, sent once it has left the collective, must arrive within 10 s
 * before the root enters.  Returns the request (MPI_REQUEST_NULL once
 * complete), to wait for after the collective. */
static MPI_Request token_first(int tag, const char *what)
{
    static int token;
    int flag = 0;
    MPI_Request rq;
    MPI_OK(MPI_Irecv(&token, 1, MPI_INT, 0, tag, C, &rq));
    double until = t_now() + 10.0;
    while (!flag && t_now() < until) {
        MPI_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        if (!flag) {
            struct timespec ts = { 0, 1000 * 1000 };
            nanosleep(&ts, NULL);
        }
    }
    CHECK(flag, "%s waited for the root (no message from process 0 within 10 s)", what);
    return rq;
}

/* A gather's sender with host buffers waits for nobody, also where a
 * device component is active (RAIL_ACCEL=host,fake: every process then
 * learns of device buffers from the root, which alone waits for everyone):
 * process 0 gathers 4 KiB to the last process and then sends it a
 * message, which the root must receive before it enters the gather
 * (within 10 s; a sender that waited for the root would hold it back). */
static void test_gather_sender_free(void)
{
    enum { BLK = 4096 };
    char *sb = malloc(BLK), *rb = me == n - 1 ? malloc((size_t)BLK * n) : NULL;
    for (int i = 0; i < BLK; i++)
        sb[i] = (char)(me * 31 + i);
    int token = 0;
    if (me == n - 1) {
        MPI_Request rq = token_first(77, "gather: a host sender");
        MPI_OK(MPI_Gather(sb, BLK, MPI_BYTE, rb, BLK, MPI_BYTE, n - 1, C));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int j = 0; j < n; j++)
            for (int i = 0; i < BLK; i++)
                CHECK(rb[(size_t)j * BLK + i] == (char)(j * 31 + i), "gather: block %d [%d]", j,
                      i);
    } else {
        MPI_OK(MPI_Gather(sb, BLK, MPI_BYTE, rb, BLK, MPI_BYTE, n - 1, C));
        if (me == 0)
            MPI_OK(MPI_Send(&token, 1, MPI_INT, n - 1, 77, C));
    }
    free(sb);
    free(rb);
}

/* A small reduce's non-root with host buffers waits for nobody either,
 * also where a device component is active: process 0 reduces 8 ints to
 * the last process through the slots (unless RAIL_COLL_SM_SMALL_MAX=0
 * turns them off) and then sends it a message, which the root must
 * receive before it enters the reduce (as above). */
static void test_reduce_sender_free(void)
{
    int v[8], r[8], token = 0;
    for (int i = 0; i < 8; i++)
        v[i] = 5 * me + i;
    if (me == n - 1) {
        MPI_Request rq = token_first(78, "reduce: a host non-root");
        MPI_OK(MPI_Reduce(v, r, 8, MPI_INT, MPI_SUM, n - 1, C));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int i = 0; i < 8; i++)
            CHECK(r[i] == 5 * n * (n - 1) / 2 + n * i, "reduce: [%d] = %d", i, r[i]);
    } else {
        MPI_OK(MPI_Reduce(v, NULL, 8, MPI_INT, MPI_SUM, n - 1, C));
        if (me == 0)
            MPI_OK(MPI_Send(&token, 1, MPI_INT, n - 1, 78, C));
    }
}

/* COLLTEST_DEVICE=2 (device buffers on odd processes only): a small
 * reduce where some non-root has host buffers and some process device
 * buffers is gathered at the root, the device inputs by messages
 * (coll_sm_small_mixed); where every non-root has device buffers, all
 * hand it on together.  Roots 0 and 1, MPI_SUM and MPI_MAX.  A small
 * gather where some non-roots have device buffers and some host buffers
 * likewise (its root's buffer does not count). */
static void test_rooted_mixed(void)
{
    enum { CNT = 6 };
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    for (int root = 0; root < 2 && root < n; root++) {
        bool host_sender = false, dev_sender = false;
        for (int p = 0; p < n; p++) {
            host_sender = host_sender || (p != root && p % 2 == 0);
            dev_sender = dev_sender || (p != root && p % 2 == 1);
        }
        tbuf_t gs, gr;
        tb_alloc(&gs, CNT * sizeof(int));
        tb_alloc(&gr, (size_t)n * CNT * sizeof(int));
        for (int i = 0; i < CNT; i++)
            ((int *)gs.h)[i] = 13 * me + i;
        tb_push(&gs);
        unsigned long long before = pvar_count("coll_sm_small_mixed");
        MPI_OK(MPI_Gather(gs.d, CNT, MPI_INT, gr.d, CNT, MPI_INT, root, C));
        unsigned long long got = pvar_count("coll_sm_small_mixed") - before;
        if (me == root) {
            tb_pull(&gr);
            for (int j = 0; j < n; j++)
                for (int i = 0; i < CNT; i++)
                    CHECK(((int *)gr.h)[j * CNT + i] == 13 * j + i,
                          "mixed gather root %d: block %d [%d] = %d", root, j, i,
                          ((int *)gr.h)[j * CNT + i]);
        }
        CHECK(got == (me == root && host_sender && dev_sender ? 1u : 0u),
              "mixed gather root %d: coll_sm_small_mixed counted %llu here", root, got);
        tb_free(&gs);
        tb_free(&gr);
        for (int k = 0; k < 2; k++) {
            tbuf_t sb, rb;
            tb_alloc(&sb, CNT * sizeof(int));
            tb_alloc(&rb, CNT * sizeof(int));
            for (int i = 0; i < CNT; i++)
                ((int *)sb.h)[i] = 11 * me + i;
            tb_push(&sb);
            unsigned long long before = pvar_count("coll_sm_small_mixed");
            MPI_OK(MPI_Reduce(sb.d, rb.d, CNT, MPI_INT, k ? MPI_MAX : MPI_SUM, root, C));
            unsigned long long got = pvar_count("coll_sm_small_mixed") - before;
            /* a host non-root, and device buffers somewhere */
            bool host_nonroot = false, dev = false;
            for (int p = 0; p < n; p++) {
                host_nonroot = host_nonroot || (p != root && p % 2 == 0);
                dev = dev || p % 2 == 1;
            }
            if (me == root) {
                tb_pull(&rb);
                for (int i = 0; i < CNT; i++) {
                    int want = k ? 11 * (n - 1) + i : 11 * n * (n - 1) / 2 + n * i;
                    CHECK(((int *)rb.h)[i] == want, "mixed reduce %s root %d [%d] = %d, not %d",
                          k ? "max" : "sum", root, i, ((int *)rb.h)[i], want);
                }
                CHECK(got == (host_nonroot && dev ? 1u : 0u),
                      "mixed reduce root %d: coll_sm_small_mixed counted %llu, not %d", root,
                      got, host_nonroot && dev);
            } else {
                CHECK(got == 0, "mixed reduce: a non-root counted %llu", got);
            }
            tb_free(&sb);
            tb_free(&rb);
        }
    }
    MPI_T_finalize();
}

static void all_ops(void)
{
    const long counts[] = { 0, 1, 17, 1009, 5003, BIG };
    const int nc = t_quick ? 5 : 6;
    int roots[3] = { 0, n - 1, n / 2 };
    for (int i = 0; i < nc; i++) {
        long c = counts[i], cb = c > 5003 ? c / n + 1 : c;   /* per-block count of n-block ops */
        MPI_OK(MPI_Barrier(C));
        for (int ri = 0; ri < 3; ri++) {
            test_bcast(0, T_INT, c, roots[ri]);
            test_bcast(1, T_INT, c, roots[ri]);
            test_gather(0, T_VEC, cb, roots[ri], ri == 1);
            test_scatter(1, T_INT, cb, roots[ri], ri == 2);
            test_gather(1, T_INT, cb, roots[ri], 0);
            test_scatter(0, T_DBL, cb, roots[ri], 0);
        }
        test_bcast(0, T_VEC, c, n - 1);
        for (int ip = 0; ip < 2; ip++) {
            test_allgather(0, T_INT, cb, ip);
            test_allgather(!ip, T_VEC, cb, ip);
            test_alltoall(0, T_INT, cb / 2 + (c > 0), ip);
            test_alltoall(1, T_VEC, cb / 2 + (c > 0), ip);
        }
    }
    reductions(counts, nc);
    v_forms();
    test_barrier_order();
    for (int i = 0; i < 200; i++)
        MPI_OK(MPI_Barrier(C));
}

/* After a device allgather or gather of blk-byte blocks: block j holds
 * bytes (j * 31 + i), what rank j sent. */
/* Device data moved device to device by IPC: a message of the pml, or a
 * coll sm operation done device to device (sm_device.c). */
static unsigned long long ipc_moves(void)
{
    return pvar_count("pml_rndv_recv_ipc") + pvar_count("coll_sm_device_ipc");
}

/* SM_EXPECT_DEVICE_DIRECT=yes / no: coll sm did / did not do the last
 * operation device to device itself (coll_sm_device_ipc counted it). */
static void check_direct_as(unsigned long long before, const char *what, const char *e)
{
    if (e == NULL)
        return;
    bool direct = pvar_count("coll_sm_device_ipc") > before;
    CHECK(direct == (strcmp(e, "yes") == 0), "%s: coll sm %s it device to device itself", what,
          direct ? "did" : "did not do");
}

static void check_direct(unsigned long long before, const char *what)
{
    check_direct_as(before, what, getenv("SM_EXPECT_DEVICE_DIRECT"));
}

/* Calls of a driver function so far where the test's mock driver runs
 * (else -1). */
static long mock_calls(const char *fn)
{
    static long (*calls)(const char *);
    static bool looked;
    if (!looked) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        calls = h ? (long (*)(const char *))dlsym(h, "mock_cuda_calls") : NULL;
        looked = true;
    }
    return calls ? calls(fn) : -1;
}

static long mock_launches(void)
{
    return mock_calls("cuLaunchKernel");
}

static long mock_copies(void)
{
    long a = mock_calls("cuMemcpyAsync"), b = mock_calls("cuMemcpy");
    return a < 0 ? -1 : a + b;
}

/* Launches of the copy kernel (accel_copy_many) on the mock. */
static long mock_copy_kernels(void)
{
    return mock_calls("rail_copy_many");
}

/* On the mock, a reduction coll sm did device to device folded each
 * process's slice of everyone's inputs in one kernel (n <= 8); the
 * copies of an allreduce's second step are another. */
static void check_one_pass(long before, long copy_kernels, const char *what)
{
    const char *e = getenv("SM_EXPECT_DEVICE_DIRECT");
    if (before < 0 || e == NULL || strcmp(e, "yes") != 0 || n > 8)
        return;
    long l = mock_launches() - before - (mock_copy_kernels() - copy_kernels);
    CHECK(l == 1, "%s: %ld kernel launches, not one pass over the inputs", what, l);
}

/* Whether coll sm has process 0 do a device operation of `total` bytes
 * for everyone: its parameter (bytes), as this run sets it or the default. */
static bool by_one_max(const char *param, size_t total, size_t dflt)
{
    const char *v = getenv(param);
    size_t max = v != NULL ? (size_t)strtoull(v, NULL, 0) : dflt;
    return n > 1 && total <= max;
}

static bool by_one(const char *param, size_t total)
{
    return by_one_max(param, total, (size_t)256 << 10);
}

/* On the mock, a small allreduce coll sm did device to device was one
 * kernel of process 0 that read every input and wrote every result
 * (coll_sm_device_allreduce_one_max): no launch or copy elsewhere, none
 * but that one there (it fails with a launch per process, or with the
 * others' slices copied after a step). */
static void check_by_one(long before, long copies, long copy_kernels, const char *expect,
                         size_t total, const char *what)
{
    if (before < 0 || expect == NULL || strcmp(expect, "yes") != 0 || n < 2 || n > 8 ||
        !by_one("RAIL_COLL_SM_DEVICE_ALLREDUCE_ONE_MAX", total))
        return;
    long l = mock_launches() - before, c = mock_copies() - copies,
         k = mock_copy_kernels() - copy_kernels;
    CHECK(l == (t_rank == 0) && c == 0 && k == 0,
          "%s: %ld kernel launches (%ld copy kernels), %ld driver copies at process %d, not %d "
          "launch and no copy",
          what, l, k, c, t_rank, t_rank == 0);
}

/* On the mock, the copies that coll sm made device to device for one
 * operation (blocks of an allgather or alltoall, its own among them; an
 * allreduce's others' slices: `want` copies) went in one launch of the
 * copy kernel, not one driver copy each (want 0: none at all). */
static void check_one_launch(long copies, long copy_kernels, int want, const char *what)
{
    const char *e = getenv("SM_EXPECT_DEVICE_DIRECT");
    if (copies < 0 || e == NULL || strcmp(e, "yes") != 0 || n > 16)
        return;
    long c = mock_copies() - copies, k = mock_copy_kernels() - copy_kernels;
    if (want == 0)
        CHECK(c == 0 && k == 0, "%s: %ld driver copies and %ld copy kernels, not none", what, c,
              k);
    else if (want > 1)
        CHECK(c == 0 && k == 1, "%s: %ld driver copies and %ld copy kernels, not one kernel",
              what, c, k);
    else
        CHECK(c + k == 1, "%s: %ld driver copies and %ld copy kernels, not one", what, c, k);
}

static void check_gathered(tbuf_t *rb, size_t blk, int n, const char *what)
{
    tb_pull(rb);
    for (int j = 0; j < n; j++)
        for (size_t i = 0; i < blk; i++)
            CHECK(rb->h[j * blk + i] == (char)(j * 31 + i), "device %s block %d [%zu]", what, j,
                  i);
}

/* On an oversubscribed node, alltoalls of contiguous int blocks of 128 KiB
 * and 1 MiB in all (below coll_sm_alltoall_max) read the others' send
 * buffers directly (counted by coll_sm_alltoall_single_copy) or go through
 * the segment, as coll_sm_oversub_alltoall_path says: cma, both directly;
 * segment (or coll_sm_oversub_alltoall_cma_min 0), neither; auto, 1 MiB
 * directly (8 times the minimum) and 128 KiB by the probe's verdict, the
 * same in both calls.  Every element checked. */
static void test_oversub_alltoall(void)
{
    const char *min = getenv("RAIL_COLL_SM_OVERSUB_ALLTOALL_CMA_MIN");
    const char *forced = getenv("RAIL_COLL_SM_SINGLE_COPY_MIN");
    const char *path = getenv("RAIL_COLL_SM_OVERSUB_ALLTOALL_PATH");
    if (n < 2 || !node_oversubscribed(n) || getenv("COLLTEST_DEVICE") ||
        getenv("RAIL_COLL_SM_ADAPT_ALTERNATE") || (forced && atol(forced) > 0) ||
        getenv("RAIL_COLL") || (min && atol(min) != 0))
        return;
    bool off = min != NULL || (path && strcmp(path, "segment") == 0);
    bool cma = !off && path && strcmp(path, "cma") == 0;
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    for (int big = 0; big < 2; big++) {
        int per = (int)(((big ? 1 << 20 : 128 << 10) / (int)sizeof(int) + n - 1) / n);
        int *s = malloc((size_t)per * n * sizeof(int)), *r = malloc((size_t)per * n * sizeof(int));
        CHECK(s && r, "out of memory");
        unsigned long long first = 0;
        for (int it = 0; it < 2; it++) {
            for (int j = 0; j < n; j++)
                for (int i = 0; i < per; i++)
                    s[(size_t)j * per + i] = (me * 1000 + j) * 7 + i + it;
            unsigned long long before = pvar_count("coll_sm_alltoall_single_copy");
            MPI_OK(MPI_Alltoall(s, per, MPI_INT, r, per, MPI_INT, C));
            unsigned long long got = pvar_count("coll_sm_alltoall_single_copy") - before;
            for (int j = 0; j < n; j++)
                for (int i = 0; i < per; i++)
                    CHECK(r[(size_t)j * per + i] == (j * 1000 + me) * 7 + i + it,
                          "oversubscribed alltoall of %d-int blocks: block %d [%d] = %d", per, j,
                          i, r[(size_t)j * per + i]);
            bool auto_small = !off && !cma && !big;
            CHECK(auto_small ? got <= 1 && (it == 0 || got == first)
                             : got == (off ? 0u : 1u),
                  "oversubscribed alltoall of %d-int blocks, call %d: "
                  "coll_sm_alltoall_single_copy counted %llu (path %s, minimum %s)",
                  per, it, got, path ? path : "auto", min ? min : "default");
            first = got;
        }
        free(s);
        free(r);
    }
    MPI_T_finalize();
}

/* MPI_Bcast of cnt ints (a pattern of root and round i) on C, every element
 * checked. */
static void bcast_checked(int *buf, int cnt, int root, int i)
{
    for (int k = 0; k < cnt; k++)
        buf[k] = me == root ? root * 131 + k * 7 + i : -1;
    MPI_OK(MPI_Bcast(buf, cnt, MPI_INT, root, C));
    for (int k = 0; k < cnt; k++)
        if (buf[k] != root * 131 + k * 7 + i)
            CHECK(0, "bcast %d of %d ints from %d: [%d] = %d", i, cnt, root, k, buf[k]);
}

/* Single copy forced (RAIL_COLL_SM_SINGLE_COPY_MIN), host buffers: bcasts of
 * 1 MiB from roots 0 and n - 1 and gathers of 1 MiB blocks to rank 0,
 * every element checked, until every receiver counted chunks that the
 * root wrote into its buffer (coll_sm_bcast_chunks_in) and rank 0 chunks
 * that senders wrote into its (coll_sm_gather_chunks_in; at most 200
 * rounds: a helper that comes late writes none); on an oversubscribed
 * node, or with RAIL_COLL_SM_SHARE_MIN=0, that none are written.  With
 * RAIL_COLL_SM_SHARE_REFUSE=1 the helpers claim chunks and report them
 * refused unwritten: the data checks then test the readers' fallback. */
static void test_shared_bcast(void)
{
    const char *forced = getenv("RAIL_COLL_SM_SINGLE_COPY_MIN"),
               *share = getenv("RAIL_COLL_SM_SHARE_MIN");
    if (n < 2 || !forced || atol(forced) <= 0 || atol(forced) > (1 << 20) ||
        getenv("COLLTEST_DEVICE") || getenv("RAIL_COLL"))
        return;
    bool want = !node_oversubscribed(n) && !(share && atol(share) == 0);
    int provided, per = (1 << 20) / (int)sizeof(int), have = 0, i;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    unsigned long long in0 = pvar_count("coll_sm_bcast_chunks_in"),
                       g0 = pvar_count("coll_sm_gather_chunks_in");
    int *buf = malloc((size_t)per * sizeof(int)), *all = malloc((size_t)per * n * sizeof(int));
    CHECK(buf && all, "out of memory");
    for (i = 0; i < (want ? 200 : 10) && !have; i++) {
        int root = i % 2 ? n - 1 : 0;
        bcast_checked(buf, per, root, i);
        /* a gather of 1 MiB blocks to rank 0 */
        for (int k = 0; k < per; k++)
            buf[k] = me * 17 + k * 3 + i;
        MPI_OK(MPI_Gather(buf, per, MPI_INT, all, per, MPI_INT, 0, C));
        for (int r = 0; me == 0 && r < n; r++)
            for (int k = 0; k < per; k++)
                if (all[(size_t)r * per + k] != r * 17 + k * 3 + i)
                    CHECK(0, "shared gather %d: block %d [%d] = %d", i, r, k,
                          all[(size_t)r * per + k]);
        /* done when every process has been a receiver that got chunks, and
         * rank 0 a gather root that did */
        int mine = (me == root || pvar_count("coll_sm_bcast_chunks_in") > in0) &&
                   (me != 0 || pvar_count("coll_sm_gather_chunks_in") > g0);
        MPI_OK(MPI_Allreduce(&mine, &have, 1, MPI_INT, MPI_MIN, C));
        if (!want)
            have = 0;
    }
    unsigned long long in = pvar_count("coll_sm_bcast_chunks_in") - in0,
                       gin = pvar_count("coll_sm_gather_chunks_in") - g0;
    if (want)
        CHECK(have, "%d single-copy bcasts and gathers of 1 MiB: some receiver (or the gather's "
              "root) got no chunk from the root (senders) (this one %llu, %llu)", i, in, gin);
    else
        CHECK(in == 0 && gin == 0, "%llu, %llu chunks written by bcast roots and gather senders "
              "with sharing off", in, gin);
    free(buf);
    free(all);
    MPI_T_finalize();
}

static unsigned long long cvar_size(const char *name)
{
    unsigned long long v = 0;
    cvar_read(name, &v);
    return v;
}

/* Scatters of 64 KiB-int blocks from contiguous host buffers (roots 0 and
 * n - 1, the root's own block in place every other call): with single copy
 * forced (RAIL_COLL_SM_SINGLE_COPY_MIN up to 256 KiB), every receiver reads
 * its block from the root's buffer (coll_sm_scatter_single_copy counts one
 * per call); with RAIL_COLL_SM_SCATTER_SINGLE_COPY_MIN=0 and nothing
 * forced, none does; otherwise (the root's own probe decides, and two
 * processes' probes may disagree) every call from one root the same way.
 * Every element checked. */
static void test_scatter_single_copy(void)
{
    const char *forced = getenv("RAIL_COLL_SM_SINGLE_COPY_MIN"),
               *min = getenv("RAIL_COLL_SM_SCATTER_SINGLE_COPY_MIN");
    if (n < 2 || getenv("COLLTEST_DEVICE") || getenv("RAIL_COLL"))
        return;
    bool on = forced && atol(forced) > 0 && atol(forced) <= (256 << 10);
    bool off = !on && min && atol(min) == 0 && !(forced && atol(forced) > 0);
    const int per = (64 << 10) / (int)sizeof(int), calls = 6;
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    int *all = malloc((size_t)per * n * sizeof(int)), *mine = malloc((size_t)per * sizeof(int));
    CHECK(all && mine, "out of memory");
    /* per root (0, n - 1): each root decides by its own probe */
    unsigned long long got = 0, received = 0, got_by[2] = {0, 0}, received_by[2] = {0, 0};
    for (int i = 0; i < calls; i++) {
        int root = i % 2 ? n - 1 : 0, inplace = (i / 2) % 2 && me == root;
        for (size_t k = 0; me == root && k < (size_t)per * n; k++)
            all[k] = (int)(k * 5 + (size_t)i * 11 + (size_t)root);
        for (int k = 0; k < per; k++)
            mine[k] = -1;
        unsigned long long c0 = pvar_count("coll_sm_scatter_single_copy");
        MPI_OK(MPI_Scatter(all, per, MPI_INT, inplace ? MPI_IN_PLACE : mine, per, MPI_INT, root,
                           C));
        unsigned long long c1 = pvar_count("coll_sm_scatter_single_copy") - c0;
        got += c1;
        received += me != root;
        got_by[i % 2] += c1;
        received_by[i % 2] += me != root;
        const int *blk = inplace ? all + (size_t)me * per : mine;
        for (int k = 0; k < per; k++)
            if (blk[k] != (int)(((size_t)me * per + (size_t)k) * 5 + (size_t)i * 11 +
                                (size_t)root))
                CHECK(0, "scatter %d of %d-int blocks from %d: [%d] = %d", i, per, root, k,
                      blk[k]);
    }
    if (on)
        CHECK(got == received, "single copy forced: %llu of %llu scattered blocks read from the "
              "root's buffer (coll_sm_scatter_single_copy)", got, received);
    else if (off)
        CHECK(got == 0, "coll_sm_scatter_single_copy_min=0: %llu scattered blocks read from the "
              "root's buffer", got);
    else
        for (int r = 0; r < 2; r++)
            CHECK(got_by[r] == 0 || got_by[r] == received_by[r], "%llu of %llu blocks scattered "
                  "from rank %d by single copy: the root's probe changed its choice between "
                  "calls", got_by[r], received_by[r], r ? n - 1 : 0);
    free(all);
    free(mine);
    MPI_T_finalize();
}

/* Single copy forced, host buffers, not oversubscribed: bcasts of exactly
 * coll_sm_share_bcast_min bytes (the root alternating between 0 and n - 1)
 * are shared, every receiver counting chunks the root wrote within 200
 * rounds, and bcasts 4 KiB smaller never are (whatever coll_sm_share_min,
 * the gathers' threshold, says); every element checked. */
static void test_shared_bcast_min(void)
{
    const char *forced = getenv("RAIL_COLL_SM_SINGLE_COPY_MIN");
    if (n < 2 || !forced || atol(forced) <= 0 || getenv("COLLTEST_DEVICE") ||
        getenv("RAIL_COLL") || node_oversubscribed(n))
        return;
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    unsigned long long thr = cvar_size("coll_sm_share_bcast_min");
    if (thr < (64u << 10) || thr > (16u << 20) || thr % sizeof(int) != 0 ||
        (long)(thr - 4096) < atol(forced)) {
        MPI_T_finalize();
        return;
    }
    int per = (int)(thr / sizeof(int)), *buf = malloc(thr);
    CHECK(buf, "out of memory");
    for (int pass = 0; pass < 2; pass++) {
        int cnt = pass == 0 ? per : per - 1024, have = 0, i;
        unsigned long long c0 = pvar_count("coll_sm_bcast_chunks_in");
        for (i = 0; i < (pass == 0 ? 200 : 10) && !have; i++) {
            int root = i % 2 ? n - 1 : 0;
            bcast_checked(buf, cnt, root, i);
            int mine = me == root || pvar_count("coll_sm_bcast_chunks_in") > c0;
            MPI_OK(MPI_Allreduce(&mine, &have, 1, MPI_INT, MPI_MIN, C));
            if (pass == 1)
                have = 0;
        }
        unsigned long long got = pvar_count("coll_sm_bcast_chunks_in") - c0;
        if (pass == 0)
            CHECK(have, "%d single-copy bcasts of %llu bytes (coll_sm_share_bcast_min): some "
                  "receiver got no chunk from the root (this one %llu)", i, thr, got);
        else
            CHECK(got == 0, "%llu chunks written by roots of single-copy bcasts of %zu bytes, "
                  "below coll_sm_share_bcast_min (%llu)", got, (size_t)cnt * sizeof(int), thr);
    }
    free(buf);
    MPI_T_finalize();
}

/* Bcasts of 1028 B-4 KiB, above a slot's 1 KiB, from roots 0 and n - 1,
 * allgathers of 1 KiB blocks (n KiB in all, above what the slots take),
 * allgathers whose blocks from the others take about 8 KiB (all of them,
 * more than coll_sm_small_bulk_max) and alltoalls of about 2 KiB for the
 * others, every element checked:
 * with coll sm's default parameters each goes through the slots and bulk
 * slots (coll_sm_small_bulk counts one per call on every process); with
 * RAIL_COLL_SM_SMALL_BULK_MAX=0 none does. */
static void test_small_bulk(void)
{
    const char *bulk = getenv("RAIL_COLL_SM_SMALL_BULK_MAX");
    bool defaults = true, off = bulk && atol(bulk) == 0;
    extern char **environ;
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "RAIL_COLL_SM_", 13) == 0 || strncmp(*e, "RAIL_COLL=", 10) == 0)
            defaults = false;
    if (n < 2 || getenv("COLLTEST_DEVICE") || (!defaults && !off))
        return;
    static const int counts[] = { 257, 512, 777, 1024 };
    int *buf = malloc(1024 * sizeof(int)), provided, calls = 0;
    CHECK(buf, "out of memory");
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    unsigned long long before = pvar_count("coll_sm_small_bulk");
    for (int i = 0; i < 40; i++, calls++)
        bcast_checked(buf, counts[i % 4], i % 2 ? n - 1 : 0, i);
    int *all = malloc((size_t)n * 256 * sizeof(int));
    CHECK(all, "out of memory");
    for (int i = 0; i < 20; i++, calls++) {
        for (int k = 0; k < 256; k++)
            buf[k] = me * 1000 + k * 3 + i;
        for (int k = 0; k < n * 256; k++)
            all[k] = -1;
        MPI_OK(MPI_Allgather(buf, 256, MPI_INT, all, 256, MPI_INT, C));
        for (int j = 0; j < n; j++)
            for (int k = 0; k < 256; k++)
                if (all[j * 256 + k] != j * 1000 + k * 3 + i)
                    CHECK(0, "allgather %d of 256 ints: block %d [%d] = %d", i, j, k,
                          all[j * 256 + k]);
    }
    free(all);
    /* the others' blocks about 8 KiB: np 2 8 KiB blocks, np 8 1168 B */
    const int per = 8192 / (n - 1) / (int)sizeof(int);
    int *mine = malloc((size_t)per * sizeof(int)), *got8 = malloc((size_t)n * per * sizeof(int));
    CHECK(mine && got8, "out of memory");
    for (int i = 0; i < 20; i++, calls++) {
        for (int k = 0; k < per; k++)
            mine[k] = me * 100003 + k * 5 + i;
        for (int k = 0; k < n * per; k++)
            got8[k] = -1;
        MPI_OK(MPI_Allgather(mine, per, MPI_INT, got8, per, MPI_INT, C));
        for (int j = 0; j < n; j++)
            for (int k = 0; k < per; k++)
                if (got8[j * per + k] != j * 100003 + k * 5 + i)
                    CHECK(0, "allgather %d of %d ints: block %d [%d] = %d", i, per, j, k,
                          got8[j * per + k]);
    }
    free(mine);
    free(got8);
    /* alltoalls whose blocks for the others take about 2 KiB: more than a
     * slot, at most a bulk slot (4 KiB at np 8); every other one in place */
    int cnt = 2048 / (n - 1) / (int)sizeof(int);
    int *sa = malloc((size_t)n * cnt * sizeof(int)), *ra = malloc((size_t)n * cnt * sizeof(int));
    CHECK(sa && ra, "out of memory");
    for (int i = 0; i < 20; i++, calls++) {
        int *dst = i % 2 ? sa : ra;
        for (int j = 0; j < n; j++)
            for (int k = 0; k < cnt; k++) {
                sa[j * cnt + k] = me * 100003 + j * 1009 + k * 7 + i;
                ra[j * cnt + k] = -1;
            }
        MPI_OK(MPI_Alltoall(i % 2 ? MPI_IN_PLACE : sa, cnt, MPI_INT, dst, cnt, MPI_INT, C));
        for (int j = 0; j < n; j++)
            for (int k = 0; k < cnt; k++)
                if (dst[j * cnt + k] != j * 100003 + me * 1009 + k * 7 + i)
                    CHECK(0, "alltoall %d of %d ints%s: block %d [%d] = %d", i, cnt,
                          i % 2 ? " in place" : "", j, k, dst[j * cnt + k]);
    }
    free(sa);
    free(ra);
    /* reductions above a slot: allreduces of 2 KiB, reduces of 4 KiB from
     * every root in turn, scans of 1.5 KiB, reduce_scatter_blocks of 3 KiB
     * in all (np 8: each process folds 32 KiB for a reduce) */
    int rn = 1024, *ri = malloc((size_t)rn * sizeof(int)), *ro = malloc((size_t)rn * sizeof(int));
    CHECK(ri && ro, "out of memory");
    for (int i = 0; i < 24; i++, calls++) {
        int kind = i % 4, root = (i / 4) % n;
        int cnt_r = kind == 0 ? 512 : kind == 1 ? rn : kind == 2 ? 384 : 768 / n * n;
        for (int k = 0; k < cnt_r; k++) {
            ri[k] = (me + 1) * (k + 3) + i;
            ro[k] = -1;
        }
        if (kind == 0)
            MPI_OK(MPI_Allreduce(ri, ro, cnt_r, MPI_INT, MPI_SUM, C));
        else if (kind == 1)
            MPI_OK(MPI_Reduce(ri, ro, cnt_r, MPI_INT, MPI_SUM, root, C));
        else if (kind == 2)
            MPI_OK(MPI_Scan(ri, ro, cnt_r, MPI_INT, MPI_SUM, C));
        else
            MPI_OK(MPI_Reduce_scatter_block(ri, ro, cnt_r / n, MPI_INT, MPI_SUM, C));
        int upto = kind == 2 ? me + 1 : n, from = kind == 3 ? me * (cnt_r / n) : 0;
        int len = kind == 3 ? cnt_r / n : kind == 1 && me != root ? 0 : cnt_r;
        for (int k = 0; k < len; k++) {
            int e = from + k, want = 0;
            for (int p = 0; p < upto; p++)
                want += (p + 1) * (e + 3) + i;
            if (ro[k] != want)
                CHECK(0, "reduction %d (kind %d) of %d ints: [%d] = %d, expected %d", i, kind,
                      cnt_r, e, ro[k], want);
        }
    }
    free(ri);
    free(ro);
    unsigned long long got = pvar_count("coll_sm_small_bulk") - before;
    struct statvfs sv;   /* (a segment sized down for a small /dev/shm may hold less) */
    bool roomy = statvfs("/dev/shm", &sv) == 0 &&
                 (unsigned long long)sv.f_bavail * sv.f_frsize >= (1ull << 30);
    CHECK(got == (off ? 0u : (unsigned long long)calls) || (!off && !roomy),
          "%d bcasts, allgathers, alltoalls and reductions: coll_sm_small_bulk counted %llu, "
          "expected %d",
          calls, got, off ? 0 : calls);
    free(buf);
    MPI_T_finalize();
}

/* A bcast root far ahead of its receivers (they start 30 ms late), with
 * data above a slot's (in bulk slots by default), after 2100 bcasts of
 * an int from each process in turn: 600 bcasts of 2 KiB
 * from rank 0, every element checked.  On an oversubscribed node a
 * process has more slots (coll_sm_oversub_small_slots) than bulk slots,
 * and the root must not run further ahead than the bulk slots allow. */
static void test_bulk_run_ahead(void)
{
    if (n < 2)
        return;
    int *buf = malloc(512 * sizeof(int));
    CHECK(buf, "out of memory");
    /* every slot in use first: a new communicator starts with fewer
     * (coll_sm_small_slots_start; 256 from its 2048th small operation) */
    for (int i = 0; i < 2100; i++)
        bcast_checked(buf, 1, i % n, i);
    if (me != 0)
        usleep(30000);
    for (int i = 0; i < 600; i++)
        bcast_checked(buf, 512, 0, i);
    free(buf);
}

/* Paths alternating (RAIL_COLL_SM_ADAPT_ALTERNATE), host buffers: alltoalls
 * of exactly coll_sm_adapt_blocks_min bytes in all take single copy every
 * other call, alltoalls just below it never (whatever
 * coll_sm_adapt_agree_min, the reductions' threshold, says); every block
 * checked. */
static void test_blocks_threshold(void)
{
    if (n < 2 || !getenv("RAIL_COLL_SM_ADAPT_ALTERNATE") || getenv("COLLTEST_DEVICE") ||
        getenv("RAIL_COLL"))
        return;
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    unsigned long long thr = cvar_size("coll_sm_adapt_blocks_min");
    size_t small = (size_t)cvar_size("coll_sm_small_max");
    size_t bulk = (size_t)cvar_size("coll_sm_small_bulk_max");
    /* blocks of ints, all of them together at the threshold and 64 bytes
     * per block below it; above the slots and the bulk slots (at np 2 the
     * default threshold's 8 KiB blocks go through a bulk slot: not here) */
    int per = (int)(thr / (unsigned long long)n / sizeof(int)), below = per - 16;
    if (thr == 0 || thr % ((unsigned long long)n * sizeof(int)) != 0 || below <= 0 ||
        (size_t)below * sizeof(int) * (size_t)(n - 1) <= small ||
        (size_t)per * sizeof(int) * (size_t)(n - 1) <= bulk) {
        MPI_T_finalize();
        return;
    }
    int *sb = malloc((size_t)per * n * sizeof(int)), *rb = malloc((size_t)per * n * sizeof(int));
    CHECK(sb && rb, "out of memory");
    for (int pass = 0; pass < 2; pass++) {
        int cnt = pass == 0 ? per : below;
        unsigned long long c0 = pvar_count("coll_sm_alltoall_single_copy");
        for (int it = 0; it < 4; it++) {
            for (int j = 0; j < n; j++)
                for (int i = 0; i < cnt; i++)
                    sb[(size_t)j * cnt + i] = me * 1000003 + j * 7919 + i + it;
            MPI_OK(MPI_Alltoall(sb, cnt, MPI_INT, rb, cnt, MPI_INT, C));
            for (int j = 0; j < n; j++)
                for (int i = 0; i < cnt; i++)
                    CHECK(rb[(size_t)j * cnt + i] == j * 1000003 + me * 7919 + i + it,
                          "alltoall of %d ints per block: block %d [%d]", cnt, j, i);
        }
        unsigned long long got = pvar_count("coll_sm_alltoall_single_copy") - c0;
        if (pass == 0)
            CHECK(got >= 1, "4 alternating alltoalls of %llu bytes in all "
                  "(coll_sm_adapt_blocks_min): none by single copy", thr);
        else
            CHECK(got == 0, "%llu of 4 alternating alltoalls of %zu bytes in all, below "
                  "coll_sm_adapt_blocks_min (%llu), by single copy", got,
                  (size_t)below * sizeof(int) * (size_t)n, thr);
    }
    free(sb);
    free(rb);
    MPI_T_finalize();
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    const char *d = getenv("COLLTEST_DEVICE");
    if (d && atoi(d) == 2)   /* device buffers on odd ranks only */
        t_device = t_rank % 2;
    t_types_init();
    C = MPI_COMM_WORLD;
    me = t_rank;
    n = t_size;
    all_ops();
    test_oversub_alltoall();
    test_scatter_single_copy();
    test_shared_bcast();
    test_shared_bcast_min();
    test_blocks_threshold();
    test_small_bulk();
    test_bulk_run_ahead();
    /* alternating paths (or single copy forced), host buffers everywhere:
     * (half) the alltoalls of dense blocks from coll_sm_adapt_agree_min
     * (coll_sm_single_copy_min) bytes read the others' send buffers
     * directly (the counter counts those) */
    const char *forced = getenv("RAIL_COLL_SM_SINGLE_COPY_MIN");
    if (n > 1 && (getenv("RAIL_COLL_SM_ADAPT_ALTERNATE") || (forced && atol(forced) > 0)) &&
        !getenv("COLLTEST_DEVICE")) {
        int provided;
        MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
        /* two alltoalls of 16 KiB blocks, above the bulk slots whatever
         * the rank count, so one of them takes single copy: the sweep's
         * may all fall on the segment's turns (at np 3 they do since its
         * alltoalls of 2 KiB blocks take a bulk slot, not a turn) */
        int per16 = 4096, *s16 = malloc((size_t)n * per16 * sizeof(int));
        int *r16 = malloc((size_t)n * per16 * sizeof(int));
        CHECK(s16 && r16, "out of memory");
        for (int it = 0; it < 2; it++) {
            for (int i = 0; i < n * per16; i++)
                s16[i] = me * 7919 + i + it;
            MPI_OK(MPI_Alltoall(s16, per16, MPI_INT, r16, per16, MPI_INT, C));
            for (int j = 0; j < n; j++)
                for (int i = 0; i < per16; i += 1021)
                    CHECK(r16[j * per16 + i] == j * 7919 + me * per16 + i + it,
                          "alltoall of 16 KiB blocks: block %d [%d] wrong", j, i);
        }
        free(s16);
        free(r16);
        CHECK(pvar_count("coll_sm_alltoall_single_copy") > 0,
              "no alltoall by single copy with RAIL_COLL_SM_ADAPT_ALTERNATE or _SINGLE_COPY_MIN");
        /* alternating: a third of them through the segment written with
         * streaming stores, where the CPU has them (AVX2) */
#if defined(__x86_64__)
        if (getenv("RAIL_COLL_SM_ADAPT_ALTERNATE") && __builtin_cpu_supports("avx2")) {
            CHECK(pvar_count("coll_sm_alltoall_streamed") > 0,
                  "no alltoall through the streamed segment with RAIL_COLL_SM_ADAPT_ALTERNATE");
            /* allgathers of 4 MiB in all or more may take it too: three in
             * a row, one of them streamed, every block checked */
            int per = (int)(((4 << 20) / (int)sizeof(int) + n - 1) / n);
            int *blk = malloc((size_t)per * sizeof(int)), *all = malloc((size_t)per * n * sizeof(int));
            CHECK(blk && all, "out of memory");
            for (int it = 0; it < 3; it++) {
                for (int i = 0; i < per; i++)
                    blk[i] = me * 7919 + i * 3 + it;
                MPI_OK(MPI_Allgather(blk, per, MPI_INT, all, per, MPI_INT, C));
                for (int r = 0; r < n; r++)
                    for (int i = 0; i < per; i += 4099)
                        CHECK(all[(size_t)r * per + i] == r * 7919 + i * 3 + it,
                              "allgather of %d ints: block %d element %d wrong", per, r, i);
                CHECK(all[(size_t)n * per - 1] == (n - 1) * 7919 + (per - 1) * 3 + it,
                      "allgather: last element wrong");
            }
            free(blk);
            free(all);
            CHECK(pvar_count("coll_sm_allgather_streamed") > 0,
                  "no allgather through the streamed segment with RAIL_COLL_SM_ADAPT_ALTERNATE");
        }
#endif
        /* ... and some root read large gathers' blocks directly */
        unsigned long long g = pvar_count("coll_sm_gather_single_copy"), all = 0;
        MPI_OK(MPI_Allreduce(&g, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
        CHECK(all > 0, "no gather by single copy with RAIL_COLL_SM_ADAPT_ALTERNATE or "
              "_SINGLE_COPY_MIN");
        MPI_T_finalize();
    }
    /* (a gather by single copy keeps its senders until the root has read) */
    bool gather_cma = getenv("RAIL_COLL_SM_ADAPT_ALTERNATE") || (forced && atol(forced) > 0);
    if (n > 1) {
        if (!gather_cma)
            test_gather_sender_free();
        const char *small = getenv("RAIL_COLL_SM_SMALL_MAX");   /* the slots */
        if (!small || atol(small) > 0)
            test_reduce_sender_free();
    }
    if (d && atoi(d) == 2)
        test_rooted_mixed();
    if (n > 1) {
        sm_maps_t s = sm_maps(-1);
        CHECK(s.segments >= 1, "no coll sm segment mapped on MPI_COMM_WORLD");
        CHECK(s.linked == 0, "%d coll sm segment names still in /dev/shm", s.linked);
    }
    /* the same on a communicator whose rank order is reversed */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, n - t_rank, &C));
    MPI_OK(MPI_Comm_rank(C, &me));
    all_ops();
    MPI_OK(MPI_Comm_free(&C));
    /* SM_EXPECT_DEVICE_IPC=yes (every buffer on a device whose IPC works):
     * a 1 MiB bcast from a device buffer, an allgather, an alltoall and a
     * gather of device buffers and a scatter from a device root go to the
     * next component
     * (coll_sm_device_handoff_min), and every receiver gets data by a
     * message copied device to device by IPC, or by coll sm itself
     * (SM_EXPECT_DEVICE_DIRECT: bcast, scatter, gather, allgather,
     * alltoall, reduce, allreduce, reduce_scatter; a 2 KiB-block
     * allgather and alltoall: SM_EXPECT_BLOCKS_DIRECT) */
    const char *ipc = getenv("SM_EXPECT_DEVICE_IPC");
    if (ipc != NULL && strcmp(ipc, "yes") == 0 && n > 1) {
        int provided;
        MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
        unsigned long long before = ipc_moves();
        unsigned long long direct = pvar_count("coll_sm_device_ipc");
        tbuf_t b;
        tb_alloc(&b, 1 << 20);
        for (size_t i = 0; i < b.len; i++)
            b.h[i] = t_rank == 0 ? (char)(i * 7 + 1) : 0;
        tb_push(&b);
        long copies = mock_copies(), copy_kernels = mock_copy_kernels();
        MPI_OK(MPI_Bcast(b.d, (int)b.len, MPI_BYTE, 0, MPI_COMM_WORLD));
        /* from three processes (coll_sm_device_bcast_one_max) the root
         * copies into every receiver's buffer in one launch, else each
         * receiver copies */
        bool bone = n > 2 && by_one_max("RAIL_COLL_SM_DEVICE_BCAST_ONE_MAX", b.len,
                                        (size_t)1 << 20);
        check_one_launch(copies, copy_kernels, bone ? (t_rank == 0 ? n - 1 : 0) : t_rank != 0,
                         "a 1 MiB device bcast");
        tb_pull(&b);
        for (size_t i = 0; i < b.len; i++)
            CHECK(b.h[i] == (char)(i * 7 + 1), "device bcast [%zu]", i);
        if (t_rank != 0)
            CHECK(ipc_moves() > before,
                  "a 1 MiB bcast from a device buffer reached this process without IPC");
        check_direct(direct, "a 1 MiB device bcast");
        /* from the last process, where process 1's buffer is host memory:
         * nobody can write it by IPC, so each receiver copies (coll sm
         * itself still) */
        for (size_t i = 0; i < b.len; i++)
            b.h[i] = t_rank == n - 1 ? (char)(i * 5 + 3) : 0;
        tb_push(&b);
        direct = pvar_count("coll_sm_device_ipc");
        MPI_OK(MPI_Bcast(t_rank == 1 && n > 2 ? (void *)b.h : b.d, (int)b.len, MPI_BYTE, n - 1,
                         MPI_COMM_WORLD));
        if (!(t_rank == 1 && n > 2))
            tb_pull(&b);
        for (size_t i = 0; i < b.len; i++)
            CHECK(b.h[i] == (char)(i * 5 + 3), "device bcast from %d [%zu]", n - 1, i);
        check_direct(direct, "a 1 MiB device bcast to a host buffer among device ones");
        tb_free(&b);
        /* allgather and alltoall of 256 KiB blocks: handed on together
         * after step 1 told everyone that there are device buffers */
        size_t blk = 256 << 10;
        tbuf_t sb, rb;
        tb_alloc(&sb, blk * (size_t)n);
        tb_alloc(&rb, blk * (size_t)n);
        for (size_t i = 0; i < sb.len; i++)
            sb.h[i] = (char)(t_rank * 31 + i);
        tb_push(&sb);
        before = ipc_moves();
        direct = pvar_count("coll_sm_device_ipc");
        copies = mock_copies();
        copy_kernels = mock_copy_kernels();
        MPI_OK(MPI_Allgather(sb.d, (int)blk, MPI_BYTE, rb.d, (int)blk, MPI_BYTE, MPI_COMM_WORLD));
        check_one_launch(copies, copy_kernels, n, "a device allgather of 256 KiB blocks");
        check_gathered(&rb, blk, n, "allgather");
        CHECK(ipc_moves() > before,
              "a device allgather of 256 KiB blocks reached this process without IPC");
        check_direct(direct, "a device allgather of 256 KiB blocks");
        before = ipc_moves();
        direct = pvar_count("coll_sm_device_ipc");
        copies = mock_copies();
        copy_kernels = mock_copy_kernels();
        MPI_OK(MPI_Alltoall(sb.d, (int)blk, MPI_BYTE, rb.d, (int)blk, MPI_BYTE, MPI_COMM_WORLD));
        check_one_launch(copies, copy_kernels, n, "a device alltoall of 256 KiB blocks");
        tb_pull(&rb);
        /* block j came from rank j's block me: bytes (j * 31 + me * blk + i) */
        for (int j = 0; j < n; j++)
            for (size_t i = 0; i < blk; i++)
                CHECK(rb.h[j * blk + i] == (char)(j * 31 + t_rank * blk + i),
                      "device alltoall block %d [%zu]", j, i);
        CHECK(ipc_moves() > before,
              "a device alltoall of 256 KiB blocks reached this process without IPC");
        check_direct(direct, "a device alltoall of 256 KiB blocks");
        /* allgather and alltoall of 2 KiB blocks (more than the slots
         * take) and of 64-byte blocks (the slots' size: their device bits
         * hand them on): device to device as well from
         * coll_sm_device_blocks_min (every such size by default;
         * SM_EXPECT_BLOCKS_DIRECT, else as SM_EXPECT_DEVICE_DIRECT), one
         * kernel for all copies on the mock */
        for (int kbi = 0; kbi < 2; kbi++) {
            const char *e = getenv("SM_EXPECT_BLOCKS_DIRECT");
            e = e != NULL ? e : getenv("SM_EXPECT_DEVICE_DIRECT");
            const int kb = kbi ? 64 : 2048;
            for (int op = 0; op < 2; op++) {
                char what[64];
                snprintf(what, sizeof(what), "a device %s of %d-byte blocks",
                         op ? "alltoall" : "allgather", kb);
                for (int i = 0; i < kb * n; i++)
                    sb.h[i] = (char)(t_rank * 7 + i);
                tb_push(&sb);
                direct = pvar_count("coll_sm_device_ipc");
                copies = mock_copies();
                copy_kernels = mock_copy_kernels();
                if (op)
                    MPI_OK(MPI_Alltoall(sb.d, kb, MPI_BYTE, rb.d, kb, MPI_BYTE, MPI_COMM_WORLD));
                else
                    MPI_OK(MPI_Allgather((char *)sb.d + t_rank * kb, kb, MPI_BYTE, rb.d, kb,
                                         MPI_BYTE, MPI_COMM_WORLD));
                check_direct_as(direct, what, e);
                /* up to coll_sm_device_blocks_one_max in all, process 0
                 * makes every copy (one kernel), the others none */
                bool one = by_one("RAIL_COLL_SM_DEVICE_BLOCKS_ONE_MAX", (size_t)kb * n);
                if (e != NULL && strcmp(e, "yes") == 0)
                    check_one_launch(copies, copy_kernels, one && t_rank > 0 ? 0 : n, what);
                tb_pull(&rb);
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < kb; i++) {
                        int src = (op ? t_rank : j) * kb + i;
                        CHECK(rb.h[j * kb + i] == (char)(j * 7 + src), "%s: block %d [%d]",
                              what, j, i);
                    }
            }
        }
        /* the same 64-byte blocks where the last process receives into a
         * vector (8 of every 16 bytes, block j at 2 * 64 j): no contiguous
         * result there, so process 0 cannot fill it, and everyone copies
         * its own blocks device to device instead (before, the call was
         * handed on to the next component) */
        {
            const char *e = getenv("SM_EXPECT_BLOCKS_DIRECT");
            e = e != NULL ? e : getenv("SM_EXPECT_DEVICE_DIRECT");
            const int kb = 64;
            bool vec = t_rank == n - 1;
            MPI_Datatype v, rv;
            MPI_OK(MPI_Type_vector(kb / 8, 8, 16, MPI_BYTE, &v));
            MPI_OK(MPI_Type_create_resized(v, 0, 2 * kb, &rv));
            MPI_OK(MPI_Type_commit(&rv));
            for (int op = 0; op < 2; op++) {
                char what[96];
                snprintf(what, sizeof(what), "a device %s of 64-byte blocks into a vector at "
                         "process %d", op ? "alltoall" : "allgather", n - 1);
                for (int i = 0; i < kb * n; i++)
                    sb.h[i] = (char)(t_rank * 5 + i);
                memset(rb.h, 0x5a, (size_t)(2 * kb * n));
                tb_push(&sb);
                tb_push(&rb);
                direct = pvar_count("coll_sm_device_ipc");
                copies = mock_copies();
                copy_kernels = mock_copy_kernels();
                MPI_Datatype rt = vec ? rv : MPI_BYTE;
                int rn = vec ? 1 : kb;
                if (op)
                    MPI_OK(MPI_Alltoall(sb.d, kb, MPI_BYTE, rb.d, rn, rt, MPI_COMM_WORLD));
                else
                    MPI_OK(MPI_Allgather((char *)sb.d + t_rank * kb, kb, MPI_BYTE, rb.d, rn, rt,
                                         MPI_COMM_WORLD));
                check_direct_as(direct, what, e);
                /* a process with contiguous buffers: its own n copies */
                if (e != NULL && strcmp(e, "yes") == 0 && !vec)
                    check_one_launch(copies, copy_kernels, n, what);
                tb_pull(&rb);
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < kb; i++) {
                        int src = (op ? t_rank : j) * kb + i;
                        size_t at = vec ? (size_t)(2 * kb * j + i / 8 * 16 + i % 8)
                                        : (size_t)(j * kb + i);
                        CHECK(rb.h[at] == (char)(j * 5 + src), "%s: block %d [%d]", what, j,
                              i);
                        if (vec)
                            CHECK(rb.h[at + 8] == 0x5a, "%s: a hole of block %d written", what,
                                  j);
                    }
            }
            MPI_OK(MPI_Type_free(&rv));
            MPI_OK(MPI_Type_free(&v));
        }
        for (size_t i = 0; i < sb.len; i++)   /* the pattern the next checks expect */
            sb.h[i] = (char)(t_rank * 31 + i);
        tb_push(&sb);
        /* scatter of 256 KiB blocks from a device root: the root decides */
        before = ipc_moves();
        direct = pvar_count("coll_sm_device_ipc");
        MPI_OK(MPI_Scatter(sb.d, (int)blk, MPI_BYTE, rb.d, (int)blk, MPI_BYTE, 0,
                           MPI_COMM_WORLD));
        tb_pull(&rb);
        for (size_t i = 0; i < blk; i++)
            CHECK(rb.h[i] == (char)(t_rank * blk + i), "device scatter [%zu]", i);
        if (t_rank != 0)
            CHECK(ipc_moves() > before,
                  "a device scatter of 256 KiB blocks reached this process without IPC");
        check_direct(direct, "a device scatter of 256 KiB blocks");
        /* gather of 256 KiB device blocks to rank n - 1: step 1 tells
         * everyone about the device buffers, all hand on together */
        before = ipc_moves();
        direct = pvar_count("coll_sm_device_ipc");
        copies = mock_copies();
        copy_kernels = mock_copy_kernels();
        MPI_OK(MPI_Gather(sb.d, (int)blk, MPI_BYTE, rb.d, (int)blk, MPI_BYTE, n - 1,
                          MPI_COMM_WORLD));
        /* the root's own block with the others' */
        check_one_launch(copies, copy_kernels, t_rank == n - 1 ? n : 0, "a device gather");
        if (t_rank == n - 1) {
            check_gathered(&rb, blk, n, "gather");
            CHECK(ipc_moves() > before,
                  "a device gather of 256 KiB blocks reached the root without IPC");
        }
        check_direct(direct, "a device gather of 256 KiB blocks");
        /* ... and of 64-byte blocks, small enough for the slots: every
         * sender has device buffers, so all leave the slots for the same
         * device-to-device path (from coll_sm_device_blocks_min:
         * SM_EXPECT_BLOCKS_DIRECT, else as SM_EXPECT_DEVICE_DIRECT) */
        {
            const char *e = getenv("SM_EXPECT_BLOCKS_DIRECT");
            e = e != NULL ? e : getenv("SM_EXPECT_DEVICE_DIRECT");
            direct = pvar_count("coll_sm_device_ipc");
            copies = mock_copies();
            copy_kernels = mock_copy_kernels();
            MPI_OK(MPI_Gather(sb.d, 64, MPI_BYTE, rb.d, 64, MPI_BYTE, n - 1, MPI_COMM_WORLD));
            if (e != NULL && strcmp(e, "yes") == 0)
                check_one_launch(copies, copy_kernels, t_rank == n - 1 ? n : 0,
                                 "a small device gather");
            if (t_rank == n - 1)
                check_gathered(&rb, 64, n, "small gather");
            check_direct_as(direct, "a small device gather", e);
        }
        /* reduce of n * 256 KiB of ints to rank n - 1, and in place there */
        for (int inplace = 0; inplace < 2; inplace++) {
            size_t cnt = sb.len / sizeof(int);
            bool at_root = t_rank == n - 1;
            tbuf_t *in = inplace && at_root ? &rb : &sb;
            for (size_t i = 0; i < cnt; i++)
                ((int *)in->h)[i] = 7 * t_rank + (int)(i % 555);
            tb_push(in);
            direct = pvar_count("coll_sm_device_ipc");
            long launches = mock_launches(), copy_kernels = mock_copy_kernels();
            MPI_OK(MPI_Reduce(inplace && at_root ? MPI_IN_PLACE : sb.d, rb.d, (int)cnt, MPI_INT,
                              MPI_SUM, n - 1, MPI_COMM_WORLD));
            check_one_pass(launches, copy_kernels, "a device reduce");
            if (at_root) {
                tb_pull(&rb);
                for (size_t i = 0; i < cnt; i++)
                    CHECK(((int *)rb.h)[i] == 7 * n * (n - 1) / 2 + n * (int)(i % 555),
                          "device reduce%s [%zu] = %d", inplace ? " in place" : "", i,
                          ((int *)rb.h)[i]);
            }
            check_direct(direct, "a device reduce");
        }
        /* allreduce of n * 256 KiB of ints, and in place: x_r[i] = 3 r + i % 1000 */
        for (int inplace = 0; inplace < 2; inplace++) {
            size_t cnt = sb.len / sizeof(int);
            int *xr = (int *)rb.h;
            tbuf_t *in = inplace ? &rb : &sb;
            for (size_t i = 0; i < cnt; i++)
                ((int *)in->h)[i] = 3 * t_rank + (int)(i % 1000);
            tb_push(in);
            before = ipc_moves();
            direct = pvar_count("coll_sm_device_ipc");
            long launches = mock_launches(), copy_kernels = mock_copy_kernels();
            copies = mock_copies();
            MPI_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : sb.d, rb.d, (int)cnt, MPI_INT, MPI_SUM,
                                 MPI_COMM_WORLD));
            check_one_pass(launches, copy_kernels, "a device allreduce");
            /* not in place, size times n up to
             * coll_sm_device_allreduce_whole_max (16 MiB): everyone folds
             * the whole result, nothing to copy */
            bool whole = !inplace && cnt * sizeof(int) * (size_t)n <= ((size_t)16 << 20);
            check_one_launch(copies, copy_kernels, whole ? 0 : n - 1, "a device allreduce");
            tb_pull(&rb);
            for (size_t i = 0; i < cnt; i++)
                CHECK(xr[i] == 3 * n * (n - 1) / 2 + n * (int)(i % 1000),
                      "device allreduce%s [%zu] = %d", inplace ? " in place" : "", i, xr[i]);
            CHECK(ipc_moves() > before,
                  "a device allreduce of %zu ints%s reached this process without IPC", cnt,
                  inplace ? " in place" : "");
            check_direct(direct, "a device allreduce");
        }
        /* reduce_scatter_block of 256 KiB of ints per block, and in place
         * (each process's result lands on block 0 of its input, which
         * process 0 reads): x_q[i] = 5 q + i % 777 */
        for (int inplace = 0; inplace < 2; inplace++) {
            size_t cnt = blk / sizeof(int);
            tbuf_t *in = inplace ? &rb : &sb;
            for (size_t i = 0; i < cnt * (size_t)n; i++)
                ((int *)in->h)[i] = 5 * t_rank + (int)(i % 777);
            tb_push(in);
            direct = pvar_count("coll_sm_device_ipc");
            long launches = mock_launches(), copy_kernels = mock_copy_kernels();
            MPI_OK(MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : sb.d, rb.d, (int)cnt, MPI_INT,
                                            MPI_SUM, MPI_COMM_WORLD));
            check_one_pass(launches, copy_kernels, "a device reduce_scatter_block");
            tb_pull(&rb);
            for (size_t i = 0; i < cnt; i++) {
                int want = 5 * n * (n - 1) / 2 + n * (int)((t_rank * cnt + i) % 777);
                CHECK(((int *)rb.h)[i] == want, "device reduce_scatter_block%s [%zu] = %d, not %d",
                      inplace ? " in place" : "", i, ((int *)rb.h)[i], want);
            }
            check_direct(direct, "a device reduce_scatter_block");
        }
        /* reduce_scatter with blocks of different lengths (one empty) */
        {
            int *rc = malloc(sizeof(int) * (size_t)n), lo = 0;
            size_t cnt = blk / sizeof(int);
            for (int q = 0; q < n; q++) {
                rc[q] = q == 1 ? 0 : (int)cnt / 2 + q * 1024;
                if (q < t_rank)
                    lo += rc[q];
            }
            for (size_t i = 0; i < cnt * (size_t)n; i++)
                ((int *)sb.h)[i] = 5 * t_rank + (int)(i % 777);
            tb_push(&sb);
            direct = pvar_count("coll_sm_device_ipc");
            MPI_OK(MPI_Reduce_scatter(sb.d, rb.d, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            tb_pull(&rb);
            for (int i = 0; i < rc[t_rank]; i++) {
                int want = 5 * n * (n - 1) / 2 + n * ((lo + i) % 777);
                CHECK(((int *)rb.h)[i] == want, "device reduce_scatter [%d] = %d, not %d", i,
                      ((int *)rb.h)[i], want);
            }
            check_direct(direct, "a device reduce_scatter");
            free(rc);
        }
        /* small reductions of device buffers everywhere, fewer elements
         * than processes too: device to device as well
         * (coll_sm_device_ipc_reduce_min; SM_EXPECT_SMALL_DIRECT, else
         * as SM_EXPECT_DEVICE_DIRECT) */
        const char *small = getenv("SM_EXPECT_SMALL_DIRECT");
        if (small == NULL)
            small = getenv("SM_EXPECT_DEVICE_DIRECT");
        static const int small_counts[] = { 1, 3, 250, 4000 };
        char what[96];
        for (int k = 0; k < 4; k++) {
            int cnt = small_counts[k];
            for (int inplace = 0; inplace < 2; inplace++) {
                tbuf_t *in = inplace ? &rb : &sb;
                for (int i = 0; i < cnt; i++)
                    ((int *)in->h)[i] = 11 * t_rank + i % 13;
                tb_push(in);
                direct = pvar_count("coll_sm_device_ipc");
                long launches = mock_launches(), copy_kernels = mock_copy_kernels();
                long copies = mock_copies();
                MPI_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : sb.d, rb.d, cnt, MPI_INT, MPI_SUM,
                                     MPI_COMM_WORLD));
                snprintf(what, sizeof(what), "a device allreduce of %d ints%s", cnt,
                         inplace ? " in place" : "");
                check_by_one(launches, copies, copy_kernels, small, cnt * sizeof(int), what);
                tb_pull(&rb);
                for (int i = 0; i < cnt; i++)
                    CHECK(((int *)rb.h)[i] == 11 * n * (n - 1) / 2 + n * (i % 13),
                          "small device allreduce of %d%s [%d] = %d", cnt,
                          inplace ? " in place" : "", i, ((int *)rb.h)[i]);
                check_direct_as(direct, what, small);
            }
        }
        for (int k = 0; k < 2; k++) {
            int cnt = small_counts[k];
            for (int inplace = 0; inplace < 2; inplace++) {
                tbuf_t *in = inplace ? &rb : &sb;
                for (int i = 0; i < cnt * n; i++)
                    ((int *)in->h)[i] = 5 * t_rank + i % 17;
                tb_push(in);
                direct = pvar_count("coll_sm_device_ipc");
                MPI_OK(MPI_Reduce_scatter_block(inplace ? MPI_IN_PLACE : sb.d, rb.d, cnt, MPI_INT,
                                                MPI_SUM, MPI_COMM_WORLD));
                tb_pull(&rb);
                for (int i = 0; i < cnt; i++) {
                    int want = 5 * n * (n - 1) / 2 + n * ((t_rank * cnt + i) % 17);
                    CHECK(((int *)rb.h)[i] == want,
                          "small device reduce_scatter_block of %d%s [%d] = %d, not %d", cnt,
                          inplace ? " in place" : "", i, ((int *)rb.h)[i], want);
                }
                snprintf(what, sizeof(what), "a device reduce_scatter_block of %d ints%s", cnt,
                         inplace ? " in place" : "");
                check_direct_as(direct, what, small);
            }
        }
        /* small reduces to the last process (nobody has left: every
         * non-root has device buffers), in place there too */
        for (int k = 0; k < 2; k++) {
            int cnt = small_counts[k];
            for (int inplace = 0; inplace < 2; inplace++) {
                bool at_root = t_rank == n - 1, ip = inplace && at_root;
                tbuf_t *in = ip ? &rb : &sb;
                for (int i = 0; i < cnt; i++)
                    ((int *)in->h)[i] = 3 * t_rank + i % 7;
                tb_push(in);
                direct = pvar_count("coll_sm_device_ipc");
                MPI_OK(MPI_Reduce(ip ? MPI_IN_PLACE : sb.d, rb.d, cnt, MPI_INT, MPI_SUM, n - 1,
                                  MPI_COMM_WORLD));
                if (at_root) {
                    tb_pull(&rb);
                    for (int i = 0; i < cnt; i++)
                        CHECK(((int *)rb.h)[i] == 3 * n * (n - 1) / 2 + n * (i % 7),
                              "small device reduce of %d%s [%d] = %d", cnt,
                              inplace ? " in place" : "", i, ((int *)rb.h)[i]);
                }
                snprintf(what, sizeof(what), "a device reduce of %d ints%s", cnt,
                         inplace ? " in place" : "");
                check_direct_as(direct, what, small);
            }
        }
        /* small allgather and alltoall (8-byte blocks) of contiguous device
         * buffers, and in place: right, and on the mock driver in two
         * copies (one out to the slot or host scratch, one in), not one
         * per block */
        for (int inplace = 0; inplace < 2; inplace++) {
            for (int op = 0; op < 2; op++) {
                const int b8 = 8;
                for (int i = 0; i < b8 * n; i++) {
                    sb.h[i] = (char)(t_rank * 13 + i);
                    rb.h[i] = (char)(t_rank * 13 + i);   /* in place: the input */
                }
                tb_push(&sb);
                tb_push(&rb);
                long copies = mock_copies();
                const char *name = op ? "alltoall" : "allgather";
                if (op)
                    MPI_OK(MPI_Alltoall(inplace ? MPI_IN_PLACE : sb.d, b8, MPI_BYTE, rb.d, b8,
                                        MPI_BYTE, MPI_COMM_WORLD));
                else
                    MPI_OK(MPI_Allgather(inplace ? MPI_IN_PLACE : (char *)sb.d + t_rank * b8, b8,
                                         MPI_BYTE, rb.d, b8, MPI_BYTE, MPI_COMM_WORLD));
                if (copies >= 0)
                    CHECK(mock_copies() - copies <= 2,
                          "a small device %s%s took %ld copies, not 2", name,
                          inplace ? " in place" : "", mock_copies() - copies);
                tb_pull(&rb);
                /* allgather: block j is j's block j; alltoall: j's block me */
                for (int j = 0; j < n; j++)
                    for (int i = 0; i < b8; i++) {
                        int src = (op ? t_rank : j) * b8 + i;
                        CHECK(rb.h[j * b8 + i] == (char)(j * 13 + src),
                              "small device %s%s block %d [%d]", name,
                              inplace ? " in place" : "", j, i);
                    }
            }
        }
        tb_free(&sb);
        tb_free(&rb);
        MPI_T_finalize();
    }
    t_types_fini();
    if (t_rank == 0)
        printf("sm_ops: passed at np %d\n", t_size);
    MPI_OK(MPI_Finalize());
    return 0;
}
