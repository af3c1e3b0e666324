/* MPI_T categories: every cvar and every pvar in exactly one category, the
 * framework/component tree, lookups by name, the lists agreeing with the
 * counts, before and after MPI_Init (which may register more parameters). */
#include "mpit_test.h"
#include <stdlib.h>

/* Which category each variable is in; each exactly once. */
static void check_cover(void)
{
    int ncat, ncvar, npvar;
    MPI_OK(MPI_T_category_get_num(&ncat));
    MPI_OK(MPI_T_cvar_get_num(&ncvar));
    MPI_OK(MPI_T_pvar_get_num(&npvar));
    CHECK(ncat >= 8, "only %d categories", ncat);
    int *cvar_cat = malloc((size_t)ncvar * sizeof(int));
    int *pvar_cat = malloc((size_t)(npvar + 1) * sizeof(int));
    int *parent = malloc((size_t)ncat * sizeof(int));
    for (int i = 0; i < ncvar; i++)
        cvar_cat[i] = -1;
    for (int i = 0; i < npvar; i++)
        pvar_cat[i] = -1;
    for (int c = 0; c < ncat; c++)
        parent[c] = -1;
    for (int c = 0; c < ncat; c++) {
        char name[128], desc[512];
        int nlen = sizeof(name), dlen = sizeof(desc), nc, np, ns, index;
        MPI_OK(MPI_T_category_get_info(c, name, &nlen, desc, &dlen, &nc, &np, &ns));
        CHECK(name[0] && desc[0], "category %d: name '%s' desc '%s'", c, name, desc);
        MPI_OK(MPI_T_category_get_index(name, &index));
        CHECK(index == c, "category %s: index %d, by name %d", name, c, index);
        int *v = malloc((size_t)(nc + np + ns + 1) * sizeof(int));
        MPI_OK(MPI_T_category_get_cvars(c, nc, v));
        for (int k = 0; k < nc; k++) {
            CHECK(v[k] >= 0 && v[k] < ncvar, "%s: cvar index %d", name, v[k]);
            CHECK(cvar_cat[v[k]] < 0, "cvar %s in two categories", t_cvar_name(v[k]));
            cvar_cat[v[k]] = c;
            /* The category is the name's prefix. */
            const char *cv = t_cvar_name(v[k]);
            size_t len = strlen(name);
            CHECK(strncmp(cv, name, len) == 0 && (cv[len] == '\0' || cv[len] == '_'),
                  "cvar %s in category %s", cv, name);
        }
        MPI_OK(MPI_T_category_get_pvars(c, np, v));
        for (int k = 0; k < np; k++) {
            CHECK(v[k] >= 0 && v[k] < npvar && pvar_cat[v[k]] < 0, "%s: pvar %d", name, v[k]);
            pvar_cat[v[k]] = c;
        }
        MPI_OK(MPI_T_category_get_categories(c, ns, v));
        for (int k = 0; k < ns; k++) {
            CHECK(v[k] > c && v[k] < ncat && parent[v[k]] < 0, "%s: subcategory %d", name, v[k]);
            parent[v[k]] = c;
        }
        int ne = -1;
        MPI_OK(MPI_T_category_get_num_events(c, &ne));
        CHECK(ne == 0, "%s: %d events", name, ne);
        MPI_OK(MPI_T_category_get_events(c, 0, NULL));
        free(v);
    }
    for (int i = 0; i < ncvar; i++)
        CHECK(cvar_cat[i] >= 0, "cvar %s in no category", t_cvar_name(i));
    for (int i = 0; i < npvar; i++)
        CHECK(pvar_cat[i] >= 0, "pvar %d in no category", i);
    free(cvar_cat);
    free(pvar_cat);
    free(parent);
}

