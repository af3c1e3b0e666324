/*
 * The tuned component's data-movement algorithms on MPI_COMM_WORLD:
 * Barrier, Bcast, Gather, Scatter, Allgather, Alltoall (blocking: tuned
 * serves only those), each algorithm forced by a test/tests.conf variant
 * (tuned_test.h), against exact expected data:
 *   layouts: MPI_INT; a vector type with holes (which must stay untouched);
 *   and mixed, where even ranks describe the data as vectors and odd ranks
 *   as twice as many ints (equal signatures), so that algorithms that split
 *   or pack messages must agree on bytes whatever the datatypes;
 *   counts 0, 2, 2018 (2 x a prime) and ~1 MiB per process; roots 0, n-1
 *   and n/2; MPI_IN_PLACE; with COLLTEST_DEVICE=1 every buffer in fake
 *   device memory.
 */
#include "tuned_test.h"

#include <time.h>
#include <unistd.h>

enum { L_INT, L_VEC, L_MIX, L_COUNT };
static const char *const layout_names[] = { "int", "vector", "mixed" };

/* One side of a message of w ints (w even): its type and count. */
typedef struct side {
    const tdt_t *t;
    long n;
} side_t;

/* The side of process r: s_or_r 0 for the send side, 1 for the receive
 * side (mixed: even ranks send vectors and receive ints, odd ones the
 * opposite). */
static side_t side(int layout, long w, int r, int s_or_r)
{
    int vec = layout == L_VEC || (layout == L_MIX && ((r & 1) ^ s_or_r) == 0);
    return vec ? (side_t){ &t_types[T_VEC], w / 2 } : (side_t){ &t_types[T_INT], w };
}

static size_t side_bytes(side_t s)
{
    return (size_t)s.n * s.t->ext;
}

/* Data of src (ints [first, first + w) of its stream) in buf; holes untouched. */
static void expect(side_t s, const char *buf, int src, long first_elem, int it)
{
    char want[64];
    for (long i = 0; i < s.n; i++) {
        gen_elem(s.t, want, src, first_elem + i, it);
        CHECK_ELEM(s.t, buf + i * s.t->ext, want, 1, first_elem + i);
    }
}

static void fill(side_t s, char *buf, int src, long first_elem, int it)
{
    for (long i = 0; i < s.n; i++)
        gen_elem(s.t, buf + i * s.t->ext, src, first_elem + i, it);
}

/* ------------------------------------------------------------ barrier */

/* CLOCK_MONOTONIC: one clock for every process of the node (MPI_Wtime
 * need not be global). */
