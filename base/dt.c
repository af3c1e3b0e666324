/*
 * Datatype engine: predefined types, reference counting, allocation.
 */
#include "base/dt_impl.h"
#include "base/atomic.h"
#include "base/op_types.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* One predefined leaf per kind, plus the 4-byte external32 long variants. */
static struct rail_dt dt_leaf[RAIL_TK_COUNT];
static struct rail_dt_node dt_leaf_node[RAIL_TK_COUNT];
static struct rail_dt dt_long32[2];       /* INT64, UINT64 with ext32 size 4 */
static struct rail_dt_node dt_long32_node[2];

/* Pair kinds: static structs of two leaves. */
struct dt_pair {
    int64_t blocklens[2], displs[2], pre_bytes[3], pre_elems[3];
    struct rail_dt *types[2];
    struct rail_dt_node node;
    struct rail_dt_blk blk[2];
};
static struct dt_pair dt_pair[RAIL_TK_COUNT];
static pthread_once_t dt_once = PTHREAD_ONCE_INIT;

static void dt_leaf_init(struct rail_dt *dt, struct rail_dt_node *node, rail_typekind_t tk,
                         int64_t ext32)
{
    int64_t size = (int64_t)rail_typekind_size(tk);
    *node = (struct rail_dt_node){.op = RAIL_DT_OP_BLOCK, .depth = 1, .size = size, .count = 1,
                                  .stride = size, .len = size, .nblocks = 1};
    *dt = (struct rail_dt){.combiner = RAIL_DT_PREDEFINED, .tk = tk, .size = size,
                           .extent = size, .true_extent = size, .nelem = 1,
                           .ext32_size = ext32, .align = (int64_t)rail_typekind_align(tk),
                           .root = node};
    dt->flags = RAIL_DT_F_PREDEFINED | RAIL_DT_F_COMMITTED | RAIL_DT_F_ONEBLOCK |
                RAIL_DT_F_CONTIG | (ext32 ? 0 : RAIL_DT_F_NOEXT32);
}

/* The program of a pair: one block, or two when there is a hole. */
static void dt_pair_program(struct rail_dt *dt, struct dt_pair *p)
{
    int64_t s0 = p->types[0]->size, s1 = p->types[1]->size;
    if (p->displs[1] == s0) {
        p->node = (struct rail_dt_node){.op = RAIL_DT_OP_BLOCK, .depth = 1, .size = s0 + s1,
                                        .count = 1, .stride = s0 + s1, .len = s0 + s1,
                                        .nblocks = 1};
        dt->flags |= RAIL_DT_F_ONEBLOCK | (s0 + s1 == dt->extent ? RAIL_DT_F_CONTIG : 0);
    } else {
        p->blk[0] = (struct rail_dt_blk){0, s0, 0};
        p->blk[1] = (struct rail_dt_blk){p->displs[1], s1, s0};
        p->node = (struct rail_dt_node){.op = RAIL_DT_OP_BLKS, .depth = 1, .size = s0 + s1,
                                        .count = 2, .nblocks = 2, .blk = p->blk};
    }
    dt->root = &p->node;
}

static void dt_pair_init(rail_typekind_t tk, struct rail_dt *v, struct rail_dt *i, size_t off)
{
    struct dt_pair *p = &dt_pair[tk];
    struct rail_dt *dt = &dt_leaf[tk];
    if (v->size == 0 || i->size == 0)
        return;
    *p = (struct dt_pair){.blocklens = {1, 1}, .displs = {0, (int64_t)off}, .types = {v, i}};
    *dt = (struct rail_dt){.combiner = RAIL_DT_STRUCT, .tk = tk, .count = 2,
                           .blocklens = p->blocklens, .displs = p->displs, .types = p->types};
    rail_dt_finish_struct(dt, p->pre_bytes, p->pre_elems);
    dt->flags |= RAIL_DT_F_PREDEFINED | RAIL_DT_F_COMMITTED;
    dt_pair_program(dt, p);
}

