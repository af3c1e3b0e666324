/*
 * Every RMA operation under every synchronisation, on windows of every
 * creation flavor: Put, Get, Accumulate (SUM, PROD, MAX, MIN, BXOR,
 * REPLACE), Get_accumulate (SUM, NO_OP, REPLACE), Fetch_and_op (SUM,
 * NO_OP), Compare_and_swap (matching and not), Rput, Rget, Raccumulate and
 * Rget_accumulate; under fence (plain and with assertions), post/start/
 * complete/wait and the same with Win_test, lock exclusive and shared,
 * lock_all with flush, with flush_local (and NOCHECK), and with flush_all +
 * Win_sync + barrier read inside the epoch.  Each rank targets the next
 * (itself at np 1); the target's window and the origin's result buffer are
 * checked exactly against the op applied to known values.
 * RMA_OPS_FLAVOR=create|allocate|allocate_shared|dynamic runs one flavor.
 */
#include "rma_test.h"

enum kind { PUT, GET, ACC, GACC, FOP, CAS, RPUT, RGET, RACC, RGACC };

static const struct rma_op {
    const char *name;
    enum kind kind;
    MPI_Op op;
    int n; /* elements touched (single-element calls: one per element) */
} ops[] = {
    { "put", PUT, MPI_REPLACE, RMA_N },        { "get", GET, MPI_NO_OP, RMA_N },
    { "acc_sum", ACC, MPI_SUM, RMA_N },        { "acc_prod", ACC, MPI_PROD, RMA_N },
    { "acc_max", ACC, MPI_MAX, RMA_N },        { "acc_min", ACC, MPI_MIN, RMA_N },
    { "acc_bxor", ACC, MPI_BXOR, RMA_N },      { "acc_replace", ACC, MPI_REPLACE, RMA_N },
    { "get_acc_sum", GACC, MPI_SUM, RMA_N },   { "get_acc_no_op", GACC, MPI_NO_OP, RMA_N },
    { "get_acc_replace", GACC, MPI_REPLACE, RMA_N },
    { "fetch_and_op_sum", FOP, MPI_SUM, 4 },   { "fetch_and_op_no_op", FOP, MPI_NO_OP, 4 },
    { "compare_and_swap", CAS, MPI_NO_OP, 4 }, { "rput", RPUT, MPI_REPLACE, RMA_N },
    { "rget", RGET, MPI_NO_OP, RMA_N },        { "raccumulate_sum", RACC, MPI_SUM, RMA_N },
    { "rget_accumulate_sum", RGACC, MPI_SUM, RMA_N },
};
#define NOPS ((int)(sizeof(ops) / sizeof(ops[0])))

enum sync { FENCE, FENCE_ASSERT, PSCW, PSCW_TEST, LOCK_EXCL, LOCK_SHARED, ALL_FLUSH,
            ALL_FLUSH_LOCAL, ALL_SYNC, NSYNCS };
static const char *const sync_names[] = { "fence", "fence_assert", "pscw", "pscw_test",
                                          "lock_exclusive", "lock_shared", "lock_all_flush",
                                          "lock_all_flush_local", "lock_all_win_sync" };

static int base_val(int r, int i) { return r * 1000 + i + 1; }
static int origin_val(int r, int i) { return (r + 1) * 3 + i; }

static int apply(MPI_Op op, int old, int x)
{
    if (op == MPI_SUM) return old + x;
    if (op == MPI_PROD) return old * x;
    if (op == MPI_MAX) return old > x ? old : x;
    if (op == MPI_MIN) return old < x ? old : x;
    if (op == MPI_BXOR) return old ^ x;
    if (op == MPI_REPLACE) return x;
    return old; /* MPI_NO_OP */
}

static bool is_request(enum kind k) { return k >= RPUT; }
static bool fetches(enum kind k)
{
    return k == GET || k == GACC || k == FOP || k == CAS || k == RGET || k == RGACC;
}

