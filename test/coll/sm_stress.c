/*
 * coll sm: many collectives back to back (the sequence numbers and the two
 * sets of buffers: every operation follows every other, with rotating
 * roots and sizes on both sides of a buffer), mixed with point-to-point
 * traffic, on several communicators at once; then communicators made and
 * freed in a loop: a segment appears at a communicator's first collective
 * (not at MPI_Comm_dup), its name is unlinked at once, and it goes with
 * MPI_Comm_free or is reused by the next communicator of the same members
 * (MPI_T counters tell).  With waits that sleep at once
 * (coll_sm_spin_count and coll_sm_yield_count 0), the mixed sequence
 * sleeps, and its sleeps fence every process by membarrier exactly where
 * coll sm publishes without a fence (coll_sm_membarrier).  Prints the time
 * of a barrier and a small allreduce (no limit: shared machines vary).
 */
#include "coll_test.h"
#include "sm_util.h"

#include <linux/membarrier.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
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
    switch (it % 9) {
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
        if (it % 9 == 2)
            MPI_OK(MPI_Allreduce(buf, out, (int)c, MPI_INT, MPI_SUM, comm));
        else
            MPI_OK(MPI_Reduce(buf, out, (int)c, MPI_INT, MPI_SUM, root, comm));
        for (long i = 0; (it % 9 == 2 || cr == root) && i < c; i++) {
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
        if ((it / 9) % 2 == 0) {
            MPI_OK(MPI_Allgather(buf, (int)cb, MPI_INT, out, (int)cb, MPI_INT, comm));
        } else {   /* the same layout by allgatherv */
            int *counts = malloc(sizeof(int) * (size_t)cn), *displs = malloc(sizeof(int) * (size_t)cn);
            CHECK(counts && displs, "out of memory");
            for (int r = 0; r < cn; r++) {
                counts[r] = (int)cb;
                displs[r] = (int)(r * cb);
            }
            MPI_OK(MPI_Allgatherv(buf, (int)cb, MPI_INT, out, counts, displs, MPI_INT, comm));
            free(counts);
            free(displs);
        }
        for (int r = 0; r < cn; r++)
            for (long i = 0; i < cb; i++)
                CHECK(out[r * cb + i] == val(r, i, it), "allgather(v) step %d", it);
        break;
    }
    case 7:
    case 8: {   /* gatherv, scatterv: blocks of c / cn + (r % 2) elements */
        int *counts = malloc(sizeof(int) * (size_t)cn), *displs = malloc(sizeof(int) * (size_t)cn);
        CHECK(counts && displs, "out of memory");
        int at = 0;
        for (int r = 0; r < cn; r++) {
            counts[r] = (int)(c / cn) + r % 2;
            displs[r] = at;
            at += counts[r];
        }
        if (it % 9 == 7) {
            for (int i = 0; i < counts[cr]; i++)
                buf[i] = val(cr, i, it);
            MPI_OK(MPI_Gatherv(buf, counts[cr], MPI_INT, out, counts, displs, MPI_INT, root,
                               comm));
            for (int r = 0; cr == root && r < cn; r++)
                for (int i = 0; i < counts[r]; i++)
                    CHECK(out[displs[r] + i] == val(r, i, it), "gatherv step %d block %d", it, r);
        } else {
            for (int r = 0; cr == root && r < cn; r++)
                for (int i = 0; i < counts[r]; i++)
                    buf[displs[r] + i] = val(r, i, it);
            MPI_OK(MPI_Scatterv(buf, counts, displs, MPI_INT, out, counts[cr], MPI_INT, root,
                                comm));
            for (int i = 0; i < counts[cr]; i++)
                CHECK(out[i] == val(cr, i, it), "scatterv step %d element %d", it, i);
        }
        free(counts);
        free(displs);
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

static int cvar_int(const char *name)
{
    int v = -1;
    cvar_read(name, &v);
    return v;
}

/* After the mixed sequence (sleeps0 / fences0: the counters before it),
 * where waits sleep at once: some process slept, and the sleeps ran
 * membarrier where flags are published without a fence (coll_sm_membarrier
 * 2, 1 where the node is not oversubscribed, -1 (the default) where it
 * is, on a kernel that has
 * global expedited membarriers), and never elsewhere. */
static void check_sleeps(unsigned long long sleeps0, unsigned long long fences0)
{
    if (n < 2 || cvar_int("coll_sm_spin_count") != 0 || cvar_int("coll_sm_yield_count") != 0)
        return;
    const int mode = cvar_int("coll_sm_membarrier");
    long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    const bool kernel = q > 0 && (q & MEMBARRIER_CMD_GLOBAL_EXPEDITED);
    const bool over = node_oversubscribed(n);
    const bool want = kernel && (mode >= 2 || (mode == 1 && !over) || (mode < 0 && over));
    unsigned long long mine[2] = { pvar_count("coll_sm_sleeps") - sleeps0,
                                   pvar_count("coll_sm_sleep_fences") - fences0 },
                       all[2];
    MPI_OK(MPI_Allreduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(all[0] > 0, "np %d: no coll sm wait slept with spin and yield counts 0", n);
    CHECK(want ? all[1] > 0 && all[1] <= all[0] : all[1] == 0,
          "np %d, coll_sm_membarrier %d, membarrier %s, %s: %llu of %llu sleeps fenced by "
          "membarrier, expected %s",
          n, mode, kernel ? "available" : "absent",
          node_oversubscribed(n) ? "oversubscribed" : "not oversubscribed", all[1], all[0],
          want ? "some" : "none");
    if (me == 0)
        printf("sm_stress: np %d: %llu sleeps, %llu fenced by membarrier\n", n, all[0], all[1]);
}

/* Communicators made and freed: a segment appears at a communicator's
 * first collective (not at MPI_Comm_dup), its name is unlinked at once,
 * and it goes with MPI_Comm_free or stays in the reuse cache
 * (coll_sm_segment_cache), from which the next communicator of the same
 * processes in the same order continues on it. */
static void churn(void)
{
    const int cache = cvar_int("coll_sm_segment_cache");
    const unsigned long long reused0 = pvar_count("coll_sm_segments_reused");
    sm_maps_t base = sm_maps(-1);
    for (int i = 0; i < 40; i++) {
        MPI_Comm d, s;
        int before = sm_maps(-1).segments;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        /* (a freed communicator's segment may go meanwhile) */
        CHECK(sm_maps(-1).segments <= before, "a segment appeared at MPI_Comm_dup");
        before = sm_maps(-1).segments;
        int x = me, y = 0;
        MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, d));
        CHECK(y == n * (n - 1) / 2, "allreduce on a new communicator: %d", y);
        MPI_OK(MPI_Barrier(d));   /* a small allreduce of 2 may go to tuned; a barrier is sm's */
        sm_maps_t now_ = sm_maps(-1);
        CHECK(n < 2 || (cache == 0 ? now_.segments == before + 1 : now_.segments <= before + 1),
              "after the first sm collective: %d segments, expected %s%d", now_.segments,
              cache ? "at most " : "", before + 1);
        CHECK(now_.linked == 0, "a segment name is still in /dev/shm");
        MPI_OK(MPI_Comm_split(d, me < n / 2, n - me, &s));
        MPI_OK(MPI_Barrier(s));
        MPI_OK(MPI_Bcast(&x, 1, MPI_INT, 0, s));
        CHECK(x == (me < n / 2 ? n / 2 - 1 : n - 1), "bcast on a split communicator: %d", x);
        if (i % 2)
            MPI_OK(MPI_Comm_free(&d));
        MPI_OK(MPI_Comm_free(&s));
        if (!(i % 2))
            MPI_OK(MPI_Comm_free(&d));
        /* a freed communicator may live on until its last messages are
         * out; then its segment goes with it or into the cache: they must
         * not pile up */
        CHECK(sm_maps(-1).segments <= base.segments + 2 + cache,
              "%d segments pile up after MPI_Comm_free", sm_maps(-1).segments - base.segments);
    }
    int flag;
    for (int i = 0; i < 100000 && sm_maps(-1).segments > base.segments + cache; i++)
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(sm_maps(-1).segments <= base.segments + cache,
          "segments left after MPI_Comm_free: %d (cache %d)", sm_maps(-1).segments - base.segments,
          cache);
    /* every dup after the first continues on the last one's segment when
     * it was freed last or the cache holds two */
    unsigned long long reused = pvar_count("coll_sm_segments_reused") - reused0;
    if (n >= 2 && cache >= 2)
        CHECK(reused >= 39, "only %llu segments reused in 40 rounds (cache %d)", reused, cache);
    if (cache == 0)
        CHECK(reused == 0, "%llu segments reused without a cache", reused);

    /* An offer that not every process can take: everyone caches a dup of
     * the world's segment, then the second half makes and frees
     * communicators of its own until that entry left its cache; the next
     * dup's rank 0 offers it, the second half answers no, and a fresh
     * segment must follow. */
    if (n >= 4 && cache >= 1) {
        MPI_Comm d, h;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        MPI_OK(MPI_Barrier(d));
        MPI_OK(MPI_Comm_free(&d));
        for (int k = 0; k < cache; k++) {
            /* a different order each time: a different membership */
            MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, me >= n / 2 ? 0 : MPI_UNDEFINED,
                                  k % 2 ? me : -me, &h));
            if (h != MPI_COMM_NULL) {
                int hn;
                MPI_OK(MPI_Comm_size(h, &hn));
                MPI_OK(MPI_Barrier(h));
                MPI_OK(MPI_Comm_free(&h));
                if (hn < 2)
                    break;
            }
        }
        unsigned long long c0 = pvar_count("coll_sm_segments_created");
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        int x = me + 1, y = 0;
        MPI_OK(MPI_Barrier(d));
        MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, d));
        CHECK(y == n * (n + 1) / 2, "allreduce after a refused offer: %d", y);
        if (cache <= 2)   /* the second half's two orders evicted it for sure */
            CHECK(pvar_count("coll_sm_segments_created") == c0 + 1,
                  "no fresh segment after a refused offer");
        MPI_OK(MPI_Comm_free(&d));
    }
}

