/*
 * Predefined types chosen by a property: MPI_Type_match_size,
 * MPI_Type_create_f90_integer / _real / _complex and (MPI-4.1)
 * MPI_Type_get_value_index.
 *
 * The f90 functions return types that behave like the matching sized
 * Fortran type (MPI_INTEGER4, MPI_REAL8, ...) but have combiner
 * MPI_COMBINER_F90_* and contents (r) or (p, r), as MPI-4.1 section 19.1.9
 * asks; get_value_index returns the named pair type when there is one
 * (MPI_FLOAT + MPI_INT: MPI_FLOAT_INT) and otherwise, when the engine has a
 * pair kind of the same representation, a type with combiner
 * MPI_COMBINER_VALUE_INDEX whose contents are the two types; for other
 * combinations MPI_DATATYPE_NULL.  Both kinds of result are predefined
 * (MPI_Type_free refuses them), made once and kept for the life of the
 * process: the same arguments give the same handle.
 */
#include "obj/type_impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct cached {
    obj_datatype_t dt;
    int combiner;
    int64_t key1, key2;
    struct cached *next;
} cached_t;

static cached_t *cache;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Find or make the predefined type (combiner, key1, key2) behaving like
 * `like`, made of `basic` (NULL: itself); the contents are ints[] (f90) or
 * types[] (value-index). */
static int cached_type(int combiner, int64_t key1, int64_t key2, const obj_datatype_t *like,
                       obj_datatype_t *basic, const int *ints, int ni,
                       obj_datatype_t *const *types, int nd, obj_datatype_t **out)
{
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&cache_lock);
    cached_t *c;
    for (c = cache; c; c = c->next)
        if (c->combiner == combiner && c->key1 == key1 && c->key2 == key2)
            break;
    if (!c) {
        c = calloc(1, sizeof(*c));
        struct obj_type_contents *ct = c ? obj_type_contents_new(ni, 0, 0, nd) : NULL;
        if (!ct) {
            free(c);
            pthread_mutex_unlock(&cache_lock);
            return obj_errf(MPI_ERR_NO_MEM, "out of memory");
        }
        if (ni)
            memcpy(ct->ints, ints, (size_t)ni * sizeof(int));
        for (int i = 0; i < nd; i++)
            obj_type_contents_set_type(ct, i, types[i]);
        obj_datatype_t *d = &c->dt;
        *d = *like;
        obj_init_predef(&d->obj, OBJ_DATATYPE, d);
        d->attrs = NULL;
        d->combiner = combiner;
        d->contents = ct;
        d->basic = basic ? basic : d;
        c->combiner = combiner;
        c->key1 = key1;
        c->key2 = key2;
        c->next = cache;
        cache = c;
    }
    pthread_mutex_unlock(&cache_lock);
    *out = &c->dt;
    return rc;
}

/* ------------------------------------------------------------ match_size */

static MPI_Datatype match(int typeclass, int size)
{
    static const struct {
        int typeclass, size;
        MPI_Datatype type;
    } table[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1}, {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4}, {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
        {MPI_TYPECLASS_INTEGER, 16, MPI_INTEGER16}, {MPI_TYPECLASS_REAL, 2, MPI_REAL2},
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4},       {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
        {MPI_TYPECLASS_REAL, 16, MPI_REAL16},     {MPI_TYPECLASS_COMPLEX, 4, MPI_COMPLEX4},
        {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8}, {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16},
        {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
    };
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(table); i++) {
        if (table[i].typeclass != typeclass || table[i].size != size)
            continue;
        /* Kinds this compiler lacks have no reductions: not offered. */
        obj_datatype_t *d = obj_datatype_predef(table[i].type);
        return d && d->opclass != OPC_NONE ? table[i].type : MPI_DATATYPE_NULL;
    }
    return MPI_DATATYPE_NULL;
}

int obj_type_match_size(int typeclass, int size, obj_datatype_t **out)
{
    if (typeclass != MPI_TYPECLASS_INTEGER && typeclass != MPI_TYPECLASS_REAL &&
        typeclass != MPI_TYPECLASS_COMPLEX)
        return obj_errf(MPI_ERR_ARG, "invalid typeclass %d (MPI_TYPECLASS_INTEGER, _REAL or "
                        "_COMPLEX)", typeclass);
    MPI_Datatype t = match(typeclass, size);
    if (t == MPI_DATATYPE_NULL)
        return obj_errf(MPI_ERR_ARG, "no %s type of %d bytes",
                        typeclass == MPI_TYPECLASS_INTEGER ? "integer"
                        : typeclass == MPI_TYPECLASS_REAL  ? "real"
                                                           : "complex",
                        size);
    *out = obj_datatype_predef(t);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ f90 */

/* Decimal range and precision of the Fortran kinds (SELECTED_*_KIND). */
static const struct {
    int size, range;
} int_kinds[] = {{1, 2}, {2, 4}, {4, 9}, {8, 18}, {16, 38}};
static const struct {
    int size, precision, range;
} real_kinds[] = {{4, 6, 37}, {8, 15, 307}, {16, 33, 4931}};

int obj_type_f90_integer(int r, obj_datatype_t **out)
{
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(int_kinds); i++) {
        MPI_Datatype t = match(MPI_TYPECLASS_INTEGER, int_kinds[i].size);
        if (r <= int_kinds[i].range && t != MPI_DATATYPE_NULL)
            return cached_type(MPI_COMBINER_F90_INTEGER, r, 0, obj_datatype_predef(t),
                               obj_datatype_predef(t), &r, 1, NULL, 0, out);
    }
    return obj_errf(MPI_ERR_ARG, "no Fortran integer kind has a decimal range of %d", r);
}

