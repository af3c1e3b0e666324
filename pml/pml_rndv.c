/*
 * Rendezvous: messages above the eager limit (or without credits), and
 * contiguous device messages of any size above pml_device_eager_max to a
 * process of the node that can open them by IPC (the third form below;
 * where the receiver answers a small one with a CTS, small ones to it go
 * eager again: ipc_small_off).
 *
 *   sender                               receiver
 *   RTS (+ get descriptor)   ------->    match
 *                                        get(s) from the send buffer
 *                            <-------    FIN          (single copy)
 * or, when get cannot be used (no get in the btl, device memory the btl
 * cannot reach, a layout with too many pieces, a failed first get):
 *                            <-------    CTS(len)
 *   FRAG, FRAG, ...          ------->    unpack at offset   (pipelined)
 * or, a contiguous device buffer to device memory of another process of
 * the node (pml_rndv_device_ipc):
 *   RTS (+ IPC handle)       ------->    open the sender's allocation (cached)
 *                                        copy device to device
 *                            <-------    FIN     (a failed open: CTS, pipelined)
 */
#include "pml/pml_internal.h"
#include "base/cma.h"
#include "base/copy.h"
#include "base/pvar.h"
#include "runtime/rte.h"

#include <stdlib.h>
#include <string.h>

#define PML_GET_MAX_IOV 64

/* Rendezvous messages this process received by each path: MPI_T counters. */
static uint64_t pml_count_rndv_get, pml_count_rndv_pipelined, pml_count_rndv_ipc,
    pml_count_rndv_both_ways;

static const rail_pvar_counter_t rndv_pvars[] = {
    {"pml_rndv_recv_get",
     "Rendezvous (large) messages this process received by the transport's single-copy get "
     "(CMA between processes of a node)",
     &pml_count_rndv_get},
    {"pml_rndv_recv_pipelined",
     "Rendezvous (large) messages this process received by the pipeline (fragments copied "
     "through the transport's sends)",
     &pml_count_rndv_pipelined},
    {"pml_rndv_recv_both_ways",
     "Rendezvous messages this process received by the get without timing the paths, "
     "because it was sending such messages to the same process at the same time",
     &pml_count_rndv_both_ways},
    {"pml_rndv_recv_ipc",
     "Rendezvous messages from device memory this process copied straight from the "
     "sender's buffer, opened by the device's IPC (pml_rndv_device_ipc)",
     &pml_count_rndv_ipc},
};

int pml_rndv_register_pvars(void)
{
    return rail_pvar_register_counters(rndv_pvars, RAIL_ARRAY_SIZE(rndv_pvars));
}

/* The paths of a rendezvous message its receiver may choose between. */
enum { PATH_PIPELINE, PATH_GET, PATH_STREAM };

/* Messages both ways at once.  A receiver choosing by time (adapt_path)
 * does not see what the pipeline costs its sender: half of the copying,
 * on the sender's CPU, free while the sender has nothing else to do.  A
 * process that sends and receives at once pays for both, and each one
 * choosing for itself, two such processes settled on the pipeline (the
 * get's samples carried the copies each made for the other's pipeline):
 * np 2, 64 messages of 256 KiB in flight each way on an Intel Xeon VM,
 * 15-16 GB/s in all, against 30-31 by the get and Open MPI's 35-36.  So
 * a message from a peer we are sending such messages to ourselves (not yet
 * complete) takes the get, untimed, where the kernel's copy costs less
 * than RAIL_CMA_KERNEL_RATIO_BOTH_WAYS_MAX memcpys (base/cma.h): the
 * pipeline makes two copies of every byte, of lines the other core wrote,
 * and synchronises per fragment.  Such a get copies alone (BTL_GET_ALONE):
 * the sender is busy with its own receives, and asking it to help (btl
 * sm's shared get) slowed 256 KiB both ways from 8.3 to 14.5 us a message
 * on an AMD EPYC VM.  A stream one way, or a ping-pong (each message
 * complete before the next), is chosen by time as before. */
static bool both_ways_get(void)
{
    static int get = -1;
    if (get < 0) {
        const char *w = pml_rndv_both_ways ? pml_rndv_both_ways : "auto";
        get = strcmp(w, "get") == 0 ||
              (strcmp(w, "auto") == 0 &&
               rail_cma_kernel_ratio() < RAIL_CMA_KERNEL_RATIO_BOTH_WAYS_MAX);
    }
    return get == 1;
}