#define DT_PAIR(kind, type, V, I)                                                                  \
    dt_pair_init(RAIL_TK_##kind, (V), (I), offsetof(rail_tk_##type##_t, i))

static void dt_init_pairs(void)
{
    struct rail_dt *i32 = &dt_leaf[RAIL_TK_INT32];
    struct rail_dt *lng = sizeof(long) == 8 ? &dt_long32[0] : i32;
    DT_PAIR(FLOAT_INT, float_int, &dt_leaf[RAIL_TK_FLOAT], i32);
    DT_PAIR(DOUBLE_INT, double_int, &dt_leaf[RAIL_TK_DOUBLE], i32);
    DT_PAIR(LONG_INT, long_int, lng, i32);
    DT_PAIR(2INT, 2int, i32, i32);
    DT_PAIR(SHORT_INT, short_int, &dt_leaf[RAIL_TK_INT16], i32);
    DT_PAIR(LONG_DOUBLE_INT, long_double_int, &dt_leaf[RAIL_TK_LONG_DOUBLE], i32);
    DT_PAIR(2FLOAT, 2float, &dt_leaf[RAIL_TK_FLOAT], &dt_leaf[RAIL_TK_FLOAT]);
    DT_PAIR(2DOUBLE, 2double, &dt_leaf[RAIL_TK_DOUBLE], &dt_leaf[RAIL_TK_DOUBLE]);
    DT_PAIR(2INT64, 2int64, &dt_leaf[RAIL_TK_INT64], &dt_leaf[RAIL_TK_INT64]);
}

static void dt_init(void)
{
    for (int tk = RAIL_TK_INT8; tk < RAIL_TK_FLOAT_INT; tk++)
        dt_leaf_init(&dt_leaf[tk], &dt_leaf_node[tk], (rail_typekind_t)tk,
                     rail_dt_ext32_kind_size((rail_typekind_t)tk));
    dt_leaf_init(&dt_long32[0], &dt_long32_node[0], RAIL_TK_INT64, 4);
    dt_leaf_init(&dt_long32[1], &dt_long32_node[1], RAIL_TK_UINT64, 4);
    dt_init_pairs();
}

struct rail_dt *rail_dt_predefined(rail_typekind_t tk)
{
    if ((unsigned)tk >= RAIL_TK_COUNT || tk == RAIL_TK_NONE)
        return NULL;
    pthread_once(&dt_once, dt_init);
    return dt_leaf[tk].size > 0 ? &dt_leaf[tk] : NULL;
}

struct rail_dt *rail_dt_predefined_ext32(rail_typekind_t tk, int64_t ext32_size)
{
    struct rail_dt *dt = rail_dt_predefined(tk);
    if (dt && dt->ext32_size == ext32_size)
        return dt;
    if (ext32_size == 4 && (tk == RAIL_TK_INT64 || tk == RAIL_TK_UINT64))
        return &dt_long32[tk == RAIL_TK_UINT64];
    return NULL;
}

struct rail_dt *rail_dt_retain(struct rail_dt *dt)
{
    if (dt && !(dt->flags & RAIL_DT_F_PREDEFINED))
        rail_atomic_add_fetch(&dt->refcount, 1);
    return dt;
}

void rail_dt_release(struct rail_dt *dt)
{
    if (!dt || (dt->flags & RAIL_DT_F_PREDEFINED))
        return;
    if (rail_atomic_sub_fetch(&dt->refcount, 1) == 0)
        rail_dt_free(dt);
}

void rail_dt_free(struct rail_dt *dt)
{
    if (dt->combiner == RAIL_DT_STRUCT) {
        for (int64_t i = 0; i < dt->count; i++)
            rail_dt_release(dt->types[i]);
    } else {
        rail_dt_release(dt->old);
    }
    rail_dt_arena_free(dt->arena);
    free(dt);
}

/* One allocation: the struct, then displs[n], blocklens[n], pre_bytes[n+1],
 * pre_elems[n+1], types[n] as requested. */
struct rail_dt *rail_dt_alloc(rail_dt_combiner_t combiner, int64_t n, bool with_blocklens,
                              bool with_types)
{
    size_t words = (size_t)n + (with_blocklens ? 2 * (size_t)n + 1 : 0) +
                   (with_types ? 2 * (size_t)n + 1 : 0);
    struct rail_dt *dt = calloc(1, sizeof(*dt) + words * sizeof(int64_t));
    if (!dt)
        return NULL;
    int64_t *w = (int64_t *)(dt + 1);
    dt->refcount = 1;
    dt->combiner = (uint8_t)combiner;
    dt->count = n;
    dt->displs = n ? w : NULL;
    w += n;
    if (with_blocklens) {
        dt->blocklens = w;
        dt->pre_bytes = w + n;
        w += 2 * n + 1;
    }
    if (with_types) {
        dt->pre_elems = w;
        dt->types = (struct rail_dt *const *)(w + n + 1);
    }
    return dt;
}
