/* osc am: synchronisation.  Fence all-reduces the counts of puts and
 * accumulates sent to each rank, waits for its own, then meets the others
 * in a barrier; post/start/complete/wait exchange POST and COMPLETE
 * messages (the latter with the count to await); lock, unlock and flush
 * are requests answered by the target (osc/am/am_target.c). */
#include <stdlib.h>
#include <string.h>
#include "base/progress.h"
#include "coll/coll.h"
#include "obj/err.h"
#include "osc/am/osc_am.h"

typedef struct osc_am_ctr {
    int count;
    int err;
} osc_am_ctr_t;

static bool osc_am_recv_reached(void *arg)
{
    osc_am_t *am = arg;
    return am->recv_total >= am->expect_total;
}

int osc_am_fence(osc_win_t *w, int assert)
{
    osc_am_t *am = osc_am_of(w);
    int rc = MPI_SUCCESS;
    int64_t *all = NULL;
    osc_am_wait_replies(am);
    if (!(assert & MPI_MODE_NOPRECEDE)) {
        if (!(all = malloc((size_t)w->size * sizeof *all)))
            return obj_errf(MPI_ERR_NO_MEM, "no memory for a fence of %d ranks", w->size);
        RAIL_CHECK(coll_allreduce(am->sent, all, w->size, obj_datatype_predef(MPI_INT64_T),
                                  (obj_op_t *)obj_of_handle(MPI_SUM), w->comm));
        am->expect_total = (uint64_t)all[w->rank];
        rail_progress_wait(osc_am_recv_reached, am);
    }
    RAIL_CHECK(coll_barrier(w->comm));
fail:
    free(all);
    return rc;
}

/* ------------------------------------------------------------ PSCW */

static int *osc_am_dup_ranks(const int *ranks, int n)
{
    int *c = malloc(((size_t)n + 1) * sizeof(int));
    if (c && n)
        memcpy(c, ranks, (size_t)n * sizeof(int));
    return c;
}

int osc_am_post(osc_win_t *w, const int *ranks, int n, int assert)
{
    osc_am_t *am = osc_am_of(w);
    osc_am_hdr_t h;
    (void)assert;
    free(am->post_group);
    if (!(am->post_group = osc_am_dup_ranks(ranks, n)))
        return obj_errf(MPI_ERR_NO_MEM, "no memory for the post group");
    am->n_post_group = n;
    osc_am_hdr_init(am, &h, OSC_AM_POST);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        rc = osc_am_send(am, ranks[i], &h, NULL, 0);
    return rc;
}

static bool osc_am_posts_in(void *arg)
{
    osc_am_t *am = arg;
    for (int i = 0; i < am->n_start_group; i++)
        if (am->post_recv[am->start_group[i]] <= am->post_used[am->start_group[i]])
            return false;
    return true;
}

int osc_am_start(osc_win_t *w, const int *ranks, int n, int assert)
{
    osc_am_t *am = osc_am_of(w);
    (void)assert;
    free(am->start_group);
    if (!(am->start_group = osc_am_dup_ranks(ranks, n)))
        return obj_errf(MPI_ERR_NO_MEM, "no memory for the start group");
    am->n_start_group = n;
    rail_progress_wait(osc_am_posts_in, am);
    for (int i = 0; i < n; i++)
        am->post_used[ranks[i]]++;
    return MPI_SUCCESS;
}

int osc_am_complete(osc_win_t *w)
{
    osc_am_t *am = osc_am_of(w);
    osc_am_hdr_t h;
    osc_am_wait_replies(am);
    int rc = MPI_SUCCESS;
    osc_am_hdr_init(am, &h, OSC_AM_COMPLETE);
    for (int i = 0; i < am->n_start_group && rc == MPI_SUCCESS; i++) {
        int t = am->start_group[i];
        h.aux = am->sent[t];
        rc = osc_am_send(am, t, &h, NULL, 0);
    }
    am->n_start_group = 0;
    return rc;
}

static bool osc_am_completes_in(void *arg)
{
    osc_am_t *am = arg;
    for (int i = 0; i < am->n_post_group; i++) {
        int o = am->post_group[i];
        if (am->compl_recv[o] <= am->compl_used[o] || am->recv[o] < am->compl_need[o])
            return false;
    }
    return true;
}