static void choosing_done(pml_request_t *r)
{
    if (r->rflags & PML_RF_CHOOSING) {
        r->rflags &= (uint8_t)~PML_RF_CHOOSING;
        r->peer->sends_choosing--;
    }
}

/* ------------------------------------------------------------ sender */

/* Describe the send buffer for the receiver's get; payload bytes or 0.
 * *choose: a host message below the get threshold whose receiver picks
 * between the get and the pipeline by time (pml_rndv_adapt_min). */
static size_t build_get_desc(pml_request_t *r, pml_peer_t *peer, pml_get_desc_t *d, bool *choose)
{
    *choose = false;
    if (peer->rts_max_iov == 0 || r->buf.bytes == 0 ||
        (r->buf.device && !(peer->btl_flags & BTL_FLAG_DEVICE_MEM)))
        return 0;
    if (!r->buf.device && r->buf.bytes < pml_rndv_get_min_host &&
        !(r->rflags & PML_RF_SINGLE_COPY)) {
        if (pml_rndv_adapt_min == 0 || r->buf.bytes < pml_rndv_adapt_min)
            return 0;
        *choose = true;
    }
    struct iovec iov[PML_RTS_MAX_IOV];
    int n = 0;
    size_t cov = pml_buf_iov(&r->buf, 0, iov, peer->rts_max_iov, r->buf.bytes, &n);
    if (cov != r->buf.bytes || n == 0)
        return 0;
    if (!(r->rflags & PML_RF_REGISTERED)) {
        memset(&r->reg, 0, sizeof(r->reg));
        if (peer->btl->register_mem) {
            uintptr_t lo = UINTPTR_MAX, hi = 0;
            for (int i = 0; i < n; i++) {
                uintptr_t b = (uintptr_t)iov[i].iov_base;
                lo = RAIL_MIN(lo, b);
                hi = RAIL_MAX(hi, b + iov[i].iov_len);
            }
            if (peer->btl->register_mem(peer->btl, (void *)lo, hi - lo, &r->reg) != MPI_SUCCESS)
                return 0;
        }
        r->rflags |= PML_RF_REGISTERED;
    }
    d->reg = r->reg;
    d->n_iov = (uint32_t)n;
    d->pad = 0;
    for (int i = 0; i < n; i++) {
        d->iov[i].base = (uint64_t)(uintptr_t)iov[i].iov_base;
        d->iov[i].len = iov[i].iov_len;
    }
    return sizeof(*d) + (size_t)n * sizeof(pml_iov64_t);
}

/* A contiguous device send buffer that a process of this node can open by
 * IPC: the descriptor's bytes, or 0.  Peers the btl reaches in device
 * memory itself (self) take the btl's own paths. */
static size_t build_ipc_desc(pml_request_t *r, pml_peer_t *peer, pml_ipc_desc_t *d)
{
    if (!pml_rndv_device_ipc || !r->buf.device || !r->buf.contig || r->buf.bytes == 0 ||
        (peer->btl_flags & BTL_FLAG_DEVICE_MEM) || rte_node_of(peer->world) < 0 ||
        rte_node_of(peer->world) != (int)rte_info.node_id)
        return 0;
    size_t off = 0;
    if (accel_ipc_handle_get(r->buf.contig, &d->h, &off) != MPI_SUCCESS)
        return 0;
    d->off = off;
    return sizeof(*d);
}

static void send_deregister(pml_request_t *r)
{
    if (!(r->rflags & PML_RF_REGISTERED))
        return;
    if (r->peer->btl->deregister_mem && r->reg.len)
        r->peer->btl->deregister_mem(r->peer->btl, &r->reg);
    r->rflags &= (uint8_t)~PML_RF_REGISTERED;
}