static int f90_real(int combiner, int typeclass, int p, int r, obj_datatype_t **out)
{
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return obj_errf(MPI_ERR_ARG, "p and r must not both be MPI_UNDEFINED");
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(real_kinds); i++) {
        int size = real_kinds[i].size * (typeclass == MPI_TYPECLASS_COMPLEX ? 2 : 1);
        MPI_Datatype t = match(typeclass, size);
        if ((p == MPI_UNDEFINED || p <= real_kinds[i].precision) &&
            (r == MPI_UNDEFINED || r <= real_kinds[i].range) && t != MPI_DATATYPE_NULL) {
            int ints[2] = {p, r};
            return cached_type(combiner, p, r, obj_datatype_predef(t), obj_datatype_predef(t),
                               ints, 2, NULL, 0, out);
        }
    }
    return obj_errf(MPI_ERR_ARG, "no Fortran %s kind has a precision of %d and a range of %d",
                    typeclass == MPI_TYPECLASS_REAL ? "real" : "complex", p, r);
}

int obj_type_f90_real(int p, int r, obj_datatype_t **out)
{
    return f90_real(MPI_COMBINER_F90_REAL, MPI_TYPECLASS_REAL, p, r, out);
}

int obj_type_f90_complex(int p, int r, obj_datatype_t **out)
{
    return f90_real(MPI_COMBINER_F90_COMPLEX, MPI_TYPECLASS_COMPLEX, p, r, out);
}

/* ------------------------------------------------------------ value-index */

static const struct {
    MPI_Datatype value, index, pair;
} named_pairs[] = {
    {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},       {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
    {MPI_LONG, MPI_INT, MPI_LONG_INT},         {MPI_INT, MPI_INT, MPI_2INT},
    {MPI_SHORT, MPI_INT, MPI_SHORT_INT},       {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
    {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
};

/* Engine pair kinds by (value kind, index kind). */
static const struct {
    rail_typekind_t value, index, pair;
} pair_kinds[] = {
    {RAIL_TK_FLOAT, RAIL_TK_INT32, RAIL_TK_FLOAT_INT},
    {RAIL_TK_DOUBLE, RAIL_TK_INT32, RAIL_TK_DOUBLE_INT},
    {RAIL_TK_INT64, RAIL_TK_INT32, RAIL_TK_LONG_INT},
    {RAIL_TK_INT32, RAIL_TK_INT32, RAIL_TK_2INT},
    {RAIL_TK_INT16, RAIL_TK_INT32, RAIL_TK_SHORT_INT},
    {RAIL_TK_LONG_DOUBLE, RAIL_TK_INT32, RAIL_TK_LONG_DOUBLE_INT},
    {RAIL_TK_INT64, RAIL_TK_INT64, RAIL_TK_2INT64},
};

/* A pair type with combiner MPI_COMBINER_VALUE_INDEX for two predefined
 * types of the kinds of an engine pair kind; NULL when there is none. */
static int engine_pair(obj_datatype_t *value, obj_datatype_t *index, obj_datatype_t **out)
{
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(pair_kinds); i++) {
        if (pair_kinds[i].value != (rail_typekind_t)value->kind ||
            pair_kinds[i].index != (rail_typekind_t)index->kind)
            continue;
        obj_datatype_t like;
        memset(&like, 0, sizeof(like));
        like.committed = like.predefined = 1;
        like.layout = rail_dt_predefined(pair_kinds[i].pair);
        if (!like.layout)
            return MPI_SUCCESS;
        like.kind = pair_kinds[i].pair;
        like.opclass = OPC_PAIR;
        like.basic = &like;
        like.size = rail_dt_size(like.layout);
        like.lb = rail_dt_lb(like.layout);
        like.extent = rail_dt_extent(like.layout);
        like.true_lb = rail_dt_true_lb(like.layout);
        like.true_extent = rail_dt_true_extent(like.layout);
        obj_datatype_t *types[2] = {value, index};
        return cached_type(MPI_COMBINER_VALUE_INDEX,
                           (int64_t)(uintptr_t)obj_datatype_handle(value),
                           (int64_t)(uintptr_t)obj_datatype_handle(index), &like, NULL, NULL, 0,
                           types, 2, out);
    }
    return MPI_SUCCESS;
}

int obj_type_value_index(obj_datatype_t *value, obj_datatype_t *index, obj_datatype_t **out)
{
    MPI_Datatype v = obj_datatype_handle(value), ix = obj_datatype_handle(index);
    *out = NULL;
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(named_pairs); i++)
        if (named_pairs[i].value == v && named_pairs[i].index == ix) {
            *out = obj_datatype_predef(named_pairs[i].pair);
            return MPI_SUCCESS;
        }
    /* The value must be a predefined integer or real type, the index a
     * predefined integer type (MPI-4.1 section 6.9.4). */
    if (value->combiner != MPI_COMBINER_NAMED || index->combiner != MPI_COMBINER_NAMED ||
        !(value->opclass & (OPC_C_INT | OPC_F_INT | OPC_FLOAT | OPC_MULTI)) ||
        !(index->opclass & (OPC_C_INT | OPC_F_INT | OPC_MULTI)))
        return MPI_SUCCESS;
    return engine_pair(value, index, out);
}
