/* osc am, origin side: put, get, accumulate, get_accumulate and
 * compare_and_swap as active messages, one per piece of the target
 * layout (the origin walks the target datatype with a cursor at address 0,
 * so the pieces it exports are offsets from the target displacement). */
#include <stdlib.h>
#include <string.h>
#include "accel/accel.h"
#include "base/dt.h"
#include "obj/err.h"
#include "osc/am/osc_am.h"

static void osc_am_ureq_release(obj_request_t *r)
{
    r->obj.kind = OBJ_FREED;
    free(r);
}

static const obj_request_ops_t osc_am_ureq_ops = {.release = osc_am_ureq_release};

static int osc_am_ureq_new(obj_request_t **out)
{
    obj_request_t *r = malloc(sizeof *r);
    if (!r)
        return obj_errf(MPI_ERR_NO_MEM, "no memory for an RMA request");
    obj_request_init(r, OBJ_REQ_RMA, &osc_am_ureq_ops, NULL);
    obj_req_status_empty(&r->status);
    *out = r;
    return MPI_SUCCESS;
}

static int osc_am_accel_cb(void *dst, const void *src, size_t len, void *ctx)
{
    (void)ctx;
    return accel_copy(dst, src, len, NULL);
}

/* The packed bytes of count elements of dt at buf: buf itself when the
 * layout is contiguous, else a staging copy (*stage, to free). */
static int osc_am_packed(const void *buf, MPI_Count count, obj_datatype_t *dt, const char **out,
                         void **stage)
{
    size_t total = (size_t)count * (size_t)dt->size;
    *stage = NULL;
    bool dev = accel_is_device(buf);
    if (total == 0 || (!dev && (dt->layout->flags & RAIL_DT_F_CONTIG))) {
        *out = (const char *)buf + dt->true_lb;
        return MPI_SUCCESS;
    }
    if (!(*stage = malloc(total)))
        return obj_errf(MPI_ERR_NO_MEM, "no memory to pack %zu bytes", total);
    int rc = dev ? rail_dt_pack_all_cb(dt->layout, count, buf, *stage, total, NULL,
                                       osc_am_accel_cb, NULL)
                 : rail_dt_pack_all(dt->layout, count, buf, *stage, total, NULL);
    if (rc != MPI_SUCCESS) {
        free(*stage);
        *stage = NULL;
        return obj_errf(rc, "cannot pack the origin buffer");
    }
    *out = *stage;
    return MPI_SUCCESS;
}