int pml_rndv_send_rts(pml_request_t *r, pml_src_t *s, pml_peer_t *peer, bool ipc_only)
{
    union {
        pml_get_desc_t d;
        pml_ipc_desc_t ipc;
        uint8_t bytes[sizeof(pml_get_desc_t) + PML_RTS_MAX_IOV * sizeof(pml_iov64_t)];
    } desc;
    bool choose = false;
    size_t dlen = ipc_only ? 0 : build_get_desc(r, peer, &desc.d, &choose);
    size_t ilen = dlen ? 0 : build_ipc_desc(r, peer, &desc.ipc);
    if (ipc_only && ilen == 0)
        return PML_RTS_NO_IPC;
    pml_rts_hdr_t h;
    h.m.type = PML_HDR_RNDV;
    h.m.flags = (uint8_t)((dlen ? PML_HF_GET : 0) | (ilen ? PML_HF_IPC : 0) |
                          (r->mode == PML_SEND_SYNC ? PML_HF_SYNC : 0) |
                          (r->buf.bytes <= peer->eager_limit ? PML_HF_NOCREDIT : 0) |
                          (dlen && choose ? PML_HF_CHOOSE : 0));
    h.m.seq = s->send_seq;
    h.m.src = r->ctx->my_rank;
    h.m.tag = r->tag;
    h.m.ctx = r->ctx->cid;
    h.sreq = (uint64_t)(uintptr_t)r;
    h.len = r->buf.bytes;
    dlen += ilen;
    btl_payload_t pl = { dlen ? (const void *)&desc : "", dlen, NULL, NULL };
    int rc = peer->btl->send(peer->btl, peer->ep, PML_TAG_MATCH, &h, sizeof(h), &pl);
    if (rc == RAIL_AGAIN)
        return RAIL_AGAIN;
    if (RAIL_UNLIKELY(rc != MPI_SUCCESS)) {
        send_deregister(r);
        r->req.status.error = rc;
        pml_req_complete(r);
        return MPI_SUCCESS;
    }
    s->send_seq++;
    r->hdr_flags = h.m.flags;
    r->state = PML_RS_RNDV;
    if (h.m.flags & PML_HF_CHOOSE) {
        r->rflags |= PML_RF_CHOOSING;
        peer->sends_choosing++;
    }
    return MPI_SUCCESS;
}

void pml_cb_fin(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                const void *payload, size_t payload_len)
{
    const pml_ctl_hdr_t *h = hdr;
    pml_request_t *r = (pml_request_t *)(uintptr_t)h->sreq;
    choosing_done(r);
    send_deregister(r);
    pml_req_complete(r);
}

int pml_stream_push(pml_request_t *r)
{
    pml_peer_t *peer = r->peer;
    const bool direct = r->buf.contig && (!r->buf.device || (peer->btl_flags & BTL_FLAG_DEVICE_MEM));
    while (r->offset < r->xfer) {
        size_t off = r->offset;
        size_t len = RAIL_MIN(peer->frag_size, r->xfer - off);
        pml_frag_hdr_t h = { r->remote, off };
        btl_payload_t pl = { NULL, len, pml_buf_pack_cb, r, 0 };
        if (direct)
            pl = (btl_payload_t){ r->buf.contig + off, len, NULL, NULL,
                                  r->rflags & PML_RF_STREAM ? BTL_PAYLOAD_STREAM : 0 };
        int rc = peer->btl->send(peer->btl, peer->ep, PML_TAG_FRAG, &h, sizeof(h), &pl);
        r->offset = off;
        if (rc == RAIL_AGAIN)
            return RAIL_AGAIN;
        if (RAIL_UNLIKELY(rc != MPI_SUCCESS)) {
            r->req.status.error = rc;
            break;
        }
        r->offset = off + len;
    }
    choosing_done(r);
    send_deregister(r);
    pml_req_complete(r);
    return MPI_SUCCESS;
}

static void cts_received(const pml_ctl_hdr_t *h, bool stream)
{
    pml_request_t *r = (pml_request_t *)(uintptr_t)h->sreq;
    pml_peer_t *peer = r->peer;
    /* a small device message offered by IPC and answered with a CTS (a
     * host receive buffer, or IPC failed there): three messages where
     * eager takes one, so small ones to this peer go eager from now */
    if ((r->hdr_flags & PML_HF_IPC) && r->buf.bytes <= peer->eager_limit)
        peer->ipc_small_off = true;
    if (stream)
        r->rflags |= PML_RF_STREAM;
    r->remote = h->rreq;
    r->xfer = (size_t)h->len;
    r->offset = 0;
    r->state = PML_RS_STREAM;
    if (rail_list_empty(&peer->pending) && pml_stream_push(r) != RAIL_AGAIN)
        return;
    r->pend.kind = PML_PEND_STREAM;
    pml_peer_enqueue(peer, &r->pend);
}

