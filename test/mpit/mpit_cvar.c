/* MPI_T control variables = the parameter registry: every cvar described
 * consistently, values read, written before MPI_Init with effect after it
 * (also over the environment: test/tests.conf runs a variant with
 * RAIL_BTL_SM_EAGER_LIMIT set), writes after MPI_Init refused, and the
 * library communicating with the values written. */
#include "mpit_test.h"
#include <stdlib.h>

static const MPI_Datatype allowed[] = {MPI_INT, MPI_UNSIGNED_LONG_LONG, MPI_DOUBLE, MPI_CHAR};

static bool verbosity_ok(int v)
{
    static const int all[] = {
        MPI_T_VERBOSITY_USER_BASIC,   MPI_T_VERBOSITY_USER_DETAIL,   MPI_T_VERBOSITY_USER_ALL,
        MPI_T_VERBOSITY_TUNER_BASIC,  MPI_T_VERBOSITY_TUNER_DETAIL,  MPI_T_VERBOSITY_TUNER_ALL,
        MPI_T_VERBOSITY_MPIDEV_BASIC, MPI_T_VERBOSITY_MPIDEV_DETAIL, MPI_T_VERBOSITY_MPIDEV_ALL};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (v == all[i])
            return true;
    return false;
}

/* Every item of an enum has a name and the values 0..num-1. */
static int check_enum(MPI_T_enum e)
{
    int num = -1, len = 0;
    MPI_OK(MPI_T_enum_get_info(e, &num, NULL, &len));
    CHECK(num >= 2 && len > 1, "enum with %d items, name length %d", num, len);
    for (int k = 0; k < num; k++) {
        char item[128];
        int value = -1, ilen = sizeof(item);
        MPI_OK(MPI_T_enum_get_item(e, k, &value, item, &ilen));
        CHECK(value == k && ilen == (int)strlen(item) + 1 && item[0], "item %d: %d '%s'", k,
              value, item);
    }
    MPI_RETURNS(MPI_T_enum_get_item(e, num, NULL, NULL, NULL), MPI_T_ERR_INVALID_ITEM);
    return num;
}

static bool initialized(void)
{
    int flag = 0, fin = 0;
    MPI_Initialized(&flag);
    MPI_Finalized(&fin);
    return flag && !fin;
}

/* Each cvar: name, index by name, datatype, enum, verbosity, bind, scope. */
static void check_all(int *num_out)
{
    int num = 0;
    MPI_OK(MPI_T_cvar_get_num(&num));
    CHECK(num > 50, "only %d cvars", num);
    for (int i = 0; i < num; i++) {
        char name[256], desc[2048];
        int name_len = sizeof(name), desc_len = sizeof(desc), verbosity = -1, bind = -1;
        int scope = -1, index = -1;
        MPI_Datatype dt = MPI_DATATYPE_NULL;
        MPI_T_enum e = MPI_T_ENUM_NULL;
        MPI_OK(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &e, desc, &desc_len, &bind,
                                   &scope));
        CHECK(name[0] && name_len == (int)strlen(name) + 1, "cvar %d: name '%s' len %d", i, name,
              name_len);
        CHECK(desc[0] && desc_len == (int)strlen(desc) + 1, "%s: desc len %d", name, desc_len);
        MPI_OK(MPI_T_cvar_get_index(name, &index));
        CHECK(index == i, "%s: index %d, by name %d", name, i, index);
        bool dt_ok = false;
        for (size_t k = 0; k < sizeof(allowed) / sizeof(allowed[0]); k++)
            dt_ok |= dt == allowed[k];
        CHECK(dt_ok, "%s: unexpected datatype", name);
        CHECK(e == MPI_T_ENUM_NULL || dt == MPI_INT, "%s: enum on a non-MPI_INT cvar", name);
        if (e != MPI_T_ENUM_NULL)
            check_enum(e);
        CHECK(verbosity_ok(verbosity), "%s: verbosity %#x", name, verbosity);
        CHECK(bind == MPI_T_BIND_NO_OBJECT, "%s: bind %d", name, bind);
        /* while MPI runs, those read at start-up are constant */
        CHECK(scope == MPI_T_SCOPE_ALL_EQ || scope == MPI_T_SCOPE_LOCAL ||
                  (scope == MPI_T_SCOPE_CONSTANT && initialized()), "%s: scope %d", name, scope);
        /* Every one can be read. */
        MPI_T_cvar_handle h;
        int count = 0;
        MPI_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        CHECK(count >= 1 && (count == 1 || dt == MPI_CHAR), "%s: count %d", name, count);
        void *buf = calloc((size_t)count, 8);
        MPI_OK(MPI_T_cvar_read(h, buf));
        if (dt == MPI_CHAR)
            CHECK(memchr(buf, 0, (size_t)count), "%s: string not terminated", name);
        if (e != MPI_T_ENUM_NULL) {
            int n = 0, v = *(int *)buf;
            MPI_OK(MPI_T_enum_get_info(e, &n, NULL, NULL));
            CHECK(v >= 0 && v < n, "%s: value %d outside its enum of %d", name, v, n);
        }
        free(buf);
        MPI_OK(MPI_T_cvar_handle_free(&h));
        CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle not reset by free");
    }
    *num_out = num;
}

