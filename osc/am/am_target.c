/* osc am, target side: applying puts and accumulates, answering gets and
 * fetching operations, the lock (reader-writer, FIFO of waiters), flush
 * and unlock once the counted data are in, post and complete. */
#include <stdlib.h>
#include <string.h>
#include "accel/accel.h"
#include "obj/err.h"
#include "osc/am/osc_am.h"

/* Address of [off, off+len) in this process's window, or NULL. */
static char *osc_am_addr(osc_am_t *am, uint64_t off, uint64_t len)
{
    osc_win_t *w = am->w;
    if (w->win->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return osc_region_holds(w, (uintptr_t)off, len) ? (char *)(uintptr_t)off : NULL;
    if (off > (uint64_t)w->win->size || len > (uint64_t)w->win->size - off)
        return NULL;
    return (char *)w->win->base + off;
}

/* Copy into or out of window memory, which may be device memory (accel):
 * the fake and real devices refuse plain loads and stores. */
static void osc_am_copy(void *dst, const void *src, size_t n)
{
    if (accel_is_device(dst) || accel_is_device(src))
        accel_copy(dst, src, n, NULL);
    else
        memmove(dst, src, n);
}

static void osc_am_ack(osc_am_t *am, int origin, uint64_t cookie, bool err)
{
    osc_am_hdr_t h;
    osc_am_hdr_init(am, &h, OSC_AM_ACK);
    h.cookie = cookie;
    h.lock_type = err;
    osc_am_send(am, origin, &h, NULL, 0);
}

/* inout = in op inout for n bytes of basic type dt (under acc_lock). */
static void osc_am_apply(const osc_am_hdr_t *h, const void *in, char *inout, size_t n)
{
    obj_op_t *op;
    obj_datatype_t *dt = obj_datatype_predef((MPI_Datatype)(uintptr_t)h->dt);
    if (obj_op_lookup((MPI_Op)(uintptr_t)h->op, &op) != MPI_SUCCESS || !dt || dt->size == 0)
        return;
    if ((MPI_Op)(uintptr_t)h->op == MPI_NO_OP)
        return;
    if ((MPI_Op)(uintptr_t)h->op == MPI_REPLACE) {
        osc_am_copy(inout, in, n);
        return;
    }
    obj_op_reduce(op, dt, in, inout, (MPI_Count)(n / (size_t)dt->size));
}

static void osc_am_counted(osc_am_t *am, int origin)
{
    am->recv[origin]++;
    am->recv_total++;
    osc_am_check_pending(am, origin);
}

static void osc_am_reply(osc_am_t *am, const osc_am_hdr_t *h, const void *data, size_t len)
{
    osc_am_hdr_t r;
    osc_am_hdr_init(am, &r, OSC_AM_REPLY);
    r.cookie = h->cookie;
    r.aux = h->aux;
    r.len = len;
    osc_am_send(am, h->src, &r, data, len);
}

static void osc_am_fetch(osc_am_t *am, const osc_am_hdr_t *h, char *a, const void *p, size_t n)
{
    char stack[256];
    char *old = h->len <= sizeof stack ? stack : malloc(h->len);
    pthread_mutex_lock(&am->acc_lock);
    if (old && a)
        osc_am_copy(old, a, h->len);
    if (a && h->type == OSC_AM_GACC && n >= h->len)
        osc_am_apply(h, p, a, h->len);
    if (a && old && h->type == OSC_AM_CAS && n >= 2 * h->len &&
        memcmp(old, (const char *)p + h->len, h->len) == 0)
        osc_am_copy(a, p, h->len);
    pthread_mutex_unlock(&am->acc_lock);
    if (!a && old)
        memset(old, 0, h->len);
    osc_am_reply(am, h, old ? old : stack, old ? h->len : 0);
    if (old != stack)
        free(old);
}

void osc_am_target_data(osc_am_t *am, const osc_am_hdr_t *h, const void *p, size_t n)
{
    char *a = osc_am_addr(am, h->off, h->len);
    if (!a && h->len)
        am->bad[h->src] = 1;   /* reported by the origin's next flush or unlock */
    switch (h->type) {
    case OSC_AM_PUT:
        if (a && n >= h->len)
            osc_am_copy(a, p, h->len);
        osc_am_counted(am, h->src);
        break;
    case OSC_AM_ACC:
        if (a && n >= h->len) {
            pthread_mutex_lock(&am->acc_lock);
            osc_am_apply(h, p, a, h->len);
            pthread_mutex_unlock(&am->acc_lock);
        }
        osc_am_counted(am, h->src);
        break;
    case OSC_AM_GET:
        if (a && !accel_is_device(a))
            osc_am_reply(am, h, a, h->len);
        else
            osc_am_fetch(am, h, a, NULL, 0);   /* staged through host memory */
        break;
    default:
        osc_am_fetch(am, h, a, p, n);
        break;
    }
}

/* ------------------------------------------------------------ lock */

static bool osc_am_lock_fits(osc_am_t *am, int type)
{
    if (am->lock_excl >= 0)
        return false;
    return type == MPI_LOCK_SHARED || am->lock_shared == 0;
}

static void osc_am_grant(osc_am_t *am, int origin, int type, uint64_t cookie)
{
    if (type == MPI_LOCK_EXCLUSIVE)
        am->lock_excl = origin;
    else
        am->lock_shared++;
    osc_am_ack(am, origin, cookie, false);
}

static void osc_am_grant_waiters(osc_am_t *am)
{
    while (am->n_waiters && osc_am_lock_fits(am, am->waiters[0].type)) {
        osc_am_waiter_t x = am->waiters[0];
        memmove(am->waiters, am->waiters + 1, (size_t)(am->n_waiters - 1) * sizeof x);
        am->n_waiters--;
        osc_am_grant(am, x.origin, x.type, x.cookie);
    }
}

static void osc_am_lock_req(osc_am_t *am, int origin, int type, uint64_t cookie)
{
    if (!am->n_waiters && osc_am_lock_fits(am, type)) {
        osc_am_grant(am, origin, type, cookie);
        return;
    }
    if (am->n_waiters == am->cap_waiters) {
        int cap = am->cap_waiters ? 2 * am->cap_waiters : 16;
        osc_am_waiter_t *nw = realloc(am->waiters, (size_t)cap * sizeof *nw);
        if (!nw)
            return;   /* the origin waits; nothing better to do without memory */
        am->waiters = nw, am->cap_waiters = cap;
    }
    am->waiters[am->n_waiters++] = (osc_am_waiter_t){origin, type, cookie};
}

static void osc_am_release(osc_am_t *am, int origin)
{
    if (am->lock_excl == origin)
        am->lock_excl = -1;
    else if (am->lock_shared > 0)
        am->lock_shared--;
    osc_am_grant_waiters(am);
}

/* A flush or unlock from origin whose counted data have all arrived. */
void osc_am_check_pending(osc_am_t *am, int origin)
{
    if (am->want_flush[origin] >= 0 && am->recv[origin] >= (uint64_t)am->want_flush[origin]) {
        am->want_flush[origin] = -1;
        osc_am_ack(am, origin, am->flush_cookie[origin], am->bad[origin]);
        am->bad[origin] = 0;
    }
    if (am->want_unlock[origin] >= 0 && am->recv[origin] >= (uint64_t)am->want_unlock[origin]) {
        am->want_unlock[origin] = -1;
        if (am->unlock_cookie[origin] & 1)
            osc_am_release(am, origin);
        osc_am_ack(am, origin, am->unlock_cookie[origin] & ~(uint64_t)1, am->bad[origin]);
        am->bad[origin] = 0;
    }
}

void osc_am_target_sync(osc_am_t *am, const osc_am_hdr_t *h, const void *p, size_t n)
{
    (void)p, (void)n;
    int o = h->src;
    switch (h->type) {
    case OSC_AM_LOCK:
        osc_am_lock_req(am, o, h->lock_type + 300, h->cookie);
        break;
    case OSC_AM_UNLOCK:
        /* low bit of the cookie: release a lock (clear for MPI_MODE_NOCHECK) */
        am->want_unlock[o] = (int64_t)h->aux;
        am->unlock_cookie[o] = h->cookie | (h->lock_type ? 1u : 0u);
        osc_am_check_pending(am, o);
        break;
    case OSC_AM_FLUSH:
        am->want_flush[o] = (int64_t)h->aux;
        am->flush_cookie[o] = h->cookie;
        osc_am_check_pending(am, o);
        break;
    case OSC_AM_POST:
        am->post_recv[o]++;
        break;
    case OSC_AM_COMPLETE:
        am->compl_need[o] = h->aux;
        am->compl_recv[o]++;
        break;
    }
}
