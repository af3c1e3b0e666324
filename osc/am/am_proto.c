/* osc am: sending active messages (with a FIFO queue for a full btl),
 * dispatching the ones that arrive, and waiting for counters. */
#include <stdlib.h>
#include <string.h>
#include "base/progress.h"
#include "obj/err.h"
#include "osc/am/osc_am.h"

typedef struct osc_am_qmsg {
    struct osc_am_qmsg *next;
    btl_module_t *btl;
    btl_endpoint_t *ep;
    osc_am_hdr_t hdr;
    size_t len;
    char data[];
} osc_am_qmsg_t;

static osc_am_qmsg_t *osc_am_qhead, *osc_am_qtail;
static int osc_am_queued;
static int osc_am_in_handler;   /* inside osc_am_recv: progress() would return 0 */

/* Queued messages beyond which an origin progresses before queueing more
 * (a loop of operations without synchronisation must not grow the queue
 * without bound).  Principle: a few btl queues' worth. */
#define OSC_AM_QUEUE_SOFT 64

size_t osc_am_max_payload(osc_am_t *am, int target)
{
    btl_module_t *b = btl_for_peer[am->w->world[target]].btl;
    size_t m = b->max_send_size > sizeof(osc_am_hdr_t) ? b->max_send_size - sizeof(osc_am_hdr_t)
                                                      : 0;
    m = m < osc_am_chunk ? m : osc_am_chunk;
    return m & ~(size_t)63;
}

void osc_am_hdr_init(osc_am_t *am, osc_am_hdr_t *h, int type)
{
    memset(h, 0, sizeof *h);
    h->win_id = am->w->comm->context_id;
    h->src = am->w->rank;
    h->type = (uint8_t)type;
}

static int osc_am_enqueue(btl_peer_t *p, const osc_am_hdr_t *hdr, const void *data, size_t len)
{
    osc_am_qmsg_t *q = malloc(sizeof *q + len);
    if (!q)
        return obj_errf(MPI_ERR_NO_MEM, "no memory to queue a one-sided message");
    q->next = NULL;
    q->btl = p->btl;
    q->ep = p->ep;
    q->hdr = *hdr;
    q->len = len;
    if (len)
        memcpy(q->data, data, len);
    if (osc_am_qtail)
        osc_am_qtail->next = q;
    else
        osc_am_qhead = q;
    osc_am_qtail = q;
    if (osc_am_queued++ == 0)
        rail_progress_hold_poll(1);
    return MPI_SUCCESS;
}

static int osc_am_drain(void *arg)
{
    (void)arg;
    int n = 0;
    while (osc_am_qhead) {
        osc_am_qmsg_t *q = osc_am_qhead;
        btl_payload_t pl = {.data = q->data, .len = q->len};
        int rc = q->btl->send(q->btl, q->ep, OSC_AM_TAG, &q->hdr, sizeof q->hdr, &pl);
        if (rc == RAIL_AGAIN)
            break;
        osc_am_qhead = q->next;
        if (!osc_am_qhead)
            osc_am_qtail = NULL;
        free(q);
        n++;
        if (--osc_am_queued == 0)
            rail_progress_hold_poll(-1);
    }
    return n;
}

int osc_am_send(osc_am_t *am, int target, osc_am_hdr_t *hdr, const void *data, size_t len)
{
    btl_peer_t *p = &btl_for_peer[am->w->world[target]];
    if (!p->btl)
        return obj_errf(MPI_ERR_OTHER, "no transport reaches rank %d", target);
    if (osc_am_qhead && !osc_am_in_handler) {
        rail_progress();
        while (osc_am_queued > OSC_AM_QUEUE_SOFT)
            rail_progress();
    }
    if (!osc_am_qhead) {
        btl_payload_t pl = {.data = data, .len = len};
        int rc = p->btl->send(p->btl, p->ep, OSC_AM_TAG, hdr, sizeof *hdr, &pl);
        if (rc != RAIL_AGAIN)
            return rc == MPI_SUCCESS ? MPI_SUCCESS
                                     : obj_errf(rc, "one-sided message to rank %d failed", target);
    }
    return osc_am_enqueue(p, hdr, data, len);
}

static bool osc_am_counter_zero(void *arg)
{
    return __atomic_load_n((int *)arg, __ATOMIC_ACQUIRE) <= 0;
}

void osc_am_wait_counter(int *counter)
{
    rail_progress_wait(osc_am_counter_zero, counter);
}

static bool osc_am_no_replies(void *arg)
{
    return __atomic_load_n(&((osc_am_t *)arg)->replies, __ATOMIC_ACQUIRE) <= 0;
}

void osc_am_wait_replies(osc_am_t *am)
{
    rail_progress_wait(osc_am_no_replies, am);
}

/* Fetching operations in flight beyond which an origin waits for replies
 * before asking for more: the target's replies then fit the btl's queues
 * instead of waiting in its send queue for a poll.  Principle: 16 replies
 * of osc_am_chunk bytes is about a btl sm FIFO's worth (measured: 5000
 * unthrottled 128 KiB gets ran at 79 MB/s, throttled at ~3 GB/s). */
#define OSC_AM_REPLIES_MAX 16

static bool osc_am_few_replies(void *arg)
{
    return __atomic_load_n(&((osc_am_t *)arg)->replies, __ATOMIC_ACQUIRE) < OSC_AM_REPLIES_MAX;
}

void osc_am_throttle(osc_am_t *am)
{
    if (!osc_am_in_handler && !osc_am_few_replies(am))
        rail_progress_wait(osc_am_few_replies, am);
}

void osc_am_recv(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                 const void *payload, size_t payload_len)
{
    (void)btl, (void)ep;
    osc_am_hdr_t h;
    if (hdr_len < sizeof h)
        return;
    memcpy(&h, hdr, sizeof h);
    if (h.type == OSC_AM_REPLY) {
        osc_am_reply_arrived((osc_am_req_t *)(uintptr_t)h.cookie, h.aux, payload, payload_len);
        return;
    }
    if (h.type == OSC_AM_ACK) {
        int *c = (int *)(uintptr_t)h.cookie;
        if (h.lock_type)
            c[1] = 1;   /* error flag next to the counter */
        __atomic_sub_fetch(c, 1, __ATOMIC_RELEASE);
        return;
    }
    osc_win_t *w = osc_win_lookup(h.win_id);
    if (!w || !w->mod || h.src < 0 || h.src >= w->size)
        return;
    osc_am_in_handler++;
    if (h.type <= OSC_AM_CAS)
        osc_am_target_data(osc_am_of(w), &h, payload, payload_len);
    else
        osc_am_target_sync(osc_am_of(w), &h, payload, payload_len);
    osc_am_in_handler--;
}

int osc_am_proto_init(void)
{
    btl_register_recv(OSC_AM_TAG, osc_am_recv);
    return rail_progress_register_lazy(osc_am_drain, NULL, 0, &osc_am_queued);
}

void osc_am_proto_fini(void)
{
    rail_progress_unregister(osc_am_drain, NULL);
    while (osc_am_qhead) {
        osc_am_qmsg_t *q = osc_am_qhead;
        osc_am_qhead = q->next;
        free(q);
    }
    osc_am_qtail = NULL;
    if (osc_am_queued)
        rail_progress_hold_poll(-1);
    osc_am_queued = 0;
}
