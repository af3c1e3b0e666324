/*
 * btl ofi: active messages.  Frames (ofi.h) are copied into registered send
 * buffers: 4 KiB ones for small frames, max_send_size ones for the others,
 * each back in its pool when its send completes.  Receives: two
 * FI_MULTI_RECV buffers where offered (the provider packs frames into them;
 * one is posted again when the provider releases it), else a ring of
 * single buffers, each posted again after its frame was delivered.
 */
#include "btl/ofi/ofi.h"
#include "base/log.h"
#include "runtime/rte.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BTL_OFI_SMALL_BUF 4096

/* ------------------------------------------------------------ send pools */

static int spool_init(btl_ofi_module_t *m, btl_ofi_spool_t *p, size_t size, int n)
{
    p->size = size;
    p->n = n;
    p->bufs = calloc((size_t)n, sizeof(*p->bufs));
    if (!p->bufs || posix_memalign(&p->mem, 4096, size * (size_t)n) != 0)
        return MPI_ERR_NO_MEM;
    memset(p->mem, 0, size * (size_t)n);
    int rc = btl_ofi_mr_get(m, p->mem, size * (size_t)n, &p->mr);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = n - 1; i >= 0; i--) {
        p->bufs[i].ctx.kind = BTL_OFI_OP_SEND;
        p->bufs[i].data = (char *)p->mem + (size_t)i * size;
        p->bufs[i].next = p->free;
        p->free = &p->bufs[i];
    }
    return MPI_SUCCESS;
}

static void spool_fini(btl_ofi_module_t *m, btl_ofi_spool_t *p)
{
    if (p->mr)
        btl_ofi_mr_put(m, p->mr);
    free(p->mem);
    free(p->bufs);
    memset(p, 0, sizeof(*p));
}

/* ------------------------------------------------------------ receives */

static int post_recv(btl_ofi_module_t *m, btl_ofi_rbuf_t *b)
{
    struct iovec iov = {b->data, b->size};
    void *desc = m->rmr ? btl_ofi_mr_desc(m->rmr) : NULL;
    struct fi_msg msg = {.msg_iov = &iov, .desc = &desc, .iov_count = 1,
                         .addr = FI_ADDR_UNSPEC, .context = &b->ctx.fi};
    uint64_t flags = m->multi_recv ? FI_MULTI_RECV : 0;
    ssize_t rc;
    while ((rc = fi_recvmsg(m->ep, &msg, flags)) == -FI_EAGAIN)
        fi_cq_read(m->cq, NULL, 0);
    if (rc != 0) {
        rail_error("btl ofi: posting a receive buffer failed: %s", btl_ofi_strerror((int)rc));
        return MPI_ERR_OTHER;
    }
    return MPI_SUCCESS;
}

static int recv_init(btl_ofi_module_t *m)
{
    size_t frame = btl_ofi_frame_size(BTL_OFI_HDR_MAX, btl_ofi_params.max_send_size);
    int n = m->multi_recv ? 2 : btl_ofi_params.recv_bufs;
    size_t size = m->multi_recv ? btl_ofi_params.multi_recv_size : btl_ofi_pad8(frame);
    if (m->multi_recv) {
        size_t min = frame;
        int rc = fi_setopt(&m->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, sizeof(min));
        if (rc != 0) {
            snprintf(m->why, sizeof(m->why), "FI_OPT_MIN_MULTI_RECV: %s", btl_ofi_strerror(rc));
            return MPI_ERR_OTHER;
        }
    }
    m->rbufs = calloc((size_t)n, sizeof(*m->rbufs));
    if (!m->rbufs || posix_memalign(&m->rmem, 4096, size * (size_t)n) != 0)
        return MPI_ERR_NO_MEM;
    m->n_rbufs = n;
    int rc = btl_ofi_mr_get(m, m->rmem, size * (size_t)n, &m->rmr);
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        m->rbufs[i] = (btl_ofi_rbuf_t){.ctx.kind = BTL_OFI_OP_RECV,
                                       .data = (char *)m->rmem + (size_t)i * size, .size = size};
        rc = post_recv(m, &m->rbufs[i]);
    }
    return rc;
}

