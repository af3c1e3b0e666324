/*
 * Window attributes, names and info on every creation flavor:
 * MPI_WIN_BASE, SIZE, DISP_UNIT (this rank's own values), CREATE_FLAVOR,
 * MODEL (UNIFIED or SEPARATE); Win_get_group is the communicator's group;
 * the name is empty until Win_set_name, then read back (truncated names
 * too); Win_get_info gives a fresh info object whose known hints hold
 * legal values, and Win_set_info with hints is accepted; user attributes
 * through Win_create_keyval with a delete callback run at Win_free.
 */
#include "rma_test.h"

static int deleted;

static int count_delete(MPI_Win win, int key, void *val, void *extra)
{
    (void)win;
    (void)key;
    (void)extra;
    deleted += val == (void *)&deleted;
    return MPI_SUCCESS;
}

static void predefined(const rma_win_t *w, MPI_Aint want_size, int want_du, int want_flavor)
{
    void *base = NULL;
    MPI_Aint *size = NULL;
    int *du = NULL, *flavor = NULL, *model = NULL, f[5] = { 0 };
    const char *fl = rma_flavor_names[w->flavor];
    MPI_OK(MPI_Win_get_attr(w->win, MPI_WIN_BASE, &base, &f[0]));
    MPI_OK(MPI_Win_get_attr(w->win, MPI_WIN_SIZE, &size, &f[1]));
    MPI_OK(MPI_Win_get_attr(w->win, MPI_WIN_DISP_UNIT, &du, &f[2]));
    MPI_OK(MPI_Win_get_attr(w->win, MPI_WIN_CREATE_FLAVOR, &flavor, &f[3]));
    MPI_OK(MPI_Win_get_attr(w->win, MPI_WIN_MODEL, &model, &f[4]));
    for (int k = 0; k < 5; k++)
        CHECK(f[k], "%s: predefined attribute %d not found", fl, k);
    void *want_base = w->flavor == RMA_DYNAMIC ? MPI_BOTTOM : (void *)w->base;
    EXPECT(base == want_base, "%s: MPI_WIN_BASE %p, want %p", fl, base, want_base);
    EXPECT(*size == want_size, "%s: MPI_WIN_SIZE %ld, want %ld", fl, (long)*size, (long)want_size);
    EXPECT(*du == want_du, "%s: MPI_WIN_DISP_UNIT %d, want %d", fl, *du, want_du);
    EXPECT(*flavor == want_flavor, "%s: MPI_WIN_CREATE_FLAVOR %d, want %d", fl, *flavor,
           want_flavor);
    EXPECT(*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE, "%s: MPI_WIN_MODEL %d", fl,
           *model);
}

static void group_and_name(const rma_win_t *w)
{
    MPI_Group g, world;
    int cmp = -1, len = -1;
    char name[MPI_MAX_OBJECT_NAME], longname[MPI_MAX_OBJECT_NAME + 20];
    MPI_OK(MPI_Win_get_group(w->win, &g));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_compare(g, world, &cmp));
    EXPECT(cmp == MPI_IDENT, "Win_get_group: compare %d", cmp);
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_free(&world));
    /* MPI-4.1 7.10: empty until named (Open MPI 4.1 says "rdma window N") */
    MPI_OK(MPI_Win_get_name(w->win, name, &len));
    EXPECT(len == 0 && name[0] == '\0', "a new window's name is empty ('%s')", name);
    MPI_OK(MPI_Win_set_name(w->win, "rail rma window"));
    MPI_OK(MPI_Win_get_name(w->win, name, &len));
    EXPECT(strcmp(name, "rail rma window") == 0 && len == 15, "name '%s' (%d)", name, len);
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    MPI_OK(MPI_Win_set_name(w->win, longname));
    MPI_OK(MPI_Win_get_name(w->win, name, &len));
    EXPECT(len == (int)strlen(name) && len <= MPI_MAX_OBJECT_NAME - 1, "long name: len %d", len);
}

/* MPI_Info_get_string is MPI-4.0 (Open MPI 4.1 lacks it). */
static void info_get(MPI_Info in, const char *key, char *v, int *flag)
{
#if MPI_VERSION >= 4
    int len = MPI_MAX_INFO_VAL;
    MPI_OK(MPI_Info_get_string(in, key, &len, v, flag));
#else
    MPI_OK(MPI_Info_get(in, key, MPI_MAX_INFO_VAL, v, flag));
#endif
}

static void info(const rma_win_t *w)
{
    MPI_Info in = MPI_INFO_NULL, set;
    int nkeys = -1, flag = 0;
    char v[MPI_MAX_INFO_VAL + 1];
    MPI_OK(MPI_Win_get_info(w->win, &in));
    CHECK(in != MPI_INFO_NULL, "Win_get_info returns a new info object");
    MPI_OK(MPI_Info_get_nkeys(in, &nkeys));
    EXPECT(nkeys >= 0);
    info_get(in, "no_locks", v, &flag);
    if (flag)
        EXPECT(strcmp(v, "true") == 0 || strcmp(v, "false") == 0, "no_locks = '%s'", v);
    MPI_OK(MPI_Info_free(&in));
    MPI_OK(MPI_Info_create(&set));
    MPI_OK(MPI_Info_set(set, "accumulate_ordering", "none"));
    MPI_OK(MPI_Info_set(set, "rail_unknown_hint", "ignored"));
    MPI_OK(MPI_Win_set_info(w->win, set));
    MPI_OK(MPI_Info_free(&set));
    MPI_OK(MPI_Win_get_info(w->win, &in));
    info_get(in, "accumulate_ordering", v, &flag);
    if (flag)
        EXPECT(strcmp(v, "none") == 0 || strstr(v, "rar") || strstr(v, "war") || strstr(v, "raw") ||
                   strstr(v, "waw"),
               "accumulate_ordering = '%s'", v);
    MPI_OK(MPI_Info_free(&in));
}

static void user_attr(rma_win_t *w, int key)
{
    void *got = NULL;
    int found = 0;
    MPI_OK(MPI_Win_set_attr(w->win, key, &deleted));
    MPI_OK(MPI_Win_get_attr(w->win, key, &got, &found));
    EXPECT(found && got == &deleted, "user attribute read back");
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    static const int flavors[] = { MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_ALLOCATE,
                                   MPI_WIN_FLAVOR_SHARED, MPI_WIN_FLAVOR_DYNAMIC };
    int key;
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key, NULL));
    for (int f = 0; f < RMA_NFLAVORS; f++) {
        rma_win_t w;
        rma_win_open(&w, (enum rma_flavor)f);
        bool dyn = f == RMA_DYNAMIC;
        predefined(&w, dyn ? 0 : RMA_N * (MPI_Aint)sizeof(int), dyn ? 1 : (int)sizeof(int),
                   flavors[f]);
        group_and_name(&w);
        info(&w);
        user_attr(&w, key);
        rma_win_close(&w);
        EXPECT(w.win == MPI_WIN_NULL, "Win_free sets MPI_WIN_NULL");
        EXPECT(deleted == f + 1, "%s: delete callback ran at Win_free (%d)", rma_flavor_names[f],
               deleted);
    }
    MPI_OK(MPI_Win_free_keyval(&key));
    return check_mpi_finalize("rma_attr");
}
