/* osc base: the synchronisation state the standard requires (checked
 * before a component sees a call), range checks at the origin, hints, and
 * the attached regions of dynamic windows. */
#include <stdlib.h>
#include <string.h>
#include "base/dt.h"
#include "obj/err.h"
#include "obj/info.h"
#include "osc/osc.h"

int osc_check_access(osc_win_t *w, int target, const char *what)
{
    if (w->epoch == OSC_EPOCH_FENCE) {
        w->fence_ops = true;
        return MPI_SUCCESS;
    }
    if (w->epoch == OSC_EPOCH_LOCK_ALL || w->locked[target] || w->started[target])
        return MPI_SUCCESS;
    (void)what;
    return obj_errf(MPI_ERR_RMA_SYNC, "rank %d is outside any access epoch (no fence, lock or "
                    "start covers it)", target);
}

int osc_check_range(osc_win_t *w, int target, MPI_Aint disp, MPI_Count count,
                    obj_datatype_t *dt, const char *what)
{
    (void)what;
    if (w->win->flavor == MPI_WIN_FLAVOR_DYNAMIC || count == 0 || dt->size == 0)
        return MPI_SUCCESS;
    if (disp < 0)
        return obj_errf(MPI_ERR_RMA_RANGE, "negative displacement %ld", (long)disp);
    int64_t off = (int64_t)disp * w->units[target];
    int64_t lo = off + dt->true_lb;
    int64_t hi = off + dt->true_lb + (count - 1) * dt->extent + dt->true_extent;
    if (dt->extent < 0)
        lo = off + dt->true_lb + (count - 1) * dt->extent, hi = off + dt->true_lb + dt->true_extent;
    if (lo < 0 || hi > (int64_t)w->sizes[target])
        return obj_errf(MPI_ERR_RMA_RANGE, "bytes [%lld, %lld) are outside the window of "
                        "rank %d (%lld bytes)", (long long)lo, (long long)hi, target,
                        (long long)w->sizes[target]);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ active target */

int osc_fence(osc_win_t *w, int assert)
{
    int rc;
    if (w->epoch == OSC_EPOCH_LOCK_ALL || w->n_locked)
        return obj_errf(MPI_ERR_RMA_SYNC, "a passive-target epoch is open (lock without unlock)");
    if (w->n_started || w->posted)
        return obj_errf(MPI_ERR_RMA_SYNC, "a post/start epoch is open");
    if ((assert & MPI_MODE_NOPRECEDE) && w->fence_ops)
        return obj_errf(MPI_ERR_RMA_SYNC, "MPI_MODE_NOPRECEDE, but operations were issued since "
                        "the last fence");
    rc = w->ops->fence(w, assert);
    w->fence_ops = false;
    w->epoch = (assert & MPI_MODE_NOSUCCEED) ? OSC_EPOCH_NONE : OSC_EPOCH_FENCE;
    return rc;
}

static int osc_group_ranks(osc_win_t *w, obj_group_t *g, int **out)
{
    int n = g->size;
    int *ranks = malloc(((size_t)n + 1) * sizeof(int));
    if (!ranks)
        return obj_errf(MPI_ERR_NO_MEM, "no memory for a group of %d", n);
    for (int i = 0; i < n; i++) {
        ranks[i] = obj_group_rank_of_world(w->comm->group, obj_group_world_rank(g, i));
        if (ranks[i] == MPI_UNDEFINED) {
            free(ranks);
            return obj_errf(MPI_ERR_GROUP, "member %d of the group is not in the window", i);
        }
    }
    *out = ranks;
    return MPI_SUCCESS;
}

static bool osc_in_fence_use(osc_win_t *w)
{
    return w->epoch == OSC_EPOCH_FENCE && w->fence_ops;
}

int osc_post(osc_win_t *w, obj_group_t *g, int assert)
{
    int *ranks = NULL, rc;
    if (w->posted)
        return obj_errf(MPI_ERR_RMA_SYNC, "an exposure epoch is already open (post without wait)");
    if (osc_in_fence_use(w))
        return obj_errf(MPI_ERR_RMA_SYNC, "a fence epoch with operations is open");
    RAIL_CHECK(osc_group_ranks(w, g, &ranks));
    rc = w->ops->post(w, ranks, g->size, assert);
    if (rc == MPI_SUCCESS)
        w->posted = true, w->epoch = w->epoch == OSC_EPOCH_FENCE ? OSC_EPOCH_NONE : w->epoch;
fail:
    free(ranks);
    return rc;
}

int osc_start(osc_win_t *w, obj_group_t *g, int assert)
{
    int *ranks = NULL, rc;
    if (w->n_started)
        return obj_errf(MPI_ERR_RMA_SYNC, "an access epoch is already open (start without "
                        "complete)");
    if (w->epoch == OSC_EPOCH_LOCK_ALL || w->n_locked)
        return obj_errf(MPI_ERR_RMA_SYNC, "a passive-target epoch is open");
    if (osc_in_fence_use(w))
        return obj_errf(MPI_ERR_RMA_SYNC, "a fence epoch with operations is open");
    RAIL_CHECK(osc_group_ranks(w, g, &ranks));
    rc = w->ops->start(w, ranks, g->size, assert);
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < g->size; i++)
            w->started[ranks[i]] = 1;
        w->n_started = g->size ? g->size : -1;
        if (w->epoch == OSC_EPOCH_FENCE)
            w->epoch = OSC_EPOCH_NONE;
    }
