/*
 * Shared-memory windows (MPI_Win_allocate_shared on the node's processes):
 * Win_shared_query gives each rank's segment (size, disp_unit, a pointer
 * this process can use), segments are contiguous by rank unless
 * alloc_shared_noncontig is given, MPI_PROC_NULL queries the first
 * non-empty segment, and ranks load and store each other's memory
 * directly, ordered by Win_sync + barrier inside lock_all (the standard's
 * unified-model pattern); RMA calls see the stored values too.
 */
#include "rma_test.h"

#define SN 64 /* ints per rank (rank 1 asks for none: an empty segment) */

static int seg_ints(int r) { return r == 1 ? 0 : SN + r; }

static void query_all(MPI_Win win, int **seg, bool contig)
{
    for (int r = 0; r < t_size; r++) {
        MPI_Aint size = -1;
        int du = -1;
        MPI_OK(MPI_Win_shared_query(win, r, &size, &du, &seg[r]));
        MPI_Aint want = seg_ints(r) * (MPI_Aint)sizeof(int);
        /* noncontig: Open MPI 4.1 reports the size rounded up to a page */
        EXPECT(contig ? size == want : size >= want, "rank %d: size %ld, want %ld", r,
               (long)size, (long)want);
        EXPECT(du == (int)sizeof(int), "rank %d: disp_unit %d", r, du);
        if (contig && r > 0 && seg_ints(r) > 0 && seg_ints(r - 1) > 0)
            EXPECT(seg[r] == seg[r - 1] + seg_ints(r - 1), "rank %d: segment not contiguous", r);
    }
    MPI_Aint size = -1;
    int du = -1, *first = NULL;
    MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &size, &du, &first));
    EXPECT(first == seg[0] && size >= (MPI_Aint)(seg_ints(0) * sizeof(int)),
           "MPI_PROC_NULL: the first non-empty segment (rank 0's)");
}

/* The next rank after r with a non-empty segment (r itself at worst). */
static int dest_of(int r)
{
    int d = (r + 1) % t_size;
    while (seg_ints(d) == 0)
        d = (d + 1) % t_size;
    return d;
}

/* Every rank stores its elements (i % n == rank) into dest_of(rank)'s
 * segment; after Win_sync + barrier + Win_sync every rank reads all the
 * stored values directly, then a Get of a neighbour's segment sees them. */
static void load_store(MPI_Win win, int **seg, int round)
{
    int to = dest_of(t_rank);
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int i = t_rank; i < seg_ints(to); i += t_size)
        seg[to][i] = round * 100000 + t_rank * 1000 + i;
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_sync(win));
    for (int w = 0, bad = 0; w < t_size && !bad; w++) {
        int d = dest_of(w);
        for (int i = w; i < seg_ints(d) && !bad; i += t_size) {
            int want = round * 100000 + w * 1000 + i;
            bad = !EXPECT(seg[d][i] == want, "round %d: rank %d's segment [%d] = %d, want %d",
                          round, d, i, seg[d][i], want);
        }
    }
    int got[SN + 8], peer = (t_rank + t_size - 1) % t_size;
    if (seg_ints(peer) > 0) {
        MPI_OK(MPI_Get(got, seg_ints(peer), MPI_INT, peer, 0, seg_ints(peer), MPI_INT, win));
        MPI_OK(MPI_Win_flush(peer, win));
        EXPECT(memcmp(got, seg[peer], seg_ints(peer) * sizeof(int)) == 0,
               "round %d: a Get from rank %d differs from its segment read directly", round, peer);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_unlock_all(win));
}

static void one_window(bool noncontig)
{
    MPI_Info info = MPI_INFO_NULL;
    int *mine = NULL, **seg = calloc((size_t)t_size, sizeof(int *));
    MPI_Win win;
    if (noncontig) {
        MPI_OK(MPI_Info_create(&info));
        MPI_OK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    }
    MPI_OK(MPI_Win_allocate_shared(seg_ints(t_rank) * (MPI_Aint)sizeof(int), sizeof(int), info,
                                   MPI_COMM_WORLD, &mine, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int flavor = 0, *fp = NULL, found = 0;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fp, &found));
    if (found)
        flavor = *fp;
    EXPECT(found && flavor == MPI_WIN_FLAVOR_SHARED, "MPI_WIN_CREATE_FLAVOR is SHARED");
    query_all(win, seg, !noncontig);
    if (seg_ints(t_rank) > 0)
        EXPECT(seg[t_rank] == mine, "own segment: shared_query %p, baseptr %p", (void *)seg[t_rank],
               (void *)mine);
    for (int round = 1; round <= 3; round++)
        load_store(win, seg, round);
    MPI_OK(MPI_Win_free(&win));
    if (info != MPI_INFO_NULL)
        MPI_OK(MPI_Info_free(&info));
    free(seg);
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    one_window(false);
    one_window(true);
    return check_mpi_finalize("rma_shared");
}
