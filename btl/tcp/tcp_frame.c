/*
 * btl tcp: frames on an established connection.
 *
 * Sending.  send() builds the 8-byte frame header and the padded
 * active-message header on the stack and hands header, payload and padding
 * to one sendmsg.  What the socket does not take is copied to the
 * connection's queue (small frames are appended to the last queue fragment,
 * so a burst of small messages leaves in few writes), and EPOLLOUT brings
 * us back to write it.  While bytes are queued, new frames go behind them
 * as long as the queue stays under btl_tcp_queue_limit; beyond it, and for
 * a frame larger than the limit when the socket is full, send returns
 * RAIL_AGAIN without copying anything (the pml retries after progress, and
 * EPOLLOUT wakes a sleeping process when the socket drains).  A payload
 * produced by a pack callback is packed straight into a queue fragment and
 * written from there.
 *
 * Receiving.  Reads go into the connection's buffer (btl_tcp_recv_buf_size)
 * and every complete frame is delivered in place: the callback sees the
 * header and payload where they were read (8-byte aligned).  A frame whose
 * payload is large and not complete yet moves to a buffer of its own size,
 * into which the rest is read directly; the read after it is kept small, so
 * that the next large payload is again copied at most a few kilobytes.
 */
#include "btl/tcp/tcp.h"
#include "base/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#define FRAME_MAX_IOV 64
#define COALESCE_MAX 4096          /* frames up to this size share queue fragments */
#define POOL_MAX 16
#define SMALL_READ 4096

static const uint64_t zeros[1];

/* ------------------------------------------------------------ queue */

static btl_tcp_qfrag_t *qfrag_get(btl_tcp_module_t *m, size_t need)
{
    btl_tcp_qfrag_t *f;
    if (need <= m->pool_size && m->pool) {
        f = m->pool;
        m->pool = f->next;
        m->n_pool--;
    } else {
        size_t cap = btl_tcp_pad8(RAIL_MAX(need, m->pool_size));
        f = malloc(sizeof(*f) + cap);
        if (!f)
            return NULL;
        f->cap = cap;
    }
    f->next = NULL;
    f->len = f->off = 0;
    return f;
}

static void qfrag_put(btl_tcp_module_t *m, btl_tcp_qfrag_t *f)
{
    if (f->cap == m->pool_size && m->n_pool < POOL_MAX) {
        f->next = m->pool;
        m->pool = f;
        m->n_pool++;
    } else {
        free(f);
    }
}

static void *buf_get(btl_tcp_bufpool_t *p, size_t need, size_t *cap)
{
    if (need <= p->size && p->n > 0) {
        *cap = p->size;
        return p->bufs[--p->n];
    }
    *cap = RAIL_MAX(need, p->size);
    return malloc(*cap);
}

static void buf_put(btl_tcp_bufpool_t *p, void *buf, size_t cap)
{
    if (buf && cap == p->size && p->n < BTL_TCP_POOL_BUFS)
        p->bufs[p->n++] = buf;
    else
        free(buf);
}

void btl_tcp_recv_bufs_release(btl_tcp_conn_t *c)
{
    btl_tcp_module_t *m = &btl_tcp_module;
    buf_put(&m->rbufs, c->rbuf, m->rbufs.size);
    buf_put(&m->bigs, c->big, c->big_cap);
    c->rbuf = NULL;
    c->big = NULL;
    c->big_cap = 0;
    c->rhead = c->rtail = 0;
    c->in_big = false;
}

void btl_tcp_pool_free(btl_tcp_module_t *m)
{
    while (m->pool) {
        btl_tcp_qfrag_t *f = m->pool;
        m->pool = f->next;
        free(f);
    }
    m->n_pool = 0;
    while (m->rbufs.n > 0)
        free(m->rbufs.bufs[--m->rbufs.n]);
    while (m->bigs.n > 0)
        free(m->bigs.bufs[--m->bigs.n]);
}

void btl_tcp_queue_free(btl_tcp_conn_t *c)
{
    while (c->qhead) {
        btl_tcp_qfrag_t *f = c->qhead;
        c->qhead = f->next;
        qfrag_put(&btl_tcp_module, f);
    }
    c->qtail = NULL;
    c->queued = 0;
}

