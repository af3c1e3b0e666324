/*
 * Single copy with CMA: get/put are process_vm_readv/writev on the peer's
 * pid, with iovecs on both sides (the kernel pairs them up byte by byte).
 * A registration is just (pid, cookie, base, len): nothing is pinned; the
 * cookie (random per process, also in the modex) makes a stale or foreign
 * registration fail cleanly instead of reading another process.
 */
#include "btl/sm/sm.h"
#include "base/log.h"
#include "base/param.h"
#include "runtime/rte.h"

#include <errno.h>
#include <sched.h>
#include <limits.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Pieces per system call (the kernel takes up to IOV_MAX, usually 1024). */
#define BTL_SM_IOV_BATCH 256

/* A position in an iovec list. */
typedef struct btl_sm_iov_cursor {
    const struct iovec *iov;
    int n, i;
    size_t off;                    /* bytes of iov[i] already done */
} btl_sm_iov_cursor_t;

/* Bytes in the next (at most BTL_SM_IOV_BATCH) non-empty pieces. */
static size_t btl_sm_iov_span(const btl_sm_iov_cursor_t *c)
{
    size_t bytes = 0;
    for (int i = c->i, k = 0; i < c->n && k < BTL_SM_IOV_BATCH; i++) {
        size_t left = c->iov[i].iov_len - (i == c->i ? c->off : 0);
        bytes += left;
        k += left != 0;
    }
    return bytes;
}

/* Fill out[] with the next `bytes` bytes; returns the number of pieces. */
static int btl_sm_iov_take(const btl_sm_iov_cursor_t *c, struct iovec *out, size_t bytes)
{
    int k = 0;
    size_t off = c->off;
    for (int i = c->i; i < c->n && bytes; i++, off = 0) {
        size_t len = RAIL_MIN(c->iov[i].iov_len - off, bytes);
        if (!len)
            continue;
        out[k].iov_base = (char *)c->iov[i].iov_base + off;
        out[k++].iov_len = len;
        bytes -= len;
    }
    return k;
}

static void btl_sm_iov_advance(btl_sm_iov_cursor_t *c, size_t bytes)
{
    while (c->i < c->n && bytes >= c->iov[c->i].iov_len - c->off) {
        bytes -= c->iov[c->i].iov_len - c->off;
        c->i++;
        c->off = 0;
    }
    c->off += bytes;
}

static size_t btl_sm_iov_total(const struct iovec *iov, int n)
{
    size_t t = 0;
    for (int i = 0; i < n; i++)
        t += iov[i].iov_len;
    return t;
}

static int btl_sm_cma_error(int err, pid_t pid, bool write)
{
    rail_warn_once("btl_sm_cma", "btl sm: %s of process %d failed: %s",
                   write ? "process_vm_writev" : "process_vm_readv", (int)pid, strerror(err));
    return err == EFAULT || err == EINVAL ? MPI_ERR_ARG : MPI_ERR_OTHER;
}

/* Move all bytes between local and remote, BTL_SM_IOV_BATCH pieces at a
 * time; a failure is warned about once unless quiet. */
static int btl_sm_cma_xfer(pid_t pid, const struct iovec *local, int n_local,
                           const struct iovec *remote, int n_remote, bool write, bool quiet)
{
    btl_sm_iov_cursor_t l = {local, n_local, 0, 0}, r = {remote, n_remote, 0, 0};
    struct iovec lv[BTL_SM_IOV_BATCH], rv[BTL_SM_IOV_BATCH];

    for (;;) {
        size_t bytes = RAIL_MIN(btl_sm_iov_span(&l), btl_sm_iov_span(&r));
        if (bytes == 0)
            return MPI_SUCCESS;
        bytes = RAIL_MIN(bytes, (size_t)SSIZE_MAX);
        unsigned long nl = (unsigned long)btl_sm_iov_take(&l, lv, bytes);
        unsigned long nr = (unsigned long)btl_sm_iov_take(&r, rv, bytes);
        ssize_t got = write ? process_vm_writev(pid, lv, nl, rv, nr, 0)
                            : process_vm_readv(pid, lv, nl, rv, nr, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return quiet ? MPI_ERR_OTHER : btl_sm_cma_error(got < 0 ? errno : EFAULT, pid, write);
        btl_sm_iov_advance(&l, (size_t)got);
        btl_sm_iov_advance(&r, (size_t)got);
    }
}

/* Can we read ourselves?  (Fails with ENOSYS without CMA, EPERM under a
 * seccomp filter.)  Sets errno. */
bool btl_sm_cma_probe_self(void)
{
    static volatile uint64_t src = 0x5241494c534d4341ULL;
    uint64_t dst = 0;
    struct iovec l = {&dst, sizeof(dst)}, r = {(void *)&src, sizeof(src)};
    return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)sizeof(dst) && dst == src;
}

