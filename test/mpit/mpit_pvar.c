/* MPI_T performance variables: the live-object counts follow communicators
 * and datatypes made and freed; the CPU timer starts, stops, resets and is
 * written; sessions and handles are checked, with every error code; the
 * variables components register themselves are there, before MPI_Init and
 * after, as they were, and coll sm's counts its segments. */
#include "mpit_test.h"
#include <stdlib.h>
#include <time.h>

static void check_info(void)
{
    int num;
    MPI_OK(MPI_T_pvar_get_num(&num));
    CHECK(num >= 12, "only %d pvars", num);
    for (int i = 0; i < num; i++) {
        char name[128], desc[512];
        int nlen = sizeof(name), dlen = sizeof(desc), verb, cls, bind, ro, cont, at, index;
        MPI_Datatype dt;
        MPI_T_enum e;
        MPI_OK(MPI_T_pvar_get_info(i, name, &nlen, &verb, &cls, &dt, &e, desc, &dlen, &bind, &ro,
                                   &cont, &at));
        CHECK(name[0] && desc[0] && nlen == (int)strlen(name) + 1, "pvar %d", i);
        MPI_OK(MPI_T_pvar_get_index(name, cls, &index));
        CHECK(index == i, "%s: index %d, by name %d", name, i, index);
        CHECK(bind == MPI_T_BIND_NO_OBJECT && e == MPI_T_ENUM_NULL, "%s: bind/enum", name);
        if (cls == MPI_T_PVAR_CLASS_LEVEL)
            CHECK(dt == MPI_UNSIGNED_LONG_LONG && ro && cont, "%s: a readonly counter", name);
        if (cls == MPI_T_PVAR_CLASS_TIMER)
            CHECK(dt == MPI_DOUBLE && !cont, "%s: a timer", name);
        int other = cls == MPI_T_PVAR_CLASS_LEVEL ? MPI_T_PVAR_CLASS_TIMER : MPI_T_PVAR_CLASS_LEVEL;
        MPI_RETURNS(MPI_T_pvar_get_index(name, other, &index), MPI_T_ERR_INVALID_NAME);
    }
    MPI_RETURNS(MPI_T_pvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                    NULL, NULL),
                MPI_T_ERR_INVALID_INDEX);
    MPI_RETURNS(MPI_T_pvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                    NULL, NULL),
                MPI_T_ERR_INVALID_INDEX);
    int index;
    MPI_RETURNS(MPI_T_pvar_get_index("no_such_pvar", MPI_T_PVAR_CLASS_LEVEL, &index),
                MPI_T_ERR_INVALID_NAME);
}

/* Variables that their components register (base/pvar.h), one of each
 * owner, exist from MPI_T_init_thread on with the name, class and kind
 * they had when the front end defined them all, in their component's
 * category. */
static void check_registered(void)
{
    static const struct {
        const char *name, *category;
        int var_class;
        bool dbl, ro, cont, at;
    } vars[] = {
        {"coll_sm_segments_created", "coll_sm", MPI_T_PVAR_CLASS_COUNTER, false, true, true, false},
        {"coll_sm_small_bulk", "coll_sm", MPI_T_PVAR_CLASS_COUNTER, false, true, true, false},
        {"btl_sm_frags_streamed", "btl_sm", MPI_T_PVAR_CLASS_COUNTER, false, true, true, false},
        {"pml_rndv_recv_get", "pml", MPI_T_PVAR_CLASS_COUNTER, false, true, true, false},
        {"accel_device_allocs", "accel", MPI_T_PVAR_CLASS_COUNTER, false, true, true, false},
        {"mpi_live_session", "mpi", MPI_T_PVAR_CLASS_LEVEL, false, true, true, false},
        {"mpi_process_cpu_time", "mpi", MPI_T_PVAR_CLASS_TIMER, true, false, false, true},
    };
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        int idx = t_pvar(vars[i].name, vars[i].var_class), cls, ro, cont, at, n, in = 0;
        char name[128];
        int len = sizeof(name);
        MPI_Datatype dt;
        MPI_OK(MPI_T_pvar_get_info(idx, name, &len, NULL, &cls, &dt, NULL, NULL, NULL, NULL, &ro,
                                 &cont, &at));
        CHECK(strcmp(name, vars[i].name) == 0 && cls == vars[i].var_class, "%s: %s, class %d",
              vars[i].name, name, cls);
        CHECK(dt == (vars[i].dbl ? MPI_DOUBLE : MPI_UNSIGNED_LONG_LONG) && ro == vars[i].ro &&
                  cont == vars[i].cont && at == vars[i].at,
              "%s: datatype, readonly %d, continuous %d, atomic %d", name, ro, cont, at);
        int cat = t_category(vars[i].category), v[64];
        MPI_OK(MPI_T_category_get_info(cat, NULL, NULL, NULL, NULL, NULL, &n, NULL));
        MPI_OK(MPI_T_category_get_pvars(cat, n < 64 ? n : 64, v));
        for (int k = 0; k < n && k < 64; k++)
            in |= v[k] == idx;
        CHECK(in, "%s is not in category %s", name, vars[i].category);
    }
}

