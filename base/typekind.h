/*
 * Kinds of basic elements: what the datatype engine, the reduction kernels
 * and the accel device kernels know about a predefined datatype.  Each
 * predefined MPI datatype maps to exactly one kind (by representation: MPI_INT
 * and MPI_INT32_T are both RAIL_TK_INT32); the MPI rules about which op is
 * allowed on which type are the front end's business (mpi/), not the kernels'.
 */
#ifndef BASE_TYPEKIND_H
#define BASE_TYPEKIND_H

#include <stddef.h>

typedef enum rail_typekind {
    RAIL_TK_NONE = 0,
    /* integers */
    RAIL_TK_INT8, RAIL_TK_UINT8, RAIL_TK_INT16, RAIL_TK_UINT16,
    RAIL_TK_INT32, RAIL_TK_UINT32, RAIL_TK_INT64, RAIL_TK_UINT64,
    RAIL_TK_INT128, RAIL_TK_UINT128,          /* MPI_INTEGER16 */
    /* floating point */
    RAIL_TK_FLOAT16,                          /* _Float16 (MPIX_REAL2); may be unsupported */
    RAIL_TK_FLOAT, RAIL_TK_DOUBLE, RAIL_TK_LONG_DOUBLE,
    RAIL_TK_FLOAT128,                         /* MPI_REAL16 when it is not long double */
    /* complex */
    RAIL_TK_C_FLOAT_COMPLEX, RAIL_TK_C_DOUBLE_COMPLEX, RAIL_TK_C_LONG_DOUBLE_COMPLEX,
    /* logical */
    RAIL_TK_BOOL,                             /* C _Bool, 1 byte */
    RAIL_TK_LOGICAL1, RAIL_TK_LOGICAL2, RAIL_TK_LOGICAL4, RAIL_TK_LOGICAL8, /* Fortran LOGICAL: nonzero is true */
    /* raw bytes (MPI_BYTE, MPI_PACKED, MPI_CHAR for transfer) */
    RAIL_TK_BYTE,
    /* value-index pairs for MINLOC/MAXLOC, laid out as the C structs
     * struct { T v; int i; } (2INT: {int; int}; 2REAL etc. {T; T}) */
    RAIL_TK_FLOAT_INT, RAIL_TK_DOUBLE_INT, RAIL_TK_LONG_INT, RAIL_TK_2INT,
    RAIL_TK_SHORT_INT, RAIL_TK_LONG_DOUBLE_INT,
    RAIL_TK_2FLOAT, RAIL_TK_2DOUBLE, RAIL_TK_2INT64,
    RAIL_TK_COUNT
} rail_typekind_t;

/* Size in bytes of one element of a kind (0 for NONE / unsupported). */
size_t rail_typekind_size(rail_typekind_t tk);
/* Natural alignment of one element. */
size_t rail_typekind_align(rail_typekind_t tk);
/* Short name ("int32", "double_int") for messages and the info tool. */
const char *rail_typekind_name(rail_typekind_t tk);

#endif