fail:
    free(ranks);
    return rc;
}

int osc_complete(osc_win_t *w)
{
    if (!w->n_started)
        return obj_errf(MPI_ERR_RMA_SYNC, "no access epoch to complete (complete without start)");
    int rc = w->ops->complete(w);
    memset(w->started, 0, (size_t)w->size);
    w->n_started = 0;
    return rc;
}

int osc_wait(osc_win_t *w, bool block, int *flag)
{
    if (!w->posted)
        return obj_errf(MPI_ERR_RMA_SYNC, "no exposure epoch to wait for (wait without post)");
    int rc = w->ops->wait(w, block, flag);
    if (rc == MPI_SUCCESS && *flag)
        w->posted = false;
    return rc;
}

/* ------------------------------------------------------------ passive target */

/* What forbids a lock or lock_all besides a lock already held. */
static int osc_lock_allowed(osc_win_t *w)
{
    if (w->n_started)
        return obj_errf(MPI_ERR_RMA_SYNC, "a start epoch is open");
    if (osc_in_fence_use(w))
        return obj_errf(MPI_ERR_RMA_CONFLICT, "a fence epoch with operations is open");
    if (w->no_locks)
        return obj_errf(MPI_ERR_RMA_SYNC, "the window was created with no_locks=true");
    return MPI_SUCCESS;
}

int osc_lock(osc_win_t *w, int type, int target, int assert)
{
    if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE)
        return obj_errf(MPI_ERR_LOCKTYPE, "invalid lock type %d", type);
    if (w->locked[target] || w->epoch == OSC_EPOCH_LOCK_ALL)
        return obj_errf(MPI_ERR_RMA_SYNC, "rank %d is already locked by this process", target);
    int rc = osc_lock_allowed(w);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = w->ops->lock(w, type, target, assert);
    if (rc == MPI_SUCCESS) {
        w->locked[target] = (uint8_t)(type - 300);
        w->n_locked++;
        w->epoch = OSC_EPOCH_NONE;
    }
    return rc;
}

int osc_unlock(osc_win_t *w, int target)
{
    if (!w->locked[target])
        return obj_errf(MPI_ERR_RMA_SYNC, "rank %d is not locked by this process", target);
    int rc = w->ops->unlock(w, target);
    w->locked[target] = 0;
    w->n_locked--;
    return rc;
}

int osc_lock_all(osc_win_t *w, int assert)
{
    if (w->epoch == OSC_EPOCH_LOCK_ALL || w->n_locked)
        return obj_errf(MPI_ERR_RMA_SYNC, "a lock is already held on this window");
    int rc = osc_lock_allowed(w);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = w->ops->lock_all(w, assert);
    if (rc == MPI_SUCCESS)
        w->epoch = OSC_EPOCH_LOCK_ALL;
    return rc;
}

