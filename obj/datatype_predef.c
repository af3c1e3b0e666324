/*
 * The predefined datatypes: one object per MPI_* datatype constant, with
 * its MPI name, the engine kind of its elements and its reduction classes
 * (MPI-4.1 section 6.9.2).
 *
 * Fortran types have the sizes of gfortran on this platform (INTEGER and
 * REAL 4 bytes, DOUBLE PRECISION 8, LOGICAL 4, CHARACTER 1).  Types made
 * of two elements of a kind the engine knows (MPI_COMPLEX4, MPI_COMPLEX32)
 * are contiguous pairs of that kind; the reduction code knows their SUM
 * and PROD (obj/op_reduce.c).
 */
#include "obj/type_impl.h"

#include <stdio.h>
#include <string.h>

typedef struct predef {
    MPI_Datatype handle;
    const char *name;
    rail_typekind_t kind;     /* kind of the element (pairs: the pair kind) */
    int opclass;
    int n;                    /* 2: two elements of kind (complex of a real kind) */
} predef_t;

#define P(h, k, c) {h, #h, k, c, 1}
#define P2(h, k, c) {h, #h, k, c, 2}

static const predef_t predefs[] = {
    /* C */
    P(MPI_CHAR, RAIL_TK_INT8, OPC_NONE),   /* OPC_C_INT unless strict (init_one) */
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
    P(MPI_C_FLOAT_COMPLEX, RAIL_TK_C_FLOAT_COMPLEX, OPC_COMPLEX),
    P(MPI_C_DOUBLE_COMPLEX, RAIL_TK_C_DOUBLE_COMPLEX, OPC_COMPLEX),
    P(MPI_C_LONG_DOUBLE_COMPLEX, RAIL_TK_C_LONG_DOUBLE_COMPLEX, OPC_COMPLEX),
    /* C++ */
    P(MPI_CXX_BOOL, RAIL_TK_BOOL, OPC_LOGICAL),
    P(MPI_CXX_FLOAT_COMPLEX, RAIL_TK_C_FLOAT_COMPLEX, OPC_COMPLEX),
    P(MPI_CXX_DOUBLE_COMPLEX, RAIL_TK_C_DOUBLE_COMPLEX, OPC_COMPLEX),
    P(MPI_CXX_LONG_DOUBLE_COMPLEX, RAIL_TK_C_LONG_DOUBLE_COMPLEX, OPC_COMPLEX),
    /* Fortran */
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
    P2(MPI_COMPLEX4, RAIL_TK_FLOAT16, OPC_COMPLEX),
    P(MPI_COMPLEX8, RAIL_TK_C_FLOAT_COMPLEX, OPC_COMPLEX),
    P(MPI_COMPLEX16, RAIL_TK_C_DOUBLE_COMPLEX, OPC_COMPLEX),
    P2(MPI_COMPLEX32, RAIL_TK_FLOAT128, OPC_COMPLEX),
    /* MPI-5.0 Fortran LOGICAL*n (LOGICAL16: transfer only) */
    P(MPIX_LOGICAL1, RAIL_TK_LOGICAL1, OPC_LOGICAL),
    P(MPIX_LOGICAL2, RAIL_TK_LOGICAL2, OPC_LOGICAL),
    P(MPIX_LOGICAL4, RAIL_TK_LOGICAL4, OPC_LOGICAL),
    P(MPIX_LOGICAL8, RAIL_TK_LOGICAL8, OPC_LOGICAL),
    P(MPIX_LOGICAL16, RAIL_TK_INT128, OPC_NONE),
    /* Value-index pairs (MINLOC/MAXLOC): size 12 extent 16 for MPI_DOUBLE_INT */
    P(MPI_FLOAT_INT, RAIL_TK_FLOAT_INT, OPC_PAIR),
    P(MPI_DOUBLE_INT, RAIL_TK_DOUBLE_INT, OPC_PAIR),
    P(MPI_LONG_INT, RAIL_TK_LONG_INT, OPC_PAIR),
    P(MPI_2INT, RAIL_TK_2INT, OPC_PAIR),
    P(MPI_SHORT_INT, RAIL_TK_SHORT_INT, OPC_PAIR),
    P(MPI_LONG_DOUBLE_INT, RAIL_TK_LONG_DOUBLE_INT, OPC_PAIR),
    P(MPI_2REAL, RAIL_TK_2FLOAT, OPC_PAIR),
    P(MPI_2DOUBLE_PRECISION, RAIL_TK_2DOUBLE, OPC_PAIR),
    P(MPI_2INTEGER, RAIL_TK_2INT, OPC_PAIR),
};