static unsigned long long read_counter(const char *name)
{
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int count;
    unsigned long long v = ~0ull;
    MPI_OK(MPI_T_pvar_session_create(&s));
    MPI_OK(MPI_T_pvar_handle_alloc(s, t_pvar(name, MPI_T_PVAR_CLASS_COUNTER), NULL, &h, &count));
    MPI_OK(MPI_T_pvar_read(s, h, &v));
    MPI_OK(MPI_T_pvar_session_free(&s));
    return v;
}

/* coll sm's counter, read through MPI_T, follows coll sm: a new
 * communicator's first collective sets up its segment, fresh or one kept
 * from a freed communicator. */
static void check_component_counter(void)
{
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n < 2)
        return;   /* coll sm serves communicators of 2 processes or more */
    unsigned long long c0 = read_counter("coll_sm_segments_created"),
                       r0 = read_counter("coll_sm_segments_reused");
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int x = 1, y = 0;
    MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, dup));
    CHECK(y == n, "allreduce: %d", y);
    unsigned long long segs = read_counter("coll_sm_segments_created") - c0 +
                              read_counter("coll_sm_segments_reused") - r0;
    CHECK(segs == 1, "%llu coll sm segments set up for one new communicator", segs);
    MPI_OK(MPI_Comm_free(&dup));
}

static unsigned long long read_live(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = ~0ull;
    MPI_OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

static void check_live(MPI_T_pvar_session s)
{
    MPI_T_pvar_handle comms, types;
    int count;
    MPI_OK(MPI_T_pvar_handle_alloc(s, t_pvar("mpi_live_comm", MPI_T_PVAR_CLASS_LEVEL), NULL, &comms,
                                   &count));
    CHECK(count == 1, "count %d", count);
    MPI_OK(MPI_T_pvar_handle_alloc(s, t_pvar("mpi_live_datatype", MPI_T_PVAR_CLASS_LEVEL), NULL,
                                   &types, &count));
    unsigned long long c0 = read_live(s, comms), t0 = read_live(s, types);
    MPI_Comm dup, split;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK(read_live(s, comms) == c0 + 1, "dup: %llu -> %llu", c0, read_live(s, comms));
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_OK(MPI_Comm_split(dup, rank % 2, 0, &split));
    CHECK(read_live(s, comms) == c0 + 2, "split: %llu", read_live(s, comms));
    MPI_Datatype t;
    MPI_OK(MPI_Type_contiguous(4, MPI_INT, &t));
    CHECK(read_live(s, types) == t0 + 1, "type: %llu -> %llu", t0, read_live(s, types));
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Comm_free(&split));
    MPI_OK(MPI_Comm_free(&dup));
    /* A communicator that point-to-point requests used goes when progress
     * next runs (the pml lets go of it there), as the standard allows. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(read_live(s, comms) == c0, "after free: %llu, was %llu", read_live(s, comms), c0);
    CHECK(read_live(s, types) == t0, "type after free: %llu", read_live(s, types));

    /* Continuous and readonly. */
    unsigned long long v = 5;
    MPI_RETURNS(MPI_T_pvar_start(s, comms), MPI_T_ERR_PVAR_NO_STARTSTOP);
    MPI_RETURNS(MPI_T_pvar_stop(s, comms), MPI_T_ERR_PVAR_NO_STARTSTOP);
    MPI_RETURNS(MPI_T_pvar_write(s, comms, &v), MPI_T_ERR_PVAR_NO_WRITE);
    MPI_RETURNS(MPI_T_pvar_reset(s, comms), MPI_T_ERR_PVAR_NO_WRITE);
    MPI_RETURNS(MPI_T_pvar_readreset(s, comms, &v), MPI_T_ERR_PVAR_NO_WRITE);
    MPI_OK(MPI_T_pvar_handle_free(s, &types));
    CHECK(types == MPI_T_PVAR_HANDLE_NULL, "handle not reset by free");
    MPI_OK(MPI_T_pvar_handle_free(s, &comms));
}

