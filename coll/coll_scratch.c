/* coll: the cache of host temporaries every component draws from
 * (coll_util.h).
 *
 * A large malloc is an mmap, or brk growth that free() trims again, whose
 * pages fault in anew on every call: on the 2-core VMs about 0.2 GB/s, more
 * than the collective itself costs from a few hundred KiB (issue 59: a
 * 1 MiB MPI_Iallreduce at np 2 took 4.7 ms against 0.16 ms blocking, its
 * schedule's two temporaries faulting in on every call).  So temporaries
 * go back into a few slots and the next call takes them again.  Lock-free
 * (MPI_THREAD_MULTIPLE, and schedules finish inside other threads'
 * progress): a buffer leaves its slot by an atomic exchange and comes back
 * into an empty one by a compare-and-swap.  The slots hold at most
 * coll_scratch_max bytes together; the cache is emptied when the last
 * communicator with collectives goes.
 */
#include "coll/coll_util.h"
#include "base/atomic.h"
#include "base/pvar.h"

#include <stdlib.h>

#define SCRATCH_SLOTS 16   /* a linear reduction's root holds one per process */

typedef struct coll_scratch {
    size_t cap;
    size_t pad[7];   /* the data start 64 bytes into an aligned block */
} coll_scratch_t;

static coll_scratch_t *scratch_slot[SCRATCH_SLOTS];
static size_t scratch_held;   /* bytes in the slots */
size_t coll_scratch_max = (size_t)64 << 20;
static uint64_t scratch_count_new, scratch_count_new_bytes, scratch_count_reused;

/* Take h out of the cache's account and free it. */
static void scratch_drop_one(coll_scratch_t *h)
{
    rail_atomic_sub_fetch(&scratch_held, h->cap);
    free(h);
}

/* A cached buffer of at least n bytes, or NULL.  When none fits, one that
 * is too small is dropped, so that the new one finds room when it comes
 * back (the cache follows the sizes in use). */
static coll_scratch_t *scratch_take(size_t n)
{
    coll_scratch_t *small = NULL;
    for (int i = 0; i < SCRATCH_SLOTS; i++) {
        coll_scratch_t *h = rail_atomic_exchange(&scratch_slot[i], NULL);
        if (!h)
            continue;
        coll_scratch_t *none = NULL;
        if (h->cap >= n) {
            /* the too-small one goes back into the slot just emptied */
            if (small && !rail_atomic_cas(&scratch_slot[i], &none, small))
                scratch_drop_one(small);
            rail_atomic_sub_fetch(&scratch_held, h->cap);
            return h;
        }
        if (!small)
            small = h;
        else if (!rail_atomic_cas(&scratch_slot[i], &none, h))
            scratch_drop_one(h);
    }
    if (small)
        scratch_drop_one(small);
    return NULL;
}

void *coll_scratch_get(size_t n)
{
    coll_scratch_t *h = scratch_take(n);
    if (h) {
        rail_atomic_add_fetch(&scratch_count_reused, 1);
        return h + 1;
    }
    void *mem = NULL;
    if (posix_memalign(&mem, sizeof(coll_scratch_t), sizeof(coll_scratch_t) + (n ? n : 1)))
        return NULL;
    h = mem;
    h->cap = n ? n : 1;
    rail_atomic_add_fetch(&scratch_count_new, 1);
    rail_atomic_add_fetch(&scratch_count_new_bytes, h->cap);
    return h + 1;
}

void coll_scratch_put(void *p)
{
    if (!p)
        return;
    coll_scratch_t *h = (coll_scratch_t *)p - 1;
    if (rail_atomic_add_fetch(&scratch_held, h->cap) <= coll_scratch_max)
        for (int i = 0; i < SCRATCH_SLOTS; i++) {
            coll_scratch_t *none = NULL;
            if (rail_atomic_cas(&scratch_slot[i], &none, h))
                return;
        }
    scratch_drop_one(h);
}

void coll_scratch_drop(void)
{
    for (int i = 0; i < SCRATCH_SLOTS; i++) {
        coll_scratch_t *h = rail_atomic_exchange(&scratch_slot[i], NULL);
        if (h)
            scratch_drop_one(h);
    }
}

static const rail_pvar_counter_t scratch_pvars[] = {
    {"coll_scratch_new",
     "Host temporaries of the collectives (tuned, nbc schedules, basic, han) allocated anew "
     "because no buffer of the cache (coll_scratch_max) was large enough",
     &scratch_count_new},
    {"coll_scratch_new_bytes", "Bytes of the host temporaries counted by coll_scratch_new",
     &scratch_count_new_bytes},
    {"coll_scratch_reused",
     "Host temporaries of the collectives taken from the cache: memory that faults in no more",
     &scratch_count_reused},
};

int coll_scratch_register_pvars(void)
{
    return rail_pvar_register_counters(scratch_pvars, RAIL_ARRAY_SIZE(scratch_pvars));
}