/* What element i of a target holds after the op by src (window) and what
 * the origin gets back (fetching ops: the old value). */
static int expect_win(const struct rma_op *o, int me, int src, int i)
{
    int old = base_val(me, i);
    if (i >= o->n || o->kind == GET || o->kind == RGET)
        return old;
    if (o->kind == CAS)
        return i % 2 == 0 ? origin_val(src, i) : old; /* even i: compare matches */
    if (o->kind == PUT || o->kind == RPUT)
        return origin_val(src, i);
    return apply(o->op, old, origin_val(src, i));
}

static void issue(const rma_win_t *w, const struct rma_op *o, int t, const int *src, int *res)
{
    MPI_Win win = w->win;
    MPI_Aint d = rma_disp(w, t, 0);
    MPI_Request req = MPI_REQUEST_NULL;
    switch (o->kind) {
    case PUT: MPI_OK(MPI_Put(src, o->n, MPI_INT, t, d, o->n, MPI_INT, win)); break;
    case GET: MPI_OK(MPI_Get(res, o->n, MPI_INT, t, d, o->n, MPI_INT, win)); break;
    case ACC: MPI_OK(MPI_Accumulate(src, o->n, MPI_INT, t, d, o->n, MPI_INT, o->op, win)); break;
    case GACC:
        MPI_OK(MPI_Get_accumulate(src, o->n, MPI_INT, res, o->n, MPI_INT, t, d, o->n, MPI_INT,
                                  o->op, win));
        break;
    case FOP:
        for (int i = 0; i < o->n; i++)
            MPI_OK(MPI_Fetch_and_op(&src[i], &res[i], MPI_INT, t, rma_disp(w, t, i), o->op, win));
        break;
    case CAS:
        for (int i = 0; i < o->n; i++) {
            static int cmp[RMA_N];
            cmp[i] = base_val(t, i) + i % 2; /* odd i: no match */
            MPI_OK(MPI_Compare_and_swap(&src[i], &cmp[i], &res[i], MPI_INT, t, rma_disp(w, t, i),
                                        win));
        }
        break;
    case RPUT: MPI_OK(MPI_Rput(src, o->n, MPI_INT, t, d, o->n, MPI_INT, win, &req)); break;
    case RGET: MPI_OK(MPI_Rget(res, o->n, MPI_INT, t, d, o->n, MPI_INT, win, &req)); break;
    case RACC:
        MPI_OK(MPI_Raccumulate(src, o->n, MPI_INT, t, d, o->n, MPI_INT, o->op, win, &req));
        break;
    case RGACC:
        MPI_OK(MPI_Rget_accumulate(src, o->n, MPI_INT, res, o->n, MPI_INT, t, d, o->n, MPI_INT,
                                   o->op, win, &req));
        break;
    }
    if (req != MPI_REQUEST_NULL)
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

static void group_of(int r, MPI_Group *g)
{
    MPI_Group world;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_incl(world, 1, &r, g));
    MPI_OK(MPI_Group_free(&world));
}

static void sync_begin(enum sync s, MPI_Win win, int t, int src)
{
    MPI_Group gt, gs;
    switch (s) {
    case FENCE: MPI_OK(MPI_Win_fence(0, win)); break;
    case FENCE_ASSERT: MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win)); break;
    case PSCW:
    case PSCW_TEST:
        group_of(t, &gt);
        group_of(src, &gs);
        MPI_OK(MPI_Win_post(gs, 0, win));
        MPI_OK(MPI_Win_start(gt, 0, win));
        MPI_OK(MPI_Group_free(&gt));
        MPI_OK(MPI_Group_free(&gs));
        break;
    case LOCK_EXCL: MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win)); break;
    case LOCK_SHARED: MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win)); break;
    case ALL_FLUSH:
    case ALL_SYNC: MPI_OK(MPI_Win_lock_all(0, win)); break;
    case ALL_FLUSH_LOCAL: MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win)); break;
    default: break;
    }
}