void pml_cb_cts(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                const void *payload, size_t payload_len)
{
    cts_received(hdr, false);
}

void pml_cb_cts_stream(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                       const void *payload, size_t payload_len)
{
    cts_received(hdr, true);
}

/* ------------------------------------------------------------ receiver */

/* A message whose sender let us choose (PML_HF_CHOOSE): the get, the
 * pipeline, or (where the CPU can) the pipeline with fragments written by
 * non-temporal stores (PML_TAG_CTS_STREAM; base/copy.h says when that
 * wins), by the time each took before from that peer for the size class
 * (base/adapt.h).  The receiver decides because it sees the whole
 * transfer: from the match to the last byte in its buffer (the sender's
 * view of the pipeline ends when it handed over the last fragment, before
 * the copy-out, and made the pipeline look twice as fast as it was).  A
 * message is timed from its match or, when it waited behind an earlier
 * timed one from that peer, from that one's completion: its own service
 * time, so a window of messages in flight is judged per message. */
static int adapt_path(pml_request_t *r, pml_peer_t *peer)
{
    if (!peer->adapt && !(peer->adapt = calloc(RAIL_ADAPT_CLASSES, sizeof(rail_adapt_t))))
        return PATH_GET;
    r->adapt = &peer->adapt[rail_adapt_class(r->xfer)];
    r->t0 = rail_now_ns();
    const bool stream = rail_copy_stream_offered();
    if (pml_rndv_adapt_alternate) {
        /* get, pipeline, get, the pipeline streamed (or not), ... */
        uint8_t k = peer->adapt_flip++;
        return k % 2 == 0 ? PATH_GET : stream && k % 4 == 3 ? PATH_STREAM : PATH_PIPELINE;
    }
    if (peer->sends_choosing > 0 && both_ways_get()) {
        r->adapt = NULL;     /* both ways at once: not timed */
        r->rflags |= PML_RF_GET_ALONE;
        pml_count_rndv_both_ways++;
        return PATH_GET;
    }
    bool measure;
    return rail_adapt_pick_n(r->adapt, stream ? 3 : 2, &measure);
}

static void adapt_done(pml_request_t *r, int path)
{
    if (!r->adapt)
        return;
    uint64_t now = rail_now_ns(), from = RAIL_MAX(r->t0, r->peer->adapt_done_ns);
    rail_adapt_record(r->adapt, path, r->xfer, now - from);
    r->peer->adapt_done_ns = now;
    r->adapt = NULL;
}

static void recv_send_cts(pml_request_t *r, bool stream)
{
    pml_count_rndv_pipelined++;
    r->state = PML_RS_FRAGS;
    r->got = 0;
    r->rflags = (uint8_t)(stream ? r->rflags | PML_RF_STREAM : r->rflags & ~PML_RF_STREAM);
    pml_ctl_hdr_t c = { r->remote, (uint64_t)(uintptr_t)r, r->xfer };
    pml_ctl_send(r->peer, stream ? PML_TAG_CTS_STREAM : PML_TAG_CTS, &c, sizeof(c));
}

static void get_finish(pml_request_t *r)
{
    pml_count_rndv_get++;
    if (r->desc_frag) {
        pml_frag_free(r->desc_frag);
        r->desc_frag = NULL;
    }
    pml_ctl_hdr_t c = { r->remote, 0, r->xfer };
    pml_ctl_send(r->peer, PML_TAG_FIN, &c, sizeof(c));
    adapt_done(r, PATH_GET);
    if (r->error != MPI_SUCCESS)
        r->req.status.error = r->error;
    pml_req_complete(r);
}

static void get_done(void *cbdata, int status)
{
    pml_request_t *r = cbdata;
    r->gets_pending--;
    if (status != MPI_SUCCESS && r->error == MPI_SUCCESS)
        r->error = status;
    if (r->offset >= r->xfer && r->gets_pending == 0 && r->state == PML_RS_GET)
        get_finish(r);
}