static void queue_append(btl_tcp_conn_t *c, btl_tcp_qfrag_t *f)
{
    if (c->qtail)
        c->qtail->next = f;
    else
        c->qhead = f;
    c->qtail = f;
    c->queued += f->len - f->off;
}

/* len bytes at the end of the queue (appended to the last fragment when
 * small and there is room), or NULL when out of memory. */
static uint8_t *queue_reserve(btl_tcp_conn_t *c, size_t len)
{
    btl_tcp_qfrag_t *t = c->qtail;
    if (t && len <= COALESCE_MAX && t->cap - t->len >= len) {
        uint8_t *p = (uint8_t *)t->data + t->len;
        t->len += len;
        c->queued += len;
        return p;
    }
    btl_tcp_qfrag_t *f = qfrag_get(&btl_tcp_module, len);
    if (!f)
        return NULL;
    f->len = len;
    queue_append(c, f);
    return (uint8_t *)f->data;
}

/* ------------------------------------------------------------ writing */

/* sendmsg without SIGPIPE; bytes written, 0 when the socket is full, -1 on error. */
static ssize_t write_iov(btl_tcp_conn_t *c, struct iovec *iov, int n)
{
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
    for (;;) {
        ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w >= 0)
            return w;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        return -1;
    }
}

/* Drop n written bytes from the head of the queue. */
static void queue_consume(btl_tcp_conn_t *c, size_t n)
{
    c->queued -= n;
    while (n) {
        btl_tcp_qfrag_t *f = c->qhead;
        size_t k = RAIL_MIN(n, f->len - f->off);
        f->off += k;
        n -= k;
        if (f->off < f->len)
            break;
        c->qhead = f->next;
        if (!c->qhead)
            c->qtail = NULL;
        qfrag_put(&btl_tcp_module, f);
    }
}

int btl_tcp_flush(btl_tcp_conn_t *c)
{
    while (c->qhead) {
        struct iovec iov[FRAME_MAX_IOV];
        int n = 0;
        size_t total = 0;
        for (btl_tcp_qfrag_t *f = c->qhead; f && n < FRAME_MAX_IOV; f = f->next, n++) {
            iov[n].iov_base = (uint8_t *)f->data + f->off;
            iov[n].iov_len = f->len - f->off;
            total += iov[n].iov_len;
        }
        ssize_t w = write_iov(c, iov, n);
        if (w < 0) {
            btl_tcp_conn_error(c, strerror(errno));
            return MPI_ERR_OTHER;
        }
        queue_consume(c, (size_t)w);
        if ((size_t)w < total) {
            c->full = true;
            break;
        }
    }
    btl_tcp_conn_update_events(c);
    return MPI_SUCCESS;
}

int btl_tcp_conn_write(btl_tcp_conn_t *c, const void *data, size_t len)
{
    uint8_t *p = queue_reserve(c, len);
    if (!p) {
        btl_tcp_conn_error(c, "out of memory");
        return MPI_ERR_NO_MEM;
    }
    memcpy(p, data, len);
    return btl_tcp_flush(c);
}

/* Copy the bytes of iov after the first skip into the queue. */
static int queue_rest(btl_tcp_conn_t *c, const struct iovec *iov, int n, size_t skip, size_t total)
{
    uint8_t *p = queue_reserve(c, total - skip);
    if (!p) {
        if (skip)                  /* part of the frame is out: the stream is broken */
            btl_tcp_conn_error(c, "out of memory");
        return MPI_ERR_NO_MEM;
    }
    btl_tcp_module.st_copied += total - skip;
    for (int i = 0; i < n; i++) {
        size_t len = iov[i].iov_len;
        if (skip >= len) {
            skip -= len;
            continue;
        }
        memcpy(p, (const uint8_t *)iov[i].iov_base + skip, len - skip);
        p += len - skip;
        skip = 0;
    }
    btl_tcp_conn_update_events(c);
    return MPI_SUCCESS;
}

