/*
 * btl ofi: memory registration and one-sided transfers.
 *
 * Registration honours the mode bits of the provider (or all of them with
 * btl_ofi_mr_strict): FI_MR_PROV_KEY, the key is the provider's (else a
 * counter of this process); FI_MR_ENDPOINT, the region is bound to the
 * endpoint and enabled; FI_MR_LOCAL, local buffers of sends, receives and
 * get/put carry the registration's descriptor; FI_MR_VIRT_ADDR, a peer
 * addresses the region by virtual address (else by offset from its start);
 * FI_MR_ALLOCATED, only memory the process has (the pml registers its
 * buffers' own ranges); FI_MR_HMEM, device memory would have to be
 * registered: btl ofi never touches device memory (no BTL_FLAG_DEVICE_MEM).
 */
#include "btl/ofi/ofi.h"
#include "base/log.h"
#include "base/rcache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A registration: the cache's record first. */
struct btl_ofi_mr {
    rail_rcache_reg_t super;
    struct fid_mr *mr;
    void *desc;
    uint64_t key;
};

/* Register [r->super.base, + len) with the domain (the cache's mem_reg). */
static int mr_register(void *ctx, rail_rcache_reg_t *reg)
{
    btl_ofi_module_t *m = ctx;
    btl_ofi_mr_t *r = (btl_ofi_mr_t *)reg;
    uint64_t access = FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
    /* a key of our own, unique in the domain; a FI_MR_PROV_KEY provider
     * ignores it and fi_mr_key() gives its own */
    uint64_t key = m->next_key++;
    r->mr = NULL;
    int rc = fi_mr_reg(m->domain, (void *)reg->base, reg->len, access, 0, key, 0, &r->mr, NULL);
    if (rc == 0 && (m->mr_mode & FI_MR_ENDPOINT)) {
        rc = fi_mr_bind(r->mr, &m->ep->fid, 0);
        /* strict mode on a provider that does not bind: the bits it
         * asks for are the ones that must work */
        if (rc == -FI_ENOSYS && !(m->info->domain_attr->mr_mode & FI_MR_ENDPOINT))
            rc = 0;
        else if (rc == 0)
            rc = fi_mr_enable(r->mr);
    }
    if (rc != 0) {
        if (r->mr)
            fi_close(&r->mr->fid);
        r->mr = NULL;
        rail_warn("btl ofi: registering %zu bytes at %p failed: %s%s", reg->len,
                  (void *)reg->base, btl_ofi_strerror(rc),
                  rc == -FI_ENOMEM ? " (locked-memory limit? see ulimit -l)" : "");
        return MPI_ERR_NO_MEM;
    }
    r->desc = fi_mr_desc(r->mr);
    r->key = fi_mr_key(r->mr);
    return MPI_SUCCESS;
}

static int mr_deregister(void *ctx, rail_rcache_reg_t *reg)
{
    btl_ofi_mr_t *r = (btl_ofi_mr_t *)reg;
    if (r->mr)
        fi_close(&r->mr->fid);
    r->mr = NULL;
    return MPI_SUCCESS;
}

static const rail_rcache_ops_t mr_ops = {
    .reg_size = sizeof(btl_ofi_mr_t),
    .mem_reg = mr_register,
    .mem_dereg = mr_deregister,
};

