/* The Sessions model alone (no MPI_Init): init, process sets, groups,
 * a communicator from a group, messages and a collective on it, session
 * errhandlers, two sessions at once, finalize.  (A new session after the
 * last one finalized needs the rte to start again after rte_finalize,
 * which it does not do yet.) */
#include "comm_test.h"

static int eh_calls, eh_code;

static void session_eh(MPI_Session *s, int *code, ...)
{
    (void)s;
    eh_calls++;
    eh_code = *code;
}

static void check_psets(MPI_Session s, int *wsize)
{
    int n, len;
    char name[MPI_MAX_PSET_NAME_LEN];
    MPI_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n == 2, "%d process sets", n);
    len = 0;   /* the length only: the name may be NULL */
    MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL));
    CHECK(len == (int)strlen("mpi://WORLD") + 1, "length of pset 0: %d", len);
    MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, name));
    CHECK(strcmp(name, "mpi://WORLD") == 0, "pset 0 is '%s'", name);
    len = sizeof(name);
    MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 1, &len, name));
    CHECK(strcmp(name, "mpi://SELF") == 0, "pset 1 is '%s'", name);
    MPI_Info info;
    char val[32];
    int flag;
    MPI_OK(MPI_Session_get_pset_info(s, "mpi://SELF", &info));
    MPI_OK(MPI_Info_get(info, "mpi_size", 31, val, &flag));
    CHECK(flag && strcmp(val, "1") == 0, "mpi_size of mpi://SELF: %s", val);
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Session_get_pset_info(s, "mpi://WORLD", &info));
    MPI_OK(MPI_Info_get(info, "mpi_size", 31, val, &flag));
    CHECK(flag, "mpi_size of mpi://WORLD");
    *wsize = atoi(val);
    MPI_OK(MPI_Info_free(&info));
}

static void comm_from_pset(MPI_Session s, const char *pset, const char *tag, int wsize)
{
    MPI_Group g;
    MPI_Comm c;
    int r, n, sum = 0;
    MPI_OK(MPI_Group_from_session_pset(s, pset, &g));
    MPI_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Comm_rank(c, &r));
    MPI_OK(MPI_Comm_size(c, &n));
    CHECK(n == (strcmp(pset, "mpi://SELF") == 0 ? 1 : wsize), "%s: size %d", pset, n);
    ring_check(c);
    MPI_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n * (n - 1) / 2, "allreduce over the session communicator: %d", sum);
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_get_errhandler(c, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "errhandler of the new communicator");
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(c, &d));   /* communicators of a session are ordinary ones */
    ring_check(d);
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Comm_free(&c));
}

int main(void)
{
    int flag;
    MPI_Initialized(&flag);
    CHECK(!flag, "MPI_Initialized before anything");
    MPI_Errhandler eh;
    MPI_OK(MPI_Session_create_errhandler(session_eh, &eh));
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "thread_level", "MPI_THREAD_SINGLE"));
    MPI_OK(MPI_Info_set(info, "rail_test_hint", "yes"));
    MPI_Session s1, s2;
    MPI_OK(MPI_Session_init(info, eh, &s1));
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    int sessions = live("session");
    CHECK(sessions == 2, "%d live sessions", sessions);
    MPI_Initialized(&flag);
    CHECK(!flag, "sessions do not initialize the World model");
    MPI_Info used;
    char val[64];
    MPI_OK(MPI_Session_get_info(s1, &used));
    MPI_OK(MPI_Info_get(used, "thread_level", 63, val, &flag));
    CHECK(flag && strcmp(val, "MPI_THREAD_SINGLE") == 0, "thread_level '%s'", val);
    MPI_OK(MPI_Info_get(used, "rail_test_hint", 63, val, &flag));
    CHECK(flag && strcmp(val, "yes") == 0, "hint kept: '%s'", val);
    MPI_OK(MPI_Info_free(&used));
    int wsize;
    check_psets(s1, &wsize);
    comm_from_pset(s1, "mpi://WORLD", "rail://test/world", wsize);
    comm_from_pset(s2, "mpi://WORLD", "rail://test/world2", wsize);
    comm_from_pset(s1, "mpi://SELF", "rail://test/self", wsize);
    /* Errors go to the session's handler. */
    MPI_Group g;
    int rc = MPI_Group_from_session_pset(s1, "mpi://NOWHERE", &g);
    (void)rc;
    CHECK(eh_calls == 1, "session errhandler called %d times", eh_calls);
    int cls;
    MPI_Error_class(eh_code, &cls);
    CHECK(cls == MPI_ERR_ARG, "unknown pset: class %d", cls);
    int n;
    MPI_FAILS(MPI_Session_get_nth_pset(s2, MPI_INFO_NULL, 5, &n, val), MPI_ERR_ARG);
    MPI_OK(MPI_Session_finalize(&s2));
    CHECK(s2 == MPI_SESSION_NULL, "finalize sets MPI_SESSION_NULL");
    MPI_OK(MPI_Session_finalize(&s1));
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_Finalized(&flag);
    CHECK(!flag, "MPI_Finalized after sessions only");
    return 0;
}
