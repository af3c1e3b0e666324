/* Predefined and user reduction operations. */
#include "mpi/mpi_err.h"
#include "mpi/mpi_op.h"
#include "mpi/mpi_datatype.h"

#include <stdlib.h>

#define ARITH (OPC_C_INT | OPC_F_INT | OPC_FLOAT | OPC_MULTI)
static const struct {
    MPI_Op handle;
    rail_op_t op;
    int classes;
} predefs[] = {
    {MPI_MAX, RAIL_OP_MAX, ARITH},
    {MPI_MIN, RAIL_OP_MIN, ARITH},
    {MPI_SUM, RAIL_OP_SUM, ARITH | OPC_COMPLEX},
    {MPI_PROD, RAIL_OP_PROD, ARITH | OPC_COMPLEX},
    {MPI_LAND, RAIL_OP_LAND, OPC_C_INT | OPC_LOGICAL},
    {MPI_LOR, RAIL_OP_LOR, OPC_C_INT | OPC_LOGICAL},
    {MPI_LXOR, RAIL_OP_LXOR, OPC_C_INT | OPC_LOGICAL},
    {MPI_BAND, RAIL_OP_BAND, OPC_C_INT | OPC_F_INT | OPC_BYTE | OPC_MULTI},
    {MPI_BOR, RAIL_OP_BOR, OPC_C_INT | OPC_F_INT | OPC_BYTE | OPC_MULTI},
    {MPI_BXOR, RAIL_OP_BXOR, OPC_C_INT | OPC_F_INT | OPC_BYTE | OPC_MULTI},
    {MPI_MAXLOC, RAIL_OP_MAXLOC, OPC_PAIR},
    {MPI_MINLOC, RAIL_OP_MINLOC, OPC_PAIR},
    /* REPLACE and NO_OP are for one-sided accumulates, on any predefined type. */
    {MPI_REPLACE, RAIL_OP_REPLACE, ~0},
    {MPI_NO_OP, RAIL_OP_NO_OP, ~0},
};

static mpi_op_t predef_ops[RAIL_ARRAY_SIZE(predefs)];

int mpi_op_predef_init(void)
{
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(predefs); i++) {
        mpi_op_t *o = &predef_ops[i];
        mpi_obj_init_predef(&o->obj, MPI_OBJ_OP, predefs[i].handle);
        o->op = predefs[i].op;
        o->commute = 1;
        o->opclasses = predefs[i].classes;
    }
    return MPI_SUCCESS;
}

int mpi_op_check_datatype(const mpi_op_t *op, const mpi_datatype_t *dt)
{
    if (op->op == RAIL_OP_NONE)
        return MPI_SUCCESS;   /* user functions take any datatype */
    if (dt->predefined && (dt->opclass & op->opclasses))
        return MPI_SUCCESS;
    return mpi_errf(MPI_ERR_OP, "operation %s is not defined on datatype %s", rail_op_name(op->op),
                    dt->name[0] ? dt->name : "(derived)");
}

static int create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute, MPI_Op *out)
{
    mpi_op_t *o = calloc(1, sizeof(*o));
    if (!o)
        return mpi_errf(MPI_ERR_NO_MEM, "out of memory");
    mpi_obj_init(&o->obj, MPI_OBJ_OP);
    o->op = RAIL_OP_NONE;
    o->commute = commute != 0;
    o->user_fn = fn;
    o->user_fn_c = fn_c;
    *out = mpi_op_handle(o);
    return MPI_SUCCESS;
}

int mpii_op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    if (!user_fn)
        return mpi_errf(MPI_ERR_ARG, "user function is NULL");
    return create(user_fn, NULL, commute, op);
}

int mpii_op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    if (!user_fn)
        return mpi_errf(MPI_ERR_ARG, "user function is NULL");
    return create(NULL, user_fn, commute, op);
}

int mpii_op_free(MPI_Op *op)
{
    mpi_op_t *o;
    int rc = mpi_op_lookup(*op, &o);
    if (rc)
        return rc;
    if (o->op != RAIL_OP_NONE)
        return mpi_errf(MPI_ERR_OP, "predefined operations cannot be freed");
    mpi_obj_fini(&o->obj);
    free(o);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int mpii_op_commutative(mpi_op_t *op, int *commute)
{
    *commute = op->commute;
    return MPI_SUCCESS;
}
