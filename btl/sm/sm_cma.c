/*
 * Single copy with CMA (base/cma.h): get/put are process_vm_readv/writev
 * on the peer's pid, with iovecs on both sides (the kernel pairs them up
 * byte by byte).
 * A registration is just (pid, cookie, base, len): nothing is pinned; the
 * cookie (random per process, also in the modex) makes a stale or foreign
 * registration fail cleanly instead of reading another process.
 */
#include "btl/sm/sm.h"
#include "base/log.h"
#include "base/param.h"
#include "runtime/rte.h"

#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static size_t btl_sm_iov_total(const struct iovec *iov, int n)
{
    size_t t = 0;
    for (int i = 0; i < n; i++)
        t += iov[i].iov_len;
    return t;
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
 * Shared get (base/cma.h, SHARED SINGLE COPY): a large contiguous get
 * asks the peer that owns the data to help: it writes chunks from the back
 * of the buffer into ours while we read chunks from the front, claimed in
 * our segment's share lines (lines 5-6), in its progress(); a peer that is
 * busy elsewhere, or sees the request late, takes nothing and we copy it
 * all.  The request carries the get's generation, so one that arrives
 * after its get ended claims nothing of a later one.  Not on an
 * oversubscribed node: there the sender, asleep or waiting for a CPU,
 * would seldom run while we copy, and waking it costs both; nor for a get
 * the pml marks BTL_GET_ALONE (messages both ways at once: the sender is
 * copying our messages to it); nor from a peer that could not write into
 * us before (CMA can be refused one way, e.g. towards a process that is
 * not dumpable).
 */
typedef struct btl_sm_share_req {
    uint32_t gen, pad;
} btl_sm_share_req_t;

uint64_t btl_sm_count_share_gets, btl_sm_count_share_chunks_in, btl_sm_count_share_chunks_out;

static rail_cma_share_ctl_t btl_sm_share_ctl(btl_sm_seg_hdr_t *h)
{
    return (rail_cma_share_ctl_t){&h->share_claim, &h->share_done, &h->share_desc};
}

/* Helper side: the request arrived in our progress(); ep is the requester. */
void btl_sm_share_help(btl_module_t *base, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                       const void *payload, size_t payload_len)
{
    btl_sm_share_req_t req;
    if (hdr_len != sizeof(req))
        return;
    memcpy(&req, hdr, sizeof(req));
    rail_cma_share_ctl_t ctl = btl_sm_share_ctl(ep->hdr);
    bool failed = false;
    int n = rail_cma_share_help(&ctl, req.gen, ep->pid, UINT32_MAX, 0, &failed);
    if (n > 0)
        btl_sm_count_share_chunks_out += (uint64_t)n;
}

/* Requester side: a get of one contiguous piece of at least get_share_min
 * bytes.  Returns RAIL_AGAIN when the request could not be sent (the
 * caller copies alone). */
static int btl_sm_share_get(btl_sm_module_t *m, btl_endpoint_t *ep, const struct iovec *local,
                            const struct iovec *remote)
{
    rail_cma_share_ctl_t ctl = btl_sm_share_ctl(m->hdr);
    rail_cma_share_t t;
    if (++m->share_gen == 0)
        ++m->share_gen;
    btl_sm_share_req_t req = {.gen = m->share_gen};
    rail_cma_share_publish(&t, &ctl, req.gen, ep->pid, local->iov_base,
                           (uint64_t)(uintptr_t)remote->iov_base, local->iov_len, 0);
    btl_payload_t none = {"", 0, NULL, NULL};
    if (btl_sm_send(&m->super, ep, BTL_SM_TAG_SHARE, &req, sizeof(req), &none) != MPI_SUCCESS) {
        rail_cma_share_cancel(&t);
        return RAIL_AGAIN;
    }
    btl_sm_count_share_gets++;
    int rc = rail_cma_share_read(&t);
    btl_sm_count_share_chunks_in += t.helped;
    if (t.failed)
        ep->no_share = true;   /* it cannot write into us: do not ask it again */
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
        local->iov_len >= RAIL_CMA_SHARE_MIN) {
        rc = btl_sm_share_get(m, ep, local, remote);
        if (rc != RAIL_AGAIN)
            goto out;
        rc = MPI_SUCCESS;
    }
    if (rc == MPI_SUCCESS)
        rc = rail_cma_xfer(ep->pid, local, n_local, remote, n_remote, write ? RAIL_CMA_WRITE : 0);
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