/* The last rank enters 20 ms late; nobody may leave before it entered. */
static void test_barrier(void)
{
    snprintf(t_current, sizeof(t_current), "barrier");
    for (int it = 0; it < 3; it++) {
        double enter = 0, late_enter = 0;
        if (t_rank == t_size - 1 && it == 1) {
            struct timespec ts = { 0, 20 * 1000 * 1000 };
            nanosleep(&ts, NULL);
        }
        enter = t_now();
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        double leave = t_now();
        /* the late rank's entry time, by point-to-point messages */
        if (t_rank == t_size - 1) {
            for (int i = 0; i < t_size - 1; i++)
                MPI_OK(MPI_Send(&enter, 1, MPI_DOUBLE, i, 77, MPI_COMM_WORLD));
            late_enter = enter;
        } else {
            MPI_OK(MPI_Recv(&late_enter, 1, MPI_DOUBLE, t_size - 1, 77, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
        }
        CHECK(leave >= late_enter, "barrier: left at %.6f before the last rank entered at %.6f",
              leave, late_enter);
    }
}

/* ------------------------------------------------------------ bcast */

static void test_bcast(int layout, long w, int root)
{
    side_t me = side(layout, w, t_rank, t_rank == root ? 0 : 1);
    tbuf_t b;
    tb_alloc(&b, side_bytes(me));
    snprintf(t_current, sizeof(t_current), "bcast %s %ld ints root %d", layout_names[layout], w,
             root);
    for (int it = 0; it < 2; it++) {
        if (t_rank == root)
            fill(me, b.h, root, 0, it);
        else
            t_poison(b.h, b.len);
        tb_push(&b);
        MPI_OK(MPI_Bcast(b.d, (int)me.n, me.t->dt, root, MPI_COMM_WORLD));
        tb_pull(&b);
        expect(me, b.h, root, 0, it);
    }
    tb_free(&b);
}

/* ------------------------------------------------------------ gather, scatter */

static void test_gather(int layout, long w, int root, int inplace)
{
    int is_root = t_rank == root, ip = inplace && is_root;
    side_t s = side(layout, w, t_rank, 0), r = side(layout, w, t_rank, 1);
    tbuf_t sb, rb;
    tb_alloc(&sb, side_bytes(s));
    tb_alloc(&rb, is_root ? side_bytes(r) * (size_t)t_size : 0);
    snprintf(t_current, sizeof(t_current), "gather %s %ld ints root %d%s", layout_names[layout], w,
             root, inplace ? " in place" : "");
    for (int it = 0; it < 2; it++) {
        fill(s, sb.h, t_rank, 0, it);
        tb_push(&sb);
        if (is_root) {
            t_poison(rb.h, rb.len);
            if (ip)
                fill(r, rb.h + (size_t)root * side_bytes(r), root, 0, it);
            tb_push(&rb);
        }
        MPI_OK(MPI_Gather(ip ? MPI_IN_PLACE : sb.d, (int)s.n, s.t->dt, rb.d, (int)r.n, r.t->dt,
                          root, MPI_COMM_WORLD));
        if (is_root) {
            tb_pull(&rb);
            for (int i = 0; i < t_size; i++)
                expect(r, rb.h + (size_t)i * side_bytes(r), i, 0, it);
        }
    }
    tb_free(&sb);
    tb_free(&rb);
}

static void test_scatter(int layout, long w, int root, int inplace)
{
    int is_root = t_rank == root, ip = inplace && is_root;
    side_t s = side(layout, w, t_rank, 0), r = side(layout, w, t_rank, 1);
    tbuf_t sb, rb;
    tb_alloc(&sb, is_root ? side_bytes(s) * (size_t)t_size : 0);
    tb_alloc(&rb, side_bytes(r));
    snprintf(t_current, sizeof(t_current), "scatter %s %ld ints root %d%s", layout_names[layout],
             w, root, inplace ? " in place" : "");
    for (int it = 0; it < 2; it++) {
        if (is_root) {   /* block i: the stream of rank i */
            for (int i = 0; i < t_size; i++)
                fill(s, sb.h + (size_t)i * side_bytes(s), i, 0, it);
            tb_push(&sb);
        }
        t_poison(rb.h, rb.len);
        tb_push(&rb);
        MPI_OK(MPI_Scatter(sb.d, (int)s.n, s.t->dt, ip ? MPI_IN_PLACE : rb.d, (int)r.n, r.t->dt,
                           root, MPI_COMM_WORLD));
        if (ip) {
            tb_pull(&sb);
            for (int i = 0; i < t_size; i++)
                expect(s, sb.h + (size_t)i * side_bytes(s), i, 0, it);
        } else {
            tb_pull(&rb);
            expect(r, rb.h, t_rank, 0, it);
        }
    }
    tb_free(&sb);
    tb_free(&rb);
}

/* ------------------------------------------------------------ allgather, alltoall */

static void test_allgather(int layout, long w, int inplace)
{
    side_t s = side(layout, w, t_rank, 0), r = side(layout, w, t_rank, 1);
    size_t rblk = side_bytes(r);
    tbuf_t sb, rb;
    tb_alloc(&sb, side_bytes(s));
    tb_alloc(&rb, rblk * (size_t)t_size);
    snprintf(t_current, sizeof(t_current), "allgather %s %ld ints%s", layout_names[layout], w,
             inplace ? " in place" : "");
    for (int it = 0; it < 2; it++) {
        fill(s, sb.h, t_rank, 0, it);
        tb_push(&sb);
        t_poison(rb.h, rb.len);
        if (inplace)
            fill(r, rb.h + (size_t)t_rank * rblk, t_rank, 0, it);
        tb_push(&rb);
        MPI_OK(MPI_Allgather(inplace ? MPI_IN_PLACE : sb.d, (int)s.n, s.t->dt, rb.d, (int)r.n,
                             r.t->dt, MPI_COMM_WORLD));
        tb_pull(&rb);
        for (int i = 0; i < t_size; i++)
            expect(r, rb.h + (size_t)i * rblk, i, 0, it);
    }
    tb_free(&sb);
    tb_free(&rb);
}

/* Block j sent by rank i: elements [j * n, (j+1) * n) of i's stream. */
static void test_alltoall(int layout, long w, int inplace)
{
    side_t s = side(layout, w, t_rank, 0), r = side(layout, w, t_rank, 1);
    if (inplace)
        s = r;   /* MPI_IN_PLACE: the receive blocks are sent */
    size_t sblk = side_bytes(s), rblk = side_bytes(r);
    tbuf_t sb, rb;
    tb_alloc(&sb, sblk * (size_t)t_size);
    tb_alloc(&rb, rblk * (size_t)t_size);
    snprintf(t_current, sizeof(t_current), "alltoall %s %ld ints%s", layout_names[layout], w,
             inplace ? " in place" : "");
    for (int it = 0; it < 2; it++) {
        char *src = inplace ? rb.h : sb.h;
        size_t blk = inplace ? rblk : sblk;
        side_t ss = inplace ? r : s;
        if (!inplace)
            t_poison(rb.h, rb.len);
        for (int j = 0; j < t_size; j++)
            fill(ss, src + (size_t)j * blk, t_rank, (long)j * ss.n, it);
        tb_push(&sb);
        tb_push(&rb);
        MPI_OK(MPI_Alltoall(inplace ? MPI_IN_PLACE : sb.d, (int)s.n, s.t->dt, rb.d, (int)r.n,
                            r.t->dt, MPI_COMM_WORLD));
        tb_pull(&rb);
        /* with mixed layouts, the sender's block j starts at element j * its n
         * of its own type: the same stream offset in ints */
        for (int i = 0; i < t_size; i++) {
            side_t si = inplace ? side(layout, w, i, 1) : side(layout, w, i, 0);
            long first_int = (long)t_rank * si.n * (si.t == &t_types[T_VEC] ? 2 : 1);
            expect(r, rb.h + (size_t)i * rblk, i, r.t == &t_types[T_VEC] ? first_int / 2 : first_int,
                   it);
        }
    }
    tb_free(&sb);
    tb_free(&rb);
}

/* ------------------------------------------------------------ driver */

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    t_types_init();
    t_mode = MODE_BLOCKING;
    t_banner("tuned_move");
    int roots[3], nroots = t_roots(roots);
    /* ints per process: 0, 2, 2 x 1009, and ~1 MiB in all */
    long big = (1L << 20) / (long)sizeof(int);
    long counts[] = { 0, 2, 2018, big };
    if (t_checks("barrier"))
        test_barrier();
    for (int l = 0; l < L_COUNT; l++) {
        for (int ci = 0; ci < 4; ci++) {
            long w = counts[ci];
            bool large = ci == 3;
            if (large && l != L_MIX)
                continue;   /* the large count once, with the hardest layout */
            long wb = large ? (big / t_size) & ~1L : w;   /* per-block share of 1 MiB */
            for (int ri = 0; ri < nroots; ri++) {
                if (t_checks("bcast"))
                    test_bcast(l, w, roots[ri]);
                for (int ip = 0; ip < 2; ip++) {
                    if (t_checks("gather"))
                        test_gather(l, wb, roots[ri], ip);
                    if (t_checks("scatter"))
                        test_scatter(l, wb, roots[ri], ip);
                }
                if (large)
                    break;
            }
            for (int ip = 0; ip < 2; ip++) {
                if (t_checks("allgather"))
                    test_allgather(l, wb, ip);
                if (t_checks("alltoall"))
                    test_alltoall(l, wb, ip);
            }
        }
    }
    if (t_rank == 0)
        printf("tuned_move: passed at np %d\n", t_size);
    t_types_fini();
    MPI_OK(MPI_Finalize());
    return 0;
}
