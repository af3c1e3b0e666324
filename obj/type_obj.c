/*
 * Derived datatype objects: creation around an engine layout, references
 * and user handles (see obj/datatype.h), commit, free, dup.
 */
#include "obj/type_impl.h"
#include "obj/attr.h"
#include "base/atomic.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ objects */

/* The predefined type all of the type map is made of, or NULL. */
static obj_datatype_t *common_basic(int combiner, const struct obj_type_contents *c)
{
    if (combiner != MPI_COMBINER_STRUCT)
        return c->nd > 0 ? c->types[0]->basic : NULL;
    /* struct: the entries that hold data must agree. */
    obj_datatype_t *basic = NULL;
    for (MPI_Count i = 0; i < c->nd; i++) {
        MPI_Count bl = c->nc ? c->counts[1 + i] : c->ints[1 + i];
        obj_datatype_t *t = c->types[i];
        if (bl == 0 || t->size == 0)
            continue;
        if (!t->basic || (basic && basic != t->basic))
            return NULL;
        basic = t->basic;
    }
    return basic ? basic : (c->nd > 0 ? c->types[0]->basic : NULL);
}

int obj_type_new(struct rail_dt *layout, int combiner, struct obj_type_contents *c,
                 obj_datatype_t **out)
{
    obj_datatype_t *d = calloc(1, sizeof(*d));
    if (!d) {
        rail_dt_release(layout);
        obj_type_contents_free(c);
        return obj_errf(MPI_ERR_NO_MEM, "out of memory for a datatype");
    }
    obj_init(&d->obj, OBJ_DATATYPE);
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
    *out = d;
    return MPI_SUCCESS;
}

static void type_destroy(obj_datatype_t *d)
{
    obj_type_contents_free(d->contents);
    rail_dt_release(d->layout);
    d->obj.kind = OBJ_DATATYPE;   /* freed handles are tagged FREED: count it down */
    obj_fini(&d->obj);
    free(d);
}

void obj_datatype_retain(obj_datatype_t *d)
{
    if (d && !d->predefined)
        rail_atomic_add_fetch(&d->obj.refcount, 1);
}

void obj_datatype_release(obj_datatype_t *d)
{
    if (d && !d->predefined && rail_atomic_sub_fetch(&d->obj.refcount, 1) == 0)
        type_destroy(d);
}

/* A new user handle for d (MPI_Type_get_contents). */
MPI_Datatype obj_type_new_handle(obj_datatype_t *d)
{
    if (d->predefined)
        return obj_datatype_handle(d);
    obj_datatype_retain(d);
    if (rail_atomic_add_fetch(&d->handles, 1) == 1)
        d->obj.kind = OBJ_DATATYPE;   /* all its handles had been freed */
    return obj_datatype_handle(d);
}

int obj_type_lookup_array(const MPI_Datatype types[], MPI_Count n, obj_datatype_t **objs)
{
    if (n > 0 && !types)
        return obj_errf(MPI_ERR_ARG, "array_of_types must not be NULL");
    for (MPI_Count i = 0; i < n; i++) {
        if (types[i] == MPI_DATATYPE_NULL)
            return obj_errf(MPI_ERR_TYPE, "array_of_types[%lld] is MPI_DATATYPE_NULL",
                            (long long)i);
        int rc = obj_datatype_lookup(types[i], &objs[i]);
        if (rc != MPI_SUCCESS)
            return obj_errf(rc, "array_of_types[%lld] is not a valid datatype", (long long)i);
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ commit, free, dup */

int obj_type_commit(obj_datatype_t *d)
{
    if (d->committed)
        return MPI_SUCCESS;
    int rc = rail_dt_commit(d->layout);
    if (rc != MPI_SUCCESS)
        return obj_errf(rc, "cannot commit the datatype (%s)",
                        rc == MPI_ERR_NO_MEM ? "out of memory" : "engine error");
    d->committed = 1;
    return MPI_SUCCESS;
}

int obj_type_free(obj_datatype_t *d)
{
    if (d->predefined)
        return obj_errf(MPI_ERR_TYPE, "predefined datatype %s cannot be freed",
                        d->name[0] ? d->name : "(unnamed)");
    /* The last handle: delete the attributes first; a failing delete
     * callback fails the call and leaves the type as it was. */
    if (rail_atomic_load_acquire(&d->handles) == 1 && d->attrs) {
        int rc = obj_attr_delete_all(OBJ_ATTR_TYPE, obj_datatype_handle(d), &d->attrs);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (rail_atomic_sub_fetch(&d->handles, 1) == 0)
        d->obj.kind = OBJ_FREED;
    obj_datatype_release(d);
    return MPI_SUCCESS;
}

int obj_type_dup(obj_datatype_t *old, obj_datatype_t **out)
{
    struct obj_type_contents *c = obj_type_contents_new(0, 0, 0, 1);
    if (!c)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    obj_type_contents_set_type(c, 0, old);
    obj_datatype_t *d;
    int rc = obj_type_new(rail_dt_retain(old->layout), MPI_COMBINER_DUP, c, &d);
    if (rc != MPI_SUCCESS)
        return rc;
    d->committed = old->committed;
    rc = obj_attr_copy_all(OBJ_ATTR_TYPE, obj_datatype_handle(old), old->attrs, &d->attrs);
    if (rc != MPI_SUCCESS) {
        /* Copies already made are deleted with their callbacks. */
        obj_attr_delete_all(OBJ_ATTR_TYPE, obj_datatype_handle(d), &d->attrs);
        d->handles = 0;
        obj_datatype_release(d);
        return rc;
    }
    *out = d;
    return MPI_SUCCESS;
}