/* Whether /dev/shm has over 2 GB free: there a segment of 8 processes
 * gets its full layout (not so in sm_small_shm.sh's 48 MiB). */
static bool shm_roomy(void)
{
    struct statvfs v;
    return statvfs("/dev/shm", &v) == 0 && (double)v.f_bavail * v.f_frsize > 2e9;
}

/* Bytes /dev/shm has free. */
static double shm_free(void)
{
    struct statvfs v;
    return statvfs("/dev/shm", &v) == 0 ? (double)v.f_bavail * v.f_frsize : 0;
}

/* A fresh segment's buffers are faulted in at the communicator's first
 * collective that does not fit the slots, once (coll_sm_buffers_populated):
 * a communicator of small operations alone never pays for them.  Where
 * /dev/shm is roomy, its bulk slots too (coll_sm_bulk_populated, by each
 * process before it first writes one), and a communicator of small
 * operations takes less than a MiB of /dev/shm (its first 16 slots; all
 * 256 slots and the bulk slots of 4 processes took 6 MiB).  (A segment
 * from the cache keeps what its last communicator did.) */
static void populate_lazily(void)
{
    if (n < 2)
        return;
    const unsigned long long c0 = pvar_count("coll_sm_segments_created"),
                             p0 = pvar_count("coll_sm_buffers_populated"),
                             r0 = pvar_count("coll_sm_segments_reserved"),
                             b0 = pvar_count("coll_sm_bulk_populated");
    const bool small = getenv("RAIL_COLL_SM_SMALL_MAX") == NULL;
    const double free0 = shm_free();
    MPI_Comm d;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, &d));
    int x = me, y = 0;
    for (int i = 0; i < 20; i++) {
        MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, d));
        CHECK(y == n * (n - 1) / 2, "allreduce %d on a new communicator: %d", i, y);
        MPI_OK(MPI_Bcast(&y, 1, MPI_INT, i % n, d));
    }
    const unsigned long long fresh = pvar_count("coll_sm_segments_created") - c0;
    CHECK(!small || pvar_count("coll_sm_buffers_populated") == p0,
          "small operations alone faulted the buffers in");
    /* its creator (d's rank 0) allocated the buffers up front only where
     * /dev/shm is tight (SM_EXPECT_RESERVED=1: sm_small_shm.sh); with 2 GiB
     * free, a segment of 8 processes is far from it */
    const char *er = getenv("SM_EXPECT_RESERVED");
    bool roomy = shm_roomy();
    if (me == n - 1 && fresh == 1 && (er || roomy)) {
        unsigned long long want = er ? strtoull(er, NULL, 10) : 0;
        unsigned long long r = pvar_count("coll_sm_segments_reserved") - r0;
        CHECK(r == want, "a fresh segment with its buffers allocated up front %llu times, "
              "expected %llu", r, want);
        CHECK(er || !small || free0 - shm_free() < 1024.0 * 1024,
              "a communicator of small operations took %.0f bytes of /dev/shm",
              free0 - shm_free());
    }
    const bool lazy = fresh == 1 && roomy && !er && small;
    CHECK(!lazy || pvar_count("coll_sm_bulk_populated") == b0,
          "operations of 4 bytes allocated the bulk slots");
    char blk[2048];
    int dme;
    MPI_OK(MPI_Comm_rank(d, &dme));
    for (int root = 0; root < n; root++) {
        memset(blk, dme == root ? 'a' + root : 0, sizeof(blk));
        MPI_OK(MPI_Bcast(blk, sizeof(blk), MPI_CHAR, root, d));
        CHECK(blk[0] == 'a' + root && blk[sizeof(blk) - 1] == 'a' + root,
              "bcast of 2 KiB from %d", root);
    }
    unsigned long long bulk = pvar_count("coll_sm_bulk_populated") - b0;
    CHECK(!lazy || bulk == 1, "bulk slots allocated %llu times by %d bcasts of 2 KiB, one from "
          "each process", bulk, n);
    enum { BIG = 64 * 1024 };
    int *a = malloc(BIG * sizeof(int)), *b = malloc(BIG * sizeof(int));
    CHECK(a && b, "out of memory");
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < BIG; i++)
            a[i] = me + i % 7 + k;
        MPI_OK(MPI_Allreduce(a, b, BIG, MPI_INT, MPI_SUM, d));
        for (int i = 0; i < BIG; i++)
            if (b[i] != n * (n - 1) / 2 + n * (i % 7 + k))
                CHECK(0, "allreduce of 256 KiB %d: [%d] = %d", k, i, b[i]);
    }
    unsigned long long got = pvar_count("coll_sm_buffers_populated") - p0;
    CHECK(got <= 1 && (fresh == 0 || got == 1),
          "%llu fresh segments, buffers faulted in %llu times", fresh, got);
    free(a);
    free(b);
    MPI_OK(MPI_Comm_free(&d));
}

