/* osc base: parameters, the window table, window creation (communicator
 * duplicate, exchange of sizes, units and bases, component selection), the
 * shared segment of MPI_Win_allocate_shared, and window free. */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "base/log.h"
#include "base/param.h"
#include "coll/coll.h"
#include "obj/err.h"
#include "obj/info.h"
#include "osc/osc.h"
#include "runtime/rte.h"

#define OSC_MAX_WINDOWS 8192   /* context ids (obj/comm_ctxid.c) */

int osc_verbose;

extern const osc_component_t osc_am_component;
static const osc_component_t *const osc_components[] = {&osc_am_component};

static osc_win_t *osc_win_table[OSC_MAX_WINDOWS];

int osc_am_register_params(void);
int osc_am_init(void);
int osc_am_finalize(void);

int osc_register_params(void)
{
    int rc = MPI_SUCCESS;
    RAIL_CHECK(rail_param_register_int("osc_verbose", 0,
                                       "Verbosity of the one-sided layer (0: quiet).  Default 0 "
                                       "(principle: silent unless asked)",
                                       RAIL_PARAM_LEVEL_DEV, &osc_verbose));
    RAIL_CHECK(osc_am_register_params());
fail:
    return rc;
}

int osc_init(void)
{
    return osc_am_init();
}

int osc_finalize(void)
{
    return osc_am_finalize();
}

osc_win_t *osc_win_lookup(uint32_t id)
{
    return id < OSC_MAX_WINDOWS ? osc_win_table[id] : NULL;
}

/* ------------------------------------------------------------ exchange */

static int64_t *osc_exchange_alloc(int n)
{
    return calloc((size_t)n * 3, sizeof(int64_t));
}

static int osc_exchange(osc_win_t *w)
{
    obj_win_t *win = w->win;
    int64_t mine[3] = {win->size, win->disp_unit, (int64_t)(uintptr_t)win->base};
    int64_t *all = osc_exchange_alloc(w->size);
    obj_datatype_t *i64 = obj_datatype_predef(MPI_INT64_T);
    int rc = MPI_SUCCESS;
    if (!all)
        return obj_errf(MPI_ERR_NO_MEM, "no memory for the window exchange");
    RAIL_CHECK(coll_allgather(mine, 3, i64, all, 3, i64, w->comm));
    for (int i = 0; i < w->size; i++) {
        w->sizes[i] = (MPI_Aint)all[3 * i];
        w->units[i] = (MPI_Aint)all[3 * i + 1];
        w->bases[i] = (uintptr_t)all[3 * i + 2];
    }
fail:
    free(all);
    return rc;
}

