/*
 * btl self: messages a process sends to itself.
 *
 * send() copies header and payload into a queued fragment; progress()
 * delivers the queued fragments in order (never from inside send, so the
 * pml's receive callbacks are never re-entered).  get/put are copies within
 * the process (accel_copy when a device component is active, so device
 * buffers work and single-copy rendezvous to oneself costs one copy).
 * Callers serialize calls (the pml's critical section).
 */
#include "base/rail.h"
#include "base/log.h"
#include "base/param.h"
#include "btl/btl.h"
#include "accel/accel.h"
#include "runtime/rte.h"

#include <stdlib.h>
#include <string.h>

typedef struct self_frag {
    struct self_frag *next;
    uint8_t tag;
    uint8_t hdr_len;
    size_t len;
    size_t cap;                  /* bytes of data[]; pooled when == pool size */
    uint64_t hdr[8];             /* 64 bytes, aligned */
    uint8_t data[];
} self_frag_t;

static size_t self_eager_limit = 8192;
static size_t self_max_send = 128 * 1024;
static self_frag_t *queue_head, **queue_tail = &queue_head;
static self_frag_t *pool;        /* free fragments of capacity self_eager_limit */
static int self_me = -1;
int btl_self_queued;             /* fragments waiting in the queue (lazy progress) */
static char self_ep_dummy;

extern int accel_any_device_active;

static void self_copy(void *dst, const void *src, size_t len)
{
    if (RAIL_UNLIKELY(accel_any_device_active))
        accel_copy(dst, src, len, NULL);
    else
        memcpy(dst, src, len);
}

static self_frag_t *frag_get(size_t len)
{
    self_frag_t *f;
    if (len <= self_eager_limit && pool) {
        f = pool;
        pool = f->next;
        return f;
    }
    size_t cap = RAIL_MAX(len, self_eager_limit);
    f = malloc(sizeof(*f) + cap);
    if (f)
        f->cap = cap;
    return f;
}

static void frag_put(self_frag_t *f)
{
    if (f->cap == self_eager_limit) {
        f->next = pool;
        pool = f;
    } else {
        free(f);
    }
}

static int self_add_procs(btl_module_t *m, int n, const btl_proc_t *procs, btl_endpoint_t **eps)
{
    for (int i = 0; i < n; i++)
        eps[i] = procs[i].rank == self_me ? (btl_endpoint_t *)&self_ep_dummy : NULL;
    return MPI_SUCCESS;
}

static int self_del_procs(btl_module_t *m, int n, const btl_proc_t *procs, btl_endpoint_t **eps)
{
    return MPI_SUCCESS;
}

static int self_send(btl_module_t *m, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                     size_t hdr_len, const btl_payload_t *payload)
{
    size_t len = payload ? payload->len : 0;
    self_frag_t *f = frag_get(len);
    if (!f)
        return MPI_ERR_NO_MEM;
    f->tag = tag;
    f->hdr_len = (uint8_t)hdr_len;
    f->len = len;
    memcpy(f->hdr, hdr, hdr_len);
    if (len) {
        if (payload->data) {
            self_copy(f->data, payload->data, len);
        } else {
            int rc = payload->pack(payload->ctx, f->data, len);
            if (rc != MPI_SUCCESS) {
                frag_put(f);
                return rc;
            }
        }
    }
    f->next = NULL;
    *queue_tail = f;
    queue_tail = &f->next;
    btl_self_queued++;
    return MPI_SUCCESS;
}

static int self_progress(btl_module_t *m)
{
    if (RAIL_LIKELY(queue_head == NULL))
        return 0;
    /* Deliver what is queued now; what the callbacks send waits for the
     * next call. */
    self_frag_t *f = queue_head;
    queue_head = NULL;
    queue_tail = &queue_head;
    btl_self_queued = 0;
    int n = 0;
    while (f) {
        self_frag_t *next = f->next;
        btl_recv_cb_t cb = btl_recv_table[f->tag];
        if (cb)
            cb(m, (btl_endpoint_t *)&self_ep_dummy, f->hdr, f->hdr_len, f->data, f->len);
        else
            rail_warn("btl self: message with unregistered tag %d dropped", f->tag);
        frag_put(f);
        f = next;
        n++;
    }
    return n;
}

