/*
 * 100,000 cycles of creating, committing, using and freeing derived
 * datatypes (nested, duplicated, decoded with get_contents, with
 * attributes) and user operations leave MPIX_Live_objects where it was;
 * and the counters do count: they rise while objects are alive.
 */
#include "test/dtype/dtype_test.h"
#include <mpi-ext.h>

#define CYCLES 100000

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static int live(const char *kind)
{
    int n = -1;
    MPI_OK(MPIX_Live_objects(kind, &n));
    return n;
}

static void one_cycle(int i, int keyval)
{
    MPI_Datatype v, s, d, r, parts[2];
    MPI_OK(MPI_Type_vector(3, 1, 2 + i % 3, MPI_INT, &v));
    int bl[] = {1, 2};
    MPI_Aint disp[] = {0, 64};
    MPI_Datatype ts[] = {v, MPI_DOUBLE};
    MPI_OK(MPI_Type_create_struct(2, bl, disp, ts, &s));
    MPI_OK(MPI_Type_set_attr(s, keyval, (void *)(intptr_t)i));
    MPI_OK(MPI_Type_dup(s, &d));
    MPI_OK(MPI_Type_create_resized(d, 0, 128, &r));
    MPI_OK(MPI_Type_commit(&r));
    int ints[3];
    MPI_Aint a[2];
    MPI_OK(MPI_Type_get_contents(s, 3, 2, 2, ints, a, parts));
    MPI_OK(MPI_Type_free(&parts[0]));   /* parts[1] is MPI_DOUBLE */
    MPI_OK(MPI_Type_free(&v));
    MPI_OK(MPI_Type_free(&s));
    char buf[256] = {0}, out[64];
    int pos = 0;
    MPI_OK(MPI_Pack(buf, 1, r, out, sizeof(out), &pos, MPI_COMM_SELF));
    MPI_OK(MPI_Type_free(&d));
    MPI_OK(MPI_Type_free(&r));

    MPI_Op op;
    MPI_OK(MPI_Op_create(sum_fn, i & 1, &op));
    int x[2] = {1, 2}, y[2] = {3, 4};
    MPI_OK(MPI_Reduce_local(x, y, 2, MPI_INT, op));
    MPI_OK(MPI_Op_free(&op));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    int kv;
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &kv, NULL));
    int types0 = live("datatype"), ops0 = live("op"), all0 = live("all");

    /* The counters see live objects. */
    MPI_Datatype t;
    MPI_Op op;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MPI_OK(MPI_Op_create(sum_fn, 1, &op));
    CHECK(live("datatype") == types0 + 1 && live("op") == ops0 + 1, "counters rise");
    /* A type kept alive inside another counts until the last reference. */
    MPI_Datatype c;
    MPI_OK(MPI_Type_contiguous(2, t, &c));
    MPI_OK(MPI_Type_free(&t));
    CHECK(live("datatype") == types0 + 2, "the inner type lives on");
    MPI_OK(MPI_Type_free(&c));
    MPI_OK(MPI_Op_free(&op));
    CHECK(live("datatype") == types0 && live("op") == ops0, "counters fall");

    for (int i = 0; i < CYCLES; i++)
        one_cycle(i, kv);
    int types1 = live("datatype"), ops1 = live("op"), all1 = live("all");
    CHECK(types1 == types0 && ops1 == ops0 && all1 == all0,
          "after %d cycles: %d datatypes, %d ops, %d objects left", CYCLES, types1 - types0,
          ops1 - ops0, all1 - all0);
    int n;
    MPI_FAILS(MPIX_Live_objects("no-such-kind", &n), MPI_ERR_ARG);
    MPI_OK(MPI_Type_free_keyval(&kv));
    return check_mpi_finalize("dtype_leak");
}
