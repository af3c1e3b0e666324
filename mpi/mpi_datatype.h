/*
 * Datatypes (front-end view).  The layout description used to pack and
 * unpack lives in the datatype engine (base/dt); this struct carries what the
 * API needs on top of it.
 */
#ifndef MPI_MPI_DATATYPE_H
#define MPI_MPI_DATATYPE_H

#include "mpi/mpi_obj.h"

struct MPI_ABI_Datatype {
    mpi_obj_t obj;
    int committed;
    int predefined;
    MPI_Count size;           /* bytes of data in one element */
    MPI_Count lb, extent;     /* MPI_Type_get_extent */
    MPI_Count true_lb, true_extent;
    struct rail_dt *layout;   /* base/dt engine description */
    int kind;                 /* predefined: rail_typekind_t of the element, else 0 */
    int opclass;              /* predefined: reduction classes (MPI-4.1 6.9.2) */
    struct mpi_attr_list *attrs;
    char name[MPI_MAX_OBJECT_NAME];
};

/* Reduction classes of MPI-4.1 section 6.9.2. */
enum mpi_opclass {
    OPC_NONE = 0,
    OPC_C_INT = 1 << 0,
    OPC_F_INT = 1 << 1,
    OPC_FLOAT = 1 << 2,
    OPC_LOGICAL = 1 << 3,
    OPC_COMPLEX = 1 << 4,
    OPC_BYTE = 1 << 5,
    OPC_MULTI = 1 << 6,    /* MPI_AINT, MPI_OFFSET, MPI_COUNT */
    OPC_PAIR = 1 << 7,     /* MINLOC/MAXLOC pair types */
};

static inline int mpi_datatype_is_committed(const mpi_datatype_t *d) { return d->committed; }
static inline int mpi_datatype_is_predefined(const mpi_datatype_t *d) { return d->predefined; }

/* Predefined datatypes (mpi/datatype_predef.c). */
int mpi_datatype_predef_init(void);

#endif
