/*
 * Reduction operation objects: the predefined ones and which datatypes
 * each takes (MPI-4.1 section 6.9.2), user operations (creation, free),
 * references (obj/op.h).
 */
#include "obj/op.h"
#include "obj/err.h"
#include "obj/datatype.h"
#include "base/atomic.h"

#include <stdlib.h>

#define ARITH (OPC_C_INT | OPC_F_INT | OPC_FLOAT | OPC_MULTI)
/* The logical operations: C integer and logical in the standard's table;
 * also the multi-language integers MPI_AINT, MPI_OFFSET and MPI_COUNT, as
 * MPICH does (its test suite reduces them with MPI_LAND, MPI_LOR and
 * MPI_LXOR). */
#define LOGIC (OPC_C_INT | OPC_LOGICAL | OPC_MULTI)
static const struct {
    MPI_Op handle;
    rail_op_t op;
    int classes;
} predefs[] = {
    {MPI_MAX, RAIL_OP_MAX, ARITH},
    {MPI_MIN, RAIL_OP_MIN, ARITH},
    {MPI_SUM, RAIL_OP_SUM, ARITH | OPC_COMPLEX},
    {MPI_PROD, RAIL_OP_PROD, ARITH | OPC_COMPLEX},
    {MPI_LAND, RAIL_OP_LAND, LOGIC},
    {MPI_LOR, RAIL_OP_LOR, LOGIC},
    {MPI_LXOR, RAIL_OP_LXOR, LOGIC},
    {MPI_BAND, RAIL_OP_BAND, OPC_C_INT | OPC_F_INT | OPC_BYTE | OPC_MULTI},
    {MPI_BOR, RAIL_OP_BOR, OPC_C_INT | OPC_F_INT | OPC_BYTE | OPC_MULTI},
    {MPI_BXOR, RAIL_OP_BXOR, OPC_C_INT | OPC_F_INT | OPC_BYTE | OPC_MULTI},
    {MPI_MAXLOC, RAIL_OP_MAXLOC, OPC_PAIR},
    {MPI_MINLOC, RAIL_OP_MINLOC, OPC_PAIR},
    /* One-sided accumulates only (obj_op_check_accumulate). */
    {MPI_REPLACE, RAIL_OP_REPLACE, 0},
    {MPI_NO_OP, RAIL_OP_NO_OP, 0},
};

static obj_op_t predef_ops[RAIL_ARRAY_SIZE(predefs)];
static const char *const predef_names[] = {
    "MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND", "MPI_LOR", "MPI_LXOR",
    "MPI_BAND", "MPI_BOR", "MPI_BXOR", "MPI_MAXLOC", "MPI_MINLOC", "MPI_REPLACE", "MPI_NO_OP",
};
_Static_assert(RAIL_ARRAY_SIZE(predef_names) == RAIL_ARRAY_SIZE(predefs), "one name per op");

int obj_op_predef_init(void)
{
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(predefs); i++) {
        obj_op_t *o = &predef_ops[i];
        obj_init_predef(&o->obj, OBJ_OP, predefs[i].handle);
        o->op = predefs[i].op;
        o->commute = 1;
        o->opclasses = predefs[i].classes;
    }
    return MPI_SUCCESS;
}

static const char *op_name(const obj_op_t *op)
{
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(predefs); i++)
        if (&predef_ops[i] == op)
            return predef_names[i];
    return "a user operation";
}

static const char *type_name(const obj_datatype_t *dt)
{
    if (dt->predefined && dt->name[0])
        return dt->name;
    return dt->basic ? "a derived datatype of" : "a derived datatype mixing basic types";
}

static int refuse(const obj_op_t *op, const obj_datatype_t *dt, const char *why)
{
    const obj_datatype_t *b = dt->basic;
    bool derived_of = !dt->predefined && b;
    return obj_errf(MPI_ERR_OP, "%s is not defined on %s%s%s%s", op_name(op), type_name(dt),
                    derived_of ? " " : "", derived_of ? b->name : "", why);
}

int obj_op_check_datatype(const obj_op_t *op, const obj_datatype_t *dt)
{
    if (op->op == RAIL_OP_NONE)
        return MPI_SUCCESS;   /* user functions take any datatype */
    if (RAIL_LIKELY(dt->basic && (dt->basic->opclass & op->opclasses)))
        return MPI_SUCCESS;
    if (op->op == RAIL_OP_REPLACE || op->op == RAIL_OP_NO_OP)
        return obj_errf(MPI_ERR_OP, "%s is only for one-sided accumulate operations",
                        op_name(op));
    return refuse(op, dt, "");
}

int obj_op_check_accumulate(const obj_op_t *op, const obj_datatype_t *dt)
{
    if (op->op == RAIL_OP_NONE)
        return obj_errf(MPI_ERR_OP, "user-defined operations cannot be used in accumulate "
                        "operations");
    if ((op->op == RAIL_OP_REPLACE || op->op == RAIL_OP_NO_OP) && dt->basic)
        return MPI_SUCCESS;
    if (dt->basic && (dt->basic->opclass & op->opclasses))
        return MPI_SUCCESS;
    return refuse(op, dt, " (accumulate needs one predefined type throughout)");
}

/* ------------------------------------------------------------ user operations */

void obj_op_retain(obj_op_t *op)
{
    if (op && op->op == RAIL_OP_NONE)
        rail_atomic_add_fetch(&op->obj.refcount, 1);
}

void obj_op_release(obj_op_t *op)
{
    if (op && op->op == RAIL_OP_NONE && rail_atomic_sub_fetch(&op->obj.refcount, 1) == 0) {
        op->obj.kind = OBJ_OP;   /* its handle was tagged FREED: count it down */
        obj_fini(&op->obj);
        free(op);
    }
}

int obj_op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute,
                  obj_op_t **out)
{
    obj_op_t *o = calloc(1, sizeof(*o));
    if (!o)
        return obj_errf(MPI_ERR_NO_MEM, "out of memory");
    obj_init(&o->obj, OBJ_OP);
    o->op = RAIL_OP_NONE;
    o->commute = commute != 0;
    o->user_fn = fn;
    o->user_fn_c = fn_c;
    *out = o;
    return MPI_SUCCESS;
}

int obj_op_free(obj_op_t *op)
{
    if (op->op != RAIL_OP_NONE)
        return obj_errf(MPI_ERR_OP, "predefined operation %s cannot be freed", op_name(op));
    op->obj.kind = OBJ_FREED;   /* the handle is gone; holders keep the object */
    obj_op_release(op);
    return MPI_SUCCESS;
}