/* Read the peer's cookie from its private memory: CMA works towards it. */
int btl_sm_cma_probe_peer(btl_endpoint_t *ep, uint64_t probe_addr)
{
    uint64_t v = 0;
    struct iovec l = {&v, sizeof(v)}, r = {(void *)(uintptr_t)probe_addr, sizeof(v)};
    ssize_t got = process_vm_readv(ep->pid, &l, 1, &r, 1, 0);
    if (got != (ssize_t)sizeof(v))
        return got < 0 ? errno : EIO;
    return v == ep->cookie ? 0 : EIO;
}

/* CMA refused towards `rank` (ourselves: not available at all): offer no
 * get/put (see sm.h).  A warning when single copy was asked for explicitly,
 * else a verbose message. */
void btl_sm_cma_disable(btl_sm_module_t *m, int rank, int err)
{
    const rail_param_t *p = rail_param_find("btl_sm_single_copy");
    const char *what = rank == rte_info.rank ? "unavailable in rank" : "refused towards rank";
    m->cma = false;
    m->super.flags &= ~(uint32_t)(BTL_FLAG_GET | BTL_FLAG_PUT | BTL_FLAG_IOV);
    if (p && p->source != RAIL_PARAM_SRC_DEFAULT)
        rail_warn("btl sm: single copy (CMA) %s %d: %s; get/put disabled, large messages "
                  "are copied in and out", what, rank, strerror(err));
    else
        RAIL_VERBOSE(btl_sm_verbosity(), 1, "btl sm: single copy (CMA) %s %d: %s; get/put "
                     "disabled", what, rank, strerror(err));
}

int btl_sm_register_mem(btl_module_t *base, void *addr, size_t len, btl_reg_t *reg)
{
    btl_sm_reg_t r = {.pid = (int32_t)getpid(), .cookie = btl_sm_module.cookie,
                      .base = (uint64_t)(uintptr_t)addr, .len = len};
    memcpy(reg->bytes, &r, sizeof(r));
    reg->len = sizeof(r);
    return MPI_SUCCESS;
}

int btl_sm_deregister_mem(btl_module_t *base, btl_reg_t *reg)
{
    return MPI_SUCCESS;
}

