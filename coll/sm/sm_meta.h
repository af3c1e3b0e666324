/*
 * coll sm: what the flag-based gather, allgather and alltoall share
 * (sm_gather.c, sm_allgather.c): the meta word each writer publishes and
 * taking a piece of a writer's block.  Static inline, as they were static
 * in one file before.
 */
#ifndef COLL_SM_META_H
#define COLL_SM_META_H

#include "coll/sm/coll_sm.h"
#include "obj/err.h"

static inline size_t rounds_of(size_t bytes, size_t per)
{
    return (bytes + per - 1) / per;
}

/* A process's meta word in a gather, allgather or alltoall: its bytes per
 * block, with META_DEVICE where it has device buffers (said in step 1 or
 * with round 0: the meta word shares its line with the flag that the
 * readers load anyway; a separate word cost np 2 gathers a line transfer,
 * 0.4 us) and, on a gather root that checked, its verdict (GATHER_*). */
#define META_DEVICE (1ULL << 62)
#define META_VERDICT(v) ((uint64_t)(v) << 60)
#define META_VERDICT_OF(meta) ((int)((meta) >> 60 & 3))
#define META_BYTES(v) ((v) & ((1ULL << 60) - 1))

static inline size_t sm_meta(coll_sm_module_t *m, int j, int set)
{
    return (size_t)META_BYTES(coll_sm_ctl(m, j)->meta[set]);
}

static inline bool sm_meta_device(coll_sm_module_t *m, int j, int set)
{
    return coll_sm_ctl(m, j)->meta[set] & META_DEVICE;
}

/* Copy piece [off, off + len) of writer j's block (j's meta bytes at most,
 * ours at most) out of src into d. */
static inline int sm_take(coll_sm_module_t *m, int set, int j, const coll_sm_data_t *d,
                          size_t off, size_t len, const void *src)
{
    size_t have = RAIL_MIN(sm_meta(m, j, set), d->bytes);
    if (off >= have)
        return MPI_SUCCESS;
    return coll_sm_unpack(d, off, src, RAIL_MIN(len, have - off));
}

static inline int sm_truncated(coll_sm_module_t *m, int set, size_t mine)
{
    for (int j = 0; j < m->n; j++)
        if (j != m->me && sm_meta(m, j, set) > mine)
            return obj_errf(MPI_ERR_TRUNCATE, "process %d sent %zu bytes, this process's "
                            "arguments hold %zu (type signatures differ)", j,
                            sm_meta(m, j, set), mine);
    return MPI_SUCCESS;
}

#endif