static uint64_t osc_am_target_off(osc_win_t *w, int target, MPI_Aint disp)
{
    if (w->win->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return (uint64_t)disp;
    return (uint64_t)((int64_t)disp * w->units[target]);
}

/* Send the packed data (NULL for a get) in pieces of the target layout:
 * one message of type `type` per piece.  elem: pieces are cut at
 * multiples of it. */
static int osc_am_scatter(osc_am_t *am, osc_am_hdr_t *tmpl, int target, uint64_t base,
                          MPI_Count tcount, obj_datatype_t *tdt, const char *data, size_t elem,
                          size_t data_mult)
{
    struct rail_dt_cursor cur;
    struct iovec iov[16];
    size_t maxp = osc_am_max_payload(am, target) / (data_mult ? data_mult : 1);
    int rc = MPI_SUCCESS, n;
    maxp -= maxp % (elem ? elem : 1);
    RAIL_CHECK(rail_dt_cursor_init(&cur, tdt->layout, tcount, NULL));
    while (rail_dt_cursor_left(&cur)) {
        size_t pos = rail_dt_cursor_pos(&cur);
        size_t got = rail_dt_cursor_iov(&cur, iov, 16, maxp, &n);
        for (int i = 0; i < n; i++) {
            tmpl->off = base + (uint64_t)(intptr_t)iov[i].iov_base;
            tmpl->len = iov[i].iov_len;
            tmpl->aux = pos;
            RAIL_CHECK(osc_am_send(am, target, tmpl, data ? data + pos : NULL,
                                   data ? iov[i].iov_len * (data_mult ? data_mult : 1) : 0));
            if (tmpl->type == OSC_AM_PUT || tmpl->type == OSC_AM_ACC)
                am->sent[target]++;
            pos += iov[i].iov_len;
        }
        if (got == 0)
            break;
    }
fail:
    return rc;
}

/* Put (op NULL) and accumulate: counted messages, complete locally once
 * sent (the btls and the queue copy the data). */
static int osc_am_write(osc_win_t *w, const void *obuf, MPI_Count ocount, obj_datatype_t *odt,
                        int target, MPI_Aint disp, MPI_Count tcount, obj_datatype_t *tdt,
                        obj_op_t *op, obj_request_t **req)
{
    osc_am_t *am = osc_am_of(w);
    const char *data;
    void *stage;
    osc_am_hdr_t h;
    int rc = MPI_SUCCESS;
    RAIL_CHECK(osc_am_packed(obuf, ocount, odt, &data, &stage));
    osc_am_hdr_init(am, &h, op ? OSC_AM_ACC : OSC_AM_PUT);
    if (op) {
        h.op = (uint32_t)(uintptr_t)obj_op_handle(op);
        h.dt = (uint32_t)(uintptr_t)obj_datatype_handle(tdt->basic);
    }
    rc = osc_am_scatter(am, &h, target, osc_am_target_off(w, target, disp), tcount, tdt, data,
                        op ? (size_t)tdt->basic->size : 1, 1);
    free(stage);
    if (rc == MPI_SUCCESS && req && (rc = osc_am_ureq_new(req)) == MPI_SUCCESS)
        obj_request_complete(*req);
fail:
    return rc;
}

static int osc_am_put(osc_win_t *w, const void *obuf, MPI_Count ocount, obj_datatype_t *odt,
                      int target, MPI_Aint disp, MPI_Count tcount, obj_datatype_t *tdt,
                      obj_request_t **req)
{
    return osc_am_write(w, obuf, ocount, odt, target, disp, tcount, tdt, NULL, req);
}

/* ------------------------------------------------------------ replies */

int osc_am_req_new(osc_am_t *am, void *buf, MPI_Count count, obj_datatype_t *dt,
                   obj_request_t **user, osc_am_req_t **out)
{
    osc_am_req_t *r = calloc(1, sizeof *r);
    int rc = MPI_SUCCESS;
    if (!r)
        return obj_errf(MPI_ERR_NO_MEM, "no memory for an RMA operation");
    r->am = am;
    r->buf = buf;
    r->dt = dt;
    r->count = count;
    r->left = (size_t)count * (size_t)dt->size;
    obj_datatype_retain(dt);
    if (user)
        RAIL_CHECK(osc_am_ureq_new(&r->user));
    *out = r;
    return MPI_SUCCESS;
fail:
    obj_datatype_release(dt);
    free(r);
    return rc;
}

static void osc_am_req_done(osc_am_req_t *r)
{
    osc_am_t *am = r->am;
    if (r->user)
        obj_request_complete(r->user);
    obj_datatype_release(r->dt);
    free(r->stage);
    free(r);
    __atomic_sub_fetch(&am->replies, 1, __ATOMIC_RELEASE);
}

void osc_am_reply_arrived(osc_am_req_t *r, uint64_t aux, const void *data, size_t len)
{
    obj_datatype_t *dt = r->dt;
    bool dev = accel_is_device(r->buf);
    if (!dev && (dt->layout->flags & RAIL_DT_F_CONTIG)) {
        memcpy(r->buf + dt->true_lb + aux, data, len);
    } else {
        struct rail_dt_cursor cur;
        if (rail_dt_cursor_init(&cur, dt->layout, r->count, r->buf) == MPI_SUCCESS) {
            if (dev)
                rail_dt_cursor_set_copy(&cur, osc_am_accel_cb, NULL);
            rail_dt_cursor_seek(&cur, (size_t)aux);
            rail_dt_unpack(&cur, data, len);
        }
    }
    r->left = r->left > len ? r->left - len : 0;
    if (r->left == 0)
        osc_am_req_done(r);
}

/* Start a fetching operation: r receives the replies. */
static int osc_am_fetching(osc_am_t *am, osc_am_hdr_t *h, int target, MPI_Aint disp,
                           MPI_Count tcount, obj_datatype_t *tdt, const char *data, size_t elem,
                           size_t mult, osc_am_req_t *r)
{
    if (r->left == 0) {
        __atomic_add_fetch(&am->replies, 1, __ATOMIC_RELAXED);
        osc_am_req_done(r);
        return MPI_SUCCESS;
    }
    osc_am_throttle(am);
    h->cookie = (uint64_t)(uintptr_t)r;
    __atomic_add_fetch(&am->replies, 1, __ATOMIC_RELAXED);
    return osc_am_scatter(am, h, target, osc_am_target_off(am->w, target, disp), tcount, tdt,
                          data, elem, mult);
}

static int osc_am_get(osc_win_t *w, void *obuf, MPI_Count ocount, obj_datatype_t *odt,
                      int target, MPI_Aint disp, MPI_Count tcount, obj_datatype_t *tdt,
                      obj_request_t **req)
{
    osc_am_t *am = osc_am_of(w);
    osc_am_req_t *r = NULL;
    osc_am_hdr_t h;
    int rc = MPI_SUCCESS;
    RAIL_CHECK(osc_am_req_new(am, obuf, ocount, odt, req, &r));
    if (req)
        *req = r->user;
    osc_am_hdr_init(am, &h, OSC_AM_GET);
    rc = osc_am_fetching(am, &h, target, disp, tcount, tdt, NULL, 1, 1, r);
fail:
    return rc;
}

static int osc_am_gacc(osc_win_t *w, const void *obuf, MPI_Count ocount, obj_datatype_t *odt,
                       void *rbuf, MPI_Count rcount, obj_datatype_t *rdt, int target,
                       MPI_Aint disp, MPI_Count tcount, obj_datatype_t *tdt, obj_op_t *op,
                       obj_request_t **req)
{
    osc_am_t *am = osc_am_of(w);
    const char *data = NULL;
    osc_am_req_t *r = NULL;
    osc_am_hdr_t h;
    int rc = MPI_SUCCESS;
    RAIL_CHECK(osc_am_req_new(am, rbuf, rcount, rdt, req, &r));
    if (req)
        *req = r->user;
    if (obj_op_handle(op) != MPI_NO_OP &&
        (rc = osc_am_packed(obuf, ocount, odt, &data, &r->stage)) != MPI_SUCCESS) {
        obj_datatype_release(rdt);
        free(r);
        return rc;
    }
    osc_am_hdr_init(am, &h, OSC_AM_GACC);
    h.op = (uint32_t)(uintptr_t)obj_op_handle(op);
    h.dt = (uint32_t)(uintptr_t)obj_datatype_handle(tdt->basic);
    rc = osc_am_fetching(am, &h, target, disp, tcount, tdt, data, (size_t)tdt->basic->size, 1, r);
fail:
    return rc;
}

static int osc_am_cas(osc_win_t *w, const void *obuf, const void *cbuf, void *rbuf,
                      obj_datatype_t *dt, int target, MPI_Aint disp)
{
    osc_am_t *am = osc_am_of(w);
    osc_am_req_t *r = NULL;
    osc_am_hdr_t h;
    size_t n = (size_t)dt->size;
    char both[64];
    int rc = MPI_SUCCESS;
    if (2 * n > sizeof both)
        return obj_errf(MPI_ERR_TYPE, "compare-and-swap datatype of %zu bytes is too large", n);
    memcpy(both, obuf, n);
    memcpy(both + n, cbuf, n);
    RAIL_CHECK(osc_am_req_new(am, rbuf, 1, dt, NULL, &r));
    osc_am_hdr_init(am, &h, OSC_AM_CAS);
    h.dt = (uint32_t)(uintptr_t)obj_datatype_handle(dt);
    /* one element, never split: data multiplier 2 (origin then compare) */
    rc = osc_am_fetching(am, &h, target, disp, 1, dt, both, n, 2, r);
fail:
    return rc;
}

static int osc_am_free(osc_win_t *w);

const osc_ops_t osc_am_ops = {
    .free = osc_am_free,
    .put = osc_am_put,
    .get = osc_am_get,
    .accumulate = osc_am_write,
    .get_accumulate = osc_am_gacc,
    .compare_and_swap = osc_am_cas,
    .fence = osc_am_fence,
    .post = osc_am_post,
    .start = osc_am_start,
    .complete = osc_am_complete,
    .wait = osc_am_wait,
    .lock = osc_am_lock,
    .unlock = osc_am_unlock,
    .lock_all = osc_am_lock_all,
    .unlock_all = osc_am_unlock_all,
    .flush = osc_am_flush,
    .flush_local = osc_am_flush_local,
    .sync = osc_am_sync,
};

static int osc_am_free(osc_win_t *w)
{
    osc_am_t *am = osc_am_of(w);
    free(am->sent);
    free(am->acked);
    free(am->recv);
    free(am->waiters);
    free(am->want_flush);
    free(am->want_unlock);
    free(am->flush_cookie);
    free(am->unlock_cookie);
    free(am->post_recv);
    free(am->post_used);
    free(am->compl_recv);
    free(am->compl_used);
    free(am->compl_need);
    free(am->bad);
    free(am->post_group);
    free(am->start_group);
    pthread_mutex_destroy(&am->acc_lock);
    free(am);
    w->mod = NULL;
    return MPI_SUCCESS;
}
