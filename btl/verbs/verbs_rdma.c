/*
 * btl verbs: memory registration and the btl's get/put as RDMA read/write.
 * Registrations come from the registration cache (base/rcache.h): the
 * memory register_mem describes to a peer, held until deregister_mem, and
 * the local side of a get or put, held until its completion.  Every
 * registration allows local write and remote read and write, so one entry
 * serves both uses.
 */
#include "btl/verbs/verbs.h"
#include "base/log.h"
#include "base/rcache.h"
#include "runtime/rte.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const int btl_verbs_remote_access =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;

/* The cache's entry: the region and its memory region on the device. */
typedef struct btl_verbs_rreg {
    rail_rcache_reg_t super;
    struct ibv_mr *mr;
} btl_verbs_rreg_t;

static int btl_verbs_mem_reg(void *ctx, rail_rcache_reg_t *reg)
{
    btl_verbs_module_t *m = ctx;
    btl_verbs_rreg_t *r = (btl_verbs_rreg_t *)reg;
    r->mr = m->ops->reg_mr(m->pd, (void *)reg->base, reg->len, btl_verbs_remote_access);
    if (r->mr)
        return MPI_SUCCESS;
    rail_warn_once("btl_verbs_reg", "btl verbs: cannot register %zu bytes at %p on %s (%s)%s",
                   reg->len, (void *)reg->base, m->dev_name, strerror(errno),
                   errno == ENOMEM || errno == EPERM ?
                   "; the locked-memory limit may be too low (ulimit -l unlimited)" : "");
    return MPI_ERR_NO_MEM;
}

static int btl_verbs_mem_dereg(void *ctx, rail_rcache_reg_t *reg)
{
    btl_verbs_module_t *m = ctx;
    m->ops->dereg_mr(((btl_verbs_rreg_t *)reg)->mr);
    return MPI_SUCCESS;
}

static const rail_rcache_ops_t btl_verbs_rcache_ops = {
    .reg_size = sizeof(btl_verbs_rreg_t),
    .mem_reg = btl_verbs_mem_reg,
    .mem_dereg = btl_verbs_mem_dereg,
};

int btl_verbs_rcache_create(btl_verbs_module_t *m)
{
    m->rcache = rail_rcache_create("btl_verbs", &btl_verbs_rcache_ops, m);
    return m->rcache ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static btl_verbs_rreg_t *btl_verbs_reg(btl_verbs_module_t *m, void *base, size_t len)
{
    rail_rcache_reg_t *reg = NULL;
    if (rail_rcache_get(m->rcache, base, len, &reg) != MPI_SUCCESS)
        return NULL;
    return (btl_verbs_rreg_t *)reg;
}

int btl_verbs_register_mem(btl_module_t *base, void *addr, size_t len, btl_reg_t *reg)
{
    btl_verbs_module_t *m = (btl_verbs_module_t *)base;
    _Static_assert(sizeof(btl_verbs_reg_t) <= BTL_REG_MAX, "registration fits btl_reg_t");
    btl_verbs_rreg_t *rr = btl_verbs_reg(m, addr, len);
    if (!rr)
        return MPI_ERR_NO_MEM;
    btl_verbs_reg_t r = {(uintptr_t)addr, len, rr->mr->rkey, 0, (uintptr_t)rr};
    memcpy(reg->bytes, &r, sizeof(r));
    reg->len = sizeof(r);
    return MPI_SUCCESS;
}

int btl_verbs_deregister_mem(btl_module_t *base, btl_reg_t *reg)
{
    btl_verbs_module_t *m = (btl_verbs_module_t *)base;
    btl_verbs_reg_t r;
    if (reg->len != sizeof(r))
        return MPI_ERR_ARG;
    memcpy(&r, reg->bytes, sizeof(r));
    rail_rcache_put(m->rcache, (rail_rcache_reg_t *)(uintptr_t)r.mr);
    reg->len = 0;
    return MPI_SUCCESS;
}

static int btl_verbs_rdma(btl_verbs_module_t *m, btl_endpoint_t *ep, const struct iovec *local,
                          int n_local, const btl_reg_t *reg, const struct iovec *remote,
                          int n_remote, btl_done_cb_t done, void *cbdata, bool write)
{
    btl_verbs_reg_t r;
    if (n_local != 1 || n_remote != 1 || reg->len != sizeof(r) ||
        local->iov_len != remote->iov_len || local->iov_len > btl_verbs_params.get_limit)
        return MPI_ERR_ARG;
    if (ep->outstanding >= btl_verbs_params.sq_depth || m->outstanding >= m->max_outstanding)
        return RAIL_AGAIN;
    memcpy(&r, reg->bytes, sizeof(r));
    btl_verbs_rdma_t *op = calloc(1, sizeof(*op));
    if (!op)
        return MPI_ERR_NO_MEM;
    *op = (btl_verbs_rdma_t){{BTL_VERBS_OP_RDMA, ep}, NULL, done, cbdata};
    size_t len = local->iov_len;
    if (len && !(op->reg = btl_verbs_reg(m, local->iov_base, len))) {
        free(op);
        return MPI_ERR_NO_MEM;
    }
    struct ibv_sge sge = {(uintptr_t)local->iov_base, (uint32_t)len,
                          op->reg ? op->reg->mr->lkey : 0};
    struct ibv_send_wr wr = {.wr_id = (uintptr_t)op, .sg_list = &sge, .num_sge = len ? 1 : 0,
                             .opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
                             .send_flags = IBV_SEND_SIGNALED}, *bad;
    wr.wr.rdma.remote_addr = (uintptr_t)remote->iov_base;
    wr.wr.rdma.rkey = r.rkey;
    int rc = m->ops->post_send(ep->qp, &wr, &bad);
    if (rc != 0) {
        rail_error("btl verbs: rank %d (%s): posting an RDMA %s to rank %d (%s) failed: %s",
                   m->my_rank, rte_hostname_of(m->my_rank), write ? "write" : "read", ep->rank,
                   rte_hostname_of(ep->rank), strerror(rc));
        if (op->reg)
            rail_rcache_put(m->rcache, &op->reg->super);
        free(op);
        return MPI_ERR_OTHER;
    }
    ep->outstanding++;
    m->outstanding++;
    return MPI_SUCCESS;
}

int btl_verbs_get(btl_module_t *m, btl_endpoint_t *ep, const struct iovec *local, int n_local,
                  const btl_reg_t *reg, const struct iovec *remote, int n_remote, unsigned flags,
                  btl_done_cb_t done, void *cbdata)
{
    (void)flags;
    return btl_verbs_rdma((btl_verbs_module_t *)m, ep, local, n_local, reg, remote, n_remote,
                          done, cbdata, false);
}

int btl_verbs_put(btl_module_t *m, btl_endpoint_t *ep, const struct iovec *local, int n_local,
                  const btl_reg_t *reg, const struct iovec *remote, int n_remote,
                  btl_done_cb_t done, void *cbdata)
{
    return btl_verbs_rdma((btl_verbs_module_t *)m, ep, local, n_local, reg, remote, n_remote,
                          done, cbdata, true);
}

void btl_verbs_rdma_done(btl_verbs_module_t *m, btl_verbs_rdma_t *op)
{
    if (op->reg)
        rail_rcache_put(m->rcache, &op->reg->super);
    btl_done_cb_t done = op->done;
    void *cbdata = op->cbdata;
    free(op);
    if (done)
        done(cbdata, MPI_SUCCESS);
}