/* Pack the payload into a fragment of its own, queue it and write. */
static int send_packed(btl_tcp_conn_t *c, const struct iovec *head, const btl_payload_t *pl,
                       size_t frame)
{
    btl_tcp_qfrag_t *f = qfrag_get(&btl_tcp_module, frame);
    if (!f)
        return MPI_ERR_NO_MEM;
    uint8_t *p = (uint8_t *)f->data;
    memcpy(p, head->iov_base, head->iov_len);
    int rc = pl->pack(pl->ctx, p + head->iov_len, pl->len);
    if (rc != MPI_SUCCESS) {
        qfrag_put(&btl_tcp_module, f);
        if (c->ep->failover)
            c->ep->tx_seq--;
        return rc;
    }
    memset(p + head->iov_len + pl->len, 0, frame - head->iov_len - pl->len);
    f->len = frame;
    struct iovec whole = {p, frame};
    if (c->ep->failover && btl_tcp_ft_retain(c->ep, &whole, 1, frame) != MPI_SUCCESS) {
        qfrag_put(&btl_tcp_module, f);
        c->ep->tx_seq--;
        return MPI_ERR_NO_MEM;
    }
    queue_append(c, f);
    if (c->full) {                 /* behind others, or the socket is full */
        btl_tcp_conn_update_events(c);
        return MPI_SUCCESS;
    }
    return btl_tcp_flush(c);
}

/* The socket is full and the queue too: epoll tells us when to retry. */
static int send_again(btl_tcp_conn_t *c)
{
    btl_tcp_module.st_again++;
    c->want_write = true;
    btl_tcp_conn_update_events(c);
    return RAIL_AGAIN;
}

static int send_not_connected(btl_endpoint_t *ep)
{
    switch (ep->state) {
    case BTL_TCP_EP_IDLE:
        return btl_tcp_ep_connect(ep) == MPI_SUCCESS ? RAIL_AGAIN : MPI_ERR_OTHER;
    case BTL_TCP_EP_CONNECTING:
    case BTL_TCP_EP_WAIT_PEER:
        return RAIL_AGAIN;
    default:
        return MPI_ERR_OTHER;
    }
}

/* The connection failed under a send: with failover the peer is being
 * reached over another path ("again"; a frame already kept is resent). */
static int send_lost(btl_endpoint_t *ep)
{
    return ep->failover && ep->state != BTL_TCP_EP_FAILED ? RAIL_AGAIN : MPI_ERR_OTHER;
}

int btl_tcp_send(btl_module_t *base, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                 size_t hdr_len, const btl_payload_t *payload)
{
    if (RAIL_UNLIKELY(ep->state != BTL_TCP_EP_CONNECTED))
        return send_not_connected(ep);
    btl_tcp_conn_t *c = ep->conn;
    const size_t len = payload ? payload->len : 0;
    uint64_t head[(BTL_TCP_FHDR_LEN + BTL_TCP_HDR_MAX) / 8];
    const size_t hlen = BTL_TCP_FHDR_LEN + btl_tcp_pad8(hdr_len);
    const size_t frame = hlen + btl_tcp_pad8(len);

    if (RAIL_UNLIKELY(hdr_len > BTL_TCP_HDR_MAX || hdr_len + len > base->max_send_size ||
                      tag >= BTL_TAG_MAX))
        return MPI_ERR_ARG;
    btl_tcp_fhdr_t fh = {.tag = tag, .hdr_len = (uint8_t)hdr_len, .payload_len = (uint32_t)len};
    memcpy(head, &fh, sizeof(fh));
    if (hdr_len) {
        head[hlen / 8 - 1] = 0;    /* padding of the header */
        memcpy((uint8_t *)head + BTL_TCP_FHDR_LEN, hdr, hdr_len);
    }
    struct iovec iov[3] = {{head, hlen}, {(void *)(payload ? payload->data : NULL), len},
                           {(void *)zeros, frame - hlen - len}};

    /* While the socket is known to be full (until epoll says writable),
     * no system call: queue within the limit, or say "again". */
    if (c->qhead && !c->full && btl_tcp_flush(c) != MPI_SUCCESS)
        return send_lost(ep);
    const bool queueing = c->qhead != NULL || c->full;
    if (queueing && c->queued + frame > btl_tcp_params.queue_limit)
        return send_again(c);
    if (ep->failover) {
        if (btl_tcp_ft_window_full(ep, frame))
            return RAIL_AGAIN;     /* the peer's acknowledgements come with progress */
        uint16_t seq = ep->tx_seq++;
        memcpy((uint8_t *)head + offsetof(btl_tcp_fhdr_t, reserved), &seq, sizeof(seq));
        if (!(len && !payload->data) && btl_tcp_ft_retain(ep, iov, 3, frame) != MPI_SUCCESS) {
            ep->tx_seq--;
            return MPI_ERR_NO_MEM;
        }
    }
    btl_tcp_module.st_frames++;
    btl_tcp_module.st_bytes += len;
    if (len && !payload->data) {
        int rc = send_packed(c, iov, payload, frame);   /* kept already: a loss is no error */
        return rc == MPI_ERR_OTHER && send_lost(ep) == RAIL_AGAIN ? MPI_SUCCESS : rc;
    }
    if (queueing)
        return queue_rest(c, iov, 3, 0, frame);
    ssize_t w = write_iov(c, iov, 3);
    if (RAIL_LIKELY((size_t)w == frame))
        return MPI_SUCCESS;
    if (w < 0) {
        btl_tcp_conn_error(c, strerror(errno));
        return send_lost(ep) == RAIL_AGAIN ? MPI_SUCCESS : MPI_ERR_OTHER;   /* kept: resent */
    }
    c->full = true;
    if (w == 0 && frame > btl_tcp_params.queue_limit) {
        btl_tcp_module.st_frames--;
        btl_tcp_module.st_bytes -= len;
        if (ep->failover)
            btl_tcp_ft_unretain(ep);
        return send_again(c);
    }
    return queue_rest(c, iov, 3, (size_t)w, frame);
}

