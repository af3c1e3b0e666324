/*
 * Data movement collectives on MPI_COMM_WORLD: Barrier, Bcast, Gather(v),
 * Scatter(v), Allgather(v), Alltoall(v,w), each blocking, nonblocking and
 * persistent; counts 0, 1, 1009 and ~1 MiB; roots 0 and n-1; MPI_IN_PLACE;
 * predefined, derived (vector with holes, which must stay untouched) and
 * mixed send / receive types of equal signature (2c MPI_INT = c vectors).
 */
#include "coll_test.h"

typedef struct side {
    const tdt_t *t;
    long n;
} side_t;

enum { P_INT, P_VEC, P_MIXED, P_COUNT };
static const char *const pair_names[] = { "int/int", "vector/vector", "2 int/vector" };

/* Send and receive sides of count c for a type pair. */
static void sides(int which, long c, side_t *s, side_t *r)
{
    *s = (side_t){ &t_types[which == P_VEC ? T_VEC : T_INT], which == P_MIXED ? 2 * c : c };
    *r = (side_t){ &t_types[which == P_INT ? T_INT : T_VEC], c };
}

/* Elements [0, n) of buf must be src's data; vector holes untouched. */
static void expect(const side_t *sd, const char *buf, long n, int src, int it)
{
    char want[64];
    for (long i = 0; i < n; i++) {
        gen_elem(sd->t, want, src, i, it);
        CHECK_ELEM(sd->t, buf + i * sd->t->ext, want, 1, i);
    }
}

/* An element-sized gap of poison must still be there. */
static void expect_gap(const char *p, size_t len)
{
    for (size_t i = 0; i < len / sizeof(unsigned); i++)
        CHECK(((const unsigned *)p)[i] == T_HOLE, "%s [%s]: gap overwritten", t_current,
              t_mode_names[t_mode]);
}

/* Variable counts: rank i's block has cnt(c, i) elements. */
static long cnt(long c, int i)
{
    return c ? c + i % 3 : 0;
}

/* ------------------------------------------------------------ barrier, bcast */

static void test_barrier(void)
{
    snprintf(t_current, sizeof(t_current), "barrier");
    COLL_CASE((void)0, MPI_Barrier(MPI_COMM_WORLD), MPI_Ibarrier(MPI_COMM_WORLD, &req_),
              MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req_), (void)0);
}