/* A new communicator starts with coll_sm_small_slots_start slots per
 * process in use (16) and doubles them from its 256th small operation on
 * (coll_sm_slot_doublings): none in 200 bcasts, at least one (at most
 * six) by the 2100th where /dev/shm is roomy (a tight one may leave 16
 * slots in all); every value checked. */
static void slots_grow(void)
{
    if (n < 2 || getenv("RAIL_COLL_SM_SMALL_SLOTS") || getenv("RAIL_COLL_SM_OVERSUB_SMALL_SLOTS") ||
        getenv("RAIL_COLL_SM_SMALL_SLOTS_START") || getenv("RAIL_COLL_SM_SMALL_MAX"))
        return;
    /* a fresh segment: communicators kept until one did not continue a
     * cached one (the cache holds at most 4) */
    MPI_Comm keep[6], d = MPI_COMM_NULL;
    int nk = 0, x = 1, y;
    while (nk < 6) {
        const unsigned long long c0 = pvar_count("coll_sm_segments_created");
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, me, &d));
        MPI_OK(MPI_Bcast(&x, 1, MPI_INT, 0, d));
        if (pvar_count("coll_sm_segments_created") == c0 + 1)
            break;
        keep[nk++] = d;
        d = MPI_COMM_NULL;
    }
    CHECK(d != MPI_COMM_NULL, "no fresh segment in 6 new communicators");
    const unsigned long long d0 = pvar_count("coll_sm_slot_doublings");
    for (int i = 1; i < 2100; i++) {
        int v = me == i % n ? i * 3 + 1 : -1;
        MPI_OK(MPI_Bcast(&v, 1, MPI_INT, i % n, d));
        CHECK(v == i * 3 + 1, "bcast %d on a new communicator: %d", i, v);
        if (i == 199)
            CHECK(pvar_count("coll_sm_slot_doublings") == d0,
                  "slots doubled within a new communicator's first 200 operations");
    }
    MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, d));
    unsigned long long got = pvar_count("coll_sm_slot_doublings") - d0;
    CHECK((got >= 1 || !shm_roomy()) && got <= 6, "slots doubled %llu times in 2100 operations",
          got);
    MPI_OK(MPI_Comm_free(&d));
    while (nk > 0)
        MPI_OK(MPI_Comm_free(&keep[--nk]));
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

