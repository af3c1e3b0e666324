/*
 * coll sm: many collectives back to back (the sequence numbers and the two
 * sets of buffers: every operation follows every other, with rotating
 * roots and sizes on both sides of a buffer), mixed with point-to-point
 * traffic, on several communicators at once; then communicators made and
 * freed in a loop: a segment appears at a communicator's first collective
 * (not at MPI_Comm_dup), its name is unlinked at once, and it goes with
 * MPI_Comm_free.  Prints the time of a barrier and a small allreduce (no
 * limit: shared machines vary).
 */
#include "coll_test.h"
#include "sm_util.h"

#include <time.h>

static int me, n;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Value of element i at rank r in step it. */
static int val(int r, long i, int it)
{
    return gen_int(r, i, it);
}

/* One step of the mixed sequence on comm (rank cr of cn). */
static void step(MPI_Comm comm, int it, int *buf, int *out, long big)
{
    int cr, cn;
    MPI_OK(MPI_Comm_rank(comm, &cr));
    MPI_OK(MPI_Comm_size(comm, &cn));
    int root = it % cn;
    long c = it % 5 == 0 ? big : 1 + it % 7;
    switch (it % 7) {
    case 0:
        MPI_OK(MPI_Barrier(comm));
        break;
    case 1:
        for (long i = 0; i < c; i++)
            buf[i] = cr == root ? val(root, i, it) : -1;
        MPI_OK(MPI_Bcast(buf, (int)c, MPI_INT, root, comm));
        for (long i = 0; i < c; i++)
            CHECK(buf[i] == val(root, i, it), "bcast step %d element %ld: %d", it, i, buf[i]);
        break;
    case 2:
    case 3: {
        for (long i = 0; i < c; i++)
            buf[i] = val(cr, i, it);
        if (it % 7 == 2)
            MPI_OK(MPI_Allreduce(buf, out, (int)c, MPI_INT, MPI_SUM, comm));
        else
            MPI_OK(MPI_Reduce(buf, out, (int)c, MPI_INT, MPI_SUM, root, comm));
        for (long i = 0; (it % 7 == 2 || cr == root) && i < c; i++) {
            int want = 0;
            for (int r = 0; r < cn; r++)
                want += val(r, i, it);
            CHECK(out[i] == want, "reduction step %d element %ld: %d, expected %d", it, i, out[i],
                  want);
        }
        break;
    }
    case 4: {
        long cb = c / cn + 1;
        for (long i = 0; i < cb; i++)
            buf[i] = val(cr, i, it);
        MPI_OK(MPI_Allgather(buf, (int)cb, MPI_INT, out, (int)cb, MPI_INT, comm));
        for (int r = 0; r < cn; r++)
            for (long i = 0; i < cb; i++)
                CHECK(out[r * cb + i] == val(r, i, it), "allgather step %d", it);
        break;
    }
    case 5: {
        long cb = c / cn + 1;
        for (int r = 0; r < cn; r++)
            for (long i = 0; i < cb; i++)
                buf[r * cb + i] = val(cr * cn + r, i, it);
        MPI_OK(MPI_Alltoall(buf, (int)cb, MPI_INT, out, (int)cb, MPI_INT, comm));
        for (int r = 0; r < cn; r++)
            for (long i = 0; i < cb; i++)
                CHECK(out[r * cb + i] == val(r * cn + cr, i, it), "alltoall step %d", it);
        break;
    }
    case 6: {
        long cb = c / cn + 1;
        for (long i = 0; i < cb * cn; i++)
            buf[i] = val(cr, i, it);
        MPI_OK(MPI_Reduce_scatter_block(buf, out, (int)cb, MPI_INT, MPI_SUM, comm));
        for (long i = 0; i < cb; i++) {
            int want = 0;
            for (int r = 0; r < cn; r++)
                want += val(r, cr * cb + i, it);
            CHECK(out[i] == want, "reduce_scatter_block step %d element %ld: %d, expected %d", it,
                  i, out[i], want);
        }
        break;
    }
    }
}