static void sync_end(enum sync s, MPI_Win win, int t)
{
    int flag = 0;
    switch (s) {
    case FENCE: MPI_OK(MPI_Win_fence(0, win)); break;
    case FENCE_ASSERT: MPI_OK(MPI_Win_fence(MPI_MODE_NOSTORE | MPI_MODE_NOSUCCEED, win)); break;
    case PSCW:
        MPI_OK(MPI_Win_complete(win));
        MPI_OK(MPI_Win_wait(win));
        break;
    case PSCW_TEST:
        MPI_OK(MPI_Win_complete(win));
        while (!flag)
            MPI_OK(MPI_Win_test(win, &flag));
        break;
    case LOCK_EXCL:
    case LOCK_SHARED: MPI_OK(MPI_Win_unlock(t, win)); break;
    case ALL_FLUSH:
        MPI_OK(MPI_Win_flush(t, win));
        MPI_OK(MPI_Win_unlock_all(win));
        break;
    case ALL_FLUSH_LOCAL:
        MPI_OK(MPI_Win_flush_local(t, win));
        MPI_OK(MPI_Win_flush_local_all(win));
        MPI_OK(MPI_Win_unlock_all(win));
        break;
    case ALL_SYNC: MPI_OK(MPI_Win_flush_all(win)); break; /* unlock_all after the read */
    default: break;
    }
}

/* One op under one sync; the number of wrong elements seen here. */
static int one_case(rma_win_t *w, const struct rma_op *o, enum sync s)
{
    int t = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    int src[RMA_N], res[RMA_N], win[RMA_N], bad = 0;
    for (int i = 0; i < RMA_N; i++) {
        src[i] = origin_val(t_rank, i);
        res[i] = -1;
    }
    rma_win_fill(w, base_val);
    sync_begin(s, w->win, t, from);
    issue(w, o, t, src, res);
    sync_end(s, w->win, t);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (s == ALL_SYNC) { /* read inside the epoch, after Win_sync */
        MPI_OK(MPI_Win_sync(w->win));
        memcpy(win, w->base, sizeof(win));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Win_unlock_all(w->win));
    } else {
        rma_win_read(w, win);
    }
    for (int i = 0; i < RMA_N; i++) {
        int want = expect_win(o, t_rank, from, i);
        if (win[i] != want && bad++ == 0)
            FAIL("%s %s %s: window[%d] = %d, want %d", rma_flavor_names[w->flavor],
                 sync_names[s], o->name, i, win[i], want);
        if (fetches(o->kind) && i < o->n && res[i] != base_val(t, i) && bad++ == 0)
            FAIL("%s %s %s: result[%d] = %d, want %d", rma_flavor_names[w->flavor],
                 sync_names[s], o->name, i, res[i], base_val(t, i));
    }
    return bad;
}

static void one_flavor(enum rma_flavor f)
{
    rma_win_t w;
    int cases = 0, bad = 0;
    rma_win_open(&w, f);
    for (int s = 0; s < NSYNCS; s++) {
        for (int k = 0; k < NOPS; k++) {
            bool active = s <= PSCW_TEST;
            if (active && is_request(ops[k].kind))
                continue; /* request-based ops: passive target only (MPI-4.1 12.3.5) */
            cases++;
            bad += one_case(&w, &ops[k], (enum sync)s) != 0;
        }
    }
    rma_win_close(&w);
    if (t_rank == 0)
        printf("%-16s %d cases, %d wrong on rank 0\n", rma_flavor_names[f], cases, bad);
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    const char *only = getenv("RMA_OPS_FLAVOR");
    for (int f = 0; f < RMA_NFLAVORS; f++)
        if (only == NULL || strcmp(only, rma_flavor_names[f]) == 0)
            one_flavor((enum rma_flavor)f);
    return check_mpi_finalize("rma_ops");
}