int btl_ofi_am_init(btl_ofi_module_t *m)
{
    size_t large = btl_ofi_pad8(btl_ofi_frame_size(BTL_OFI_HDR_MAX, btl_ofi_params.max_send_size));
    int rc = spool_init(m, &m->small, BTL_OFI_SMALL_BUF, 8 * btl_ofi_params.send_bufs);
    if (rc == MPI_SUCCESS)
        rc = spool_init(m, &m->large, large, btl_ofi_params.send_bufs);
    if (rc == MPI_SUCCESS)
        rc = recv_init(m);
    if (rc != MPI_SUCCESS && !m->why[0])
        snprintf(m->why, sizeof(m->why), "no memory for buffers (or registering them failed)");
    return rc;
}

void btl_ofi_am_fini(btl_ofi_module_t *m)
{
    /* the endpoint is closed after this: cancel nothing, just let go */
    spool_fini(m, &m->small);
    spool_fini(m, &m->large);
    if (m->rmr)
        btl_ofi_mr_put(m, m->rmr);
    m->rmr = NULL;
    free(m->rmem);
    free(m->rbufs);
    m->rmem = NULL;
    m->rbufs = NULL;
    m->n_rbufs = 0;
}

/* ------------------------------------------------------------ send */

static int fill_frame(void *dst, int src, uint32_t seq, uint8_t tag, const void *hdr,
                      size_t hdr_len, const btl_payload_t *p)
{
    btl_ofi_whdr_t *w = dst;
    *w = (btl_ofi_whdr_t){.tag = tag, .hdr_len = (uint8_t)hdr_len,
                          .payload_len = (uint32_t)p->len, .src = (uint32_t)src, .seq = seq};
    char *h = (char *)dst + BTL_OFI_WHDR_LEN;
    if (hdr_len)
        memcpy(h, hdr, hdr_len);
    char *pl = h + btl_ofi_pad8(hdr_len);
    if (p->len == 0)
        return MPI_SUCCESS;
    if (p->pack)
        return p->pack(p->ctx, pl, p->len);
    memcpy(pl, p->data, p->len);
    return MPI_SUCCESS;
}

static btl_ofi_sbuf_t *sbuf_take(btl_ofi_module_t *m, size_t frame)
{
    btl_ofi_spool_t *p = frame <= m->small.size ? &m->small : &m->large;
    if (!p->free)
        btl_ofi_progress(&m->super);
    btl_ofi_sbuf_t *b = p->free;
    if (b)
        p->free = b->next;
    return b;
}

static void sbuf_give(btl_ofi_module_t *m, btl_ofi_sbuf_t *b)
{
    btl_ofi_spool_t *p = b->data >= m->small.mem &&
                                 (char *)b->data < (char *)m->small.mem + m->small.size * m->small.n
                             ? &m->small
                             : &m->large;
    b->next = p->free;
    p->free = b;
}