static void test_bcast(int which, long c, int root)
{
    side_t s, r;
    sides(which, c, &s, &r);
    side_t me = t_rank == root ? s : r;
    tbuf_t b;
    tb_alloc(&b, (size_t)me.n * me.t->ext);
    snprintf(t_current, sizeof(t_current), "bcast %s count %ld root %d", pair_names[which], c,
             root);
    COLL_CASE(
        {
            if (t_rank == root)
                gen_fill(me.t, b.h, me.n, root, it_);
            else
                t_poison(b.h, b.len);
            tb_push(&b);
        },
        MPI_Bcast(b.d, (int)me.n, me.t->dt, root, MPI_COMM_WORLD),
        MPI_Ibcast(b.d, (int)me.n, me.t->dt, root, MPI_COMM_WORLD, &req_),
        MPI_Bcast_init(b.d, (int)me.n, me.t->dt, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
        {
            tb_pull(&b);
            expect(&me, b.h, me.n, root, it_);
        });
    tb_free(&b);
}

/* ------------------------------------------------------------ gather, scatter */

static void test_gather(int which, long c, int root, int inplace)
{
    side_t s, r;
    sides(which, c, &s, &r);
    int is_root = t_rank == root, ip = inplace && is_root;
    tbuf_t sb, rb;
    size_t rblk = (size_t)r.n * r.t->ext;
    tb_alloc(&sb, (size_t)s.n * s.t->ext);
    tb_alloc(&rb, is_root ? rblk * (size_t)t_size : 0);
    snprintf(t_current, sizeof(t_current), "gather %s count %ld root %d%s", pair_names[which], c,
             root, inplace ? " in place" : "");
    const void *sp = ip ? MPI_IN_PLACE : sb.d;
    COLL_CASE(
        {
            gen_fill(s.t, sb.h, s.n, t_rank, it_);
            tb_push(&sb);
            if (is_root) {
                t_poison(rb.h, rb.len);
                if (ip)
                    gen_fill(r.t, rb.h + (size_t)root * rblk, r.n, root, it_);
                tb_push(&rb);
            }
        },
        MPI_Gather(sp, (int)s.n, s.t->dt, rb.d, (int)r.n, r.t->dt, root, MPI_COMM_WORLD),
        MPI_Igather(sp, (int)s.n, s.t->dt, rb.d, (int)r.n, r.t->dt, root, MPI_COMM_WORLD, &req_),
        MPI_Gather_init(sp, (int)s.n, s.t->dt, rb.d, (int)r.n, r.t->dt, root, MPI_COMM_WORLD,
                        MPI_INFO_NULL, &req_),
        {
            if (is_root) {
                tb_pull(&rb);
                for (int i = 0; i < t_size; i++)
                    expect(&r, rb.h + (size_t)i * rblk, r.n, i, it_);
            }
        });
    tb_free(&sb);
    tb_free(&rb);
}

static void test_gatherv(int which, long c, int root, int inplace)
{
    side_t s, r;
    sides(which, cnt(c, t_rank), &s, &r);
    int is_root = t_rank == root, ip = inplace && is_root, n = t_size;
    int *counts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
    long total = 0;
    /* blocks in reverse rank order with one element of gap after each */
    for (int i = n - 1; i >= 0; i--) {
        counts[i] = (int)cnt(c, i);
        displs[i] = (int)total;
        total += counts[i] + 1;
    }
    tbuf_t sb, rb;
    size_t ext = r.t->ext;
    tb_alloc(&sb, (size_t)s.n * s.t->ext);
    tb_alloc(&rb, is_root ? (size_t)total * ext : 0);
    snprintf(t_current, sizeof(t_current), "gatherv %s count %ld root %d%s", pair_names[which], c,
             root, inplace ? " in place" : "");
    const void *sp = ip ? MPI_IN_PLACE : sb.d;
    COLL_CASE(
        {
            gen_fill(s.t, sb.h, s.n, t_rank, it_);
            tb_push(&sb);
            if (is_root) {
                t_poison(rb.h, rb.len);
                if (ip)
                    gen_fill(r.t, rb.h + (size_t)displs[root] * ext, counts[root], root, it_);
                tb_push(&rb);
            }
        },
        MPI_Gatherv(sp, (int)s.n, s.t->dt, rb.d, counts, displs, r.t->dt, root, MPI_COMM_WORLD),
        MPI_Igatherv(sp, (int)s.n, s.t->dt, rb.d, counts, displs, r.t->dt, root, MPI_COMM_WORLD,
                     &req_),
        MPI_Gatherv_init(sp, (int)s.n, s.t->dt, rb.d, counts, displs, r.t->dt, root,
                         MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
        {
            if (is_root) {
                tb_pull(&rb);
                for (int i = 0; i < n; i++) {
                    char *blk = rb.h + (size_t)displs[i] * ext;
                    expect(&r, blk, counts[i], i, it_);
                    expect_gap(blk + (size_t)counts[i] * ext, ext);
                }
            }
        });
    tb_free(&sb);
    tb_free(&rb);
    free(counts);
    free(displs);
}

static void test_scatter(int which, long c, int root, int inplace)
{
    side_t s, r;
    sides(which, c, &s, &r);
    int is_root = t_rank == root, ip = inplace && is_root;
    size_t sblk = (size_t)s.n * s.t->ext;
    tbuf_t sb, rb;
    tb_alloc(&sb, is_root ? sblk * (size_t)t_size : 0);
    tb_alloc(&rb, (size_t)r.n * r.t->ext);
    snprintf(t_current, sizeof(t_current), "scatter %s count %ld root %d%s", pair_names[which], c,
             root, inplace ? " in place" : "");
    void *rp = ip ? MPI_IN_PLACE : rb.d;
    COLL_CASE(
        {
            if (is_root) {
                for (int i = 0; i < t_size; i++)
                    gen_fill(s.t, sb.h + (size_t)i * sblk, s.n, i, it_);
                tb_push(&sb);
            }
            t_poison(rb.h, rb.len);
            tb_push(&rb);
        },
        MPI_Scatter(sb.d, (int)s.n, s.t->dt, rp, (int)r.n, r.t->dt, root, MPI_COMM_WORLD),
        MPI_Iscatter(sb.d, (int)s.n, s.t->dt, rp, (int)r.n, r.t->dt, root, MPI_COMM_WORLD, &req_),
        MPI_Scatter_init(sb.d, (int)s.n, s.t->dt, rp, (int)r.n, r.t->dt, root, MPI_COMM_WORLD,
                         MPI_INFO_NULL, &req_),
        {
            if (ip) {
                tb_pull(&sb);
                side_t ss = s;
                expect(&ss, sb.h + (size_t)root * sblk, s.n, root, it_);
            } else {
                tb_pull(&rb);
                expect(&r, rb.h, r.n, t_rank, it_);
            }
        });
    tb_free(&sb);
    tb_free(&rb);
}

static void test_scatterv(int which, long c, int root, int inplace)
{
    side_t s, r;
    sides(which, cnt(c, t_rank), &s, &r);
    int is_root = t_rank == root, ip = inplace && is_root, n = t_size;
    int *counts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
    long total = 0;
    const tdt_t *st = &t_types[which == P_VEC ? T_VEC : T_INT];
    for (int i = n - 1; i >= 0; i--) {
        counts[i] = (int)(which == P_MIXED ? 2 * cnt(c, i) : cnt(c, i));
        displs[i] = (int)total;
        total += counts[i] + 1;
    }
    tbuf_t sb, rb;
    tb_alloc(&sb, is_root ? (size_t)total * st->ext : 0);
    tb_alloc(&rb, (size_t)r.n * r.t->ext);
    snprintf(t_current, sizeof(t_current), "scatterv %s count %ld root %d%s", pair_names[which],
             c, root, inplace ? " in place" : "");
    void *rp = ip ? MPI_IN_PLACE : rb.d;
    COLL_CASE(
        {
            if (is_root) {
                t_poison(sb.h, sb.len);
                for (int i = 0; i < n; i++)
                    gen_fill(st, sb.h + (size_t)displs[i] * st->ext, counts[i], i, it_);
                tb_push(&sb);
            }
            t_poison(rb.h, rb.len);
            tb_push(&rb);
        },
        MPI_Scatterv(sb.d, counts, displs, st->dt, rp, (int)r.n, r.t->dt, root, MPI_COMM_WORLD),
        MPI_Iscatterv(sb.d, counts, displs, st->dt, rp, (int)r.n, r.t->dt, root, MPI_COMM_WORLD,
                      &req_),
        MPI_Scatterv_init(sb.d, counts, displs, st->dt, rp, (int)r.n, r.t->dt, root,
                          MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
        {
            if (!ip) {
                tb_pull(&rb);
                expect(&r, rb.h, r.n, t_rank, it_);
            }
        });
    tb_free(&sb);
    tb_free(&rb);
    free(counts);
    free(displs);
}

/* ------------------------------------------------------------ allgather */

static void test_allgather(int which, long c, int inplace)
{
    side_t s, r;
    sides(which, c, &s, &r);
    size_t rblk = (size_t)r.n * r.t->ext;
    tbuf_t sb, rb;
    tb_alloc(&sb, (size_t)s.n * s.t->ext);
    tb_alloc(&rb, rblk * (size_t)t_size);
    snprintf(t_current, sizeof(t_current), "allgather %s count %ld%s", pair_names[which], c,
             inplace ? " in place" : "");
    const void *sp = inplace ? MPI_IN_PLACE : sb.d;
    COLL_CASE(
        {
            gen_fill(s.t, sb.h, s.n, t_rank, it_);
            tb_push(&sb);
            t_poison(rb.h, rb.len);
            if (inplace)
                gen_fill(r.t, rb.h + (size_t)t_rank * rblk, r.n, t_rank, it_);
            tb_push(&rb);
        },
        MPI_Allgather(sp, (int)s.n, s.t->dt, rb.d, (int)r.n, r.t->dt, MPI_COMM_WORLD),
        MPI_Iallgather(sp, (int)s.n, s.t->dt, rb.d, (int)r.n, r.t->dt, MPI_COMM_WORLD, &req_),
        MPI_Allgather_init(sp, (int)s.n, s.t->dt, rb.d, (int)r.n, r.t->dt, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &req_),
        {
            tb_pull(&rb);
            for (int i = 0; i < t_size; i++)
                expect(&r, rb.h + (size_t)i * rblk, r.n, i, it_);
        });
    tb_free(&sb);
    tb_free(&rb);
}

static void test_allgatherv(int which, long c, int inplace)
{
    side_t s, r;
    sides(which, cnt(c, t_rank), &s, &r);
    int n = t_size;
    int *counts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
    long total = 0;
    for (int i = n - 1; i >= 0; i--) {
        counts[i] = (int)cnt(c, i);
        displs[i] = (int)total;
        total += counts[i] + 1;
    }
    size_t ext = r.t->ext;
    tbuf_t sb, rb;
    tb_alloc(&sb, (size_t)s.n * s.t->ext);
    tb_alloc(&rb, (size_t)total * ext);
    snprintf(t_current, sizeof(t_current), "allgatherv %s count %ld%s", pair_names[which], c,
             inplace ? " in place" : "");
    const void *sp = inplace ? MPI_IN_PLACE : sb.d;
    COLL_CASE(
        {
            gen_fill(s.t, sb.h, s.n, t_rank, it_);
            tb_push(&sb);
            t_poison(rb.h, rb.len);
            if (inplace)
                gen_fill(r.t, rb.h + (size_t)displs[t_rank] * ext, counts[t_rank], t_rank, it_);
            tb_push(&rb);
        },
        MPI_Allgatherv(sp, (int)s.n, s.t->dt, rb.d, counts, displs, r.t->dt, MPI_COMM_WORLD),
        MPI_Iallgatherv(sp, (int)s.n, s.t->dt, rb.d, counts, displs, r.t->dt, MPI_COMM_WORLD,
                        &req_),
        MPI_Allgatherv_init(sp, (int)s.n, s.t->dt, rb.d, counts, displs, r.t->dt,
                            MPI_COMM_WORLD, MPI_INFO_NULL, &req_),
        {
            tb_pull(&rb);
            for (int i = 0; i < n; i++) {
                char *blk = rb.h + (size_t)displs[i] * ext;
                expect(&r, blk, counts[i], i, it_);
                expect_gap(blk + (size_t)counts[i] * ext, ext);
            }
        });
    tb_free(&sb);
    tb_free(&rb);
    free(counts);
    free(displs);
}

/* ------------------------------------------------------------ alltoall */

/* Data that rank `from` sends rank `to`. */
static int pair_id(int from, int to)
{
    return from * 1000 + to;
}

static void test_alltoall(int which, long c, int inplace)
{
    side_t s, r;
    sides(which, c, &s, &r);
    if (inplace)
        s = r;   /* the send blocks are the receive blocks */
    int n = t_size;
    size_t sblk = (size_t)s.n * s.t->ext, rblk = (size_t)r.n * r.t->ext;
    tbuf_t sb, rb;
    tb_alloc(&sb, inplace ? 0 : sblk * (size_t)n);
    tb_alloc(&rb, rblk * (size_t)n);
    snprintf(t_current, sizeof(t_current), "alltoall %s count %ld%s", pair_names[which], c,
             inplace ? " in place" : "");
    const void *sp = inplace ? MPI_IN_PLACE : sb.d;
    COLL_CASE(
        {
            t_poison(rb.h, rb.len);
            for (int j = 0; j < n; j++)
                gen_fill(s.t, (inplace ? rb.h : sb.h) + (size_t)j * sblk, s.n,
                         pair_id(t_rank, j), it_);
            tb_push(&sb);
            tb_push(&rb);
        },
        MPI_Alltoall(sp, (int)s.n, s.t->dt, rb.d, (int)r.n, r.t->dt, MPI_COMM_WORLD),
        MPI_Ialltoall(sp, (int)s.n, s.t->dt, rb.d, (int)r.n, r.t->dt, MPI_COMM_WORLD, &req_),
        MPI_Alltoall_init(sp, (int)s.n, s.t->dt, rb.d, (int)r.n, r.t->dt, MPI_COMM_WORLD,
                          MPI_INFO_NULL, &req_),
        {
            tb_pull(&rb);
            for (int j = 0; j < n; j++)
                expect(&r, rb.h + (size_t)j * rblk, r.n, pair_id(j, t_rank), it_);
        });
    tb_free(&sb);
    tb_free(&rb);
}

/* Alltoallv: rank i sends rank j acnt(i, j) elements (the receive side's
 * elements; twice as many ints for the mixed pair).  In place, what i sends
 * j is what i receives from j: the counts must be symmetric. */
static int t_sym;

static long acnt(long c, int i, int j)
{
    return c ? c + (t_sym ? i + j : i + 2 * j) % 3 : 0;
}

static void test_alltoallv(int which, long c, int inplace)
{
    int n = t_size, me = t_rank;
    const tdt_t *st = &t_types[which == P_VEC ? T_VEC : T_INT];
    const tdt_t *rt = &t_types[which == P_INT ? T_INT : T_VEC];
    long mul = which == P_MIXED ? 2 : 1;
    t_sym = inplace;
    if (inplace) {
        st = rt;
        mul = 1;
    }
    int *sc = malloc(sizeof(int) * (size_t)n), *sd = malloc(sizeof(int) * (size_t)n);
    int *rc = malloc(sizeof(int) * (size_t)n), *rd = malloc(sizeof(int) * (size_t)n);
    long stot = 0, rtot = 0;
    for (int j = n - 1; j >= 0; j--) {
        sc[j] = (int)(acnt(c, me, j) * mul);
        sd[j] = (int)stot;
        stot += sc[j] + 1;
        rc[j] = (int)acnt(c, j, me);
        rd[j] = (int)rtot;
        rtot += rc[j] + 1;
    }
    if (inplace)   /* in place: the send counts are the receive counts */
        for (int j = 0; j < n; j++)
            sc[j] = rc[j], sd[j] = rd[j];
    tbuf_t sb, rb;
    tb_alloc(&sb, inplace ? 0 : (size_t)stot * st->ext);
    tb_alloc(&rb, (size_t)rtot * rt->ext);
    snprintf(t_current, sizeof(t_current), "alltoallv %s count %ld%s", pair_names[which], c,
             inplace ? " in place" : "");
    const void *sp = inplace ? MPI_IN_PLACE : sb.d;
    side_t r = { rt, 0 };
    COLL_CASE(
        {
            t_poison(rb.h, rb.len);
            for (int j = 0; j < n; j++)
                gen_fill(st, (inplace ? rb.h : sb.h) + (size_t)sd[j] * st->ext, sc[j],
                         pair_id(me, j), it_);
            tb_push(&sb);
            tb_push(&rb);
        },
        MPI_Alltoallv(sp, sc, sd, st->dt, rb.d, rc, rd, rt->dt, MPI_COMM_WORLD),
        MPI_Ialltoallv(sp, sc, sd, st->dt, rb.d, rc, rd, rt->dt, MPI_COMM_WORLD, &req_),
        MPI_Alltoallv_init(sp, sc, sd, st->dt, rb.d, rc, rd, rt->dt, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &req_),
        {
            tb_pull(&rb);
            for (int j = 0; j < n; j++) {
                char *blk = rb.h + (size_t)rd[j] * rt->ext;
                expect(&r, blk, rc[j], pair_id(j, me), it_);
                expect_gap(blk + (size_t)rc[j] * rt->ext, rt->ext);
            }
        });
    tb_free(&sb);
    tb_free(&rb);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

/* Alltoallw: the pair (i, j) uses ints when (i + j) is even, vectors on
 * both sides when it is odd and ints -> vectors every third pair; byte
 * displacements in reverse order with gaps. */
static void w_types(int i, int j, long c, const tdt_t **st, long *sn, const tdt_t **rt, long *rn)
{
    long k = acnt(c, i, j);
    int v = (i + j) % 2, mixed = (i + j) % 3 == 2;
    *rt = &t_types[v || mixed ? T_VEC : T_INT];
    *rn = k;
    *st = mixed ? &t_types[T_INT] : *rt;
    *sn = mixed ? 2 * k : k;
}

static void expect_w(const tdt_t *t, const char *buf, long n, int src, int it)
{
    side_t r = { t, n };
    expect(&r, buf, n, src, it);
}

static void test_alltoallw(long c, int inplace)
{
    int n = t_size, me = t_rank;
    int *sc = malloc(sizeof(int) * (size_t)n), *sd = malloc(sizeof(int) * (size_t)n);
    int *rc = malloc(sizeof(int) * (size_t)n), *rd = malloc(sizeof(int) * (size_t)n);
    MPI_Datatype *sts = malloc(sizeof(MPI_Datatype) * (size_t)n);
    MPI_Datatype *rts = malloc(sizeof(MPI_Datatype) * (size_t)n);
    const tdt_t **stt = malloc(sizeof(tdt_t *) * (size_t)n);
    const tdt_t **rtt = malloc(sizeof(tdt_t *) * (size_t)n);
    long stot = 0, rtot = 0;
    t_sym = inplace;
    for (int j = n - 1; j >= 0; j--) {
        long sn, rn, dummy;
        const tdt_t *x;
        w_types(me, j, c, &stt[j], &sn, &x, &dummy);
        w_types(j, me, c, &x, &dummy, &rtt[j], &rn);
        if (inplace) {   /* in place: the receive side describes both */
            stt[j] = rtt[j];
            sn = rn;
        }
        sc[j] = (int)sn;
        sts[j] = stt[j]->dt;
        sd[j] = (int)stot;
        stot += (long)(sn + 1) * (long)stt[j]->ext;
        rc[j] = (int)rn;
        rts[j] = rtt[j]->dt;
        rd[j] = (int)rtot;
        rtot += (long)(rn + 1) * (long)rtt[j]->ext;
    }
    if (inplace)
        for (int j = 0; j < n; j++)
            sd[j] = rd[j];
    tbuf_t sb, rb;
    tb_alloc(&sb, inplace ? 0 : (size_t)stot);
    tb_alloc(&rb, (size_t)rtot);
    snprintf(t_current, sizeof(t_current), "alltoallw count %ld%s", c, inplace ? " in place" : "");
    const void *sp = inplace ? MPI_IN_PLACE : sb.d;
    COLL_CASE(
        {
            t_poison(rb.h, rb.len);
            for (int j = 0; j < n; j++)
                gen_fill(stt[j], (inplace ? rb.h : sb.h) + sd[j], sc[j], pair_id(me, j), it_);
            tb_push(&sb);
            tb_push(&rb);
        },
        MPI_Alltoallw(sp, sc, sd, sts, rb.d, rc, rd, rts, MPI_COMM_WORLD),
        MPI_Ialltoallw(sp, sc, sd, sts, rb.d, rc, rd, rts, MPI_COMM_WORLD, &req_),
        MPI_Alltoallw_init(sp, sc, sd, sts, rb.d, rc, rd, rts, MPI_COMM_WORLD, MPI_INFO_NULL,
                           &req_),
        {
            tb_pull(&rb);
            for (int j = 0; j < n; j++) {
                expect_w(rtt[j], rb.h + rd[j], rc[j], pair_id(j, me), it_);
                expect_gap(rb.h + rd[j] + (size_t)rc[j] * rtt[j]->ext, rtt[j]->ext);
            }
        });
    tb_free(&sb);
    tb_free(&rb);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sts);
    free(rts);
    free(stt);
    free(rtt);
}

/* ------------------------------------------------------------ driver */

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    t_types_init();
    long large = (1L << 20) / (long)sizeof(t_vec_t);   /* 1 MiB of vectors per process */
    long counts[] = { 0, 1, 1009, large };
    int ncounts = t_quick ? 3 : 4;   /* persistent forms: without the largest */
    int roots[] = { 0, t_size - 1 };
    int nroots = t_size > 1 ? 2 : 1;
    for (t_mode = 0; t_mode < MODE_COUNT; t_mode++) {
        test_barrier();
        for (int ci = 0; ci < (t_mode == MODE_PERSISTENT ? 3 : ncounts); ci++) {
            long c = counts[ci];
            int big = c == large;
            /* the largest size: 1 MiB of ints in all (plain ints only) */
            long bc = big ? (1L << 18) : c, blk = big ? (1L << 18) / t_size : c;
            for (int p = 0; p < (big ? 1 : P_COUNT); p++) {
                for (int ri = 0; ri < nroots; ri++) {
                    int root = roots[ri];
                    test_bcast(p, bc, root);
                    for (int ip = 0; ip < 2; ip++) {
                        test_gather(p, blk, root, ip);
                        test_gatherv(p, blk, root, ip);
                        test_scatter(p, blk, root, ip);
                        test_scatterv(p, blk, root, ip);
                    }
                }
                for (int ip = 0; ip < 2; ip++) {
                    test_allgather(p, blk, ip);
                    test_allgatherv(p, blk, ip);
                    test_alltoall(p, blk, ip);
                    test_alltoallv(p, blk, ip);
                }
            }
            if (big && !t_quick)   /* 1 MiB of vectors, sent as ints */
                test_alltoall(P_MIXED, c / t_size, 0);
            for (int ip = 0; ip < 2; ip++)
                test_alltoallw(big ? c / t_size : c, ip);
        }
        if (t_rank == 0)
            printf("coll_move: %s forms passed at np %d%s\n", t_mode_names[t_mode], t_size,
                   t_device ? " (device buffers)" : "");
    }
    t_types_fini();
    MPI_OK(MPI_Finalize());
    return 0;
}