/* Known parameters: type mapping, enum contents, values. */
static void check_known(void)
{
    MPI_Datatype dt;
    MPI_T_enum e;
    int scope, verbosity;
    MPI_OK(MPI_T_cvar_get_info(t_cvar("btl_sm_eager_limit"), NULL, NULL, &verbosity, &dt, &e, NULL,
                               NULL, NULL, &scope));
    CHECK(dt == MPI_UNSIGNED_LONG_LONG && e == MPI_T_ENUM_NULL, "btl_sm_eager_limit: size_t");
    CHECK(scope == MPI_T_SCOPE_ALL_EQ, "btl_sm_eager_limit: scope %d", scope);
    MPI_OK(MPI_T_cvar_get_info(t_cvar("mpi_show_errors"), NULL, NULL, &verbosity, &dt, &e, NULL,
                               NULL, NULL, &scope));
    CHECK(dt == MPI_INT && e != MPI_T_ENUM_NULL, "mpi_show_errors: bool as enum");
    CHECK(verbosity == MPI_T_VERBOSITY_USER_BASIC, "mpi_show_errors: level 1 is USER_BASIC");
    char ename[32], item[32];
    int len = sizeof(ename), ilen = sizeof(item), num, value;
    MPI_OK(MPI_T_enum_get_info(e, &num, ename, &len));
    CHECK(num == 2 && strcmp(ename, "bool") == 0, "bool enum: %d '%s'", num, ename);
    MPI_OK(MPI_T_enum_get_item(e, 1, &value, item, &ilen));
    CHECK(value == 1 && strcmp(item, "true") == 0, "bool item 1: %d %s", value, item);

    MPI_OK(MPI_T_cvar_get_info(t_cvar("btl_sm_single_copy"), NULL, NULL, NULL, &dt, &e, NULL, NULL,
                               NULL, NULL));
    CHECK(dt == MPI_INT && check_enum(e) == 2, "btl_sm_single_copy: enum cma|none");
    len = sizeof(ename);
    MPI_OK(MPI_T_enum_get_info(e, NULL, ename, &len));
    CHECK(strcmp(ename, "btl_sm_single_copy") == 0, "choices enum named %s", ename);
    ilen = sizeof(item);
    MPI_OK(MPI_T_enum_get_item(e, 1, &value, item, &ilen));
    CHECK(strcmp(item, "none") == 0, "second choice %s", item);

    MPI_OK(MPI_T_cvar_get_info(t_cvar("btl"), NULL, NULL, NULL, &dt, &e, NULL, NULL, NULL, NULL));
    CHECK(dt == MPI_CHAR && e == MPI_T_ENUM_NULL, "btl: a string");
    t_cvar("coll");
    t_cvar("coll_tuned_bcast_algorithm");
    MPI_RETURNS(MPI_T_cvar_get_index("no_such_parameter", &value), MPI_T_ERR_INVALID_NAME);
}

static int handle_of(const char *name, MPI_T_cvar_handle *h)
{
    int count;
    MPI_OK(MPI_T_cvar_handle_alloc(t_cvar(name), NULL, h, &count));
    return count;
}

static unsigned long long read_ull(const char *name)
{
    MPI_T_cvar_handle h;
    unsigned long long v = 0;
    handle_of(name, &h);
    MPI_OK(MPI_T_cvar_read(h, &v));
    MPI_OK(MPI_T_cvar_handle_free(&h));
    return v;
}

static int read_int(const char *name)
{
    MPI_T_cvar_handle h;
    int v = -1;
    handle_of(name, &h);
    MPI_OK(MPI_T_cvar_read(h, &v));
    MPI_OK(MPI_T_cvar_handle_free(&h));
    return v;
}

static int write_int(const char *name, int v)
{
    MPI_T_cvar_handle h;
    handle_of(name, &h);
    int rc = MPI_T_cvar_write(h, &v);
    MPI_OK(MPI_T_cvar_handle_free(&h));
    return rc;
}

static int write_ull(const char *name, unsigned long long v)
{
    MPI_T_cvar_handle h;
    handle_of(name, &h);
    int rc = MPI_T_cvar_write(h, &v);
    MPI_OK(MPI_T_cvar_handle_free(&h));
    return rc;
}