int btl_ofi_mr_init(btl_ofi_module_t *m)
{
    m->rcache = rail_rcache_create("btl_ofi", &mr_ops, m);
    if (!m->rcache)
        snprintf(m->why, sizeof(m->why), "no registration cache (out of memory)");
    return m->rcache ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

void btl_ofi_mr_fini(btl_ofi_module_t *m)
{
    if (m->rcache)
        rail_rcache_destroy(m->rcache);
    m->rcache = NULL;
}

int btl_ofi_mr_get(btl_ofi_module_t *m, const void *base, size_t len, btl_ofi_mr_t **out)
{
    rail_rcache_reg_t *reg;
    int rc = rail_rcache_get(m->rcache, base, RAIL_MAX(len, (size_t)1), &reg);
    if (rc == MPI_SUCCESS)
        *out = (btl_ofi_mr_t *)reg;
    return rc;
}

void btl_ofi_mr_put(btl_ofi_module_t *m, btl_ofi_mr_t *r)
{
    rail_rcache_put(m->rcache, &r->super);
}

void *btl_ofi_mr_desc(btl_ofi_mr_t *r)
{
    return r ? r->desc : NULL;
}

int btl_ofi_register_mem(btl_module_t *base, void *addr, size_t len, btl_reg_t *reg)
{
    btl_ofi_module_t *m = (btl_ofi_module_t *)base;
    btl_ofi_mr_t *r;
    int rc = btl_ofi_mr_get(m, addr, len, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    btl_ofi_regwire_t w = {r->super.base, r->key, (uint64_t)(uintptr_t)r};
    memset(reg, 0, sizeof(*reg));
    memcpy(reg->bytes, &w, sizeof(w));
    reg->len = sizeof(w);
    return MPI_SUCCESS;
}

int btl_ofi_deregister_mem(btl_module_t *base, btl_reg_t *reg)
{
    btl_ofi_regwire_t w;
    if (reg->len != sizeof(w))
        return MPI_ERR_ARG;
    memcpy(&w, reg->bytes, sizeof(w));
    btl_ofi_mr_put((btl_ofi_module_t *)base, (btl_ofi_mr_t *)(uintptr_t)w.handle);
    reg->len = 0;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ get, put */

static void rma_finish(btl_ofi_module_t *m, btl_ofi_rma_t *q);

static btl_ofi_rma_t *rma_new(btl_ofi_module_t *m)
{
    btl_ofi_rma_t *q = m->free_rma;
    if (q)
        m->free_rma = q->next;
    else if (!(q = malloc(sizeof(*q))))
        return NULL;
    memset(q, 0, sizeof(*q));
    q->ctx.kind = BTL_OFI_OP_RMA;
    return q;
}

static btl_ofi_rma_op_t *op_new(btl_ofi_module_t *m, btl_ofi_rma_t *q)
{
    btl_ofi_rma_op_t *op = m->free_ops;
    if (op)
        m->free_ops = op->next;
    else if (!(op = malloc(sizeof(*op))))
        return NULL;
    memset(op, 0, sizeof(*op));
    op->ctx.kind = BTL_OFI_OP_RMA;
    op->req = q;
    return op;
}

/* The request's last operation completed and no more will be posted. */
static void rma_finish(btl_ofi_module_t *m, btl_ofi_rma_t *q)
{
    if (q->local)
        btl_ofi_mr_put(m, q->local);
    btl_done_cb_t done = q->done;
    void *cbdata = q->cbdata;
    int status = q->status;
    q->next = m->free_rma;
    m->free_rma = q;
    if (done)
        done(cbdata, status);
}

void btl_ofi_rma_done(btl_ofi_module_t *m, btl_ofi_rma_op_t *op, int status)
{
    btl_ofi_rma_t *q = op->req;
    op->next = m->free_ops;
    m->free_ops = op;
    if (status != MPI_SUCCESS && q->status == MPI_SUCCESS)
        q->status = status;
    if (--q->ops == 0 && !q->issuing && !q->left)
        rma_finish(m, q);
}

void btl_ofi_rma_fini(btl_ofi_module_t *m)
{
    while (m->free_rma) {
        btl_ofi_rma_t *q = m->free_rma;
        m->free_rma = q->next;
        free(q);
    }
    while (m->free_ops) {
        btl_ofi_rma_op_t *op = m->free_ops;
        m->free_ops = op->next;
        free(op);
    }
}

/* A cursor over an iovec list. */
typedef struct iov_cur {
    const struct iovec *iov;
    int n, i;
    size_t off;
} iov_cur_t;

/* Take up to max pieces and at most bytes bytes from c into out; the bytes. */
static size_t cur_take(iov_cur_t *c, struct iovec *out, int max, size_t bytes, int *n)
{
    size_t sum = 0;
    *n = 0;
    while (*n < max && sum < bytes && c->i < c->n) {
        size_t take = RAIL_MIN(c->iov[c->i].iov_len - c->off, bytes - sum);
        out[*n].iov_base = (char *)c->iov[c->i].iov_base + c->off;
        out[(*n)++].iov_len = take;
        sum += take;
        c->off += take;
        if (c->off == c->iov[c->i].iov_len) {
            c->i++;
            c->off = 0;
        }
    }
    return sum;
}

static void cur_skip_empty(iov_cur_t *c)
{
    while (c->i < c->n && c->iov[c->i].iov_len == c->off) {
        c->i++;
        c->off = 0;
    }
}

/* Bytes the next operation moves: as many pieces as the provider takes on
 * each side, the same bytes on both. */
static size_t next_chunk(btl_ofi_module_t *m, iov_cur_t lc, iov_cur_t rc)
{
    struct iovec tmp[BTL_OFI_IOV_MAX];
    int n;
    size_t l = cur_take(&lc, tmp, (int)m->iov_limit, m->max_msg, &n);
    return cur_take(&rc, tmp, (int)m->rma_iov_limit, l, &n);
}

/* Post one fi_readmsg / fi_writemsg of the next chunk. */
static int post_op(btl_ofi_module_t *m, btl_ofi_rma_t *q, btl_endpoint_t *ep, bool write,
                   const btl_ofi_regwire_t *w, iov_cur_t *lc, iov_cur_t *rc)
{
    struct iovec liov[BTL_OFI_IOV_MAX], riov[BTL_OFI_IOV_MAX];
    struct fi_rma_iov rma[BTL_OFI_IOV_MAX];
    void *desc[BTL_OFI_IOV_MAX];
    int nl, nr;
    size_t bytes = next_chunk(m, *lc, *rc);
    iov_cur_t lsave = *lc, rsave = *rc;
    cur_take(lc, liov, (int)m->iov_limit, bytes, &nl);
    cur_take(rc, riov, (int)m->rma_iov_limit, bytes, &nr);
    for (int i = 0; i < nl; i++)
        desc[i] = btl_ofi_mr_desc(q->local);
    for (int i = 0; i < nr; i++) {
        uint64_t a = (uint64_t)(uintptr_t)riov[i].iov_base;
        rma[i] = (struct fi_rma_iov){(m->mr_mode & FI_MR_VIRT_ADDR) ? a : a - w->base,
                                     riov[i].iov_len, w->key};
    }
    btl_ofi_rma_op_t *op = op_new(m, q);
    if (!op)
        return MPI_ERR_NO_MEM;
    struct fi_msg_rma msg = {.msg_iov = liov, .desc = desc, .iov_count = (size_t)nl,
                             .addr = ep->addr, .rma_iov = rma, .rma_iov_count = (size_t)nr,
                             .context = &op->ctx.fi};
    ssize_t r;
    for (int tries = 0; tries < 2; tries++) {
        r = write ? fi_writemsg(m->ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE)
                  : fi_readmsg(m->ep, &msg, FI_COMPLETION);
        if (r != -FI_EAGAIN)
            break;
        btl_ofi_progress(&m->super);
    }
    if (r != 0) {
        if (r != -FI_EAGAIN)
            RAIL_VERBOSE(btl_verbose, 1, "btl ofi: %s of %zu bytes (%d + %d pieces) from rank %d "
                         "failed: %s", write ? "put" : "get", bytes, nl, nr, ep->rank,
                         btl_ofi_strerror((int)r));
        op->next = m->free_ops;
        m->free_ops = op;
        *lc = lsave;
        *rc = rsave;
        return r == -FI_EAGAIN ? RAIL_AGAIN : MPI_ERR_OTHER;
    }
    q->ops++;
    return MPI_SUCCESS;
}

/* Local registration for providers (or strict mode) that want one. */
static int local_reg(btl_ofi_module_t *m, btl_ofi_rma_t *q, const struct iovec *l, int n)
{
    if (!(m->mr_mode & FI_MR_LOCAL))
        return MPI_SUCCESS;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < n; i++) {
        lo = RAIL_MIN(lo, (uintptr_t)l[i].iov_base);
        hi = RAIL_MAX(hi, (uintptr_t)l[i].iov_base + l[i].iov_len);
    }
    return hi > lo ? btl_ofi_mr_get(m, (void *)lo, hi - lo, &q->local) : MPI_SUCCESS;
}

/* Post operations from the cursors until done or the provider is full. */
static int post_all(btl_ofi_module_t *m, btl_ofi_rma_t *q, iov_cur_t *lc, iov_cur_t *rc)
{
    int r = MPI_SUCCESS;
    q->issuing = true;
    for (cur_skip_empty(lc); r == MPI_SUCCESS && lc->i < lc->n; cur_skip_empty(lc))
        r = post_op(m, q, q->ep, q->write, &q->w, lc, rc);
    q->issuing = false;
    return r;
}

/* Keep what the cursors have left for btl_ofi_rma_retry. */
static int defer(btl_ofi_module_t *m, btl_ofi_rma_t *q, const iov_cur_t *lc, const iov_cur_t *rc)
{
    int nl = lc->n - lc->i, nr = rc->n - rc->i;
    struct iovec *v = malloc((size_t)(nl + nr) * sizeof(*v));
    if (!v)
        return MPI_ERR_NO_MEM;
    memcpy(v, lc->iov + lc->i, (size_t)nl * sizeof(*v));
    memcpy(v + nl, rc->iov + rc->i, (size_t)nr * sizeof(*v));
    v[0].iov_base = (char *)v[0].iov_base + lc->off;
    v[0].iov_len -= lc->off;
    v[nl].iov_base = (char *)v[nl].iov_base + rc->off;
    v[nl].iov_len -= rc->off;
    free(q->left);
    q->left = v;
    q->n_left = nl;
    q->n_right = nr;
    q->next_deferred = m->deferred;
    m->deferred = q;
    return MPI_SUCCESS;
}

int btl_ofi_rma_retry(btl_ofi_module_t *m)
{
    btl_ofi_rma_t *list = m->deferred;
    int posted = 0;
    m->deferred = NULL;
    while (list) {
        btl_ofi_rma_t *q = list;
        list = q->next_deferred;
        iov_cur_t lc = {q->left, q->n_left, 0, 0}, rc = {q->left + q->n_left, q->n_right, 0, 0};
        int before = q->ops, r = post_all(m, q, &lc, &rc);
        posted += q->ops - before;
        if (r == RAIL_AGAIN && defer(m, q, &lc, &rc) == MPI_SUCCESS)
            continue;
        if (r != MPI_SUCCESS && q->status == MPI_SUCCESS)
            q->status = r == RAIL_AGAIN ? MPI_ERR_NO_MEM : r;
        free(q->left);
        q->left = NULL;
        if (q->ops == 0)
            rma_finish(m, q);
    }
    return posted;
}

static int rma(btl_ofi_module_t *m, btl_endpoint_t *ep, bool write, const struct iovec *local,
               int n_local, const btl_reg_t *reg, const struct iovec *remote, int n_remote,
               btl_done_cb_t done, void *cbdata)
{
    if (reg->len != sizeof(btl_ofi_regwire_t))
        return MPI_ERR_ARG;
    btl_ofi_rma_t *q = rma_new(m);
    if (!q)
        return MPI_ERR_NO_MEM;
    memcpy(&q->w, reg->bytes, sizeof(q->w));
    *q = (btl_ofi_rma_t){.ctx = q->ctx, .done = done, .cbdata = cbdata, .ep = ep,
                         .write = write, .w = q->w};
    int rc = local_reg(m, q, local, n_local);
    iov_cur_t lc = {local, n_local, 0, 0}, rc_ = {remote, n_remote, 0, 0};
    if (rc == MPI_SUCCESS)
        rc = post_all(m, q, &lc, &rc_);
    if (rc == RAIL_AGAIN && q->ops > 0)
        rc = defer(m, q, &lc, &rc_);   /* the rest goes when operations complete */
    else if (rc != MPI_SUCCESS) {
        /* the caller hears of it (RAIL_AGAIN: nothing was posted), done is
         * not called; what was posted already completes quietly */
        if (q->ops == 0) {
            q->done = NULL;
            rma_finish(m, q);
        } else {
            q->done = NULL;
        }
        return rc;
    }
    if (rc != MPI_SUCCESS)
        q->status = rc;
    if (q->ops == 0 && !q->left)
        rma_finish(m, q);
    return MPI_SUCCESS;
}

int btl_ofi_get(btl_module_t *base, btl_endpoint_t *ep, const struct iovec *local, int n_local,
                const btl_reg_t *reg, const struct iovec *remote, int n_remote, unsigned flags,
                btl_done_cb_t done, void *cbdata)
{
    return rma((btl_ofi_module_t *)base, ep, false, local, n_local, reg, remote, n_remote, done,
               cbdata);
}

int btl_ofi_put(btl_module_t *base, btl_endpoint_t *ep, const struct iovec *local, int n_local,
                const btl_reg_t *reg, const struct iovec *remote, int n_remote,
                btl_done_cb_t done, void *cbdata)
{
    return rma((btl_ofi_module_t *)base, ep, true, local, n_local, reg, remote, n_remote, done,
               cbdata);
}
