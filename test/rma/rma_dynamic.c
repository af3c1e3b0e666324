/*
 * Dynamic windows (MPI_Win_create_dynamic): three regions of different
 * sizes attached, their addresses exchanged (MPI_Get_address, Allgather),
 * Put, Get and Accumulate into each region at absolute displacements;
 * then a region detached and a new one attached in its place, addresses
 * exchanged again, and the new one used.  The window's attributes: base
 * MPI_BOTTOM, size 0, disp_unit 1, flavor DYNAMIC.
 */
#include "rma_test.h"

#define NREG 3
static const int reg_ints[NREG] = { 1, 100, 5000 };

typedef struct {
    int *mem[NREG];
    MPI_Aint *addr; /* [rank * NREG + region] */
} regions_t;

static void exchange(regions_t *g)
{
    for (int k = 0; k < NREG; k++)
        MPI_OK(MPI_Get_address(g->mem[k], &g->addr[t_rank * NREG + k]));
    MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g->addr, NREG, MPI_AINT,
                         MPI_COMM_WORLD));
}

static void fill(MPI_Win win, regions_t *g, int round)
{
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t_rank, 0, win));
    for (int k = 0; k < NREG; k++)
        for (int i = 0; i < reg_ints[k]; i++)
            g->mem[k][i] = round * 1000000 + t_rank * 10000 + k * 1000 + i % 1000;
    MPI_OK(MPI_Win_unlock(t_rank, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Region k of the next rank: its last element gets our rank + 1 added,
 * its first is replaced by a Put, and the whole region is read back. */
static void use_regions(MPI_Win win, regions_t *g, int round)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    int *got = malloc(reg_ints[NREG - 1] * sizeof(int)), add = t_rank + 1, put = -round - t_rank;
    fill(win, g, round);
    for (int k = 0; k < NREG; k++) {
        MPI_Aint a = g->addr[to * NREG + k], last = MPI_Aint_add(a, (reg_ints[k] - 1) * 4);
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, to, 0, win));
        MPI_OK(MPI_Get(got, reg_ints[k], MPI_INT, to, a, reg_ints[k], MPI_INT, win));
        MPI_OK(MPI_Win_flush(to, win));
        MPI_OK(MPI_Accumulate(&add, 1, MPI_INT, to, last, 1, MPI_INT, MPI_SUM, win));
        MPI_OK(MPI_Put(&put, 1, MPI_INT, to, a, 1, MPI_INT, win));
        MPI_OK(MPI_Win_unlock(to, win));
        for (int i = 0; i < reg_ints[k]; i++) {
            int want = round * 1000000 + to * 10000 + k * 1000 + i % 1000;
            if (!EXPECT(got[i] == want, "round %d region %d: got[%d] = %d, want %d", round, k, i,
                        got[i], want))
                break;
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t_rank, 0, win));
        int n = reg_ints[k], first = g->mem[k][0], lastv = g->mem[k][n - 1];
        MPI_OK(MPI_Win_unlock(t_rank, win));
        int base_last = round * 1000000 + t_rank * 10000 + k * 1000 + (n - 1) % 1000;
        EXPECT(first == -round - from, "round %d region %d: first %d", round, k, first);
        if (n > 1)
            EXPECT(lastv == base_last + from + 1, "round %d region %d: last %d, want %d", round, k,
                   lastv, base_last + from + 1);
    }
    free(got);
}

static void check_attrs(MPI_Win win)
{
    void *base = (void *)1;
    MPI_Aint *size = NULL;
    int *du = NULL, *flavor = NULL, f1 = 0, f2 = 0, f3 = 0, f4 = 0;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &f1));
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &f2));
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &f3));
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &f4));
    CHECK(f1 && f2 && f3 && f4, "every predefined window attribute is set");
    EXPECT(base == MPI_BOTTOM, "dynamic: MPI_WIN_BASE is MPI_BOTTOM (%p)", base);
    EXPECT(*size == 0, "dynamic: MPI_WIN_SIZE %ld", (long)*size);
    EXPECT(*du == 1, "dynamic: MPI_WIN_DISP_UNIT %d", *du);
    EXPECT(*flavor == MPI_WIN_FLAVOR_DYNAMIC, "dynamic: flavor %d", *flavor);
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    regions_t g;
    MPI_Win win;
    g.addr = calloc((size_t)t_size * NREG, sizeof(MPI_Aint));
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    check_attrs(win);
    for (int k = 0; k < NREG; k++) {
        g.mem[k] = malloc(reg_ints[k] * sizeof(int));
        MPI_OK(MPI_Win_attach(win, g.mem[k], reg_ints[k] * sizeof(int)));
    }
    exchange(&g);
    use_regions(win, &g, 1);
    /* region 1 replaced: detached (after everybody is done with it) */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_detach(win, g.mem[1]));
    free(g.mem[1]);
    g.mem[1] = malloc(reg_ints[1] * sizeof(int) + 64);
    MPI_OK(MPI_Win_attach(win, g.mem[1], reg_ints[1] * sizeof(int)));
    exchange(&g);
    use_regions(win, &g, 2);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < NREG; k++) {
        MPI_OK(MPI_Win_detach(win, g.mem[k]));
        free(g.mem[k]);
    }
    MPI_OK(MPI_Win_free(&win));
    free(g.addr);
    return check_mpi_finalize("rma_dynamic");
}