/* A ring exchange between collectives. */
static void ring(MPI_Comm comm, int it)
{
    int cr, cn, got = -1, mine;
    MPI_OK(MPI_Comm_rank(comm, &cr));
    MPI_OK(MPI_Comm_size(comm, &cn));
    mine = val(cr, 0, it);
    MPI_OK(MPI_Sendrecv(&mine, 1, MPI_INT, (cr + 1) % cn, it % 100, &got, 1, MPI_INT,
                        (cr + cn - 1) % cn, it % 100, comm, MPI_STATUS_IGNORE));
    CHECK(got == val((cr + cn - 1) % cn, 0, it), "ring step %d", it);
}

static void mixed_sequence(long big, int iters)
{
    int *buf = malloc((size_t)(big + n) * 2 * sizeof(int));
    int *out = malloc((size_t)(big + n) * 2 * sizeof(int));
    CHECK(buf && out, "out of memory");
    MPI_Comm half, dup;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    for (int it = 0; it < iters; it++) {
        step(MPI_COMM_WORLD, it, buf, out, big);
        if (it % 3 == 0)
            ring(MPI_COMM_WORLD, it);
        step(half, it + 1, buf, out, big / 2);
        step(dup, it + 2, buf, out, 3);
        if (it % 7 == 0) {   /* a pending nonblocking send across collectives */
            MPI_Request r;
            int x = it, y = -1;
            MPI_OK(MPI_Isend(&x, 1, MPI_INT, (me + 1) % n, 999, MPI_COMM_WORLD, &r));
            MPI_OK(MPI_Barrier(dup));
            MPI_OK(MPI_Recv(&y, 1, MPI_INT, (me + n - 1) % n, 999, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            CHECK(y == it, "isend across a barrier: %d", y);
        }
    }
    MPI_OK(MPI_Comm_free(&half));
    MPI_OK(MPI_Comm_free(&dup));
    free(buf);
    free(out);
}

/* Communicators made and freed: segments follow them. */
static void churn(void)
{
    sm_maps_t base = sm_maps(-1);
    for (int i = 0; i < 40; i++) {
        MPI_Comm d, s;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        CHECK(sm_maps(-1).segments == base.segments, "a segment appeared at MPI_Comm_dup");
        int x = me, y = 0;
        MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, d));
        CHECK(y == n * (n - 1) / 2, "allreduce on a new communicator: %d", y);
        MPI_OK(MPI_Barrier(d));   /* a small allreduce of 2 may go to tuned; a barrier is sm's */
        sm_maps_t now_ = sm_maps(-1);
        CHECK(n < 2 || now_.segments == base.segments + 1,
              "after the first sm collective: %d segments, expected %d", now_.segments,
              base.segments + 1);
        CHECK(now_.linked == 0, "a segment name is still in /dev/shm");
        MPI_OK(MPI_Comm_split(d, me < n / 2, n - me, &s));
        MPI_OK(MPI_Barrier(s));
        MPI_OK(MPI_Bcast(&x, 1, MPI_INT, 0, s));
        if (i % 2)
            MPI_OK(MPI_Comm_free(&d));
        MPI_OK(MPI_Comm_free(&s));
        if (!(i % 2))
            MPI_OK(MPI_Comm_free(&d));
        /* a freed communicator may live on until its last messages are
         * out; then its segment goes with it: they must not pile up */
        CHECK(sm_maps(-1).segments <= base.segments + 2, "%d segments pile up after "
              "MPI_Comm_free", sm_maps(-1).segments - base.segments);
    }
    int flag;
    for (int i = 0; i < 100000 && sm_maps(-1).segments != base.segments; i++)
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(sm_maps(-1).segments == base.segments, "segments left after MPI_Comm_free: %d",
          sm_maps(-1).segments - base.segments);
}

static void timing(void)
{
    int x = 1, y;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = now();
    for (int i = 0; i < 2000; i++)
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    double t1 = now();
    for (int i = 0; i < 2000; i++)
        MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    double t2 = now();
    if (me == 0)
        printf("sm_stress: np %d: barrier %.2f us, allreduce 4 B %.2f us\n", n,
               (t1 - t0) / 2000 * 1e6, (t2 - t1) / 2000 * 1e6);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    me = t_rank;
    n = t_size;
    mixed_sequence(t_quick ? 20000 : 100000, t_quick ? 300 : 1200);
    churn();
    timing();
    if (me == 0)
        printf("sm_stress: passed at np %d\n", n);
    MPI_OK(MPI_Finalize());
    return 0;
}
