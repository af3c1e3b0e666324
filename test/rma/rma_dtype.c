/*
 * Derived datatypes on the origin and on the target of Put, Get,
 * Accumulate (SUM) and Get_accumulate (SUM): contiguous, vector (two
 * shapes), indexed and a struct of one basic type, every origin type with
 * every target type, alternately under fence and under lock_all + flush.
 * Each type lays 8 ints at known offsets; the target window and the
 * origin buffers are checked element by element.
 */
#include "rma_test.h"

#define WN 32 /* ints in the window and in the origin buffers */
#define NEL 8 /* ints each type carries */

typedef struct {
    const char *name;
    MPI_Datatype type;
    int off[NEL]; /* where the type's elements lie, in ints */
} layout_t;

static layout_t lay[5];
#define NLAY 5

static void make_layouts(void)
{
    int ib[4] = { 2, 1, 3, 2 }, id[4] = { 0, 3, 6, 12 };
    int sb[2] = { 3, 5 };
    MPI_Aint sd[2] = { 4 * sizeof(int), 20 * sizeof(int) };
    MPI_Datatype st[2] = { MPI_INT, MPI_INT };
    lay[0] = (layout_t){ "contig", MPI_DATATYPE_NULL, { 0, 1, 2, 3, 4, 5, 6, 7 } };
    MPI_OK(MPI_Type_contiguous(NEL, MPI_INT, &lay[0].type));
    lay[1] = (layout_t){ "vector8x1s2", MPI_DATATYPE_NULL, { 0, 2, 4, 6, 8, 10, 12, 14 } };
    MPI_OK(MPI_Type_vector(8, 1, 2, MPI_INT, &lay[1].type));
    lay[2] = (layout_t){ "vector4x2s3", MPI_DATATYPE_NULL, { 0, 1, 3, 4, 6, 7, 9, 10 } };
    MPI_OK(MPI_Type_vector(4, 2, 3, MPI_INT, &lay[2].type));
    lay[3] = (layout_t){ "indexed", MPI_DATATYPE_NULL, { 0, 1, 3, 6, 7, 8, 12, 13 } };
    MPI_OK(MPI_Type_indexed(4, ib, id, MPI_INT, &lay[3].type));
    lay[4] = (layout_t){ "struct", MPI_DATATYPE_NULL, { 4, 5, 6, 20, 21, 22, 23, 24 } };
    MPI_OK(MPI_Type_create_struct(2, sb, sd, st, &lay[4].type));
    for (int k = 0; k < NLAY; k++)
        MPI_OK(MPI_Type_commit(&lay[k].type));
}

static int base_val(int r, int i) { return r * 1000 + i + 1; }
static int origin_val(int r, int i) { return -(r * 100 + i + 3); }

enum { OP_PUT, OP_GET, OP_ACC, OP_GACC, NOPS };
static const char *const op_names[] = { "put", "get", "accumulate", "get_accumulate" };

static void issue(int op, const layout_t *o, const layout_t *t, int to, int *src, int *res,
                  MPI_Win win)
{
    switch (op) {
    case OP_PUT: MPI_OK(MPI_Put(src, 1, o->type, to, 0, 1, t->type, win)); break;
    case OP_GET: MPI_OK(MPI_Get(res, 1, o->type, to, 0, 1, t->type, win)); break;
    case OP_ACC: MPI_OK(MPI_Accumulate(src, 1, o->type, to, 0, 1, t->type, MPI_SUM, win)); break;
    default:
        MPI_OK(MPI_Get_accumulate(src, 1, o->type, res, NEL, MPI_INT, to, 0, 1, t->type, MPI_SUM,
                                  win));
    }
}

/* The wrong elements: the window (this rank as target of from) and the
 * origin's result buffer (fetched from to). */
static int verify(int op, const layout_t *o, const layout_t *t, const int *win, const int *res,
                  int from, int to)
{
    int want[WN], bad = 0;
    for (int i = 0; i < WN; i++)
        want[i] = base_val(t_rank, i);
    for (int k = 0; k < NEL && op != OP_GET; k++) {
        int x = origin_val(from, o->off[k]);
        want[t->off[k]] = op == OP_PUT ? x : want[t->off[k]] + x;
    }
    for (int i = 0; i < WN; i++)
        bad += !EXPECT(win[i] == want[i], "%s %s->%s: window[%d] = %d, want %d", op_names[op],
                       o->name, t->name, i, win[i], want[i]);
    for (int k = 0; k < NEL && (op == OP_GET || op == OP_GACC); k++) {
        int at = op == OP_GET ? o->off[k] : k, w = base_val(to, t->off[k]);
        bad += !EXPECT(res[at] == w, "%s %s->%s: result[%d] = %d, want %d", op_names[op],
                       o->name, t->name, at, res[at], w);
    }
    return bad;
}

static int one_case(MPI_Win win, int *base, int op, const layout_t *o, const layout_t *t,
                    bool passive)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    int src[WN], res[WN], mine[WN];
    for (int i = 0; i < WN; i++) {
        src[i] = origin_val(t_rank, i);
        res[i] = 0;
    }
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t_rank, 0, win));
    for (int i = 0; i < WN; i++)
        base[i] = base_val(t_rank, i);
    MPI_OK(MPI_Win_unlock(t_rank, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (passive) {
        MPI_OK(MPI_Win_lock_all(0, win));
        issue(op, o, t, to, src, res, win);
        MPI_OK(MPI_Win_flush(to, win));
        MPI_OK(MPI_Win_unlock_all(win));
    } else {
        MPI_OK(MPI_Win_fence(0, win));
        issue(op, o, t, to, src, res, win);
        MPI_OK(MPI_Win_fence(0, win));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t_rank, 0, win));
    memcpy(mine, base, sizeof(mine));
    MPI_OK(MPI_Win_unlock(t_rank, win));
    return verify(op, o, t, mine, res, from, to);
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    make_layouts();
    int *base = NULL, n = 0, bad = 0;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(WN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                            &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int op = 0; op < NOPS; op++)
        for (int a = 0; a < NLAY; a++)
            for (int b = 0; b < NLAY; b++)
                bad += one_case(win, base, op, &lay[a], &lay[b], n++ % 2 == 1) != 0;
    if (t_rank == 0)
        printf("%d cases, %d wrong on rank 0\n", n, bad);
    MPI_OK(MPI_Win_free(&win));
    for (int k = 0; k < NLAY; k++)
        MPI_OK(MPI_Type_free(&lay[k].type));
    return check_mpi_finalize("rma_dtype");
}