/* ------------------------------------------------------------ receiving */

static void deliver(btl_tcp_conn_t *c, const btl_tcp_fhdr_t *fh, const uint8_t *hdr,
                    const uint8_t *payload)
{
    if (RAIL_UNLIKELY(fh->tag >= BTL_TCP_TAG_ACK)) {
        if (fh->tag == BTL_TCP_TAG_BYE)
            c->bye = true;
        else
            btl_tcp_ft_acked(c->ep, fh->reserved);
        return;
    }
    if (c->ep->failover && !btl_tcp_ft_in_order(c, fh))
        return;                    /* delivered before a failover */
    btl_recv_cb_t cb = btl_recv_table[fh->tag];
    if (RAIL_LIKELY(cb != NULL))
        cb(&btl_tcp_module.super, c->ep, hdr, fh->hdr_len, payload, fh->payload_len);
    else
        rail_warn_once("btl_tcp_no_cb", "btl tcp: message with unregistered tag %d from rank %d "
                       "dropped", fh->tag, c->ep->rank);
}

static bool frame_ok(const btl_tcp_conn_t *c, const btl_tcp_fhdr_t *fh)
{
    return (fh->tag < BTL_TAG_MAX || fh->tag == BTL_TCP_TAG_BYE ||
            (fh->tag == BTL_TCP_TAG_ACK && c->ep->failover)) &&
           fh->hdr_len <= BTL_TCP_HDR_MAX && (fh->reserved == 0 || c->ep->failover) &&
           btl_tcp_frame_size(fh->hdr_len, fh->payload_len) <= c->ep->max_frame;
}

static void protocol_error(btl_tcp_conn_t *c, const btl_tcp_fhdr_t *fh)
{
    char why[128];
    snprintf(why, sizeof(why), "protocol error (frame with tag %u, header %u, payload %u bytes)",
             fh->tag, fh->hdr_len, fh->payload_len);
    btl_tcp_conn_error(c, why);
}

/* Move the unparsed bytes to the start of the buffer. */
static void compact(btl_tcp_conn_t *c)
{
    size_t n = c->rtail - c->rhead;
    if (c->rhead == 0)
        return;
    memmove(c->rbuf, c->rbuf + c->rhead, n);
    c->rhead = 0;
    c->rtail = n;
}

/* The payload of the frame at rhead goes to a buffer of its own. */
static int start_big(btl_tcp_conn_t *c, const btl_tcp_fhdr_t *fh, size_t hlen)
{
    size_t want = btl_tcp_pad8(fh->payload_len), have = c->rtail - c->rhead - hlen;
    if (c->big_cap < want) {
        buf_put(&btl_tcp_module.bigs, c->big, c->big_cap);
        c->big = buf_get(&btl_tcp_module.bigs, want, &c->big_cap);
        if (!c->big) {
            c->big_cap = 0;
            btl_tcp_conn_error(c, "out of memory");
            return MPI_ERR_NO_MEM;
        }
    }
    memcpy(c->big_hdr, c->rbuf + c->rhead, hlen);
    memcpy(c->big, c->rbuf + c->rhead + hlen, have);
    c->big_have = have;
    c->big_want = want;
    c->rhead = c->rtail = 0;
    c->in_big = true;
    return MPI_SUCCESS;
}