/* Remote pieces from the descriptor position covering at most max bytes. */
static size_t remote_pieces(pml_request_t *r, const pml_get_desc_t *d, struct iovec *riov,
                            int max_r, size_t max, int *nr, uint32_t *ri, size_t *roff)
{
    size_t sum = 0;
    *nr = 0;
    while (*nr < max_r && sum < max && *ri < d->n_iov) {
        size_t avail = (size_t)d->iov[*ri].len - *roff;
        size_t take = RAIL_MIN(avail, max - sum);
        riov[*nr].iov_base = (void *)(uintptr_t)(d->iov[*ri].base + *roff);
        riov[*nr].iov_len = take;
        (*nr)++;
        sum += take;
        if (take == avail) {
            (*ri)++;
            *roff = 0;
        } else {
            *roff += take;
        }
    }
    return sum;
}

/* Trim an iovec list to len bytes. */
static int iov_trim(struct iovec *iov, int n, size_t len)
{
    size_t sum = 0;
    for (int i = 0; i < n; i++) {
        if (sum + iov[i].iov_len >= len) {
            iov[i].iov_len = len - sum;
            return i + 1;
        }
        sum += iov[i].iov_len;
    }
    return n;
}

int pml_get_push(pml_request_t *r)
{
    pml_peer_t *peer = r->peer;
    btl_module_t *btl = peer->btl;
    const pml_get_desc_t *d = (const pml_get_desc_t *)r->desc_frag->data;
    const int max_iov = (peer->btl_flags & BTL_FLAG_IOV) ? PML_GET_MAX_IOV : 1;
    struct iovec liov[PML_GET_MAX_IOV], riov[PML_GET_MAX_IOV];
    while (r->offset < r->xfer) {
        size_t lim = r->xfer - r->offset;
        if (btl->get_limit)
            lim = RAIL_MIN(lim, btl->get_limit);
        int nl = 0, nr = 0;
        size_t lsum = pml_buf_iov(&r->buf, r->offset, liov, max_iov, lim, &nl);
        uint32_t ri = r->get_ri;
        size_t roff = r->get_roff;
        size_t rsum = remote_pieces(r, d, riov, max_iov, lsum, &nr, &ri, &roff);
        if (rsum == 0) {
            r->error = MPI_ERR_INTERN;
            r->offset = r->xfer;
            break;
        }
        if (rsum < lsum)
            nl = iov_trim(liov, nl, rsum);
        r->gets_pending++;
        int rc = btl->get(btl, peer->ep, liov, nl, &d->reg, riov, nr,
                          r->rflags & PML_RF_GET_ALONE ? BTL_GET_ALONE : 0, get_done, r);
        if (rc == RAIL_AGAIN) {
            r->gets_pending--;
            return RAIL_AGAIN;
        }
        if (RAIL_UNLIKELY(rc != MPI_SUCCESS)) {
            r->gets_pending--;
            if (r->offset == 0 && r->gets_pending == 0) {
                /* The first get failed: fall back to the pipelined protocol. */
                RAIL_VERBOSE(pml_verbose, 1, "pml: get from rank %d failed (%d); pipelining",
                             peer->world, rc);
                pml_frag_free(r->desc_frag);
                r->desc_frag = NULL;
                recv_send_cts(r, false);
                return MPI_SUCCESS;
            }
            r->error = rc;
            r->offset = r->xfer;
            break;
        }
        r->offset += rsum;
        r->get_ri = ri;
        r->get_roff = roff;
    }
    if (r->gets_pending == 0 && r->state == PML_RS_GET)
        get_finish(r);
    return MPI_SUCCESS;
}

/* A device send buffer offered by IPC, into device memory here: open the
 * sender's allocation (held while copying; kept open for its next messages
 * while idle) and copy from it,
 * device to device (a noncontiguous receive type scatters on the device).
 * False when it cannot be opened: the caller pipelines. */
static bool ipc_receive(pml_request_t *r, const pml_inmsg_t *m)
{
    pml_ipc_desc_t d;
    void *base;
    if (m->data_len < sizeof(d))
        return false;
    memcpy(&d, m->data, sizeof(d));
    if (m->peer->ipc_failed)
        return false;
    int orc = accel_ipc_handle_open_cached(&d.h, &base);
    if (orc == ACCEL_IPC_MAPPED) {
        /* mapped under another handle that someone here still holds (a
         * concurrent operation): pipeline this one */
        RAIL_VERBOSE(pml_verbose, 1, "pml: rank %d's device buffer is mapped here under "
                     "another handle in use; pipelining this message", m->peer->world);
        return false;
    }
    if (orc != MPI_SUCCESS) {
        /* the reason (permissions, a device without IPC) will not go away:
         * do not try again for this peer */
        RAIL_VERBOSE(pml_verbose, 1, "pml: cannot open rank %d's device buffer by IPC; "
                     "pipelining its device messages", m->peer->world);
        m->peer->ipc_failed = true;
        return false;
    }
    int rc = pml_buf_unpack_any(&r->buf, 0, (const char *)base + d.off, r->xfer);
    accel_ipc_handle_release(base);
    pml_count_rndv_ipc++;
    if (m->frag)
        pml_frag_free(m->frag);
    pml_ctl_hdr_t c = { r->remote, 0, r->xfer };
    pml_ctl_send(m->peer, PML_TAG_FIN, &c, sizeof(c));
    if (rc != MPI_SUCCESS)
        r->req.status.error = rc;
    pml_req_complete(r);
    return true;
}