/* Copy between two iovec lists covering the same number of bytes. */
static void iov_copy(const struct iovec *dst, int n_dst, const struct iovec *src, int n_src)
{
    int i = 0, j = 0;
    size_t di = 0, sj = 0;
    while (i < n_dst && j < n_src) {
        size_t len = RAIL_MIN(dst[i].iov_len - di, src[j].iov_len - sj);
        if (len)
            self_copy((char *)dst[i].iov_base + di, (const char *)src[j].iov_base + sj, len);
        di += len;
        sj += len;
        if (di == dst[i].iov_len) {
            i++;
            di = 0;
        }
        if (sj == src[j].iov_len) {
            j++;
            sj = 0;
        }
    }
}

static int self_get(btl_module_t *m, btl_endpoint_t *ep, const struct iovec *local, int n_local,
                    const btl_reg_t *reg, const struct iovec *remote, int n_remote,
                    unsigned flags, btl_done_cb_t done, void *cbdata)
{
    iov_copy(local, n_local, remote, n_remote);
    done(cbdata, MPI_SUCCESS);
    return MPI_SUCCESS;
}

static int self_put(btl_module_t *m, btl_endpoint_t *ep, const struct iovec *local, int n_local,
                    const btl_reg_t *reg, const struct iovec *remote, int n_remote,
                    btl_done_cb_t done, void *cbdata)
{
    iov_copy(remote, n_remote, local, n_local);
    done(cbdata, MPI_SUCCESS);
    return MPI_SUCCESS;
}

static int self_finalize(btl_module_t *m)
{
    while (queue_head) {
        self_frag_t *f = queue_head;
        queue_head = f->next;
        frag_put(f);
    }
    queue_tail = &queue_head;
    btl_self_queued = 0;
    while (pool) {
        self_frag_t *f = pool;
        pool = f->next;
        free(f);
    }
    return MPI_SUCCESS;
}

static btl_module_t self_module = {
    .name = "self",
    .priority = 100,
    .flags = BTL_FLAG_SEND | BTL_FLAG_GET | BTL_FLAG_PUT | BTL_FLAG_IOV | BTL_FLAG_DEVICE_MEM,
    .add_procs = self_add_procs,
    .del_procs = self_del_procs,
    .send = self_send,
    .get = self_get,
    .put = self_put,
    .progress = self_progress,
    .wait_fd = -1,
    .finalize = self_finalize,
};

static int self_register_params(void)
{
    rail_param_register_size("btl_self_eager_limit", 8192,
                             "Largest message the pml sends to its own process eagerly (larger "
                             "ones take one copy via get)",
                             RAIL_PARAM_LEVEL_TUNER, &self_eager_limit);
    rail_param_register_size("btl_self_max_send_size", 128 * 1024,
                             "Largest header + payload of one send to the own process",
                             RAIL_PARAM_LEVEL_DEV, &self_max_send);
    return MPI_SUCCESS;
}

static int self_init(btl_module_t **mods, int *n)
{
    self_register_params();
    if (self_eager_limit < 64)
        self_eager_limit = 64;
    if (self_max_send < self_eager_limit + 64)
        self_max_send = self_eager_limit + 64;
    self_me = rte_info.rank;
    self_module.eager_limit = self_eager_limit;
    self_module.max_send_size = self_max_send;
    self_module.get_limit = 0;
    if (*n < 1) {
        *n = 0;
        return MPI_SUCCESS;
    }
    mods[0] = &self_module;
    *n = 1;
    return MPI_SUCCESS;
}

const btl_component_t btl_self_component = {
    .name = "self",
    .priority = 100,
    .register_params = self_register_params,
    .init = self_init,
};
