/*
 * MPI_Op_create / _c, MPI_Op_free, MPI_Op_commutative, MPI_Reduce_local:
 * the entry points' semantics, over the operation objects of obj/op.h.
 */
#include "obj/op.h"
#include "obj/err.h"
#include "mpi/binding/gen/mpi_impl.h"

/* The handle of an operation obj_op_create made (rc == MPI_SUCCESS). */
static int handle_out(int rc, obj_op_t *o, MPI_Op *op)
{
    if (rc == MPI_SUCCESS)
        *op = obj_op_handle(o);
    return rc;
}

int mpii_op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    if (!user_fn)
        return obj_errf(MPI_ERR_ARG, "user function is NULL");
    obj_op_t *o = NULL;
    int rc = obj_op_create(user_fn, NULL, commute, &o);
    return handle_out(rc, o, op);
}

int mpii_op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    if (!user_fn)
        return obj_errf(MPI_ERR_ARG, "user function is NULL");
    obj_op_t *o = NULL;
    int rc = obj_op_create(NULL, user_fn, commute, &o);
    return handle_out(rc, o, op);
}

int mpii_op_free(MPI_Op *op)
{
    obj_op_t *o;
    int rc = obj_op_lookup(*op, &o);
    if (rc == MPI_SUCCESS && (rc = obj_op_free(o)) == MPI_SUCCESS)
        *op = MPI_OP_NULL;
    return rc;
}

int mpii_op_commutative(obj_op_t *op, int *commute)
{
    *commute = op->commute;
    return MPI_SUCCESS;
}

int mpii_reduce_local(const void *inbuf, void *inoutbuf, MPI_Count count,
                      obj_datatype_t *datatype, obj_op_t *op)
{
    return obj_op_reduce(op, datatype, inbuf, inoutbuf, count);
}