/* Before MPI_Init: every kind of value written, bad ones refused. */
static void write_before_init(void)
{
    const char *env = getenv("RAIL_BTL_SM_EAGER_LIMIT");
    unsigned long long before = read_ull("btl_sm_eager_limit");
    CHECK(before == (env ? strtoull(env, NULL, 0) : 16384), "btl_sm_eager_limit = %llu", before);
    MPI_OK(write_ull("btl_sm_eager_limit", 2048));
    CHECK(read_ull("btl_sm_eager_limit") == 2048, "write not seen");

    int binomial = t_cvar_choice("coll_tuned_bcast_algorithm", "binomial");
    MPI_OK(write_int("coll_tuned_bcast_algorithm", binomial));
    CHECK(read_int("coll_tuned_bcast_algorithm") == binomial, "enum write not seen");
    MPI_RETURNS(write_int("coll_tuned_bcast_algorithm", 99), MPI_T_ERR_INVALID);
    MPI_RETURNS(write_int("coll_tuned_bcast_algorithm", -1), MPI_T_ERR_INVALID);
    MPI_RETURNS(write_int("btl_sm_prefault", 2), MPI_T_ERR_INVALID);
    MPI_OK(write_int("btl_sm_prefault", 1));
    CHECK(read_int("btl_sm_prefault") == 1, "bool write not seen");

    /* A string, truncated on read to the handle's count. */
    MPI_T_cvar_handle h;
    int count = handle_of("coll_tuned_rules_file", &h);
    CHECK(count >= 256, "string count %d", count);
    char *s = calloc((size_t)count, 1);
    MPI_OK(MPI_T_cvar_read(h, s));
    CHECK(strcmp(s, "") == 0, "coll_tuned_rules_file = '%s'", s);
    MPI_OK(MPI_T_cvar_write(h, "/nonexistent/rules.json"));
    memset(s, 'x', (size_t)count);   /* no NUL within count: refused */
    MPI_RETURNS(MPI_T_cvar_write(h, s), MPI_T_ERR_INVALID);
    MPI_OK(MPI_T_cvar_read(h, s));
    CHECK(strcmp(s, "/nonexistent/rules.json") == 0, "string write not seen: %s", s);
    MPI_OK(MPI_T_cvar_write(h, ""));
    MPI_OK(MPI_T_cvar_handle_free(&h));
    free(s);

    double d;
    int i = t_cvar("btl_sm_eager_limit");
    MPI_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
    MPI_RETURNS(MPI_T_cvar_read(h, NULL), MPI_T_ERR_INVALID);
    MPI_OK(MPI_T_cvar_handle_free(&h));
    MPI_RETURNS(MPI_T_cvar_handle_free(&h), MPI_T_ERR_INVALID_HANDLE);
    MPI_RETURNS(MPI_T_cvar_read(h, &d), MPI_T_ERR_INVALID_HANDLE);
}

/* After MPI_Init: the values written are in effect, writes refused except
 * for parameters read at every use. */
static void after_init(int num_before)
{
    int num;
    MPI_OK(MPI_T_cvar_get_num(&num));
    CHECK(num >= num_before, "cvars went from %d to %d", num_before, num);
    CHECK(read_ull("btl_sm_eager_limit") == 2048, "MPI_Init lost the value written: %llu",
          read_ull("btl_sm_eager_limit"));
    CHECK(read_int("coll_tuned_bcast_algorithm") ==
              t_cvar_choice("coll_tuned_bcast_algorithm", "binomial"), "enum value lost");
    MPI_RETURNS(write_ull("btl_sm_eager_limit", 8192), MPI_T_ERR_CVAR_SET_NOT_NOW);
    MPI_RETURNS(write_int("coll_tuned_priority", 0), MPI_T_ERR_CVAR_SET_NOT_NOW);
    CHECK(read_ull("btl_sm_eager_limit") == 2048, "refused write changed the value");
    /* Read at every use: writable now (test/mpit/mpit_cvar_dynamic.c sees
     * the effect of each). */
    MPI_OK(write_int("mpi_show_errors", 1));
    CHECK(read_int("mpi_show_errors") == 1, "mpi_show_errors not written");
    MPI_OK(write_int("mpi_show_errors", 0));
}

/* Messages around the eager limit written (2048) and a bcast with the
 * algorithm forced, checked. */
static void communicate(void)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = 3000;
    int *out = malloc((size_t)n * sizeof(int)), *in = malloc((size_t)n * sizeof(int));
    for (int len = 100; len <= n; len += 900) {
        for (int i = 0; i < len; i++)
            out[i] = rank * 100000 + i;
        int to = (rank + 1) % size, from = (rank + size - 1) % size;
        MPI_OK(MPI_Sendrecv(out, len, MPI_INT, to, len, in, len, MPI_INT, from, len,
                            MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < len; i++)
            CHECK(in[i] == from * 100000 + i, "len %d: in[%d] = %d", len, i, in[i]);
    }
    for (int i = 0; i < n; i++)
        out[i] = rank == 0 ? i : -1;
    MPI_OK(MPI_Bcast(out, n, MPI_INT, 0, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++)
        CHECK(out[i] == i, "bcast: out[%d] = %d", i, out[i]);
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    int provided, num;
    MPI_RETURNS(MPI_T_cvar_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
    check_all(&num);
    check_known();
    write_before_init();

    MPI_OK(MPI_Init(&argc, &argv));
    after_init(num);
    check_all(&num);
    communicate();
    MPI_OK(MPI_Finalize());

    /* Still usable after MPI_Finalize. */
    CHECK(read_ull("btl_sm_eager_limit") == 2048, "value after MPI_Finalize");
    check_all(&num);
    MPI_OK(MPI_T_finalize());
    MPI_RETURNS(MPI_T_cvar_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
    return 0;
}