#define N_PREDEF RAIL_ARRAY_SIZE(predefs)
static obj_datatype_t predef_objs[N_PREDEF];
bool obj_datatype_char_strict;

/* Bytes of the kinds a compiler may lack, for a byte layout instead. */
static int64_t missing_kind_size(rail_typekind_t tk)
{
    switch (tk) {
    case RAIL_TK_FLOAT16:
        return 2;
    case RAIL_TK_INT128:
    case RAIL_TK_FLOAT128:
        return 16;
    default:
        return 0;
    }
}

static int make_layout(const predef_t *p, struct rail_dt **out)
{
    struct rail_dt *leaf;
    /* MPI_LONG and MPI_UNSIGNED_LONG are 4 bytes in external32. */
    if (p->handle == MPI_LONG || p->handle == MPI_UNSIGNED_LONG)
        leaf = rail_dt_predefined_ext32((rail_typekind_t)p->kind, 4);
    else
        leaf = rail_dt_predefined(p->kind);
    if (!leaf) {
        /* A kind this compiler lacks: transfers as bytes, no reductions. */
        int64_t n = missing_kind_size(p->kind) * p->n;
        if (n == 0)
            return obj_errf(MPI_ERR_INTERN, "no layout for %s", p->name);
        return rail_dt_create_contiguous(n, rail_dt_predefined(RAIL_TK_BYTE), out);
    }
    if (p->n == 1) {
        *out = leaf;
        return MPI_SUCCESS;
    }
    return rail_dt_create_contiguous(p->n, leaf, out);
}

static int init_one(obj_datatype_t *d, const predef_t *p)
{
    memset(d, 0, sizeof(*d));
    int rc = make_layout(p, &d->layout);
    if (rc != MPI_SUCCESS)
        return obj_errf(rc, "no layout for %s", p->name);
    if (!rail_dt_is_committed(d->layout) && (rc = rail_dt_commit(d->layout)) != MPI_SUCCESS)
        return obj_errf(rc, "cannot commit the layout of %s", p->name);
    obj_init_predef(&d->obj, OBJ_DATATYPE, p->handle);
    d->committed = 1;
    d->predefined = 1;
    d->combiner = MPI_COMBINER_NAMED;
    d->basic = d;
    /* Kinds without a leaf of their own (two-element types, missing kinds)
     * have no kernel: the reduction code handles them (NONE here). */
    d->kind = (p->n == 1 && d->layout->tk == (rail_typekind_t)p->kind) ? p->kind : RAIL_TK_NONE;
    d->opclass = p->opclass;
    /* An extension, as Open MPI and MPICH: MPI_CHAR reduces as signed char
     * with every integer operation (OSU's benchmarks rely on it). */
    if (p->handle == MPI_CHAR && !obj_datatype_char_strict)
        d->opclass = OPC_C_INT;
    if (!rail_dt_predefined(p->kind))
        d->opclass = OPC_NONE;
    snprintf(d->name, sizeof(d->name), "%s", p->name);
    d->size = (MPI_Count)rail_dt_size(d->layout);
    d->lb = (MPI_Count)rail_dt_lb(d->layout);
    d->extent = (MPI_Count)rail_dt_extent(d->layout);
    d->true_lb = (MPI_Count)rail_dt_true_lb(d->layout);
    d->true_extent = (MPI_Count)rail_dt_true_extent(d->layout);
    return MPI_SUCCESS;
}

int obj_datatype_predef_init(void)
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

obj_datatype_t *obj_datatype_predef(MPI_Datatype h)
{
    obj_t *o = obj_of_handle((const void *)h);
    if ((uintptr_t)h >= OBJ_PREDEF_MAX || !o || o->kind != OBJ_DATATYPE)
        return NULL;
    return (obj_datatype_t *)o;
}
