/* The predefined datatypes: one object per MPI_* datatype constant. */
#include "mpi/mpi_err.h"
#include "mpi/mpi_datatype.h"
#include "mpi/mpi_env.h"
#include "base/dt.h"

#include <stdio.h>
#include <string.h>


typedef struct predef {
    MPI_Datatype handle;
    const char *name;
    rail_typekind_t kind;     /* kind of the element (pairs: the pair kind) */
    int opclass;
} predef_t;

#define P(h, k, c) {h, #h, k, c}
#define PAIR(h, k, a, b) {h, #h, k, OPC_PAIR}

static const predef_t predefs[] = {
    P(MPI_CHAR, RAIL_TK_INT8, OPC_NONE),
    P(MPI_SIGNED_CHAR, RAIL_TK_INT8, OPC_C_INT),
    P(MPI_UNSIGNED_CHAR, RAIL_TK_UINT8, OPC_C_INT),
    P(MPI_BYTE, RAIL_TK_BYTE, OPC_BYTE),
    P(MPI_PACKED, RAIL_TK_BYTE, OPC_NONE),
    P(MPI_WCHAR, RAIL_TK_INT32, OPC_NONE),
    P(MPI_SHORT, RAIL_TK_INT16, OPC_C_INT),
    P(MPI_UNSIGNED_SHORT, RAIL_TK_UINT16, OPC_C_INT),
    P(MPI_INT, RAIL_TK_INT32, OPC_C_INT),
    P(MPI_UNSIGNED, RAIL_TK_UINT32, OPC_C_INT),
    P(MPI_LONG, RAIL_TK_INT64, OPC_C_INT),
    P(MPI_UNSIGNED_LONG, RAIL_TK_UINT64, OPC_C_INT),
    P(MPI_LONG_LONG, RAIL_TK_INT64, OPC_C_INT),
    P(MPI_UNSIGNED_LONG_LONG, RAIL_TK_UINT64, OPC_C_INT),
    P(MPI_INT8_T, RAIL_TK_INT8, OPC_C_INT),
    P(MPI_UINT8_T, RAIL_TK_UINT8, OPC_C_INT),
    P(MPI_INT16_T, RAIL_TK_INT16, OPC_C_INT),
    P(MPI_UINT16_T, RAIL_TK_UINT16, OPC_C_INT),
    P(MPI_INT32_T, RAIL_TK_INT32, OPC_C_INT),
    P(MPI_UINT32_T, RAIL_TK_UINT32, OPC_C_INT),
    P(MPI_INT64_T, RAIL_TK_INT64, OPC_C_INT),
    P(MPI_UINT64_T, RAIL_TK_UINT64, OPC_C_INT),
    P(MPI_AINT, RAIL_TK_INT64, OPC_MULTI),
    P(MPI_COUNT, RAIL_TK_INT64, OPC_MULTI),
    P(MPI_OFFSET, RAIL_TK_INT64, OPC_MULTI),
    P(MPI_FLOAT, RAIL_TK_FLOAT, OPC_FLOAT),
    P(MPI_DOUBLE, RAIL_TK_DOUBLE, OPC_FLOAT),
    P(MPI_LONG_DOUBLE, RAIL_TK_LONG_DOUBLE, OPC_FLOAT),
    P(MPI_C_BOOL, RAIL_TK_BOOL, OPC_LOGICAL),
    P(MPI_CXX_BOOL, RAIL_TK_BOOL, OPC_LOGICAL),
    P(MPI_C_FLOAT_COMPLEX, RAIL_TK_C_FLOAT_COMPLEX, OPC_COMPLEX),
    P(MPI_C_DOUBLE_COMPLEX, RAIL_TK_C_DOUBLE_COMPLEX, OPC_COMPLEX),
    P(MPI_C_LONG_DOUBLE_COMPLEX, RAIL_TK_C_LONG_DOUBLE_COMPLEX, OPC_COMPLEX),
    P(MPI_CXX_FLOAT_COMPLEX, RAIL_TK_C_FLOAT_COMPLEX, OPC_COMPLEX),
    P(MPI_CXX_DOUBLE_COMPLEX, RAIL_TK_C_DOUBLE_COMPLEX, OPC_COMPLEX),
    P(MPI_CXX_LONG_DOUBLE_COMPLEX, RAIL_TK_C_LONG_DOUBLE_COMPLEX, OPC_COMPLEX),
    /* Fortran types, by the sizes of gfortran on this platform. */
    P(MPI_INTEGER, RAIL_TK_INT32, OPC_F_INT),
    P(MPI_REAL, RAIL_TK_FLOAT, OPC_FLOAT),
    P(MPI_DOUBLE_PRECISION, RAIL_TK_DOUBLE, OPC_FLOAT),
    P(MPI_COMPLEX, RAIL_TK_C_FLOAT_COMPLEX, OPC_COMPLEX),
    P(MPI_DOUBLE_COMPLEX, RAIL_TK_C_DOUBLE_COMPLEX, OPC_COMPLEX),
    P(MPI_LOGICAL, RAIL_TK_LOGICAL4, OPC_LOGICAL),
    P(MPI_CHARACTER, RAIL_TK_INT8, OPC_NONE),
    P(MPI_INTEGER1, RAIL_TK_INT8, OPC_F_INT),
    P(MPI_INTEGER2, RAIL_TK_INT16, OPC_F_INT),
    P(MPI_INTEGER4, RAIL_TK_INT32, OPC_F_INT),
    P(MPI_INTEGER8, RAIL_TK_INT64, OPC_F_INT),
    P(MPI_INTEGER16, RAIL_TK_INT128, OPC_F_INT),
    P(MPI_REAL2, RAIL_TK_FLOAT16, OPC_FLOAT),
    P(MPI_REAL4, RAIL_TK_FLOAT, OPC_FLOAT),
    P(MPI_REAL8, RAIL_TK_DOUBLE, OPC_FLOAT),
    P(MPI_REAL16, RAIL_TK_FLOAT128, OPC_FLOAT),
    P(MPI_COMPLEX8, RAIL_TK_C_FLOAT_COMPLEX, OPC_COMPLEX),
    P(MPI_COMPLEX16, RAIL_TK_C_DOUBLE_COMPLEX, OPC_COMPLEX),
    P(MPIX_LOGICAL1, RAIL_TK_LOGICAL1, OPC_LOGICAL),
    P(MPIX_LOGICAL2, RAIL_TK_LOGICAL2, OPC_LOGICAL),
    P(MPIX_LOGICAL4, RAIL_TK_LOGICAL4, OPC_LOGICAL),
    P(MPIX_LOGICAL8, RAIL_TK_LOGICAL8, OPC_LOGICAL),
    /* Value-index pairs (MINLOC/MAXLOC). */
    PAIR(MPI_FLOAT_INT, RAIL_TK_FLOAT_INT, RAIL_TK_FLOAT, RAIL_TK_INT32),
    PAIR(MPI_DOUBLE_INT, RAIL_TK_DOUBLE_INT, RAIL_TK_DOUBLE, RAIL_TK_INT32),
    PAIR(MPI_LONG_INT, RAIL_TK_LONG_INT, RAIL_TK_INT64, RAIL_TK_INT32),
    PAIR(MPI_2INT, RAIL_TK_2INT, RAIL_TK_INT32, RAIL_TK_INT32),
    PAIR(MPI_SHORT_INT, RAIL_TK_SHORT_INT, RAIL_TK_INT16, RAIL_TK_INT32),
    PAIR(MPI_LONG_DOUBLE_INT, RAIL_TK_LONG_DOUBLE_INT, RAIL_TK_LONG_DOUBLE, RAIL_TK_INT32),
    PAIR(MPI_2REAL, RAIL_TK_2FLOAT, RAIL_TK_FLOAT, RAIL_TK_FLOAT),
    PAIR(MPI_2DOUBLE_PRECISION, RAIL_TK_2DOUBLE, RAIL_TK_DOUBLE, RAIL_TK_DOUBLE),
    PAIR(MPI_2INTEGER, RAIL_TK_2INT, RAIL_TK_INT32, RAIL_TK_INT32),
};