void pml_rndv_matched(pml_request_t *r, const pml_inmsg_t *m)
{
    pml_peer_t *peer = m->peer;
    r->remote = m->sreq;
    r->xfer = RAIL_MIN(m->msg_len, r->buf.bytes);
    r->req.status.count = (MPI_Count)r->xfer;
    if (m->msg_len > r->buf.bytes)
        r->req.status.error = MPI_ERR_TRUNCATE;
    r->offset = 0;
    r->adapt = NULL;
    if ((m->hdr->flags & PML_HF_IPC) && r->buf.device && r->xfer > 0 && ipc_receive(r, m))
        return;
    bool can_get = (m->hdr->flags & PML_HF_GET) && (peer->btl_flags & BTL_FLAG_GET) &&
                   (!r->buf.device || (peer->btl_flags & BTL_FLAG_DEVICE_MEM)) &&
                   m->data_len >= sizeof(pml_get_desc_t) && r->xfer > 0;
    int path = PATH_GET;
    if (can_get && (m->hdr->flags & PML_HF_CHOOSE) && !r->buf.device &&
        (path = adapt_path(r, peer)) != PATH_GET) {
        /* The pipeline this time (timed in pml_cb_frag); the sender
         * answers the CTS as after a failed get. */
        if (m->frag)
            pml_frag_free(m->frag);
        recv_send_cts(r, path == PATH_STREAM);
        return;
    }
    if (!can_get || r->xfer == 0) {
        if (m->frag)
            pml_frag_free(m->frag);
        if (r->xfer == 0) {
            pml_ctl_hdr_t c = { r->remote, 0, 0 };
            if (m->hdr->flags & PML_HF_GET) {
                pml_ctl_send(peer, PML_TAG_FIN, &c, sizeof(c));
            } else {
                /* The sender waits for CTS: ask for nothing. */
                pml_ctl_send(peer, PML_TAG_CTS, &c, sizeof(c));
            }
            pml_req_complete(r);
            return;
        }
        recv_send_cts(r, false);
        return;
    }
    r->desc_frag = m->frag ? m->frag : pml_frag_from_inmsg(m);
    if (!r->desc_frag) {
        recv_send_cts(r, false);
        return;
    }
    r->get_ri = 0;
    r->get_roff = 0;
    r->gets_pending = 0;
    r->error = MPI_SUCCESS;
    r->state = PML_RS_GET;
    if (!rail_list_empty(&peer->pending) || pml_get_push(r) == RAIL_AGAIN) {
        r->pend.kind = PML_PEND_GET;
        pml_peer_enqueue(peer, &r->pend);
    }
}

void pml_cb_frag(btl_module_t *btl, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                 const void *payload, size_t payload_len)
{
    const pml_frag_hdr_t *h = hdr;
    pml_request_t *r = (pml_request_t *)(uintptr_t)h->rreq;
    size_t off = (size_t)h->offset;
    size_t len = payload_len;
    if (off + len > r->xfer)
        len = off < r->xfer ? r->xfer - off : 0;
    if (len) {
        int rc = pml_buf_unpack(&r->buf, off, payload, len);
        if (rc != MPI_SUCCESS && r->error == MPI_SUCCESS)
            r->error = rc;
    }
    r->got += len;
    if (r->got >= r->xfer) {
        adapt_done(r, r->rflags & PML_RF_STREAM ? PATH_STREAM : PATH_PIPELINE);
        if (r->error != MPI_SUCCESS)
            r->req.status.error = r->error;
        pml_req_complete(r);
    }
}