static void check_tree(void)
{
    static const char *const subs[][2] = {
        {"btl", "btl_sm"}, {"btl", "btl_tcp"}, {"btl", "btl_self"}, {"coll", "coll_tuned"},
        {"coll", "coll_basic"}, {"accel", "accel_fake"},
    };
    for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        int p = t_category(subs[i][0]), c = t_category(subs[i][1]), n;
        MPI_OK(MPI_T_category_get_info(p, NULL, NULL, NULL, NULL, NULL, NULL, &n));
        int *v = malloc((size_t)n * sizeof(int)), found = 0;
        MPI_OK(MPI_T_category_get_categories(p, n, v));
        for (int k = 0; k < n; k++)
            found |= v[k] == c;
        CHECK(found, "%s is not a subcategory of %s", subs[i][1], subs[i][0]);
        free(v);
    }
    /* Frameworks with no component of that name get none. */
    static const char *const tops[] = {"mpi", "pml", "progress", "op"};
    for (size_t i = 0; i < sizeof(tops) / sizeof(tops[0]); i++)
        t_category(tops[i]);
    /* Where known variables are. */
    int v[64], n;
    int sm = t_category("btl_sm"), eager = t_cvar("btl_sm_eager_limit"), found = 0;
    MPI_OK(MPI_T_category_get_info(sm, NULL, NULL, NULL, NULL, &n, NULL, NULL));
    CHECK(n > 2 && n <= 64, "btl_sm has %d cvars", n);
    MPI_OK(MPI_T_category_get_cvars(sm, n, v));
    for (int k = 0; k < n; k++)
        found |= v[k] == eager;
    CHECK(found, "btl_sm_eager_limit not in btl_sm");
    /* A short array gets the first ones. */
    int two[2] = {-1, -1}, guard[3] = {-1, -1, -7};
    MPI_OK(MPI_T_category_get_cvars(sm, 2, two));
    CHECK(two[0] == v[0] && two[1] == v[1], "short list differs");
    MPI_OK(MPI_T_category_get_cvars(sm, 2, guard));
    CHECK(guard[2] == -7, "wrote past len");
    int mpi = t_category("mpi"), np;
    MPI_OK(MPI_T_category_get_info(mpi, NULL, NULL, NULL, NULL, NULL, &np, NULL));
    CHECK(np >= 11, "mpi category has %d pvars (live objects, cpu time)", np);
}

static void check_errors(void)
{
    int n, v[4];
    MPI_OK(MPI_T_category_get_num(&n));
    MPI_RETURNS(MPI_T_category_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                MPI_T_ERR_INVALID_INDEX);
    MPI_RETURNS(MPI_T_category_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                MPI_T_ERR_INVALID_INDEX);
    MPI_RETURNS(MPI_T_category_get_cvars(n, 4, v), MPI_T_ERR_INVALID_INDEX);
    MPI_RETURNS(MPI_T_category_get_pvars(-3, 4, v), MPI_T_ERR_INVALID_INDEX);
    MPI_RETURNS(MPI_T_category_get_categories(n + 5, 4, v), MPI_T_ERR_INVALID_INDEX);
    MPI_RETURNS(MPI_T_category_get_events(n, 4, v), MPI_T_ERR_INVALID_INDEX);
    MPI_RETURNS(MPI_T_category_get_num_events(n, &n), MPI_T_ERR_INVALID_INDEX);
    MPI_RETURNS(MPI_T_category_get_cvars(0, -1, v), MPI_T_ERR_INVALID);
    MPI_RETURNS(MPI_T_category_get_index("no_such_category", &n), MPI_T_ERR_INVALID_NAME);
    MPI_RETURNS(MPI_T_category_get_index(NULL, &n), MPI_T_ERR_INVALID);
}

int main(int argc, char **argv)
{
    int provided, stamp, stamp2;
    MPI_RETURNS(MPI_T_category_changed(&stamp), MPI_T_ERR_NOT_INITIALIZED);
    MPI_OK(MPI_T_init_thread(MPI_THREAD_FUNNELED, &provided));
    MPI_OK(MPI_T_category_changed(&stamp));
    check_cover();
    check_tree();
    check_errors();
    MPI_OK(MPI_T_category_changed(&stamp2));
    CHECK(stamp2 == stamp, "categories changed without new variables: %d -> %d", stamp, stamp2);

    int ncvar, ncvar2;
    MPI_OK(MPI_T_cvar_get_num(&ncvar));
    MPI_OK(MPI_Init(&argc, &argv));
    check_cover();
    MPI_OK(MPI_T_category_changed(&stamp2));
    MPI_OK(MPI_T_cvar_get_num(&ncvar2));
    CHECK(ncvar2 == ncvar ? stamp2 == stamp : stamp2 > stamp,
          "update number %d -> %d with %d -> %d cvars", stamp, stamp2, ncvar, ncvar2);
    MPI_OK(MPI_Finalize());
    check_cover();
    MPI_OK(MPI_T_finalize());
    return 0;
}
