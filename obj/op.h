/*
 * Reduction operation objects (obj/op.c; applied by obj/op_reduce.c).
 *
 * References.  obj.refcount counts the user's handle and internal holders
 * (a pending nonblocking collective: obj_op_retain when it starts,
 * obj_op_release when it completes).  MPI_Op_free invalidates the handle at
 * once (later lookups report a freed operation) and drops the handle's
 * reference; the object goes with the last reference, so an operation
 * freed while a collective still uses it stays valid for that collective.
 * Predefined operations are never freed; retain / release ignore them.
 */
#ifndef OBJ_OP_H
#define OBJ_OP_H

#include "obj/obj.h"
#include "base/op.h"

struct MPI_ABI_Op {
    obj_t obj;
    rail_op_t op;              /* predefined: the kernel family; RAIL_OP_NONE for user ops */
    int commute;
    int opclasses;             /* predefined: datatype classes allowed (enum obj_opclass) */
    MPI_User_function *user_fn;
    MPI_User_function_c *user_fn_c;
};

int obj_op_predef_init(void);

void obj_op_retain(obj_op_t *op);
void obj_op_release(obj_op_t *op);

/* A user operation (MPI_Op_create: fn; MPI_Op_create_c: fn_c), with one
 * reference for the user's handle. */
int obj_op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute,
                  obj_op_t **out);
/* MPI_Op_free: invalidate the handle and drop its reference; MPI_ERR_OP
 * for a predefined operation. */
int obj_op_free(obj_op_t *op);

/* MPI_ERR_OP with a message unless op may be applied to datatype in a
 * collective reduction or MPI_Reduce_local (MPI-4.1 section 6.9.2): user
 * operations take any datatype; a predefined one takes the predefined types
 * of its classes and derived types made of one such type only (dt->basic).
 * MPI_REPLACE and MPI_NO_OP are refused: they are for one-sided
 * accumulates only. */
int obj_op_check_datatype(const obj_op_t *op, const struct MPI_ABI_Datatype *dt);
/* The same for MPI_Accumulate and friends (MPI-4.1 section 12.3.4): the
 * predefined operations as above, MPI_REPLACE and MPI_NO_OP on any type
 * made of one predefined type; user operations are refused. */
int obj_op_check_accumulate(const obj_op_t *op, const struct MPI_ABI_Datatype *dt);

/* inoutbuf = inbuf op inoutbuf for count elements of datatype, in the order
 * MPI defines (inbuf is the left operand).  Buffers may be host or device
 * memory: predefined operations run through accel_reduce where the data
 * lives (noncontiguous layouts are staged in memory of the same kind);
 * user functions are called on the buffers as they are, in chunks of at
 * most INT_MAX elements for functions from MPI_Op_create.  Checks the
 * combination first (obj_op_check_datatype). */
int obj_op_reduce(obj_op_t *op, struct MPI_ABI_Datatype *datatype, const void *inbuf,
                  void *inoutbuf, MPI_Count count);

#endif
