/* Communicators: dup (attributes, hints), compare, names, groups, info,
 * idup (overlapping, mixed with blocking creations), free, disconnect,
 * get_parent, and the live-object counts afterwards. */
#include "comm_test.h"

static int rank, size;
static int deletes;

static int copy_incr(MPI_Comm old, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)kv, (void)extra;
    *(intptr_t *)out = (intptr_t)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm c, int kv, void *val, void *extra)
{
    (void)c, (void)kv, (void)val, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static void test_dup_compare(void)
{
    MPI_Comm d, rev;
    int r, s, res;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_OK(MPI_Comm_rank(d, &r));
    MPI_OK(MPI_Comm_size(d, &s));
    CHECK(r == rank && s == size, "dup: rank %d size %d", r, s);
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_IDENT, "compare(WORLD, WORLD) = %d", res);
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, d, &res));
    CHECK(res == MPI_CONGRUENT, "compare(WORLD, dup) = %d", res);
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &rev));
    MPI_OK(MPI_Comm_compare(d, rev, &res));
    CHECK(res == (size > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "compare(dup, reversed) = %d", res);
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &res));
    CHECK(res == (size > 1 ? MPI_UNEQUAL : MPI_CONGRUENT), "compare(WORLD, SELF) = %d", res);
    ring_check(d);
    ring_check(rev);
    MPI_OK(MPI_Comm_free(&rev));
    MPI_OK(MPI_Comm_free(&d));
    CHECK(d == MPI_COMM_NULL, "Comm_free did not set MPI_COMM_NULL");
}

static void test_names_groups(void)
{
    MPI_Comm d;
    char name[MPI_MAX_OBJECT_NAME];
    int len, flag, res;
    MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "WORLD's name is '%s'", name);
    /* MPI-4.1: the null handles have names too */
    MPI_OK(MPI_Comm_get_name(MPI_COMM_NULL, name, &len));
    CHECK(strcmp(name, "MPI_COMM_NULL") == 0 && len == 13, "COMM_NULL's name is '%s'", name);
    MPI_OK(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len));
    CHECK(strcmp(name, "MPI_DATATYPE_NULL") == 0 && len == 17, "DATATYPE_NULL's name '%s'", name);
    MPI_OK(MPI_Win_get_name(MPI_WIN_NULL, name, &len));
    CHECK(strcmp(name, "MPI_WIN_NULL") == 0 && len == 12, "WIN_NULL's name is '%s'", name);
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_OK(MPI_Comm_get_name(d, name, &len));
    CHECK(len == 0 && name[0] == 0, "a dup has no name, got '%s'", name);
    MPI_OK(MPI_Comm_set_name(d, "mine"));
    MPI_OK(MPI_Comm_get_name(d, name, &len));
    CHECK(strcmp(name, "mine") == 0 && len == 4, "name '%s'", name);
    MPI_OK(MPI_Comm_test_inter(d, &flag));
    CHECK(!flag, "test_inter on an intracommunicator");
    MPI_Group g, gw;
    MPI_OK(MPI_Comm_group(d, &g));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &gw));
    MPI_OK(MPI_Group_compare(g, gw, &res));
    CHECK(res == MPI_IDENT, "group of dup vs WORLD's: %d", res);
    MPI_OK(MPI_Group_size(g, &len));
    CHECK(len == size, "group size %d", len);
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_free(&gw));
    MPI_Comm parent = MPI_COMM_WORLD;
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "get_parent without spawn");
    MPI_OK(MPI_Comm_free(&d));
}

