/* Communicator attributes: keyvals, callbacks, and the delete callbacks on
 * MPI_COMM_SELF that MPI_Finalize runs first, in reverse order. */
#define CHECK_MPI 1
#include "test/check.h"
#include <string.h>

static int deleted[8], n_deleted;

static int del_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    deleted[n_deleted++] = (int)(long)val;
    return MPI_SUCCESS;
}

static int failing_del(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)val;
    (void)extra;
    return MPI_ERR_OTHER;
}

int main(int argc, char **argv)
{
    int k1, k2, k3, flag;
    void *v;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fn, &k1, NULL));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, failing_del, &k3, NULL));
    CHECK(k1 != k2, "same keyval twice");

    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, k1, &v, &flag));
    CHECK(!flag, "attribute set before set_attr");
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k1, (void *)11L));
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, k1, &v, &flag));
    CHECK(flag && v == (void *)11L, "get after set");
    /* Replacing calls the delete callback on the old value. */
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k1, (void *)12L));
    CHECK(n_deleted == 1 && deleted[0] == 11, "delete on replace: %d", n_deleted);
    MPI_OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, k1));
    CHECK(n_deleted == 2 && deleted[1] == 12, "delete_attr");
    MPI_FAILS(MPI_Comm_delete_attr(MPI_COMM_WORLD, k1), MPI_ERR_KEYVAL);

    /* A failing delete callback makes delete_attr fail, attribute kept. */
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k3, (void *)1L));
    CHECK(MPI_Comm_delete_attr(MPI_COMM_WORLD, k3) != MPI_SUCCESS, "failing delete succeeded");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, k3, &v, &flag));
    CHECK(flag, "attribute lost after failed delete");

    /* Predefined attributes cannot be changed. */
    MPI_FAILS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, (void *)1L), MPI_ERR_KEYVAL);

    /* Freeing a keyval keeps attributes that use it alive. */
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, k1, (void *)21L));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, k2, (void *)22L));
    int k1_copy = k1;
    MPI_OK(MPI_Comm_free_keyval(&k1));
    CHECK(k1 == MPI_KEYVAL_INVALID, "free_keyval did not reset");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_SELF, k1_copy, &v, &flag));
    CHECK(flag && v == (void *)21L, "attribute of a freed keyval");
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fn, &k1, NULL));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, k1, (void *)23L));

    /* Deprecated MPI-1 names still work. */
    MPI_OK(MPI_Attr_get(MPI_COMM_SELF, k2, &v, &flag));
    CHECK(flag && v == (void *)22L, "MPI_Attr_get");

    /* Finalize deletes COMM_SELF attributes first, last set first. */
    n_deleted = 0;
    MPI_Comm_delete_attr(MPI_COMM_WORLD, k3); /* fails, keeps it: not our concern here */
    MPI_OK(MPI_Finalize());
    CHECK(n_deleted == 2 && deleted[0] == 23 && deleted[1] == 21,
          "finalize deleted %d attributes (%d, %d)", n_deleted, deleted[0], deleted[1]);
    return 0;
}
