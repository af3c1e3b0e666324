/*
 * Datatype objects.  The layout used to pack and unpack lives in the
 * datatype engine (base/dt.h); this struct carries what the API needs on
 * top of it: the constructor's arguments (envelope / contents), the name,
 * the attributes, and what reductions need to know.  The operations on
 * datatypes (constructors, commit, free, packing) are in obj/type_impl.h.
 *
 * References.  obj.refcount counts every reference: the user's handles
 * (`handles`: 1 at creation, +1 for each handle MPI_Type_get_contents
 * returns) and internal ones (a derived type holds its old types;
 * collectives may hold a type with obj_datatype_retain).  When the last
 * user handle is freed the attributes are deleted and the handle becomes
 * invalid (lookups report a freed datatype); the object itself goes when
 * the last reference does.  A pending point-to-point request holds the
 * engine layout (rail_dt_retain), not this object, so freeing a type in use
 * is safe either way.
 *
 * Predefined types (the MPI_* constants, and the types that
 * MPI_Type_create_f90_* and MPI_Type_get_value_index return) have
 * predefined = 1: they are never freed and MPI_Type_free refuses them.
 */
#ifndef OBJ_DATATYPE_H
#define OBJ_DATATYPE_H

#include "obj/obj.h"

struct obj_type_contents;

struct MPI_ABI_Datatype {
    obj_t obj;
    int committed;
    int predefined;
    MPI_Count size;           /* bytes of data in one element */
    MPI_Count lb, extent;     /* MPI_Type_get_extent */
    MPI_Count true_lb, true_extent;
    struct rail_dt *layout;   /* base/dt engine description (one reference) */
    int kind;                 /* predefined: rail_typekind_t of the element, else 0 */
    int opclass;              /* predefined: reduction classes (MPI-4.1 6.9.2) */
    int handles;              /* user handles (derived types; atomic) */
    int combiner;             /* MPI_COMBINER_* */
    struct obj_type_contents *contents;   /* constructor arguments; NULL when NAMED */
    /* The predefined type every basic element of the type map is (itself
     * for a predefined type), or NULL when the type map mixes types or is
     * empty: predefined reductions accept a derived type when this is set. */
    struct MPI_ABI_Datatype *basic;
    struct obj_attr_list *attrs;
    char name[MPI_MAX_OBJECT_NAME];
};

/* Reduction classes of MPI-4.1 section 6.9.2. */
enum obj_opclass {
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

static inline int obj_datatype_is_committed(const obj_datatype_t *d) { return d->committed; }
static inline int obj_datatype_is_predefined(const obj_datatype_t *d) { return d->predefined; }

/* Internal references (collectives holding a type across a nonblocking
 * operation); no-ops on predefined types. */
void obj_datatype_retain(obj_datatype_t *d);
void obj_datatype_release(obj_datatype_t *d);

/* Predefined datatypes (obj/datatype_predef.c). */
int obj_datatype_predef_init(void);
/* Parameter mpi_reduce_char_strict: MPI_CHAR refuses the reduction
 * operations (the standard's tables) instead of reducing as signed char. */
extern bool obj_datatype_char_strict;
/* The predefined object of a predefined handle (NULL if h is none). */
obj_datatype_t *obj_datatype_predef(MPI_Datatype h);

#endif