static void test_attributes(void)
{
    int kv_incr, kv_null, kv_dup, flag;
    void *v;
    MPI_OK(MPI_Comm_create_keyval(copy_incr, count_delete, &kv_incr, NULL));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &kv_null, NULL));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv_dup, NULL));
    MPI_Comm a, b;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPI_OK(MPI_Comm_set_attr(a, kv_incr, (void *)(intptr_t)41));
    MPI_OK(MPI_Comm_set_attr(a, kv_null, (void *)(intptr_t)5));
    MPI_OK(MPI_Comm_set_attr(a, kv_dup, (void *)(intptr_t)9));
    MPI_OK(MPI_Comm_dup(a, &b));
    MPI_OK(MPI_Comm_get_attr(b, kv_incr, &v, &flag));
    CHECK(flag && (intptr_t)v == 42, "copied attribute: flag %d value %ld", flag, (long)(intptr_t)v);
    MPI_OK(MPI_Comm_get_attr(b, kv_null, &v, &flag));
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN attribute was copied");
    MPI_OK(MPI_Comm_get_attr(b, kv_dup, &v, &flag));
    CHECK(flag && (intptr_t)v == 9, "MPI_COMM_DUP_FN attribute: %d %ld", flag, (long)(intptr_t)v);
    /* idup copies attributes too. */
    MPI_Comm c;
    MPI_Request rq;
    MPI_OK(MPI_Comm_idup(b, &c, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Comm_get_attr(c, kv_incr, &v, &flag));
    CHECK(flag && (intptr_t)v == 43, "idup'ed attribute: %d %ld", flag, (long)(intptr_t)v);
    deletes = 0;
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Comm_free(&b));
    MPI_OK(MPI_Comm_free(&a));
    CHECK(deletes == 4, "%d delete callbacks (expected 4)", deletes);
    MPI_OK(MPI_Comm_free_keyval(&kv_incr));
    MPI_OK(MPI_Comm_free_keyval(&kv_null));
    MPI_OK(MPI_Comm_free_keyval(&kv_dup));
}

static void check_hint(MPI_Comm c, const char *key, const char *want)
{
    MPI_Info info;
    char val[64];
    int flag;
    MPI_OK(MPI_Comm_get_info(c, &info));
    MPI_OK(MPI_Info_get(info, key, sizeof(val) - 1, val, &flag));
    if (want)
        CHECK(flag && strcmp(val, want) == 0, "hint %s: flag %d value '%s' (want '%s')", key,
              flag, flag ? val : "", want);
    else
        CHECK(!flag, "hint %s should not be set", key);
    MPI_OK(MPI_Info_free(&info));
}

/* MPI-4.1 7.4.4: unknown keys are ignored; get_info returns the supported
 * hints (the assertions, "false" unless set) and no others. */
static void test_info(void)
{
    MPI_Comm a, b, c;
    MPI_Info info;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    check_hint(a, "mpi_assert_no_any_tag", "false");
    check_hint(a, "mpi_assert_allow_overtaking", "false");
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MPI_OK(MPI_Info_set(info, "rail_test_key", "v1"));
    MPI_OK(MPI_Comm_set_info(a, info));
    MPI_OK(MPI_Info_free(&info));
    check_hint(a, "mpi_assert_no_any_tag", "true");
    check_hint(a, "rail_test_key", NULL);             /* unknown: ignored */
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "rail_test_key", "v2"));
    MPI_OK(MPI_Info_set(info, "mpi_assert_exact_length", "true"));
    MPI_OK(MPI_Comm_set_info(a, info));
    check_hint(a, "rail_test_key", NULL);
    check_hint(a, "mpi_assert_exact_length", "true");
    check_hint(a, "mpi_assert_no_any_tag", "true");   /* not named: unchanged */
    MPI_OK(MPI_Comm_dup(a, &b));
    check_hint(b, "mpi_assert_no_any_tag", "true");   /* dup copies hints */
    MPI_OK(MPI_Comm_dup_with_info(a, info, &c));
    check_hint(c, "mpi_assert_no_any_tag", "false");  /* replaced by info */
    check_hint(c, "mpi_assert_exact_length", "true");
    check_hint(c, "rail_test_key", NULL);
    MPI_Comm d;
    MPI_Request rq;
    MPI_OK(MPI_Comm_idup_with_info(a, info, &d, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    check_hint(d, "mpi_assert_no_any_tag", "false");
    check_hint(d, "rail_test_key", NULL);
    ring_check(d);
    MPI_OK(MPI_Info_free(&info));
    /* every key that comes back is a supported hint */
    MPI_OK(MPI_Comm_get_info(d, &info));
    int nkeys;
    char key[MPI_MAX_INFO_KEY];
    MPI_OK(MPI_Info_get_nkeys(info, &nkeys));
    for (int i = 0; i < nkeys; i++) {
        MPI_OK(MPI_Info_get_nthkey(info, i, key));
        CHECK(strncmp(key, "mpi_", 4) == 0, "get_info returned key '%s'", key);
    }
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Comm_free(&b));
    MPI_OK(MPI_Comm_free(&a));
}

