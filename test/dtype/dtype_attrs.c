/*
 * Attributes on datatypes: copy callbacks run on MPI_Type_dup (with the old
 * type's handle), MPI_TYPE_DUP_FN / MPI_TYPE_NULL_COPY_FN, delete callbacks
 * on MPI_Type_free, MPI_Type_delete_attr and replacement; a failing delete
 * callback fails MPI_Type_free and keeps the type; a failing copy callback
 * fails MPI_Type_dup and leaves nothing behind.  Attributes go with the
 * user's last handle even when another type still holds the object.
 */
#include "test/dtype/dtype_test.h"
#include <mpi-ext.h>

static int copies, deletes, fail_delete, fail_copy;
static MPI_Datatype last_copied, last_deleted;

static int copy_fn(MPI_Datatype old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)keyval;
    CHECK(extra == (void *)&copies, "extra_state passed to the copy callback");
    if (fail_copy)
        return MPI_ERR_OTHER;
    copies++;
    last_copied = old;
    *(void **)out = (char *)in + 1;   /* the copy's value: one more */
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Datatype t, int keyval, void *value, void *extra)
{
    (void)keyval, (void)value, (void)extra;
    if (fail_delete)
        return MPI_ERR_OTHER;
    deletes++;
    last_deleted = t;
    /* The type is still usable inside the callback. */
    MPI_Count size;
    CHECK(MPI_Type_size_c(t, &size) == MPI_SUCCESS, "type usable in its delete callback");
    return MPI_SUCCESS;
}

static void live(int *n)
{
    CHECK(MPIX_Live_objects("datatype", n) == MPI_SUCCESS, "MPIX_Live_objects");
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    int n0, n1;
    live(&n0);
    int kv, kv_dup, kv_null;
    MPI_OK(MPI_Type_create_keyval(copy_fn, delete_fn, &kv, &copies));
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &kv_dup, NULL));
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_fn, &kv_null, NULL));

    MPI_Datatype t, d;
    MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &t));
    MPI_OK(MPI_Type_set_attr(t, kv, (void *)100));
    MPI_OK(MPI_Type_set_attr(t, kv_dup, (void *)200));
    MPI_OK(MPI_Type_set_attr(t, kv_null, (void *)300));

    /* dup: kv copied by the callback (+1), kv_dup as is, kv_null not at all. */
    MPI_OK(MPI_Type_dup(t, &d));
    CHECK(copies == 1 && last_copied == t, "copy callback ran once on the old type");
    void *v;
    int flag;
    MPI_OK(MPI_Type_get_attr(d, kv, &v, &flag));
    CHECK(flag && v == (void *)101, "copied value %p", v);
    MPI_OK(MPI_Type_get_attr(d, kv_dup, &v, &flag));
    CHECK(flag && v == (void *)200, "MPI_TYPE_DUP_FN value %p", v);
    MPI_OK(MPI_Type_get_attr(d, kv_null, &v, &flag));
    CHECK(!flag, "MPI_TYPE_NULL_COPY_FN does not copy");

    /* Replacing and deleting run the delete callback. */
    MPI_OK(MPI_Type_set_attr(t, kv, (void *)110));
    CHECK(deletes == 1 && last_deleted == t, "replacement deletes the old value");
    MPI_OK(MPI_Type_delete_attr(t, kv_null));
    CHECK(deletes == 2, "MPI_Type_delete_attr");

    /* Free runs the delete callbacks of what is left (kv; kv_dup has none). */
    deletes = 0;
    MPI_Datatype stale = d;
    MPI_OK(MPI_Type_free(&d));
    CHECK(deletes == 1 && last_deleted == stale, "free of the dup deleted %d attributes", deletes);
    MPI_OK(MPI_Type_get_attr(t, kv_dup, &v, &flag));
    CHECK(flag && v == (void *)200, "the original keeps its attributes");

    /* A failing delete callback fails the free; the type stays usable. */
    fail_delete = 1;
    MPI_Datatype keep = t;
    CHECK(MPI_Type_free(&t) != MPI_SUCCESS, "free with a failing delete callback fails");
    CHECK(t == keep, "handle kept");
    MPI_OK(MPI_Type_get_attr(t, kv_dup, &v, &flag));
    fail_delete = 0;

    /* A failing copy callback fails the dup and leaves no object behind. */
    live(&n1);
    fail_copy = 1;
    MPI_Datatype d2 = MPI_DATATYPE_NULL;
    CHECK(MPI_Type_dup(t, &d2) != MPI_SUCCESS, "dup with a failing copy callback fails");
    fail_copy = 0;
    int n2;
    live(&n2);
    CHECK(n2 == n1, "a failed dup left %d datatypes", n2 - n1);

    /* Attributes go with the last user handle even when a derived type
     * still holds the object. */
    MPI_Datatype c;
    MPI_OK(MPI_Type_contiguous(3, t, &c));
    deletes = 0;
    MPI_OK(MPI_Type_free(&t));
    CHECK(deletes == 1, "attributes deleted when the user's handle goes");
    MPI_OK(MPI_Type_free(&c));

    /* Attributes on predefined types work too. */
    MPI_OK(MPI_Type_set_attr(MPI_INT, kv_dup, (void *)5));
    MPI_OK(MPI_Type_get_attr(MPI_INT, kv_dup, &v, &flag));
    CHECK(flag && v == (void *)5, "attribute on MPI_INT");
    MPI_OK(MPI_Type_delete_attr(MPI_INT, kv_dup));

    /* Wrong keyvals. */
    MPI_FAILS(MPI_Type_get_attr(MPI_INT, 12345, &v, &flag), MPI_ERR_KEYVAL);

    MPI_OK(MPI_Type_free_keyval(&kv));
    MPI_OK(MPI_Type_free_keyval(&kv_dup));
    MPI_OK(MPI_Type_free_keyval(&kv_null));
    live(&n1);
    CHECK(n1 == n0, "%d datatypes left", n1 - n0);
    return check_mpi_finalize("dtype_attrs");
}
