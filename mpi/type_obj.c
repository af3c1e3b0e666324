/*
 * Derived datatype objects: creation around an engine layout, references
 * (see mpi_datatype.h), MPI_Type_commit, MPI_Type_free, MPI_Type_dup.
 */
#include "mpi/type_impl.h"
#include "mpi/mpi_attr.h"
#include "mpi/binding/gen/mpi_impl.h"
#include "base/atomic.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ contents */

struct mpi_type_contents *mpi_type_contents_new(MPI_Count ni, MPI_Count na, MPI_Count nc,
                                                MPI_Count nd)
{
    size_t bytes = sizeof(struct mpi_type_contents) + (size_t)na * sizeof(MPI_Aint) +
                   (size_t)nc * sizeof(MPI_Count) + (size_t)nd * sizeof(mpi_datatype_t *) +
                   (size_t)ni * sizeof(int);
    struct mpi_type_contents *c = calloc(1, bytes);
    if (!c)
        return NULL;
    char *p = (char *)(c + 1);
    c->ni = ni, c->na = na, c->nc = nc, c->nd = nd;
    /* Widest members first, so every array is aligned. */
    c->aints = (MPI_Aint *)p;
    p += (size_t)na * sizeof(MPI_Aint);
    c->counts = (MPI_Count *)p;
    p += (size_t)nc * sizeof(MPI_Count);
    c->types = (mpi_datatype_t **)p;
    p += (size_t)nd * sizeof(mpi_datatype_t *);
    c->ints = (int *)p;
    return c;
}

void mpi_type_contents_set_type(struct mpi_type_contents *c, MPI_Count i, mpi_datatype_t *t)
{
    mpi_datatype_retain(t);
    c->types[i] = t;
}

void mpi_type_contents_free(struct mpi_type_contents *c)
{
    if (!c)
        return;
    for (MPI_Count i = 0; i < c->nd; i++)
        mpi_datatype_release(c->types[i]);
    free(c);
}

/* ------------------------------------------------------------ objects */

/* The predefined type all of the type map is made of, or NULL. */
static mpi_datatype_t *common_basic(int combiner, const struct mpi_type_contents *c)
{
    if (combiner != MPI_COMBINER_STRUCT)
        return c->nd > 0 ? c->types[0]->basic : NULL;
    /* struct: the entries that hold data must agree. */
    mpi_datatype_t *basic = NULL;
    for (MPI_Count i = 0; i < c->nd; i++) {
        MPI_Count bl = c->nc ? c->counts[1 + i] : c->ints[1 + i];
        mpi_datatype_t *t = c->types[i];
        if (bl == 0 || t->size == 0)
            continue;
        if (!t->basic || (basic && basic != t->basic))
            return NULL;
        basic = t->basic;
    }
    return basic ? basic : (c->nd > 0 ? c->types[0]->basic : NULL);
}

int mpi_type_new(struct rail_dt *layout, int combiner, struct mpi_type_contents *c,
                 MPI_Datatype *newtype)
{
    mpi_datatype_t *d = calloc(1, sizeof(*d));
    if (!d) {
        rail_dt_release(layout);
        mpi_type_contents_free(c);
        return mpi_errf(MPI_ERR_NO_MEM, "out of memory for a datatype");
    }
    mpi_obj_init(&d->obj, MPI_OBJ_DATATYPE);
    d->handles = 1;
    d->layout = layout;
    d->combiner = combiner;
    d->contents = c;
    d->basic = common_basic(combiner, c);
    d->size = rail_dt_size(layout);
    d->lb = rail_dt_lb(layout);
    d->extent = rail_dt_extent(layout);
    d->true_lb = rail_dt_true_lb(layout);
    d->true_extent = rail_dt_true_extent(layout);
    *newtype = mpi_datatype_handle(d);
    return MPI_SUCCESS;
}

static void type_destroy(mpi_datatype_t *d)
{
    mpi_type_contents_free(d->contents);
    rail_dt_release(d->layout);
    d->obj.kind = MPI_OBJ_DATATYPE;   /* freed handles are tagged FREED: count it down */
    mpi_obj_fini(&d->obj);
    free(d);
}

void mpi_datatype_retain(mpi_datatype_t *d)
{
    if (d && !d->predefined)
        rail_atomic_add_fetch(&d->obj.refcount, 1);
}