/* The registration belongs to ep's process and covers every remote piece. */
static int btl_sm_cma_check(const btl_sm_module_t *m, const btl_endpoint_t *ep,
                            const btl_reg_t *reg, const struct iovec *local, int n_local,
                            const struct iovec *remote, int n_remote)
{
    btl_sm_reg_t r;
    if (!m->cma)
        return MPI_ERR_INTERN;
    if (!ep || !reg || reg->len != sizeof(r) || n_local < 0 || n_remote < 0)
        return MPI_ERR_ARG;
    memcpy(&r, reg->bytes, sizeof(r));
    if (r.pid != ep->pid || r.cookie != ep->cookie)
        return MPI_ERR_ARG;
    for (int i = 0; i < n_remote; i++) {
        uint64_t a = (uint64_t)(uintptr_t)remote[i].iov_base, n = remote[i].iov_len;
        if (n && (a < r.base || a - r.base > r.len || n > r.len - (a - r.base)))
            return MPI_ERR_ARG;
    }
    if (btl_sm_iov_total(local, n_local) != btl_sm_iov_total(remote, n_remote))
        return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

/*
 * Shared get.  One process copies by CMA at 12-13 GB/s here, a quarter of
 * memcpy, whatever the chunk or page size (the kernel's per-page work, not
 * the copy, is the cost); two processes copying different halves at once
 * move twice that.  So a large contiguous get asks the peer that owns the
 * data to help: it writes chunks from the back of the buffer into ours
 * (process_vm_writev) while we read chunks from the front.  Chunks are
 * claimed in our segment's share_claim line, so a peer that is busy
 * elsewhere, or sees the request late, takes nothing and we copy it all; a
 * peer that claimed a chunk is copying it in its progress() and we wait at
 * most for that chunk.  The generation in the claim word makes a request
 * that arrives after its get ended claim nothing.  Not on an oversubscribed
 * node: there the sender, asleep or waiting for a CPU, would seldom run
 * while we copy, and waking it costs both; nor for a get the pml marks
 * BTL_GET_ALONE (messages both ways at once: the sender is copying our
 * messages to it).
 */
typedef struct btl_sm_share_hdr {
    uint32_t gen, nch;
    uint64_t dst;                  /* the requester's buffer */
    uint64_t src;                  /* the helper's (registered) buffer */
    uint64_t len, chunk;
} btl_sm_share_hdr_t;

uint64_t btl_sm_count_share_gets, btl_sm_count_share_chunks_in, btl_sm_count_share_chunks_out;

#define BTL_SM_SHARE_CHUNK_MIN ((size_t)64 << 10)
#define BTL_SM_SHARE_NCH(w) ((uint32_t)((w) & 0xffff) + (uint32_t)(((w) >> 16) & 0xffff))

static int btl_sm_share_chunk(pid_t pid, const btl_sm_share_hdr_t *h, uint32_t idx, bool write)
{
    size_t off = (size_t)idx * h->chunk, len = RAIL_MIN((size_t)h->chunk, (size_t)h->len - off);
    struct iovec me = {(void *)(uintptr_t)((write ? h->src : h->dst) + off), len};
    struct iovec peer = {(void *)(uintptr_t)((write ? h->dst : h->src) + off), len};
    return btl_sm_cma_xfer(pid, &me, 1, &peer, 1, write, write);
}

/* Helper side: the request arrived in our progress(); ep is the requester. */
void btl_sm_share_help(btl_module_t *base, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                       const void *payload, size_t payload_len)
{
    btl_sm_share_hdr_t h;
    if (hdr_len != sizeof(h))
        return;
    memcpy(&h, hdr, sizeof(h));
    uint64_t *claim = &ep->hdr->share_claim, *done = &ep->hdr->share_done;
    uint64_t w = rail_atomic_load_acquire(claim);
    for (;;) {
        if ((uint32_t)(w >> 32) != h.gen || BTL_SM_SHARE_NCH(w) >= h.nch)
            return;
        if (!rail_atomic_cas(claim, &w, w + (1u << 16)))
            continue;
        uint32_t idx = h.nch - 1 - (uint32_t)((w >> 16) & 0xffff);
        int rc = btl_sm_share_chunk(ep->pid, &h, idx, true);
        rail_atomic_fetch_add(done, rc == MPI_SUCCESS ? 1 : 1 + BTL_SM_SHARE_FAILED);
        btl_sm_count_share_chunks_out++;
        w = rail_atomic_load_acquire(claim);
    }
}

/* Requester side: a get of one contiguous piece of at least get_share_min
 * bytes.  Returns RAIL_AGAIN when the request could not be sent (the
 * caller copies alone). */
static int btl_sm_share_get(btl_sm_module_t *m, btl_endpoint_t *ep, const struct iovec *local,
                            const struct iovec *remote)
{
    btl_sm_seg_hdr_t *sh = m->hdr;
    size_t len = local->iov_len;
    size_t chunk = RAIL_ALIGN_UP(RAIL_MAX(len / 4, BTL_SM_SHARE_CHUNK_MIN), (size_t)BTL_SM_PAGE);
    btl_sm_share_hdr_t h = {.nch = (uint32_t)((len + chunk - 1) / chunk),
                            .dst = (uint64_t)(uintptr_t)local->iov_base,
                            .src = (uint64_t)(uintptr_t)remote->iov_base,
                            .len = len, .chunk = chunk};
    if (++m->share_gen == 0)
        ++m->share_gen;
    h.gen = m->share_gen;
    rail_atomic_store_relaxed(&sh->share_done, 0);
    rail_atomic_store_release(&sh->share_claim, (uint64_t)h.gen << 32);
    btl_payload_t none = {"", 0, NULL, NULL};
    if (btl_sm_send(&m->super, ep, BTL_SM_TAG_SHARE, &h, sizeof(h), &none) != MPI_SUCCESS) {
        rail_atomic_store_relaxed(&sh->share_claim, 0);
        return RAIL_AGAIN;
    }
    btl_sm_count_share_gets++;
    uint32_t mine = 0;
    int rc = MPI_SUCCESS;
    for (;;) {
        uint64_t w = rail_atomic_fetch_add(&sh->share_claim, 1);
        if (BTL_SM_SHARE_NCH(w) >= h.nch)
            break;
        if (rc == MPI_SUCCESS)
            rc = btl_sm_share_chunk(ep->pid, &h, (uint32_t)(w & 0xffff), false);
        mine++;
    }
    /* The helper's chunks: each claimed one is being copied now. */
    uint64_t d;
    for (unsigned spins = 0; (uint32_t)(d = rail_atomic_load_acquire(&sh->share_done)) <
                             h.nch - mine; spins++) {
        if (spins < 1024)
            rail_cpu_relax();
        else
            sched_yield();
    }
    btl_sm_count_share_chunks_in += h.nch - mine;
    if (RAIL_UNLIKELY(d >= BTL_SM_SHARE_FAILED) && rc == MPI_SUCCESS) {
        /* The helper could not write into us (CMA can be refused one way,
         * e.g. towards a process that is not dumpable): copy its part
         * again, and do not ask it again. */
        ep->no_share = true;
        for (uint32_t i = mine; i < h.nch && rc == MPI_SUCCESS; i++)
            rc = btl_sm_share_chunk(ep->pid, &h, i, false);
    }
    return rc;
}

static int btl_sm_rdma(btl_endpoint_t *ep, const struct iovec *local, int n_local,
                       const btl_reg_t *reg, const struct iovec *remote, int n_remote,
                       btl_done_cb_t done, void *cbdata, bool write, bool alone)
{
    btl_sm_module_t *m = &btl_sm_module;
    int rc = btl_sm_cma_check(m, ep, reg, local, n_local, remote, n_remote);
    if (rc == MPI_SUCCESS && !alone && n_local == 1 && n_remote == 1 && !rte_info.oversubscribed &&
        !ep->no_share &&
        btl_sm_params.get_share_min && local->iov_len >= btl_sm_params.get_share_min &&
        local->iov_len >= 2 * BTL_SM_SHARE_CHUNK_MIN) {
        rc = btl_sm_share_get(m, ep, local, remote);
        if (rc != RAIL_AGAIN)
            goto out;
        rc = MPI_SUCCESS;
    }
    if (rc == MPI_SUCCESS)
        rc = btl_sm_cma_xfer(ep->pid, local, n_local, remote, n_remote, write, false);
out:
    if (rc == MPI_SUCCESS && done)
        done(cbdata, MPI_SUCCESS);
    return rc;
}

int btl_sm_get(btl_module_t *m, btl_endpoint_t *ep, const struct iovec *local, int n_local,
               const btl_reg_t *reg, const struct iovec *remote, int n_remote, unsigned flags,
               btl_done_cb_t done, void *cbdata)
{
    return btl_sm_rdma(ep, local, n_local, reg, remote, n_remote, done, cbdata, false,
                       (flags & BTL_GET_ALONE) != 0);
}

int btl_sm_put(btl_module_t *m, btl_endpoint_t *ep, const struct iovec *local, int n_local,
               const btl_reg_t *reg, const struct iovec *remote, int n_remote,
               btl_done_cb_t done, void *cbdata)
{
    return btl_sm_rdma(ep, local, n_local, reg, remote, n_remote, done, cbdata, true, true);
}