/* The cache holds at most coll_sm_segment_cache_bytes of /dev/shm (run
 * with 1 MiB): a communicator that used its buffers (an allreduce of 512
 * KiB: each process's buffers, 2 MiB with the defaults) holds more where
 * /dev/shm is roomy and is not kept, so the next communicator of the same
 * processes makes a fresh segment; one of small operations is kept, and
 * the next continues on it.  (The world rotated by one: an order no
 * communicator before had, whose segments may still be kept.) */
static void cache_bytes(void)
{
    unsigned long long cap = 0;
    cvar_read("coll_sm_segment_cache_bytes", &cap);
    if (n < 2 || cap > (1u << 20) || cvar_int("coll_sm_segment_cache") < 1 || !shm_roomy() ||
        getenv("RAIL_COLL_SM_BUFFERS") || getenv("RAIL_COLL_SM_CHUNK_SIZE"))
        return;
    const int cnt = 65536;
    double *in = malloc(cnt * sizeof(double)), *out = malloc(cnt * sizeof(double));
    CHECK(in && out, "out of memory");
    for (int i = 0; i < cnt; i++)
        in[i] = me + i;
    MPI_Comm a, b, c;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, (me + 1) % n, &a));
    MPI_OK(MPI_Allreduce(in, out, cnt, MPI_DOUBLE, MPI_SUM, a));
    CHECK(out[cnt - 1] == (double)n * (cnt - 1) + n * (n - 1) / 2.0, "allreduce of 512 KiB");
    MPI_OK(MPI_Comm_free(&a));
    unsigned long long made = pvar_count("coll_sm_segments_created"),
                       reused = pvar_count("coll_sm_segments_reused");
    int x = 1, y = 0;   /* (through the slots: a barrier of many may take the buffers) */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, (me + 1) % n, &b));
    MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, b));
    CHECK(pvar_count("coll_sm_segments_reused") == reused &&
              pvar_count("coll_sm_segments_created") == made + 1,
          "a segment whose buffers were used was kept with a cache of %llu bytes", cap);
    MPI_OK(MPI_Comm_free(&b));
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, (me + 1) % n, &c));
    MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c));
    CHECK(y == n, "allreduce on a communicator continuing a kept segment: %d", y);
    CHECK(pvar_count("coll_sm_segments_reused") == reused + 1,
          "a segment of small operations was not kept with a cache of %llu bytes", cap);
    MPI_OK(MPI_Comm_free(&c));
    free(in);
    free(out);
}