void mpi_datatype_release(mpi_datatype_t *d)
{
    if (d && !d->predefined && rail_atomic_sub_fetch(&d->obj.refcount, 1) == 0)
        type_destroy(d);
}

/* A new user handle for d (MPI_Type_get_contents). */
MPI_Datatype mpi_type_new_handle(mpi_datatype_t *d)
{
    if (d->predefined)
        return mpi_datatype_handle(d);
    mpi_datatype_retain(d);
    if (rail_atomic_add_fetch(&d->handles, 1) == 1)
        d->obj.kind = MPI_OBJ_DATATYPE;   /* all its handles had been freed */
    return mpi_datatype_handle(d);
}

int mpi_type_lookup_array(const MPI_Datatype types[], MPI_Count n, mpi_datatype_t **objs)
{
    if (n > 0 && !types)
        return mpi_errf(MPI_ERR_ARG, "array_of_types must not be NULL");
    for (MPI_Count i = 0; i < n; i++) {
        if (types[i] == MPI_DATATYPE_NULL)
            return mpi_errf(MPI_ERR_TYPE, "array_of_types[%lld] is MPI_DATATYPE_NULL",
                            (long long)i);
        int rc = mpi_datatype_lookup(types[i], &objs[i]);
        if (rc != MPI_SUCCESS)
            return mpi_errf(rc, "array_of_types[%lld] is not a valid datatype", (long long)i);
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ API */

int mpii_type_commit(MPI_Datatype *datatype)
{
    mpi_datatype_t *d;
    int rc = mpi_datatype_lookup(*datatype, &d);
    if (rc != MPI_SUCCESS)
        return rc;
    if (d->committed)
        return MPI_SUCCESS;
    rc = rail_dt_commit(d->layout);
    if (rc != MPI_SUCCESS)
        return mpi_errf(rc, "cannot commit the datatype (%s)",
                        rc == MPI_ERR_NO_MEM ? "out of memory" : "engine error");
    d->committed = 1;
    return MPI_SUCCESS;
}

int mpii_type_free(MPI_Datatype *datatype)
{
    mpi_datatype_t *d;
    int rc = mpi_datatype_lookup(*datatype, &d);
    if (rc != MPI_SUCCESS)
        return rc;
    if (d->predefined)
        return mpi_errf(MPI_ERR_TYPE, "predefined datatype %s cannot be freed",
                        d->name[0] ? d->name : "(unnamed)");
    /* The last handle: delete the attributes first; a failing delete
     * callback fails the call and leaves the type as it was. */
    if (rail_atomic_load_acquire(&d->handles) == 1 && d->attrs) {
        rc = mpi_attr_delete_all(MPI_ATTR_TYPE, *datatype, &d->attrs);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (rail_atomic_sub_fetch(&d->handles, 1) == 0)
        d->obj.kind = MPI_OBJ_FREED;
    *datatype = MPI_DATATYPE_NULL;
    mpi_datatype_release(d);
    return MPI_SUCCESS;
}

int mpii_type_dup(mpi_datatype_t *oldtype, MPI_Datatype *newtype)
{
    struct mpi_type_contents *c = mpi_type_contents_new(0, 0, 0, 1);
    if (!c)
        return mpi_errf(MPI_ERR_NO_MEM, "out of memory");
    mpi_type_contents_set_type(c, 0, oldtype);
    MPI_Datatype h;
    int rc = mpi_type_new(rail_dt_retain(oldtype->layout), MPI_COMBINER_DUP, c, &h);
    if (rc != MPI_SUCCESS)
        return rc;
    mpi_datatype_t *d = (mpi_datatype_t *)mpi_obj_of_handle(h);
    d->committed = oldtype->committed;
    rc = mpi_attr_copy_all(MPI_ATTR_TYPE, mpi_datatype_handle(oldtype), oldtype->attrs, &d->attrs);
    if (rc != MPI_SUCCESS) {
        /* Copies already made are deleted with their callbacks. */
        mpi_attr_delete_all(MPI_ATTR_TYPE, h, &d->attrs);
        d->handles = 0;
        mpi_datatype_release(d);
        return rc;
    }
    *newtype = h;
    return MPI_SUCCESS;
}