#define N_PREDEF RAIL_ARRAY_SIZE(predefs)
static mpi_datatype_t predef_objs[N_PREDEF];

static int init_one(mpi_datatype_t *d, const predef_t *p)
{
    memset(d, 0, sizeof(*d));
    mpi_obj_init_predef(&d->obj, MPI_OBJ_DATATYPE, p->handle);
    d->committed = 1;
    d->predefined = 1;
    d->kind = p->kind;
    d->opclass = p->opclass;
    snprintf(d->name, sizeof(d->name), "%s", p->name);
    /* Pair kinds are the engine's struct of their two members (e.g.
     * MPI_DOUBLE_INT: size 12, extent 16).  MPI_LONG and MPI_UNSIGNED_LONG
     * are 4 bytes in external32, unlike the other 64-bit integers. */
    if (p->handle == MPI_LONG || p->handle == MPI_UNSIGNED_LONG)
        d->layout = rail_dt_predefined_ext32(p->kind, 4);
    else
        d->layout = rail_dt_predefined(p->kind);
    if (!d->layout)
        return mpi_errf(MPI_ERR_INTERN, "no layout for %s", p->name);
    d->size = (MPI_Count)rail_dt_size(d->layout);
    d->lb = (MPI_Count)rail_dt_lb(d->layout);
    d->extent = (MPI_Count)rail_dt_extent(d->layout);
    d->true_lb = (MPI_Count)rail_dt_true_lb(d->layout);
    d->true_extent = (MPI_Count)rail_dt_true_extent(d->layout);
    return MPI_SUCCESS;
}

int mpi_datatype_predef_init(void)
{
    static bool done;
    if (done)
        return MPI_SUCCESS;
    for (size_t i = 0; i < N_PREDEF; i++) {
        int rc = init_one(&predef_objs[i], &predefs[i]);
        if (rc)
            return rc;
    }
    done = true;
    return MPI_SUCCESS;
}

