/*
 * Size, alignment and name of each kind of basic element.  Sizes and
 * alignments come from the C types in base/op_types.h, the same ones the
 * reduction kernels use.
 */
#include "base/typekind.h"
#include "base/op_types.h"

typedef struct tk_layout {
    unsigned char size;
    unsigned char align;
} tk_layout_t;

#define TK_LAYOUT(kind, T) [RAIL_TK_##kind] = {sizeof(T), _Alignof(T)},
/* Kinds this compiler cannot represent (and NONE) stay {0, 0}. */
static const tk_layout_t tk_layout[RAIL_TK_COUNT] = {RAIL_TK_FOREACH(TK_LAYOUT)};
#undef TK_LAYOUT

static const char *const tk_name[RAIL_TK_COUNT] = {
    [RAIL_TK_NONE] = "none",
    [RAIL_TK_INT8] = "int8",
    [RAIL_TK_UINT8] = "uint8",
    [RAIL_TK_INT16] = "int16",
    [RAIL_TK_UINT16] = "uint16",
    [RAIL_TK_INT32] = "int32",
    [RAIL_TK_UINT32] = "uint32",
    [RAIL_TK_INT64] = "int64",
    [RAIL_TK_UINT64] = "uint64",
    [RAIL_TK_INT128] = "int128",
    [RAIL_TK_UINT128] = "uint128",
    [RAIL_TK_FLOAT16] = "float16",
    [RAIL_TK_FLOAT] = "float",
    [RAIL_TK_DOUBLE] = "double",
    [RAIL_TK_LONG_DOUBLE] = "long_double",
    [RAIL_TK_FLOAT128] = "float128",
    [RAIL_TK_C_FLOAT_COMPLEX] = "c_float_complex",
    [RAIL_TK_C_DOUBLE_COMPLEX] = "c_double_complex",
    [RAIL_TK_C_LONG_DOUBLE_COMPLEX] = "c_long_double_complex",
    [RAIL_TK_BOOL] = "bool",
    [RAIL_TK_LOGICAL1] = "logical1",
    [RAIL_TK_LOGICAL2] = "logical2",
    [RAIL_TK_LOGICAL4] = "logical4",
    [RAIL_TK_LOGICAL8] = "logical8",
    [RAIL_TK_BYTE] = "byte",
    [RAIL_TK_FLOAT_INT] = "float_int",
    [RAIL_TK_DOUBLE_INT] = "double_int",
    [RAIL_TK_LONG_INT] = "long_int",
    [RAIL_TK_2INT] = "2int",
    [RAIL_TK_SHORT_INT] = "short_int",
    [RAIL_TK_LONG_DOUBLE_INT] = "long_double_int",
    [RAIL_TK_2FLOAT] = "2float",
    [RAIL_TK_2DOUBLE] = "2double",
    [RAIL_TK_2INT64] = "2int64",
};

static inline int tk_valid(rail_typekind_t tk)
{
    return (unsigned)tk < RAIL_TK_COUNT;
}

size_t rail_typekind_size(rail_typekind_t tk)
{
    return tk_valid(tk) ? tk_layout[tk].size : 0;
}

/* 0, like the size, for NONE, unsupported and out-of-range kinds. */
size_t rail_typekind_align(rail_typekind_t tk)
{
    return tk_valid(tk) ? tk_layout[tk].align : 0;
}

/* Unsupported kinds keep their name (for "float16 is not supported" messages). */
const char *rail_typekind_name(rail_typekind_t tk)
{
    return tk_valid(tk) ? tk_name[tk] : "invalid";
}
