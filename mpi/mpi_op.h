/* Reduction operations (front-end view). */
#ifndef MPI_MPI_OP_H
#define MPI_MPI_OP_H

#include "mpi/mpi_obj.h"
#include "base/op.h"

struct MPI_ABI_Op {
    mpi_obj_t obj;
    rail_op_t op;              /* predefined: the kernel family; RAIL_OP_NONE for user ops */
    int commute;
    int opclasses;             /* predefined: datatype classes allowed (enum mpi_opclass) */
    MPI_User_function *user_fn;
    MPI_User_function_c *user_fn_c;
};

int mpi_op_predef_init(void);
/* MPI_ERR_OP with a message unless op may be applied to datatype. */
int mpi_op_check_datatype(const mpi_op_t *op, const struct MPI_ABI_Datatype *dt);

#endif
