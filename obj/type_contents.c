/*
 * The arguments recorded by the constructors (type_impl.h): the record,
 * and reading it back for MPI_Type_get_envelope / MPI_Type_get_contents.
 * Datatypes handed back are new handles of derived types (the caller frees
 * them) and the predefined handles as they are.
 */
#include "obj/type_impl.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the record */

struct obj_type_contents *obj_type_contents_new(MPI_Count ni, MPI_Count na, MPI_Count nc,
                                                MPI_Count nd)
{
    size_t bytes = sizeof(struct obj_type_contents) + (size_t)na * sizeof(MPI_Aint) +
                   (size_t)nc * sizeof(MPI_Count) + (size_t)nd * sizeof(obj_datatype_t *) +
                   (size_t)ni * sizeof(int);
    struct obj_type_contents *c = calloc(1, bytes);
    if (!c)
        return NULL;
    char *p = (char *)(c + 1);
    c->ni = ni, c->na = na, c->nc = nc, c->nd = nd;
    /* Widest members first, so every array is aligned. */
    c->aints = (MPI_Aint *)p;
    p += (size_t)na * sizeof(MPI_Aint);
    c->counts = (MPI_Count *)p;
    p += (size_t)nc * sizeof(MPI_Count);
    c->types = (obj_datatype_t **)p;
    p += (size_t)nd * sizeof(obj_datatype_t *);
    c->ints = (int *)p;
    return c;
}

void obj_type_contents_set_type(struct obj_type_contents *c, MPI_Count i, obj_datatype_t *t)
{
    obj_datatype_retain(t);
    c->types[i] = t;
}

void obj_type_contents_free(struct obj_type_contents *c)
{
    if (!c)
        return;
    for (MPI_Count i = 0; i < c->nd; i++)
        obj_datatype_release(c->types[i]);
    free(c);
}

/* ------------------------------------------------------------ reading it */

static const struct obj_type_contents empty;

static const struct obj_type_contents *contents_of(const obj_datatype_t *d)
{
    return d->contents ? d->contents : &empty;
}

static int named_error(const obj_datatype_t *d)
{
    return obj_errf(MPI_ERR_TYPE, "%s is a named predefined datatype: it has no contents",
                    d->name[0] ? d->name : "the datatype");
}

void obj_type_envelope(const obj_datatype_t *d, MPI_Count *ni, MPI_Count *na, MPI_Count *nc,
                       MPI_Count *nd, int *combiner)
{
    const struct obj_type_contents *c = contents_of(d);
    *ni = c->ni;
    *na = c->na;
    *nc = c->nc;
    *nd = c->nd;
    *combiner = d->combiner;
}

static int check_room(const char *what, MPI_Count have, MPI_Count need, const void *array)
{
    if (have < need)
        return obj_errf(MPI_ERR_ARG, "%s is %lld: the datatype has %lld (MPI_Type_get_envelope)",
                        what, (long long)have, (long long)need);
    if (need > 0 && !array)
        return obj_errf(MPI_ERR_ARG, "the array for %lld %s must not be NULL", (long long)need,
                        what + 4);
    return MPI_SUCCESS;
}

static void copy_out(const struct obj_type_contents *c, int ints[], MPI_Aint addrs[],
                     MPI_Count counts[], MPI_Datatype types[])
{
    if (c->ni)
        memcpy(ints, c->ints, (size_t)c->ni * sizeof(int));
    if (c->na)
        memcpy(addrs, c->aints, (size_t)c->na * sizeof(MPI_Aint));
    if (c->nc)
        memcpy(counts, c->counts, (size_t)c->nc * sizeof(MPI_Count));
    for (MPI_Count i = 0; i < c->nd; i++)
        types[i] = obj_type_new_handle(c->types[i]);
}

int obj_type_get_contents(const obj_datatype_t *d, MPI_Count max_integers,
                          MPI_Count max_addresses, MPI_Count max_large_counts,
                          MPI_Count max_datatypes, int ints[], MPI_Aint addrs[],
                          MPI_Count counts[], MPI_Datatype types[])
{
    if (d->combiner == MPI_COMBINER_NAMED)
        return named_error(d);
    const struct obj_type_contents *c = contents_of(d);
    int rc = check_room("max_integers", max_integers, c->ni, ints);
    if (rc == MPI_SUCCESS)
        rc = check_room("max_addresses", max_addresses, c->na, addrs);
    if (rc == MPI_SUCCESS)
        rc = check_room("max_large_counts", max_large_counts, c->nc, counts);
    if (rc == MPI_SUCCESS)
        rc = check_room("max_datatypes", max_datatypes, c->nd, types);
    if (rc == MPI_SUCCESS)
        copy_out(c, ints, addrs, counts, types);
    return rc;
}