int osc_unlock_all(osc_win_t *w)
{
    if (w->epoch != OSC_EPOCH_LOCK_ALL)
        return obj_errf(MPI_ERR_RMA_SYNC, "no MPI_Win_lock_all to end");
    int rc = w->ops->unlock_all(w);
    w->epoch = OSC_EPOCH_NONE;
    return rc;
}

int osc_flush(osc_win_t *w, int target, bool local)
{
    bool ok = w->epoch == OSC_EPOCH_LOCK_ALL || (target >= 0 ? w->locked[target] : w->n_locked);
    if (!ok)
        return obj_errf(MPI_ERR_RMA_SYNC, "no passive-target epoch covers %s",
                        target >= 0 ? "that rank" : "any rank");
    return local ? w->ops->flush_local(w, target) : w->ops->flush(w, target);
}

/* ------------------------------------------------------------ hints */

static unsigned osc_parse_ordering(const char *v)
{
    unsigned bits = 0;
    if (strstr(v, "rar"))
        bits |= OSC_ORDER_RAR;
    if (strstr(v, "raw"))
        bits |= OSC_ORDER_RAW;
    if (strstr(v, "war"))
        bits |= OSC_ORDER_WAR;
    if (strstr(v, "waw"))
        bits |= OSC_ORDER_WAW;
    return bits;
}

int osc_info_apply(osc_win_t *w, const obj_info_t *info)
{
    const char *v;
    if (!info)
        return MPI_SUCCESS;
    if ((v = obj_info_value(info, "no_locks")))
        w->no_locks = strcmp(v, "true") == 0;
    if ((v = obj_info_value(info, "same_size")))
        w->same_size = strcmp(v, "true") == 0;
    if ((v = obj_info_value(info, "same_disp_unit")))
        w->same_disp_unit = strcmp(v, "true") == 0;
    if ((v = obj_info_value(info, "accumulate_ordering")))
        w->acc_ordering = osc_parse_ordering(v);
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ dynamic windows */

bool osc_region_holds(osc_win_t *w, uintptr_t addr, size_t len)
{
    for (int i = 0; i < w->n_regions; i++)
        if (addr >= w->regions[i].base && addr + len <= w->regions[i].base + w->regions[i].len)
            return true;
    return false;
}

int osc_attach(osc_win_t *w, void *base, MPI_Aint size)
{
    if (w->win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return obj_errf(MPI_ERR_RMA_FLAVOR, "the window is not dynamic (MPI_Win_create_dynamic)");
    if (size < 0)
        return obj_errf(MPI_ERR_SIZE, "negative size %ld", (long)size);
    for (int i = 0; i < w->n_regions; i++) {
        uintptr_t b = w->regions[i].base, e = b + w->regions[i].len, nb = (uintptr_t)base;
        if (size > 0 && nb < e && nb + (uintptr_t)size > b)
            return obj_errf(MPI_ERR_RMA_ATTACH, "memory at %p overlaps memory already attached",
                            base);
    }
    if (w->n_regions == w->cap_regions) {
        int cap = w->cap_regions ? 2 * w->cap_regions : 8;
        osc_region_t *r = realloc(w->regions, (size_t)cap * sizeof *r);
        if (!r)
            return obj_errf(MPI_ERR_NO_MEM, "no memory to attach a region");
        w->regions = r, w->cap_regions = cap;
    }
    w->regions[w->n_regions++] = (osc_region_t){(uintptr_t)base, (size_t)size};
    return MPI_SUCCESS;
}

int osc_detach(osc_win_t *w, const void *base)
{
    if (w->win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return obj_errf(MPI_ERR_RMA_FLAVOR, "the window is not dynamic (MPI_Win_create_dynamic)");
    for (int i = 0; i < w->n_regions; i++) {
        if (w->regions[i].base == (uintptr_t)base) {
            w->regions[i] = w->regions[--w->n_regions];
            return MPI_SUCCESS;
        }
    }
    return obj_errf(MPI_ERR_RMA_ATTACH, "no memory attached at %p", base);
}