int osc_am_wait(osc_win_t *w, bool block, int *flag)
{
    osc_am_t *am = osc_am_of(w);
    if (block)
        rail_progress_wait(osc_am_completes_in, am);
    else if (!osc_am_completes_in(am))
        rail_progress();
    *flag = osc_am_completes_in(am);
    if (*flag) {
        for (int i = 0; i < am->n_post_group; i++)
            am->compl_used[am->post_group[i]]++;
        am->n_post_group = 0;
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ passive target */

static int osc_am_request(osc_am_t *am, int type, int target, int lock_type, uint64_t aux,
                          osc_am_ctr_t *ctr)
{
    osc_am_hdr_t h;
    osc_am_hdr_init(am, &h, type);
    h.lock_type = (uint8_t)lock_type;
    h.aux = aux;
    h.cookie = (uint64_t)(uintptr_t)ctr;
    __atomic_add_fetch(&ctr->count, 1, __ATOMIC_RELAXED);
    int rc = osc_am_send(am, target, &h, NULL, 0);
    if (rc != MPI_SUCCESS)
        __atomic_sub_fetch(&ctr->count, 1, __ATOMIC_RELAXED);
    return rc;
}

static int osc_am_ctr_wait(osc_am_ctr_t *ctr, int rc)
{
    osc_am_wait_counter(&ctr->count);
    if (rc == MPI_SUCCESS && ctr->err)
        rc = obj_errf(MPI_ERR_RMA_RANGE, "an operation fell outside the target's attached memory");
    return rc;
}

int osc_am_lock(osc_win_t *w, int type, int target, int assert)
{
    osc_am_ctr_t ctr = {0, 0};
    (void)assert;
    int rc = osc_am_request(osc_am_of(w), OSC_AM_LOCK, target, type - 300, 0, &ctr);
    return osc_am_ctr_wait(&ctr, rc);
}

int osc_am_lock_all(osc_win_t *w, int assert)
{
    osc_am_ctr_t ctr = {0, 0};
    int rc = MPI_SUCCESS;
    (void)assert;
    for (int t = 0; t < w->size && rc == MPI_SUCCESS; t++)
        rc = osc_am_request(osc_am_of(w), OSC_AM_LOCK, t, MPI_LOCK_SHARED - 300, 0, &ctr);
    return osc_am_ctr_wait(&ctr, rc);
}

/* Unlock or flush ranks first..last: each request carries the count of
 * puts and accumulates sent there, and the target answers once it has
 * them all.  A flush skips ranks with nothing new since the last one. */
static int osc_am_settle(osc_win_t *w, int type, int first, int last)
{
    osc_am_t *am = osc_am_of(w);
    osc_am_ctr_t ctr = {0, 0};
    int rc = MPI_SUCCESS;
    osc_am_wait_replies(am);
    for (int t = first; t <= last && rc == MPI_SUCCESS; t++)
        if (type == OSC_AM_UNLOCK || am->sent[t] != am->acked[t])
            rc = osc_am_request(am, type, t, type == OSC_AM_UNLOCK, am->sent[t], &ctr);
    rc = osc_am_ctr_wait(&ctr, rc);
    for (int t = first; t <= last && rc == MPI_SUCCESS; t++)
        am->acked[t] = am->sent[t];
    return rc;
}

int osc_am_unlock(osc_win_t *w, int target)
{
    return osc_am_settle(w, OSC_AM_UNLOCK, target, target);
}

int osc_am_unlock_all(osc_win_t *w)
{
    return osc_am_settle(w, OSC_AM_UNLOCK, 0, w->size - 1);
}

int osc_am_flush(osc_win_t *w, int target)
{
    return target < 0 ? osc_am_settle(w, OSC_AM_FLUSH, 0, w->size - 1)
                      : osc_am_settle(w, OSC_AM_FLUSH, target, target);
}

int osc_am_flush_local(osc_win_t *w, int target)
{
    (void)target;
    osc_am_wait_replies(osc_am_of(w));   /* sends copy their data before returning */
    return MPI_SUCCESS;
}

int osc_am_sync(osc_win_t *w)
{
    (void)w;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}