/* Six communicators of the same processes in six orders, made and freed
 * one after the other, leave at most six more segments mapped where
 * /dev/shm is roomy (each allocated where used), at most four where it is
 * small and each was allocated whole (SM_EXPECT_RESERVED=1,
 * sm_small_shm.sh): the btl sm segments and new communicators need the
 * room. */
static void cache_whole(void)
{
    const char *er = getenv("SM_EXPECT_RESERVED");
    bool whole = er && atoi(er) == 1;
    if (n < 4 || cvar_int("coll_sm_segment_cache") < 6 || !(whole || shm_roomy()))
        return;
    const int limit = whole ? 4 : 6;
    int before = sm_maps(-1).segments, x = 1, y = 0;
    for (int k = 1; k <= 6; k++) {
        /* rotations, then rotations of the reverse order: all differ */
        int key = k < n ? (me + k) % n : ((k - me) % n + n) % n;
        MPI_Comm c;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, key, &c));
        MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c));
        CHECK(y == n, "allreduce on communicator %d: %d", k, y);
        MPI_OK(MPI_Comm_free(&c));
    }
    int flag;
    for (int i = 0; i < 100000 && sm_maps(-1).segments > before + limit; i++)
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(sm_maps(-1).segments <= before + limit,
          "%d more segments mapped after six communicators were freed, expected at most %d "
          "(%s)", sm_maps(-1).segments - before, limit, whole ? "allocated whole" : "roomy");
}

int main(int argc, char **argv)
{
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    t_init(&argc, &argv);
    me = t_rank;
    n = t_size;
    const unsigned long long sleeps0 = pvar_count("coll_sm_sleeps"),
                             fences0 = pvar_count("coll_sm_sleep_fences");
    mixed_sequence(t_quick ? 20000 : 100000, t_quick ? 300 : 1200);
    check_sleeps(sleeps0, fences0);
    churn();
    cache_bytes();
    cache_whole();
    populate_lazily();
    slots_grow();
    timing();
    if (me == 0)
        printf("sm_stress: passed at np %d\n", n);
    MPI_OK(MPI_Finalize());
    MPI_T_finalize();
    return 0;
}
