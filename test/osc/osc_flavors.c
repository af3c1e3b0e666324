/*
 * Window flavors and their attributes (osc, issue 53): MPI_WIN_BASE, SIZE,
 * DISP_UNIT, CREATE_FLAVOR, MODEL; names; info (defaults and no_locks);
 * MPI_Win_allocate_shared with MPI_Win_shared_query and direct load/store
 * into a neighbour's part; MPI_Win_create_dynamic with attach, put/get by
 * absolute address, detach; Win_get_group; MPI_WIN_NULL's name.
 */
#define CHECK_MPI
#include <mpi.h>
#include <string.h>
#include "test/check.h"

static int rank, size;

static void attributes(void)
{
    char buf[64];
    MPI_Win win;
    void *base;
    MPI_Aint *sz;
    int *du, *flavor, *model, flag;
    MPI_OK(MPI_Win_create(buf, sizeof buf, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    EXPECT(flag && base == buf, "MPI_WIN_BASE");
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
    EXPECT(flag && *sz == (MPI_Aint)sizeof buf, "MPI_WIN_SIZE");
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag));
    EXPECT(flag && *du == 4, "MPI_WIN_DISP_UNIT");
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    EXPECT(flag && *flavor == MPI_WIN_FLAVOR_CREATE, "MPI_WIN_CREATE_FLAVOR");
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    EXPECT(flag && *model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL");
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_OK(MPI_Win_set_name(win, "ring"));
    MPI_OK(MPI_Win_get_name(win, name, &len));
    EXPECT(strcmp(name, "ring") == 0 && len == 4, "name %s", name);
    MPI_Group g, wg;
    int cmp;
    MPI_OK(MPI_Win_get_group(win, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    EXPECT(cmp == MPI_IDENT, "window group differs from the communicator's");
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1];
    MPI_OK(MPI_Win_get_info(win, &info));
    MPI_Info_get(info, "accumulate_ordering", MPI_MAX_INFO_VAL, v, &flag);
    EXPECT(flag && strcmp(v, "rar,raw,war,waw") == 0, "accumulate_ordering %s", v);
    MPI_Info_free(&info);
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Win_get_name(MPI_WIN_NULL, name, &len));
    EXPECT(strcmp(name, "MPI_WIN_NULL") == 0, "null name %s", name);
}

static void shared(void)
{
    int *mine, *right_p;
    MPI_Win win;
    MPI_Comm node;
    int nr, ns;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nr);
    MPI_Comm_size(node, &ns);
    MPI_OK(MPI_Win_allocate_shared(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine,
                                   &win));
    for (int i = 0; i < 16; i++)
        mine[i] = -1;
    int right = (nr + 1) % ns;
    MPI_Aint rsz;
    int rdu;
    MPI_OK(MPI_Win_shared_query(win, right, &rsz, &rdu, &right_p));
    EXPECT(rsz == 16 * (MPI_Aint)sizeof(int) && rdu == (int)sizeof(int), "shared_query sizes");
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_Barrier(node);
    for (int i = 0; i < 16; i++)
        right_p[i] = nr * 100 + i;   /* direct store into the neighbour's part */
    MPI_OK(MPI_Win_sync(win));
    MPI_Barrier(node);
    MPI_OK(MPI_Win_sync(win));
    int left = (nr + ns - 1) % ns;
    for (int i = 0; i < 16; i++)
        EXPECT(mine[i] == left * 100 + i, "shared store [%d] = %d", i, mine[i]);
    /* contiguous by default: my part follows the previous rank's */
    int *p0;
    MPI_OK(MPI_Win_shared_query(win, 0, &rsz, &rdu, &p0));
    EXPECT(mine == p0 + 16 * nr, "shared window is not contiguous");
    /* and RMA on it */
    int x = nr, y;
    MPI_OK(MPI_Fetch_and_op(&x, &y, MPI_INT, right, 0, MPI_SUM, win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(node);
    EXPECT(mine[0] == left * 100 + left, "accumulate on a shared window: %d", mine[0]);
    MPI_OK(MPI_Win_free(&win));
    MPI_Comm_free(&node);
}

static void dynamic(void)
{
    MPI_Win win;
    long mem[8], got[8], src[8];
    MPI_Aint addr, *addrs = malloc((size_t)size * sizeof(MPI_Aint));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_attach(win, mem, sizeof mem));
    MPI_Get_address(mem, &addr);
    MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    for (int i = 0; i < 8; i++)
        src[i] = rank * 1000 + i, mem[i] = 0;
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(src, 8, MPI_LONG, right, addrs[right], 8, MPI_LONG, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 8; i++)
        EXPECT(mem[i] == left * 1000 + i, "dynamic put [%d] = %ld", i, mem[i]);
    MPI_OK(MPI_Get(got, 8, MPI_LONG, left, addrs[left], 8, MPI_LONG, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < 8; i++)
        EXPECT(got[i] == ((left + size - 1) % size) * 1000 + i, "dynamic get [%d]", i);
    MPI_OK(MPI_Win_detach(win, mem));
    MPI_OK(MPI_Win_free(&win));
    free(addrs);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    attributes();
    shared();
    dynamic();
    return check_mpi_finalize("osc_flavors");
}
