/* Error classes, codes, strings and errhandlers. */
#define CHECK_MPI 1
#include "test/check.h"
#include <string.h>

static int handler_calls, handler_code;
static MPI_Comm handler_comm;

static void my_handler(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_comm = *comm;
}

/* Seconds per round of add class, code, string and remove them, the best
 * of three runs of n rounds. */
static double error_round_time(int n)
{
    double best = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            int c, e, e2, c2;
            MPI_OK(MPI_Add_error_class(&c));
            MPI_OK(MPI_Add_error_code(c, &e));
            MPI_OK(MPI_Add_error_code(MPI_ERR_OTHER, &e2));
            MPI_OK(MPI_Add_error_string(e, "scaled"));
            MPI_OK(MPI_Error_class(e, &c2));
            CHECK(c2 == c, "round %d: class of %d is %d, not %d", i, e, c2, c);
            MPI_OK(MPI_Remove_error_string(e));
            MPI_OK(MPI_Remove_error_code(e2));
            MPI_OK(MPI_Remove_error_code(e));
            MPI_OK(MPI_Remove_error_class(c));
        }
        double t = (MPI_Wtime() - t0) / n;
        best = t < best ? t : best;
    }
    return best;
}

/* MPI-4.1's add/remove at scale: each call O(1) amortised.  A round takes
 * as long with 50,000 classes alive as with none (it grew with every class
 * ever added: 10,000 rounds took minutes), the live classes go in the order
 * they came, and 10,000 rounds take well under a second. */
static void test_error_scale(void)
{
    enum { LIVE = 50000, ROUNDS = 10000 };
    static int cls[LIVE], code[LIVE];
    double few = error_round_time(2000);
    for (int i = 0; i < LIVE; i++) {
        MPI_OK(MPI_Add_error_class(&cls[i]));
        MPI_OK(MPI_Add_error_code(cls[i], &code[i]));
    }
    double many = error_round_time(2000);
    CHECK(many < 5 * few + 2e-6, "a round takes %.2f us with %d classes alive, %.2f us with none",
          many * 1e6, LIVE, few * 1e6);
    double t0 = MPI_Wtime();
    for (int i = 0; i < LIVE; i++) {
        int c2;
        MPI_OK(MPI_Error_class(code[i], &c2));
        CHECK(c2 == cls[i], "class of %d is %d, not %d", code[i], c2, cls[i]);
        MPI_FAILS(MPI_Remove_error_class(cls[i]), MPI_ERR_ARG);   /* it still has a code */
        MPI_OK(MPI_Remove_error_code(code[i]));
        MPI_OK(MPI_Remove_error_class(cls[i]));
    }
    double t = MPI_Wtime() - t0 + error_round_time(ROUNDS) * ROUNDS;
    CHECK(t < 5.0, "removing %d classes and %d rounds took %.1f s", LIVE, ROUNDS, t);
}

int main(int argc, char **argv)
{
    char s[MPI_MAX_ERROR_STRING];
    int len, cls, flag;
    MPI_OK(MPI_Init(&argc, &argv));

    /* Predefined classes map to themselves and have text. */
    MPI_OK(MPI_Error_class(MPI_ERR_RANK, &cls));
    CHECK(cls == MPI_ERR_RANK, "class of MPI_ERR_RANK is %d", cls);
    MPI_OK(MPI_Error_string(MPI_ERR_TRUNCATE, s, &len));
    CHECK(len > 0 && len == (int)strlen(s), "string '%s'", s);
    MPI_OK(MPI_Error_string(MPI_SUCCESS, s, &len));
    CHECK(len > 0, "MPI_SUCCESS has no text");

    /* User classes, codes and strings. */
    int myclass, mycode, mycode2, *last;
    MPI_OK(MPI_Add_error_class(&myclass));
    CHECK(myclass > MPI_ERR_LASTCODE, "new class %d", myclass);
    MPI_OK(MPI_Add_error_code(myclass, &mycode));
    MPI_OK(MPI_Add_error_code(MPI_ERR_ARG, &mycode2));
    MPI_OK(MPI_Error_class(mycode, &cls));
    CHECK(cls == myclass, "class of user code %d is %d", mycode, cls);
    MPI_OK(MPI_Error_class(mycode2, &cls));
    CHECK(cls == MPI_ERR_ARG, "class of user code on ERR_ARG is %d", cls);
    MPI_OK(MPI_Add_error_string(mycode, "my special error"));
    MPI_OK(MPI_Error_string(mycode, s, &len));
    CHECK(strcmp(s, "my special error") == 0, "string '%s'", s);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last >= mycode2, "LASTUSEDCODE %d < %d", *last, mycode2);

    /* Errors come back under MPI_ERRORS_RETURN, with the right class.
     * Errors not tied to a communicator go to MPI_COMM_SELF's handler. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_Add_error_code(12345678, &mycode2), MPI_ERR_ARG);
    MPI_FAILS(MPI_Add_error_string(MPI_ERR_RANK, "x"), MPI_ERR_ARG);
    MPI_FAILS(MPI_Comm_get_attr(MPI_COMM_WORLD, 424242, &last, &flag), MPI_ERR_KEYVAL);
    MPI_FAILS(MPI_Comm_rank(MPI_COMM_NULL, &flag), MPI_ERR_COMM);
    MPI_FAILS(MPI_Comm_size(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    /* A function without an implementation says so, never "success". */
    MPI_Comm parent;
    int rc = MPI_Comm_get_parent(&parent);
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "unimplemented call gave class %d", cls);
    }

    /* MPI-4.1: removing user error strings, codes and classes. */
    MPI_OK(MPI_Remove_error_string(mycode));
    MPI_OK(MPI_Remove_error_code(mycode));
    MPI_OK(MPI_Remove_error_class(myclass));
    MPI_FAILS(MPI_Remove_error_class(myclass), MPI_ERR_ARG);
    test_error_scale();

    /* A user errhandler is called with the code and the communicator. */
    MPI_Errhandler eh, got;
    MPI_OK(MPI_Comm_create_errhandler(my_handler, &eh));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_SELF, &got));
    CHECK(got == eh, "get_errhandler returned another handler");
    MPI_OK(MPI_Errhandler_free(&got));
    MPI_OK(MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_OTHER));
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER && handler_comm == MPI_COMM_SELF,
          "handler calls %d code %d", handler_calls, handler_code);
    MPI_FAILS(MPI_Comm_get_attr(MPI_COMM_SELF, 424242, &last, &flag), MPI_ERR_KEYVAL);
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_KEYVAL, "handler calls %d code %d",
          handler_calls, handler_code);
    MPI_OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "free did not reset the handle");
    /* Still attached to COMM_SELF after the free: it must keep working. */
    MPI_OK(MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_ARG));
    CHECK(handler_calls == 3, "handler calls %d", handler_calls);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == MPI_ERRORS_RETURN, "world handler");

    MPI_OK(MPI_Finalize());
    return 0;
}
