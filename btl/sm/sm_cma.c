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

/* Move all bytes between local and remote, BTL_SM_IOV_BATCH pieces at a time. */
static int btl_sm_cma_xfer(pid_t pid, const struct iovec *local, int n_local,
                           const struct iovec *remote, int n_remote, bool write)
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
            return btl_sm_cma_error(got < 0 ? errno : EFAULT, pid, write);
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

static int btl_sm_rdma(btl_endpoint_t *ep, const struct iovec *local, int n_local,
                       const btl_reg_t *reg, const struct iovec *remote, int n_remote,
                       btl_done_cb_t done, void *cbdata, bool write)
{
    int rc = btl_sm_cma_check(&btl_sm_module, ep, reg, local, n_local, remote, n_remote);
    if (rc == MPI_SUCCESS)
        rc = btl_sm_cma_xfer(ep->pid, local, n_local, remote, n_remote, write);
    if (rc == MPI_SUCCESS && done)
        done(cbdata, MPI_SUCCESS);
    return rc;
}

int btl_sm_get(btl_module_t *m, btl_endpoint_t *ep, const struct iovec *local, int n_local,
               const btl_reg_t *reg, const struct iovec *remote, int n_remote,
               btl_done_cb_t done, void *cbdata)
{
    return btl_sm_rdma(ep, local, n_local, reg, remote, n_remote, done, cbdata, false);
}

int btl_sm_put(btl_module_t *m, btl_endpoint_t *ep, const struct iovec *local, int n_local,
               const btl_reg_t *reg, const struct iovec *remote, int n_remote,
               btl_done_cb_t done, void *cbdata)
{
    return btl_sm_rdma(ep, local, n_local, reg, remote, n_remote, done, cbdata, true);
}