static void test_idup(void)
{
    MPI_Comm c1, c2, n[4], x;
    MPI_Request rq[4];
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c1));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c2));
    MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &n[0], &rq[0]));
    MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &n[1], &rq[1]));
    if (rank % 2 == 0) {
        MPI_OK(MPI_Comm_idup(c1, &n[2], &rq[2]));
        MPI_OK(MPI_Comm_idup(c2, &n[3], &rq[3]));
    } else {
        MPI_OK(MPI_Comm_idup(c2, &n[3], &rq[3]));
        MPI_OK(MPI_Comm_idup(c1, &n[2], &rq[2]));
    }
    MPI_OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 4; i++)
        ring_check(n[i]);
    for (int i = 0; i < 4; i++)
        MPI_OK(MPI_Comm_free(&n[i]));
    /* Rank 0 starts an idup on c1 and then a blocking dup on c2; the others
     * dup c2 first and only then join the idup. */
    if (rank == 0) {
        MPI_OK(MPI_Comm_idup(c1, &n[0], &rq[0]));
        MPI_OK(MPI_Comm_dup(c2, &x));
    } else {
        MPI_OK(MPI_Comm_dup(c2, &x));
        MPI_OK(MPI_Comm_idup(c1, &n[0], &rq[0]));
    }
    MPI_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    ring_check(n[0]);
    ring_check(x);
    MPI_OK(MPI_Comm_free(&n[0]));
    MPI_OK(MPI_Comm_free(&x));
    /* Test-polling an idup. */
    int flag = 0;
    MPI_OK(MPI_Comm_idup(c2, &x, &rq[0]));
    while (!flag)
        MPI_OK(MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE));
    ring_check(x);
    MPI_OK(MPI_Comm_disconnect(&x));
    CHECK(x == MPI_COMM_NULL, "disconnect did not set MPI_COMM_NULL");
    MPI_OK(MPI_Comm_free(&c1));
    MPI_OK(MPI_Comm_free(&c2));
}

/* Freeing with a receive pending: the communicator lives on until it completes. */
static void test_free_pending(void)
{
    MPI_Comm d;
    MPI_Request rq;
    int got = -1, one = 1;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_OK(MPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, 3, d, &rq));
    MPI_Comm keep = d;
    MPI_OK(MPI_Send(&one, 1, MPI_INT, (rank + 1) % size, 3, keep));
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(got == 1, "receive pending across Comm_free got %d", got);
}

static void test_errors(void)
{
    int n;
    MPI_Comm w = MPI_COMM_WORLD, null = MPI_COMM_NULL;
    MPI_Group g;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_Comm_free(&w), MPI_ERR_COMM);
    MPI_FAILS(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), MPI_ERR_COMM);
    MPI_FAILS(MPI_Comm_remote_group(MPI_COMM_WORLD, &g), MPI_ERR_COMM);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_Comm_dup(null, &w), MPI_ERR_COMM);
    MPI_FAILS(MPI_Comm_free(&null), MPI_ERR_COMM);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int comms = live("comm"), groups = live("group"), infos = live("info");
    test_dup_compare();
    test_names_groups();
    test_attributes();
    test_info();
    test_idup();
    test_free_pending();
    test_errors();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int now = live_settled("comm", comms);
    CHECK(now == comms, "%d communicators left (were %d)", now, comms);
    CHECK(live("group") == groups, "%d groups left (were %d)", live("group"), groups);
    CHECK(live("info") == infos, "%d info objects left (were %d)", live("info"), infos);
    MPI_Finalize();
    return 0;
}
