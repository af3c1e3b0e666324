/*
 * MPI_Type_create_darray and MPI_Type_create_subarray against index lists
 * computed here from the definitions: which global elements a process owns
 * in each dimension (BLOCK, CYCLIC, NONE, default and explicit dargs), in
 * array order (C: last dimension fastest; Fortran: first).  Every process of
 * every grid is checked, by packing a global array whose elements hold
 * their own linear index.  Argument errors give MPI_ERR_ARG.
 */
#include "test/dtype/dtype_test.h"

#include <stdbool.h>

#define MAXD 3

typedef struct {
    int ndims;
    int gsizes[MAXD], distribs[MAXD], dargs[MAXD], psizes[MAXD];
    int order;
} darray_t;

/* Does the process at coordinate c own global index g of dimension i? */
static bool owns(const darray_t *a, int i, int c, int g)
{
    int p = a->psizes[i], gs = a->gsizes[i], d = a->dargs[i];
    switch (a->distribs[i]) {
    case MPI_DISTRIBUTE_NONE:
        return true;
    case MPI_DISTRIBUTE_BLOCK:
        if (d == MPI_DISTRIBUTE_DFLT_DARG)
            d = (gs + p - 1) / p;
        return g / d == c;
    default:
        if (d == MPI_DISTRIBUTE_DFLT_DARG)
            d = 1;
        return (g / d) % p == c;
    }
}

/* Linear indices, in type-map order, of what rank owns; returns how many. */
static int reference(const darray_t *a, int rank, int *out)
{
    int coord[MAXD], r = rank;
    for (int i = a->ndims - 1; i >= 0; i--) {
        coord[i] = r % a->psizes[i];
        r /= a->psizes[i];
    }
    /* Odometer over all global indices, fastest dimension first. */
    int idx[MAXD] = {0}, n = 0, total = 1;
    for (int i = 0; i < a->ndims; i++)
        total *= a->gsizes[i];
    for (int step = 0; step < total; step++) {
        bool mine = true;
        for (int i = 0; i < a->ndims; i++)
            mine &= owns(a, i, coord[i], idx[i]);
        if (mine) {
            int lin = 0;
            if (a->order == MPI_ORDER_C)
                for (int i = 0; i < a->ndims; i++)
                    lin = lin * a->gsizes[i] + idx[i];
            else
                for (int i = a->ndims - 1; i >= 0; i--)
                    lin = lin * a->gsizes[i] + idx[i];
            out[n++] = lin;
        }
        for (int k = 0; k < a->ndims; k++) {
            int i = a->order == MPI_ORDER_C ? a->ndims - 1 - k : k;
            if (++idx[i] < a->gsizes[i])
                break;
            idx[i] = 0;
        }
    }
    return n;
}

/* Pack the global array (element = its linear index, `width` ints each)
 * through t and compare with the index list. */
static void check_type(MPI_Datatype t, int total, int width, const int *want, int n,
                       const char *what)
{
    int *global = malloc((size_t)(total * width) * sizeof(int));
    int *packed = malloc((size_t)(n * width + 1) * sizeof(int));
    for (int i = 0; i < total * width; i++)
        global[i] = i / width * 1000 + i % width;
    MPI_Count size, lb, extent;
    MPI_OK(MPI_Type_size_c(t, &size));
    MPI_OK(MPI_Type_get_extent_c(t, &lb, &extent));
    CHECK(size == (MPI_Count)(n * width * sizeof(int)), "%s: size %lld, expected %d elements", what,
          (long long)size, n);
    CHECK(lb == 0 && extent == (MPI_Count)(total * width * sizeof(int)),
          "%s: lb %lld extent %lld, expected 0 %zu", what, (long long)lb, (long long)extent,
          total * width * sizeof(int));
    int pos = 0;
    MPI_OK(MPI_Pack(global, 1, t, packed, (n * width + 1) * (int)sizeof(int), &pos,
                    MPI_COMM_SELF));
    for (int k = 0; k < n * width; k++)
        CHECK(packed[k] == want[k / width] * 1000 + k % width, "%s: element %d is %d, expected %d",
              what, k, packed[k], want[k / width] * 1000 + k % width);
    free(global);
    free(packed);
}