static int osc_arrays(osc_win_t *w)
{
    int n = w->size;
    w->world = calloc((size_t)n, sizeof(int));
    w->sizes = calloc((size_t)n, sizeof(MPI_Aint));
    w->units = calloc((size_t)n, sizeof(MPI_Aint));
    w->bases = calloc((size_t)n, sizeof(uintptr_t));
    w->locked = calloc((size_t)n, 1);
    w->started = calloc((size_t)n, 1);
    if (!w->world || !w->sizes || !w->units || !w->bases || !w->locked || !w->started)
        return obj_errf(MPI_ERR_NO_MEM, "no memory for a window of %d ranks", n);
    w->all_local = true;
    for (int i = 0; i < n; i++) {
        w->world[i] = obj_group_world_rank(w->comm->group, i);
        if (rte_node_of(w->world[i]) != (int)rte_info.node_id)
            w->all_local = false;
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ shared segment */

static int osc_shm_map(osc_win_t *w, bool create)
{
    int fd = shm_open(w->shm_name, create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
    if (fd < 0)
        return obj_errf(MPI_ERR_NO_MEM, "shm_open %s: %s", w->shm_name, strerror(errno));
    if (create && w->shm_len && ftruncate(fd, (off_t)w->shm_len) != 0) {
        close(fd);
        shm_unlink(w->shm_name);
        return obj_errf(MPI_ERR_NO_MEM, "cannot size the shared window segment to %zu bytes",
                        w->shm_len);
    }
    w->shm_base = mmap(NULL, w->shm_len ? w->shm_len : 1, PROT_READ | PROT_WRITE, MAP_SHARED,
                       fd, 0);
    close(fd);
    if (w->shm_base == MAP_FAILED) {
        w->shm_base = NULL;
        return obj_errf(MPI_ERR_NO_MEM, "cannot map the shared window segment");
    }
    return MPI_SUCCESS;
}

/* Rank 0 creates the segment, every rank maps it, rank 0 unlinks it once
 * all have (so nothing stays in /dev/shm even if a rank dies later).  Each
 * rank's part follows the previous rank's (contiguous, MPI-4.1 12.2.3). */
static int osc_shm_setup(osc_win_t *w)
{
    int rc = MPI_SUCCESS, mrc = MPI_SUCCESS;
    int64_t mine = w->win->size, *all = calloc((size_t)w->size, sizeof(int64_t));
    obj_datatype_t *i64 = obj_datatype_predef(MPI_INT64_T);
    char suffix[32];
    if (!all)
        return obj_errf(MPI_ERR_NO_MEM, "no memory for the shared window");
    RAIL_CHECK(coll_allgather(&mine, 1, i64, all, 1, i64, w->comm));
    for (int i = 0; i < w->size; i++)
        w->shm_len += (size_t)all[i];
    snprintf(suffix, sizeof suffix, "osc-%u-%d", w->comm->context_id, w->world[0]);
    RAIL_CHECK(rte_shm_name(w->shm_name, sizeof w->shm_name, suffix));
    if (w->rank == 0)
        mrc = osc_shm_map(w, true);
    RAIL_CHECK(coll_bcast(&mrc, 1, obj_datatype_predef(MPI_INT), 0, w->comm));
    if (mrc != MPI_SUCCESS) {
        rc = w->rank == 0 ? mrc : obj_errf(mrc, "rank 0 could not create the shared segment");
        goto fail;
    }
    if (w->rank != 0)
        mrc = osc_shm_map(w, false);
    RAIL_CHECK(coll_barrier(w->comm));
    if (w->rank == 0)
        shm_unlink(w->shm_name);
    RAIL_CHECK(mrc);
    size_t off = 0;
    for (int i = 0; i < w->rank; i++)
        off += (size_t)all[i];
    w->win->base = (char *)w->shm_base + off;
fail:
    free(all);
    return rc;
}

/* ------------------------------------------------------------ create / free */

static int osc_select(osc_win_t *w)
{
    const osc_component_t *best = NULL;
    int best_prio = -1;
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(osc_components); i++) {
        int p = osc_components[i]->query(w);
        if (p > best_prio) {
            best_prio = p;
            best = osc_components[i];
        }
    }
    if (!best)
        return obj_errf(MPI_ERR_WIN, "no one-sided component accepts this window");
    w->component = best;
    return best->attach(w);
}

static void osc_win_destroy(osc_win_t *w)
{
    if (w->comm && osc_win_table[w->comm->context_id] == w)
        osc_win_table[w->comm->context_id] = NULL;
    if (w->shm_base)
        munmap(w->shm_base, w->shm_len ? w->shm_len : 1);
    free(w->world);
    free(w->sizes);
    free(w->units);
    free(w->bases);
    free(w->locked);
    free(w->started);
    free(w->regions);
    if (w->comm)
        obj_comm_free(w->comm);
    free(w);
}

int osc_win_create(obj_win_t *win, obj_comm_t *comm, obj_info_t *info)
{
    int rc = MPI_SUCCESS;
    osc_win_t *w = calloc(1, sizeof *w);
    if (!w)
        return obj_errf(MPI_ERR_NO_MEM, "no memory for a window");
    w->win = win;
    w->acc_ordering = OSC_ORDER_RAR | OSC_ORDER_RAW | OSC_ORDER_WAR | OSC_ORDER_WAW;
    /* a copy without the user's attributes (no copy callbacks run) */
    RAIL_CHECK(obj_comm_create(comm, comm->group, &w->comm));
    w->rank = w->comm->rank;
    w->size = w->comm->size;
    RAIL_CHECK(osc_arrays(w));
    RAIL_CHECK(osc_info_apply(w, info));
    if (win->flavor == MPI_WIN_FLAVOR_SHARED) {
        if (!w->all_local) {
            rc = obj_errf(MPI_ERR_RMA_SHARED, "the communicator spans several nodes; a shared "
                          "window needs all its processes on one node");
            goto fail;
        }
        RAIL_CHECK(osc_shm_setup(w));
    }
    osc_win_table[w->comm->context_id] = w;
    RAIL_CHECK(osc_exchange(w));
    RAIL_CHECK(osc_select(w));
    win->osc = w;
    return MPI_SUCCESS;
fail:
    osc_win_destroy(w);
    return rc;
}

int osc_win_free(obj_win_t *win)
{
    osc_win_t *w = win->osc;
    int rc = MPI_SUCCESS;
    if (w->epoch == OSC_EPOCH_LOCK_ALL || w->n_locked || w->n_started || w->posted)
        return obj_errf(MPI_ERR_RMA_SYNC, "the window still has an open %s epoch",
                        w->posted ? "exposure" : "access");
    /* Every rank has finished with every other's memory once all are here. */
    RAIL_CHECK(w->ops->fence(w, MPI_MODE_NOSUCCEED));
    RAIL_CHECK(w->ops->free(w));
    win->osc = NULL;
    osc_win_destroy(w);
fail:
    return rc;
}
