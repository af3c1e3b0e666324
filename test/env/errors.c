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