int btl_ofi_send(btl_module_t *base, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                 size_t hdr_len, const btl_payload_t *payload)
{
    btl_ofi_module_t *m = (btl_ofi_module_t *)base;
    size_t frame = btl_ofi_frame_size(hdr_len, payload->len);
    if (RAIL_UNLIKELY(hdr_len > BTL_OFI_HDR_MAX || hdr_len + payload->len > base->max_send_size))
        return MPI_ERR_INTERN;
    btl_ofi_sbuf_t *b = sbuf_take(m, frame);
    if (!b)
        return RAIL_AGAIN;
    int rc = fill_frame(b->data, m->my_rank, ep->send_seq, tag, hdr, hdr_len, payload);
    if (RAIL_UNLIKELY(rc != MPI_SUCCESS)) {
        sbuf_give(m, b);
        return rc;
    }
    void *desc = btl_ofi_mr_desc(frame <= m->small.size ? m->small.mr : m->large.mr);
    ssize_t r = fi_send(m->ep, b->data, frame, desc, ep->addr, &b->ctx.fi);
    if (r == -FI_EAGAIN) {
        btl_ofi_progress(base);
        r = fi_send(m->ep, b->data, frame, desc, ep->addr, &b->ctx.fi);
    }
    if (r != 0) {
        sbuf_give(m, b);
        if (r == -FI_EAGAIN)
            return RAIL_AGAIN;
        rail_error("btl ofi: send from host %s to rank %d on host %s failed: %s",
                   rte_info.hostname, ep->rank, rte_hostname_of(ep->rank),
                   btl_ofi_strerror((int)r));
        return MPI_ERR_OTHER;
    }
    ep->send_seq++;
    b->len = frame;
    b->rank = ep->rank;
    m->in_flight += frame;
    return MPI_SUCCESS;
}

void btl_ofi_send_done(btl_ofi_module_t *m, btl_ofi_sbuf_t *b)
{
    m->in_flight -= b->len;
    sbuf_give(m, b);
}

/* ------------------------------------------------------------ delivery */

/* Run the callback of a checked, 8-byte aligned frame. */
static void dispatch(btl_ofi_module_t *m, btl_endpoint_t *ep, const btl_ofi_whdr_t *w)
{
    const char *h = (const char *)w + BTL_OFI_WHDR_LEN;
    btl_recv_cb_t cb = btl_recv_table[w->tag];
    if (RAIL_LIKELY(cb != NULL))
        cb(&m->super, ep, h, w->hdr_len, h + btl_ofi_pad8(w->hdr_len), w->payload_len);
    ep->recv_seq++;
}

/* Keep a copy of an early frame, in order of seq. */
static void hold(btl_endpoint_t *ep, const void *frame, size_t len)
{
    btl_ofi_held_t *k = malloc(sizeof(*k) + len), **pos = &ep->held;
    if (!k) {
        rail_error("btl ofi: out of memory holding a frame of rank %d", ep->rank);
        return;
    }
    memcpy(k->frame, frame, len);
    k->len = len;
    k->seq = ((const btl_ofi_whdr_t *)frame)->seq;
    while (*pos && (int32_t)((*pos)->seq - k->seq) < 0)
        pos = &(*pos)->next;
    k->next = *pos;
    *pos = k;
}

static void deliver(btl_ofi_module_t *m, const void *frame, size_t len)
{
    const btl_ofi_whdr_t *w = frame;
    btl_endpoint_t *ep;
    if (RAIL_UNLIKELY(len < BTL_OFI_WHDR_LEN ||
                      len < btl_ofi_frame_size(w->hdr_len, w->payload_len) ||
                      w->hdr_len > BTL_OFI_HDR_MAX || w->src >= (uint32_t)m->nprocs ||
                      w->tag >= BTL_TAG_MAX || !(ep = btl_ofi_ep_of(m, (int)w->src)))) {
        rail_warn("btl ofi: dropped a malformed frame of %zu bytes", len);
        return;
    }
    if (RAIL_UNLIKELY(w->seq != ep->recv_seq || ((uintptr_t)frame & 7))) {
        hold(ep, frame, len);    /* early, or placed unaligned by the provider */
    } else {
        dispatch(m, ep, w);
    }
    while (ep->held && ep->held->seq == ep->recv_seq) {
        btl_ofi_held_t *k = ep->held;
        ep->held = k->next;
        dispatch(m, ep, (const btl_ofi_whdr_t *)k->frame);
        free(k);
    }
}

void btl_ofi_recv_done(btl_ofi_module_t *m, btl_ofi_rbuf_t *b, const struct fi_cq_data_entry *e)
{
    if (e->len > 0)
        deliver(m, m->multi_recv ? e->buf : b->data, e->len);
    if (!m->multi_recv || (e->flags & FI_MULTI_RECV))
        post_recv(m, b);
}
