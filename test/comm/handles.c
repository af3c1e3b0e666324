/* Fortran handle conversion: c2f / f2c round trips for every kind of
 * handle (predefined, null and user-made), unknown values, and the status
 * conversions. */
#include "comm_test.h"

#define ROUND(Kind, h, null)                                                                      \
    do {                                                                                           \
        MPI_Fint f_ = MPI_##Kind##_c2f(h);                                                         \
        CHECK(MPI_##Kind##_f2c(f_) == (h), "MPI_" #Kind " round trip of %s", #h);               \
        CHECK(MPI_##Kind##_c2f(h) == f_, "MPI_" #Kind "_c2f is not stable for %s", #h);          \
        CHECK(MPI_##Kind##_f2c(MPI_##Kind##_c2f(null)) == (null), "MPI_" #Kind " null");         \
        CHECK(MPI_##Kind##_f2c(-12345) == (null), "MPI_" #Kind "_f2c of garbage");              \
        CHECK(MPI_##Kind##_f2c(0x7ffffff0) == (null), "MPI_" #Kind "_f2c of an unused index");  \
    } while (0)

static void test_handles(void)
{
    MPI_Comm c;
    MPI_Group g;
    MPI_Datatype t;
    MPI_Op op;
    MPI_Info info;
    MPI_Errhandler eh;
    MPI_Request rq;
    MPI_Session s;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_OK(MPI_Comm_group(c, &g));
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t));
    MPI_OK(MPI_Op_create((MPI_User_function *)0x1, 1, &op));
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)0x1, &eh));
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    int x = 0;
    MPI_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, c, &rq));
    ROUND(Comm, MPI_COMM_WORLD, MPI_COMM_NULL);
    ROUND(Comm, MPI_COMM_SELF, MPI_COMM_NULL);
    ROUND(Comm, c, MPI_COMM_NULL);
    ROUND(Group, g, MPI_GROUP_NULL);
    ROUND(Group, MPI_GROUP_EMPTY, MPI_GROUP_NULL);
    ROUND(Type, MPI_DOUBLE, MPI_DATATYPE_NULL);
    ROUND(Type, t, MPI_DATATYPE_NULL);
    ROUND(Op, MPI_SUM, MPI_OP_NULL);
    ROUND(Op, op, MPI_OP_NULL);
    ROUND(Info, info, MPI_INFO_NULL);
    ROUND(Info, MPI_INFO_ENV, MPI_INFO_NULL);
    ROUND(Errhandler, eh, MPI_ERRHANDLER_NULL);
    ROUND(Errhandler, MPI_ERRORS_RETURN, MPI_ERRHANDLER_NULL);
    ROUND(Request, rq, MPI_REQUEST_NULL);
    ROUND(Session, s, MPI_SESSION_NULL);
    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC,
          "MPI_MESSAGE_NO_PROC round trip");
    CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL, "MPI_WIN_NULL round trip");
    CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL, "MPI_FILE_NULL round trip");
    /* A value of another kind is not a handle of this one. */
    CHECK(MPI_Comm_f2c(MPI_Type_c2f(MPI_INT)) == MPI_COMM_NULL, "a datatype as a communicator");
    /* Distinct objects, distinct values. */
    MPI_Comm c2;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c2));
    CHECK(MPI_Comm_c2f(c2) != MPI_Comm_c2f(c), "two communicators share a Fortran value");
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(c2)) == c2, "second communicator round trip");
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Comm_free(&c2));
    MPI_OK(MPI_Session_finalize(&s));
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Comm_free(&c));
}

static void test_status(void)
{
    MPI_Status st = {.MPI_SOURCE = 3, .MPI_TAG = 17, .MPI_ERROR = MPI_ERR_TRUNCATE}, back;
    MPI_Status_set_elements(&st, MPI_INT, 5);
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MPI_F08_status f08;
    MPI_OK(MPI_Status_c2f(&st, f));
    CHECK(f[MPI_F_SOURCE] == 3 && f[MPI_F_TAG] == 17 && f[MPI_F_ERROR] == MPI_ERR_TRUNCATE,
          "Status_c2f fields");
    memset(&back, 0, sizeof(back));
    MPI_OK(MPI_Status_f2c(f, &back));
    int n;
    MPI_OK(MPI_Get_count(&back, MPI_INT, &n));
    CHECK(back.MPI_SOURCE == 3 && back.MPI_TAG == 17 && n == 5, "Status_f2c: %d %d %d",
          back.MPI_SOURCE, back.MPI_TAG, n);
    MPI_OK(MPI_Status_c2f08(&st, &f08));
    CHECK(f08.MPI_SOURCE == 3 && f08.MPI_TAG == 17, "Status_c2f08");
    MPI_Fint f2[MPI_F_STATUS_SIZE];
    MPI_OK(MPI_Status_f082f(&f08, f2));
    CHECK(memcmp(f, f2, sizeof(f)) == 0, "Status_f082f");
    MPI_F08_status f08b;
    MPI_OK(MPI_Status_f2f08(f2, &f08b));
    memset(&back, 0, sizeof(back));
    MPI_OK(MPI_Status_f082c(&f08b, &back));
    MPI_OK(MPI_Get_count(&back, MPI_INT, &n));
    CHECK(back.MPI_SOURCE == 3 && n == 5, "Status_f082c");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &back), MPI_ERR_ARG);
    MPI_FAILS(MPI_Status_c2f(MPI_STATUS_IGNORE, f), MPI_ERR_ARG);
    MPI_FAILS(MPI_Status_f082c(MPI_F08_STATUS_IGNORE, &back), MPI_ERR_ARG);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    /* Info handles convert before MPI_Init too. */
    MPI_Info early;
    MPI_OK(MPI_Info_create(&early));
    CHECK(MPI_Info_f2c(MPI_Info_c2f(early)) == early, "info before MPI_Init");
    MPI_Init(&argc, &argv);
    test_handles();
    test_status();
    MPI_OK(MPI_Info_free(&early));
    MPI_Finalize();
    return 0;
}