static double read_timer(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    double v = -1;
    MPI_OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

/* Use this much CPU time (however many ranks share the cores). */
static void burn_cpu(double seconds)
{
    clock_t t = clock();
    volatile double x = 0;
    while ((double)(clock() - t) < seconds * CLOCKS_PER_SEC)
        for (int i = 0; i < 1000; i++)
            x += i * 0.5;
}

static void check_timer(MPI_T_pvar_session s)
{
    MPI_T_pvar_handle h, h2;
    int count, idx = t_pvar("mpi_process_cpu_time", MPI_T_PVAR_CLASS_TIMER);
    MPI_OK(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count));
    MPI_OK(MPI_T_pvar_handle_alloc(s, idx, NULL, &h2, &count));
    CHECK(read_timer(s, h) == 0, "a stopped timer starts at 0");
    burn_cpu(0.02);
    CHECK(read_timer(s, h) == 0, "a stopped timer does not run");
    MPI_OK(MPI_T_pvar_start(s, h));
    MPI_OK(MPI_T_pvar_start(s, h)); /* already started: fine */
    burn_cpu(0.05);
    double a = read_timer(s, h);
    CHECK(a >= 0.045 && a < 10, "timer read %g after 0.05 s of CPU", a);
    MPI_OK(MPI_T_pvar_stop(s, h));
    double b = read_timer(s, h);
    burn_cpu(0.02);
    CHECK(read_timer(s, h) == b && b >= a, "stopped timer moved: %g %g", b, read_timer(s, h));
    CHECK(read_timer(s, h2) == 0, "handles are independent");
    double v;
    MPI_OK(MPI_T_pvar_readreset(s, h, &v));
    CHECK(v == b && read_timer(s, h) == 0, "readreset: %g, then %g", v, read_timer(s, h));
    v = 3.5;
    MPI_OK(MPI_T_pvar_write(s, h, &v));
    CHECK(read_timer(s, h) == 3.5, "write: %g", read_timer(s, h));
    v = -1;
    MPI_RETURNS(MPI_T_pvar_write(s, h, &v), MPI_T_ERR_INVALID);
    MPI_OK(MPI_T_pvar_reset(s, h));
    CHECK(read_timer(s, h) == 0, "reset: %g", read_timer(s, h));

    /* All handles of the session: continuous ones (here also comm) skipped. */
    MPI_T_pvar_handle live;
    MPI_OK(MPI_T_pvar_handle_alloc(s, t_pvar("mpi_live_comm", MPI_T_PVAR_CLASS_LEVEL), NULL, &live,
                                   &count));
    MPI_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    burn_cpu(0.03);
    MPI_OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    CHECK(read_timer(s, h) > 0 && read_timer(s, h2) > 0, "ALL_HANDLES did not start both");
    MPI_OK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    CHECK(read_timer(s, h) == 0 && read_timer(s, h2) == 0, "ALL_HANDLES did not reset");
    MPI_RETURNS(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    MPI_RETURNS(MPI_T_pvar_write(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    MPI_RETURNS(MPI_T_pvar_readreset(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    MPI_RETURNS(MPI_T_pvar_read(s, h, NULL), MPI_T_ERR_INVALID);
    MPI_OK(MPI_T_pvar_handle_free(s, &h));
    MPI_RETURNS(MPI_T_pvar_read(s, h, &v), MPI_T_ERR_INVALID_HANDLE);
    MPI_RETURNS(MPI_T_pvar_handle_free(s, &h), MPI_T_ERR_INVALID_HANDLE);
    /* h2 and live are freed with the session. */
    (void)h2;
}

static void check_sessions(void)
{
    MPI_T_pvar_session s1, s2, gone;
    MPI_T_pvar_handle h;
    int count;
    double v;
    MPI_OK(MPI_T_pvar_session_create(&s1));
    MPI_OK(MPI_T_pvar_session_create(&s2));
    CHECK(s1 != s2 && s1 != MPI_T_PVAR_SESSION_NULL, "sessions");
    int idx = t_pvar("mpi_process_cpu_time", MPI_T_PVAR_CLASS_TIMER);
    MPI_OK(MPI_T_pvar_handle_alloc(s1, idx, NULL, &h, &count));
    /* A handle of another session. */
    MPI_RETURNS(MPI_T_pvar_read(s2, h, &v), MPI_T_ERR_INVALID_HANDLE);
    MPI_RETURNS(MPI_T_pvar_start(s2, h), MPI_T_ERR_INVALID_HANDLE);
    MPI_RETURNS(MPI_T_pvar_handle_free(s2, &h), MPI_T_ERR_INVALID_HANDLE);
    MPI_RETURNS(MPI_T_pvar_handle_alloc(s1, 10000, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    MPI_RETURNS(MPI_T_pvar_handle_alloc(s1, -1, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    gone = s1;
    MPI_OK(MPI_T_pvar_session_free(&s1));
    CHECK(s1 == MPI_T_PVAR_SESSION_NULL, "session not reset by free");
    /* Freed with its session. */
    MPI_RETURNS(MPI_T_pvar_read(gone, h, &v), MPI_T_ERR_INVALID_SESSION);
    MPI_RETURNS(MPI_T_pvar_read(s2, h, &v), MPI_T_ERR_INVALID_HANDLE);
    MPI_RETURNS(MPI_T_pvar_session_free(&gone), MPI_T_ERR_INVALID_SESSION);
    MPI_RETURNS(MPI_T_pvar_handle_alloc(gone, idx, NULL, &h, &count), MPI_T_ERR_INVALID_SESSION);
    MPI_RETURNS(MPI_T_pvar_start(gone, MPI_T_PVAR_ALL_HANDLES), MPI_T_ERR_INVALID_SESSION);
    MPI_RETURNS(MPI_T_pvar_reset(MPI_T_PVAR_SESSION_NULL, MPI_T_PVAR_ALL_HANDLES),
                MPI_T_ERR_INVALID_SESSION);
    MPI_RETURNS(MPI_T_pvar_session_free(NULL), MPI_T_ERR_INVALID);
    MPI_OK(MPI_T_pvar_session_free(&s2));
}

int main(int argc, char **argv)
{
    int provided, num;
    MPI_T_pvar_session s;
    MPI_RETURNS(MPI_T_pvar_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
    MPI_RETURNS(MPI_T_pvar_session_create(&s), MPI_T_ERR_NOT_INITIALIZED);
    MPI_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    check_info();
    check_registered();
    /* A session made before MPI_Init stays usable through it. */
    MPI_OK(MPI_T_pvar_session_create(&s));
    check_timer(s);
    MPI_OK(MPI_Init(&argc, &argv));
    check_live(s);
    check_timer(s);
    check_sessions();
    check_component_counter();
    check_registered();
    MPI_OK(MPI_Finalize());
    check_timer(s);
    MPI_OK(MPI_T_pvar_session_free(&s));
    MPI_OK(MPI_T_finalize());
    return 0;
}