/* Deliver the complete frames in the buffer; the number delivered. */
static int parse(btl_tcp_conn_t *c)
{
    const size_t rsize = btl_tcp_params.recv_buf_size;
    int frames = 0;
    while (c->state == BTL_TCP_ESTABLISHED && c->rtail - c->rhead >= BTL_TCP_FHDR_LEN) {
        const size_t avail = c->rtail - c->rhead;
        const btl_tcp_fhdr_t *fh = (const btl_tcp_fhdr_t *)(c->rbuf + c->rhead);
        if (RAIL_UNLIKELY(!frame_ok(c, fh))) {
            protocol_error(c, fh);
            break;
        }
        const size_t hlen = BTL_TCP_FHDR_LEN + btl_tcp_pad8(fh->hdr_len);
        const size_t frame = hlen + btl_tcp_pad8(fh->payload_len);
        if (avail >= frame) {
            c->rhead += frame;
            deliver(c, fh, (const uint8_t *)fh + BTL_TCP_FHDR_LEN, (const uint8_t *)fh + hlen);
            frames++;
            continue;
        }
        if (avail >= hlen && (frame > rsize || fh->payload_len >= rsize / 4))
            start_big(c, fh, hlen);
        else if (c->rhead + frame > rsize)
            compact(c);
        break;
    }
    if (c->rhead == c->rtail)
        c->rhead = c->rtail = 0;
    return frames;
}

/* recv() into buf; > 0 bytes read, 0 when nothing is there, -1 after
 * failing the connection. */
static ssize_t recv_some(btl_tcp_conn_t *c, void *buf, size_t len)
{
    for (;;) {
        ssize_t n = recv(c->fd, buf, len, 0);
        if (n > 0)
            return n;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        btl_tcp_conn_error(c, n == 0 ? (c->bye ? NULL : "the peer closed the connection")
                                     : strerror(errno));
        return -1;
    }
}

/* One read of the large payload; 1 when the socket may have more. */
static int read_big(btl_tcp_conn_t *c, int *frames)
{
    size_t want = c->big_want - c->big_have;
    ssize_t n = recv_some(c, c->big + c->big_have, want);
    if (n <= 0)
        return 0;
    c->big_have += (size_t)n;
    if (c->big_have == c->big_want) {
        const btl_tcp_fhdr_t *fh = (const btl_tcp_fhdr_t *)c->big_hdr;
        c->in_big = false;
        c->small_read = true;
        deliver(c, fh, (const uint8_t *)c->big_hdr + BTL_TCP_FHDR_LEN, c->big);
        (*frames)++;
    }
    return (size_t)n == want;
}

/* One read into the buffer, then delivery; 1 when the socket may have more. */
static int read_buf(btl_tcp_conn_t *c, int *frames)
{
    const size_t rsize = btl_tcp_params.recv_buf_size;
    if (RAIL_UNLIKELY(!c->rbuf)) {
        size_t cap;
        c->rbuf = buf_get(&btl_tcp_module.rbufs, rsize, &cap);
        if (!c->rbuf) {
            btl_tcp_conn_error(c, "out of memory");
            return 0;
        }
    }
    if (c->rtail == rsize)
        compact(c);
    size_t want = rsize - c->rtail;
    if (c->small_read) {
        want = RAIL_MIN(want, (size_t)SMALL_READ);
        c->small_read = false;
    }
    ssize_t n = recv_some(c, c->rbuf + c->rtail, want);
    if (n <= 0)
        return 0;
    c->rtail += (size_t)n;
    *frames += parse(c);
    return (size_t)n == want;
}

int btl_tcp_recv(btl_tcp_conn_t *c)
{
    int frames = 0;
    for (int i = 0; i < 16 && c->state == BTL_TCP_ESTABLISHED; i++)
        if (!(c->in_big ? read_big(c, &frames) : read_buf(c, &frames)))
            break;
    /* Nothing half-received: the buffers go back to the pools (an idle
     * connection holds no receive memory). */
    if (c->state == BTL_TCP_ESTABLISHED && !c->in_big && c->rhead == c->rtail)
        btl_tcp_recv_bufs_release(c);
    if (frames && c->ep->failover)
        btl_tcp_ft_send_ack(c);
    return frames;
}
