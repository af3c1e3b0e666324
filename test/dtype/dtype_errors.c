/*
 * Argument errors of the datatype functions: negative counts
 * (MPI_ERR_COUNT), null, freed and predefined types where they are not
 * allowed (MPI_ERR_TYPE), uncommitted types in communication-like calls,
 * bad arrays and sizes (MPI_ERR_ARG); none of them leaves an object
 * behind.
 */
#include "test/dtype/dtype_test.h"
#include <mpi-ext.h>

static void test_counts(void)
{
    MPI_Datatype t;
    int one[] = {1, 1}, neg[] = {1, -1}, disp[] = {0, 4};
    MPI_Aint adisp[] = {0, 8};
    MPI_Datatype ts[] = {MPI_INT, MPI_INT};
    MPI_FAILS(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    MPI_FAILS(MPI_Type_vector(-1, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
    MPI_FAILS(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_COUNT);
    MPI_FAILS(MPI_Type_create_hvector(2, -3, 8, MPI_INT, &t), MPI_ERR_COUNT);
    MPI_FAILS(MPI_Type_indexed(-2, one, disp, MPI_INT, &t), MPI_ERR_COUNT);
    MPI_FAILS(MPI_Type_indexed(2, neg, disp, MPI_INT, &t), MPI_ERR_COUNT);
    MPI_FAILS(MPI_Type_create_hindexed(2, neg, adisp, MPI_INT, &t), MPI_ERR_COUNT);
    MPI_FAILS(MPI_Type_create_indexed_block(2, -1, disp, MPI_INT, &t), MPI_ERR_COUNT);
    MPI_FAILS(MPI_Type_create_hindexed_block(-1, 1, adisp, MPI_INT, &t), MPI_ERR_COUNT);
    MPI_FAILS(MPI_Type_create_struct(-1, one, adisp, ts, &t), MPI_ERR_COUNT);
    MPI_FAILS(MPI_Type_create_struct(2, neg, adisp, ts, &t), MPI_ERR_COUNT);
    MPI_FAILS(MPI_Type_contiguous_c(-5, MPI_INT, &t), MPI_ERR_COUNT);
    /* Sizes that overflow MPI_Count. */
    MPI_FAILS(MPI_Type_contiguous_c((MPI_Count)1 << 62, MPI_DOUBLE, &t), MPI_ERR_COUNT);
    /* Count 0 is fine. */
    MPI_OK(MPI_Type_contiguous(0, MPI_INT, &t));
    CHECK_BOUNDS(t, 0, 0, 0, 0, 0);
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_create_struct(0, NULL, NULL, NULL, &t));
    MPI_OK(MPI_Type_free(&t));
}

static void test_types(void)
{
    MPI_Datatype t, u;
    int one[] = {1, 1};
    MPI_Aint adisp[] = {0, 8};
    MPI_FAILS(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    MPI_FAILS(MPI_Type_dup(MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    MPI_FAILS(MPI_Type_create_resized(MPI_DATATYPE_NULL, 0, 4, &t), MPI_ERR_TYPE);
    MPI_FAILS(MPI_Type_create_struct(2, one, adisp, (MPI_Datatype[]){MPI_INT, MPI_DATATYPE_NULL},
                                     &t),
              MPI_ERR_TYPE);
    MPI_FAILS(MPI_Type_create_struct(2, one, adisp, NULL, &t), MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_commit(&(MPI_Datatype){MPI_DATATYPE_NULL}), MPI_ERR_TYPE);
    MPI_Datatype null = MPI_DATATYPE_NULL;
    MPI_FAILS(MPI_Type_free(&null), MPI_ERR_TYPE);
    MPI_Datatype predef = MPI_DOUBLE;
    MPI_FAILS(MPI_Type_free(&predef), MPI_ERR_TYPE);

    /* Uncommitted types cannot be packed or reduced; queries work. */
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    int buf[4] = {0}, out[4];
    int pos = 0;
    MPI_FAILS(MPI_Pack(buf, 1, t, out, sizeof(out), &pos, MPI_COMM_SELF), MPI_ERR_TYPE);
    MPI_FAILS(MPI_Reduce_local(buf, out, 1, t, MPI_SUM), MPI_ERR_TYPE);
    MPI_Count size;
    MPI_OK(MPI_Type_size_c(t, &size));

    /* A freed handle is recognised as such (while the object lives on
     * inside another type, so that looking at it is legal). */
    MPI_Datatype holder;
    MPI_OK(MPI_Type_contiguous(2, t, &holder));
    u = t;
    MPI_OK(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL, "free sets MPI_DATATYPE_NULL");
    MPI_FAILS(MPI_Type_free(&u), MPI_ERR_TYPE);
    MPI_FAILS(MPI_Type_size_c(u, &size), MPI_ERR_TYPE);
    MPI_FAILS(MPI_Type_contiguous(1, u, &t), MPI_ERR_TYPE);
    /* get_contents hands out a new handle of it, valid again. */
    MPI_Datatype inner;
    int n;
    MPI_OK(MPI_Type_get_contents(holder, 1, 0, 1, &n, NULL, &inner));
    CHECK(inner == u, "the same object comes back");
    MPI_OK(MPI_Type_size_c(inner, &size));
    CHECK(size == 8, "size %lld", (long long)size);
    MPI_OK(MPI_Type_free(&inner));
    MPI_OK(MPI_Type_free(&holder));
}

static void test_contents_args(void)
{
    MPI_Datatype t;
    int bl[] = {1, 2, 3}, d[] = {0, 3, 8};
    MPI_OK(MPI_Type_indexed(3, bl, d, MPI_INT, &t));
    int ints[7];
    MPI_Aint a[1];
    MPI_Datatype ts[1];
    MPI_FAILS(MPI_Type_get_contents(t, 6, 0, 1, ints, a, ts), MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_get_contents(t, 7, 0, 0, ints, a, ts), MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_get_contents_c(t, 7, 0, 0, 0, ints, a, NULL, ts), MPI_ERR_ARG);
    MPI_OK(MPI_Type_get_contents(t, 7, 0, 1, ints, a, ts));
    MPI_FAILS(MPI_Type_set_name(t, NULL), MPI_ERR_ARG);
    MPI_OK(MPI_Type_free(&t));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    int before, after;
    MPIX_Live_objects("datatype", &before);
    test_counts();
    test_types();
    test_contents_args();
    MPIX_Live_objects("datatype", &after);
    CHECK(after == before, "the failed calls left %d datatypes", after - before);
    return check_mpi_finalize("dtype_errors");
}