static void check_darray(const darray_t *a, MPI_Datatype old, int width, const char *what)
{
    int size = 1, total = 1;
    for (int i = 0; i < a->ndims; i++)
        size *= a->psizes[i], total *= a->gsizes[i];
    int *want = malloc((size_t)total * sizeof(int));
    int covered = 0;
    for (int rank = 0; rank < size; rank++) {
        MPI_Datatype t;
        MPI_OK(MPI_Type_create_darray(size, rank, a->ndims, a->gsizes, a->distribs, a->dargs,
                                      a->psizes, a->order, old, &t));
        MPI_OK(MPI_Type_commit(&t));
        int n = reference(a, rank, want);
        char w[128];
        snprintf(w, sizeof(w), "%s rank %d", what, rank);
        check_type(t, total, width, want, n, w);
        covered += n;
        MPI_OK(MPI_Type_free(&t));
    }
    CHECK(covered == total, "%s: the processes own %d of %d elements", what, covered, total);
    free(want);
}

static void test_darray(void)
{
    const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE,
              D = MPI_DISTRIBUTE_DFLT_DARG;
    const darray_t cases[] = {
        {1, {10}, {B}, {D}, {3}, MPI_ORDER_C},
        {1, {10}, {B}, {6}, {2}, MPI_ORDER_C},
        {1, {3}, {B}, {D}, {4}, MPI_ORDER_C},           /* rank 3 owns nothing */
        {1, {10}, {C}, {3}, {2}, MPI_ORDER_C},          /* short last block */
        {1, {7}, {C}, {D}, {4}, MPI_ORDER_FORTRAN},
        {2, {5, 7}, {B, C}, {D, 2}, {2, 3}, MPI_ORDER_C},
        {2, {5, 7}, {B, C}, {D, 2}, {2, 3}, MPI_ORDER_FORTRAN},
        {2, {6, 4}, {N, C}, {D, D}, {1, 3}, MPI_ORDER_C},
        {3, {4, 5, 6}, {C, N, B}, {1, D, 3}, {2, 1, 2}, MPI_ORDER_C},
        {3, {3, 4, 5}, {B, C, C}, {2, 2, D}, {2, 2, 2}, MPI_ORDER_FORTRAN},
        {3, {3, 4, 5}, {B, C, C}, {2, 2, D}, {2, 2, 2}, MPI_ORDER_C},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char what[32];
        snprintf(what, sizeof(what), "darray case %zu", i);
        check_darray(&cases[i], MPI_INT, 1, what);
    }
    /* An old type of two ints. */
    MPI_Datatype two;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &two));
    check_darray(&cases[6], two, 2, "darray of pairs");
    MPI_OK(MPI_Type_free(&two));

    /* The processes of this job each take their part of a 1-d array. */
    darray_t mine = {1, {3 * t_size + 1}, {C}, {2}, {t_size}, MPI_ORDER_C};
    MPI_Datatype t;
    MPI_OK(MPI_Type_create_darray(t_size, t_rank, 1, mine.gsizes, mine.distribs, mine.dargs,
                                  mine.psizes, MPI_ORDER_C, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    int want[64];
    int n = reference(&mine, t_rank, want);
    check_type(t, mine.gsizes[0], 1, want, n, "this job's darray");
    MPI_OK(MPI_Type_free(&t));
}

static void test_darray_errors(void)
{
    MPI_Datatype t;
    int g[] = {10, 10}, bl[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK},
        dd[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, p[] = {2, 2};
    MPI_OK(MPI_Type_create_darray(4, 0, 2, g, bl, dd, p, MPI_ORDER_C, MPI_INT, &t));
    MPI_OK(MPI_Type_free(&t));
    /* block too small for the dimension */
    MPI_FAILS(MPI_Type_create_darray(4, 0, 2, g, bl, (int[]){4, 5}, p, MPI_ORDER_C, MPI_INT, &t),
              MPI_ERR_ARG);
    /* NONE needs one process */
    MPI_FAILS(MPI_Type_create_darray(4, 0, 2, g, (int[]){MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK},
                                     dd, p, MPI_ORDER_C, MPI_INT, &t),
              MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_create_darray(4, 0, 2, g, (int[]){99, MPI_DISTRIBUTE_BLOCK}, dd, p,
                                     MPI_ORDER_C, MPI_INT, &t),
              MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_create_darray(4, 0, 2, g, (int[]){MPI_DISTRIBUTE_CYCLIC,
                                     MPI_DISTRIBUTE_CYCLIC}, (int[]){0, 1}, p, MPI_ORDER_C,
                                     MPI_INT, &t),
              MPI_ERR_ARG);
    /* grid of the wrong size, rank outside it, bad order */
    MPI_FAILS(MPI_Type_create_darray(5, 0, 2, g, bl, dd, p, MPI_ORDER_C, MPI_INT, &t),
              MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_create_darray(4, 4, 2, g, bl, dd, p, MPI_ORDER_C, MPI_INT, &t),
              MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_create_darray(4, 0, 2, g, bl, dd, p, 77, MPI_INT, &t), MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_create_darray(4, 0, 2, (int[]){0, 10}, bl, dd, p, MPI_ORDER_C, MPI_INT, &t),
              MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_create_darray(4, 0, 2, g, bl, dd, p, MPI_ORDER_C, MPI_DATATYPE_NULL, &t),
              MPI_ERR_TYPE);
}

static void test_subarray(void)
{
    static const struct {
        int ndims, sizes[MAXD], subsizes[MAXD], starts[MAXD], order;
    } cases[] = {
        {1, {9}, {4}, {3}, MPI_ORDER_C},
        {2, {4, 6}, {2, 3}, {1, 2}, MPI_ORDER_C},
        {2, {4, 6}, {2, 3}, {1, 2}, MPI_ORDER_FORTRAN},
        {3, {3, 4, 5}, {2, 2, 3}, {1, 0, 2}, MPI_ORDER_C},
        {3, {3, 4, 5}, {2, 2, 3}, {1, 0, 2}, MPI_ORDER_FORTRAN},
        {2, {3, 3}, {3, 3}, {0, 0}, MPI_ORDER_C},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        /* A subarray is a darray-like ownership: [start, start + subsize). */
        darray_t a = {cases[c].ndims, {0}, {0}, {0}, {0}, cases[c].order};
        int total = 1, want[128], n = 0;
        for (int i = 0; i < a.ndims; i++) {
            a.gsizes[i] = cases[c].sizes[i];
            total *= a.gsizes[i];
        }
        int idx[MAXD] = {0};
        for (int step = 0; step < total; step++) {
            bool in = true;
            for (int i = 0; i < a.ndims; i++)
                in &= idx[i] >= cases[c].starts[i] &&
                      idx[i] < cases[c].starts[i] + cases[c].subsizes[i];
            if (in) {
                int lin = 0;
                if (a.order == MPI_ORDER_C)
                    for (int i = 0; i < a.ndims; i++)
                        lin = lin * a.gsizes[i] + idx[i];
                else
                    for (int i = a.ndims - 1; i >= 0; i--)
                        lin = lin * a.gsizes[i] + idx[i];
                want[n++] = lin;
            }
            for (int k = 0; k < a.ndims; k++) {
                int i = a.order == MPI_ORDER_C ? a.ndims - 1 - k : k;
                if (++idx[i] < a.gsizes[i])
                    break;
                idx[i] = 0;
            }
        }
        MPI_Datatype t;
        MPI_OK(MPI_Type_create_subarray(cases[c].ndims, cases[c].sizes, cases[c].subsizes,
                                        cases[c].starts, cases[c].order, MPI_INT, &t));
        MPI_OK(MPI_Type_commit(&t));
        char what[32];
        snprintf(what, sizeof(what), "subarray case %zu", c);
        check_type(t, total, 1, want, n, what);
        MPI_OK(MPI_Type_free(&t));
    }
    MPI_Datatype t;
    int sz[] = {4, 6}, sub[] = {2, 3}, st[] = {1, 2};
    MPI_FAILS(MPI_Type_create_subarray(2, sz, (int[]){5, 3}, st, MPI_ORDER_C, MPI_INT, &t),
              MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_create_subarray(2, sz, sub, (int[]){3, 2}, MPI_ORDER_C, MPI_INT, &t),
              MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_create_subarray(2, sz, (int[]){0, 3}, st, MPI_ORDER_C, MPI_INT, &t),
              MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_create_subarray(0, sz, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_create_subarray(2, sz, sub, st, 3, MPI_INT, &t), MPI_ERR_ARG);
    MPI_FAILS(MPI_Type_create_subarray(2, (int[]){0, 6}, sub, st, MPI_ORDER_C, MPI_INT, &t),
              MPI_ERR_ARG);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    test_darray();
    test_darray_errors();
    test_subarray();
    return check_mpi_finalize("dtype_darray");
}
