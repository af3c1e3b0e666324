/* btl verbs: parameters, device choice, resources, business card, finalize. */
#include "btl/verbs/verbs.h"
#include "base/log.h"
#include "base/param.h"
#include "base/rcache.h"
#include "runtime/rte.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

btl_verbs_params_t btl_verbs_params;
btl_verbs_module_t btl_verbs_module;

static int btl_verbs_register_params(void)
{
    btl_verbs_params_t *p = &btl_verbs_params;
    const int U = RAIL_PARAM_LEVEL_USER, T = RAIL_PARAM_LEVEL_TUNER, D = RAIL_PARAM_LEVEL_DEV;
    int rc = MPI_SUCCESS;
    RAIL_CHECK(rail_param_register_int("btl_verbs_priority", 20,
        "Priority of btl verbs among the btls that reach a peer (higher wins; principle: "
        "above tcp's 10, below sm's 50)", T, &p->priority));
    RAIL_CHECK(rail_param_register_bool("btl_verbs_fake", false,
        "Use the emulated HCA (shared memory and CMA between the processes of this machine) "
        "instead of libibverbs: for testing without RDMA hardware", D, &p->fake));
    RAIL_CHECK(rail_param_register_string("btl_verbs_fake_faults", "", NULL,
        "Faults the emulated HCA injects: post_fail=N, qp_error=N, bad_rkey=N (the Nth "
        "post or RDMA request), each optionally @rank; comma-separated", D, &p->fake_faults));
    RAIL_CHECK(rail_param_register_string("btl_verbs_device", "", NULL,
        "RDMA device btl verbs uses (\"mlx5_0\"; empty: an active one close to the process's "
        "cores)", U, &p->device));
    RAIL_CHECK(rail_param_register_string("btl_verbs_roce_subnet", "", NULL,
        "On RoCE, use only a GID whose IPv4 address lies in this subnet (\"10.1.0.0/16\"; "
        "empty: any, RoCE v2 first)", U, &p->roce_subnet));
    RAIL_CHECK(rail_param_register_int("btl_verbs_gid_index", -1,
        "GID index btl verbs uses (-1: chosen by type and btl_verbs_roce_subnet)", U,
        &p->gid_index));
    RAIL_CHECK(rail_param_register_bool("btl_verbs_local_peers", false,
        "Reach peers on the same node through btl verbs too (principle: sm is faster there; "
        "for testing)", D, &p->local_peers));
    RAIL_CHECK(rail_param_register_size("btl_verbs_eager_limit", 12 * 1024,
        "Largest message (payload bytes) the pml sends eagerly through btl verbs "
        "(principle: three quarters of btl_verbs_max_send_size)", T, &p->eager_limit));
    RAIL_CHECK(rail_param_register_size("btl_verbs_max_send_size", 16 * 1024,
        "Largest header + payload of one btl verbs send, the size of each receive buffer "
        "(principle: four pages, several MTUs)", T, &p->max_send_size));
    RAIL_CHECK(rail_param_register_size("btl_verbs_inline", 128,
        "Frames up to this many bytes go inline in the work request (IBV_SEND_INLINE; "
        "principle: a pml header and a small payload; capped by the device)", T,
        &p->inline_max));
    RAIL_CHECK(rail_param_register_size("btl_verbs_get_limit", 1 << 30,
        "Largest single RDMA read or write (principle: below the 2 GiB message limit of "
        "most HCAs)", T, &p->get_limit));
    RAIL_CHECK(rail_param_register_int("btl_verbs_credits", 16,
        "Receive buffers of the shared receive queue per peer: frames a peer may send "
        "before credits come back (principle: two round trips of eager fragments)", T,
        &p->credits));
    RAIL_CHECK(rail_param_register_int("btl_verbs_send_bufs", 64,
        "Registered send buffers for frames too large to go inline (principle: credits "
        "for four peers)", T, &p->send_bufs));
    RAIL_CHECK(rail_param_register_int("btl_verbs_sq_depth", 128,
        "Work requests a queue pair may have outstanding (principle: send buffers plus "
        "inline frames and RDMA requests of one busy peer)", T, &p->sq_depth));
    RAIL_CHECK(rail_param_register_int("btl_verbs_timeout", 18,
        "Local ACK timeout of the queue pairs, 4.096 us << value per try, 8 tries (principle: "
        "18 gives 8.6 s, for a peer that connects its queue pair late at start-up)", T,
        &p->timeout));
    RAIL_CHECK(rail_param_register_int("btl_verbs_verbose", 0,
        "Verbosity of btl verbs (the larger of this and btl_verbose)", D, &p->verbose));
    RAIL_CHECK(rail_rcache_register_pvars("btl_verbs"));
    RAIL_CHECK(rail_param_set_flags("btl_verbs_fake", RAIL_PARAM_F_TEST));
    RAIL_CHECK(rail_param_set_flags("btl_verbs_fake_faults", RAIL_PARAM_F_TEST));
fail:
    return rc;
}

static void btl_verbs_check_params(void)
{
    btl_verbs_params_t *p = &btl_verbs_params;
    if (p->max_send_size < 1024 || p->max_send_size > ((size_t)1 << 20)) {
        rail_warn("btl_verbs_max_send_size %zu out of range [1k, 1m], using 16k", p->max_send_size);
        p->max_send_size = 16 * 1024;
    }
    if (p->eager_limit + BTL_VERBS_HDR_MAX > p->max_send_size)
        p->eager_limit = p->max_send_size - BTL_VERBS_HDR_MAX;
    p->credits = RAIL_MAX(p->credits, 2);
    p->send_bufs = RAIL_MAX(p->send_bufs, 2);
    p->sq_depth = RAIL_MAX(p->sq_depth, 8);
    if (p->timeout < 1 || p->timeout > 31) {
        rail_warn("btl_verbs_timeout %d out of range [1, 31], using 18", p->timeout);
        p->timeout = 18;
    }
}

/* Open the chosen device and pick port and GID; false (said why) if none. */
static bool btl_verbs_open(btl_verbs_module_t *m)
{
    int n = 0;
    struct ibv_device **l = m->ops->get_device_list(&n);
    if (!l || n == 0) {
        RAIL_VERBOSE(btl_verbs_verbosity(), 1, "btl verbs: no RDMA device (%s: %s)%s",
                     m->ops->name, l ? "none listed" : strerror(errno),
                     m->ops == &btl_verbs_ops_real ? "; btl_verbs_fake=1 emulates one" : "");
        if (l)
            m->ops->free_device_list(l);
        return false;
    }
    btl_verbs_devinfo_t info[16];
    struct ibv_context *ctxs[16] = {0};
    n = RAIL_MIN(n, 16);
    for (int i = 0; i < n; i++) {
        info[i] = (btl_verbs_devinfo_t){m->ops->get_device_name(l[i]), false, -1};
        struct ibv_port_attr pa;
        ctxs[i] = m->ops->open_device(l[i]);
        info[i].active = ctxs[i] && m->ops->query_port(ctxs[i], 1, &pa) == 0 &&
                         pa.state == IBV_PORT_ACTIVE;
        if (m->ops == &btl_verbs_ops_real)
            info[i].local = btl_verbs_device_local(info[i].name);
    }
    int k = btl_verbs_choose_device(info, n, btl_verbs_params.device);
    for (int i = 0; i < n; i++)
        if (i != k && ctxs[i])
            m->ops->close_device(ctxs[i]);
    if (k >= 0) {
        m->ctx = ctxs[k];
        snprintf(m->dev_name, sizeof(m->dev_name), "%s", info[k].name);
    } else {
        RAIL_VERBOSE(btl_verbs_verbosity(), 1, "btl verbs: %s", *btl_verbs_params.device ?
                     "the device named by btl_verbs_device is missing or has no active port" :
                     "no device with an active port");
    }
    m->ops->free_device_list(l);
    return k >= 0;
}

static bool btl_verbs_port(btl_verbs_module_t *m)
{
    struct ibv_port_attr pa;
    struct ibv_gid_entry g[64];
    m->port = 1;
    if (m->ops->query_port(m->ctx, m->port, &pa) != 0)
        return false;
    int n = 0;
    for (; n < RAIL_MIN(pa.gid_tbl_len, 64); n++)
        if (m->ops->query_gid_ex(m->ctx, m->port, (uint32_t)n, &g[n]) != 0)
            break;
    bool bad = false;
    int idx = btl_verbs_params.gid_index >= 0 ? btl_verbs_params.gid_index
            : btl_verbs_choose_gid(g, n, pa.link_layer, btl_verbs_params.roce_subnet, &bad);
    if (bad)
        rail_warn("btl_verbs_roce_subnet \"%s\" is not a subnet (a.b.c.d/prefix)",
                  btl_verbs_params.roce_subnet);
    if (idx < 0 || idx >= n) {
        RAIL_VERBOSE(btl_verbs_verbosity(), 1, "btl verbs: %s port %d has no usable GID%s",
                     m->dev_name, m->port, *btl_verbs_params.roce_subnet ?
                     " in btl_verbs_roce_subnet" : "");
        return false;
    }
    m->gid_index = idx;
    m->gid = g[idx].gid;
    m->lid = pa.lid;
    m->mtu = (uint8_t)pa.active_mtu;
    m->link_layer = pa.link_layer;
    return true;
}

/* Buffers: n of size bytes in one registered region. */
static char *btl_verbs_bufs(btl_verbs_module_t *m, int n, size_t size, struct ibv_mr **mr)
{
    char *p = NULL;
    if (posix_memalign((void **)&p, 4096, (size_t)n * size) != 0)
        return NULL;
    *mr = m->ops->reg_mr(m->pd, p, (size_t)n * size, IBV_ACCESS_LOCAL_WRITE);
    if (!*mr) {
        rail_warn("btl verbs: cannot register %zu bytes of buffers (%s); if the locked-memory "
                  "limit is low, raise it (ulimit -l unlimited)", (size_t)n * size, strerror(errno));
        free(p);
        return NULL;
    }
    return p;
}

static struct ibv_qp *btl_verbs_qp_new(btl_verbs_module_t *m)
{
    struct ibv_qp_init_attr qa = {
        .send_cq = m->cq, .recv_cq = m->cq, .srq = m->srq, .qp_type = IBV_QPT_RC,
        .cap = {.max_send_wr = (uint32_t)btl_verbs_params.sq_depth, .max_send_sge = 1,
                .max_inline_data = m->max_inline}};
    struct ibv_qp *qp = m->ops->create_qp(m->pd, &qa);
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = m->port,
                            .qp_access_flags = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE};
    if (qp && m->ops->modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                            IBV_QP_ACCESS_FLAGS) != 0) {
        m->ops->destroy_qp(qp);
        qp = NULL;
    }
    return qp;
}

static int btl_verbs_resources(btl_verbs_module_t *m)
{
    const btl_verbs_params_t *p = &btl_verbs_params;
    struct ibv_device_attr da;
    if (m->ops->query_device(m->ctx, &da) != 0 || !(m->pd = m->ops->alloc_pd(m->ctx)) ||
        !(m->ch = m->ops->create_comp_channel(m->ctx)))
        return MPI_ERR_OTHER;
    fcntl(m->ch->fd, F_SETFL, fcntl(m->ch->fd, F_GETFL) | O_NONBLOCK);
    m->rbuf_size = btl_verbs_pad8(sizeof(btl_verbs_fhdr_t) + BTL_VERBS_HDR_MAX + p->max_send_size);
    m->n_rbufs = RAIL_MIN((m->nprocs - 1) * (p->credits + BTL_VERBS_CREDIT_RESERVE),
                          RAIL_MIN(da.max_srq_wr, 16384));
    m->n_sbufs = p->send_bufs;
    m->max_outstanding = m->n_sbufs + 2 * p->sq_depth;
    int cqe = RAIL_MIN(m->n_rbufs + m->max_outstanding + 16, da.max_cqe);
    m->max_inline = (uint32_t)RAIL_MIN(p->inline_max, (size_t)256);
    struct ibv_srq_init_attr sa = {.attr = {.max_wr = (uint32_t)m->n_rbufs, .max_sge = 1}};
    if (!(m->cq = m->ops->create_cq(m->ctx, cqe, m, m->ch, 0)) ||
        !(m->srq = m->ops->create_srq(m->pd, &sa)) ||
        !(m->rbufs = btl_verbs_bufs(m, m->n_rbufs, m->rbuf_size, &m->rmr)) ||
        !(m->sbufs = btl_verbs_bufs(m, m->n_sbufs, m->rbuf_size, &m->smr)) ||
        !(m->sdesc = calloc((size_t)m->n_sbufs, sizeof(*m->sdesc))))
        return MPI_ERR_OTHER;
    for (int i = m->n_sbufs - 1; i >= 0; i--) {
        m->sdesc[i] = (btl_verbs_sbuf_t){{BTL_VERBS_OP_SBUF, NULL}, m->sfree,
                                         m->sbufs + (size_t)i * m->rbuf_size};
        m->sfree = &m->sdesc[i];
    }
    for (int i = 0; i < m->n_rbufs; i++)
        if (btl_verbs_post_recv(m, i) != MPI_SUCCESS)
            return MPI_ERR_OTHER;
    return MPI_SUCCESS;
}

/* One QP per other rank, in INIT; the card names each rank's. */
static int btl_verbs_publish(btl_verbs_module_t *m)
{
    size_t len = sizeof(btl_verbs_card_t) + (size_t)m->nprocs * sizeof(uint32_t);
    btl_verbs_card_t *c = calloc(1, len);
    m->qps = calloc((size_t)m->nprocs, sizeof(*m->qps));
    m->eps = calloc((size_t)m->nprocs, sizeof(*m->eps));
    if (!c || !m->qps || !m->eps) {
        free(c);
        return MPI_ERR_NO_MEM;
    }
    c->magic = BTL_VERBS_CARD_MAGIC;
    c->lid = m->lid;
    c->mtu = m->mtu;
    c->link_layer = m->link_layer;
    memcpy(c->gid, m->gid.raw, 16);
    c->nprocs = (uint32_t)m->nprocs;
    for (int r = 0; r < m->nprocs; r++) {
        if (r == m->my_rank)
            continue;
        if (!(m->qps[r] = btl_verbs_qp_new(m))) {
            rail_warn("btl verbs: cannot create a queue pair on %s (%s)", m->dev_name,
                      strerror(errno));
            free(c);
            return MPI_ERR_OTHER;
        }
        c->qpn[r] = m->qps[r]->qp_num;
    }
    int rc = rte_modex_put(BTL_VERBS_MODEX_KEY, c, len);
    free(c);
    return rc;
}

static int btl_verbs_finalize(btl_module_t *base);

static const btl_module_t btl_verbs_template = {
    .name = "verbs",
    .flags = BTL_FLAG_SEND | BTL_FLAG_GET | BTL_FLAG_PUT,
    .add_procs = btl_verbs_add_procs,
    .del_procs = btl_verbs_del_procs,
    .send = btl_verbs_send,
    .register_mem = btl_verbs_register_mem,
    .deregister_mem = btl_verbs_deregister_mem,
    .get = btl_verbs_get,
    .put = btl_verbs_put,
    .progress = btl_verbs_progress,
    .wait_fd = -1,
    .sleep_prepare = btl_verbs_sleep_prepare,
    .sleep_finish = btl_verbs_sleep_finish,
    .pending = btl_verbs_pending,
    .finalize = btl_verbs_finalize,
};

static int btl_verbs_init(btl_module_t **mods, int *n)
{
    btl_verbs_module_t *m = &btl_verbs_module;
    int max = *n;
    *n = 0;
    btl_verbs_register_params();
    btl_verbs_check_params();
    memset(m, 0, sizeof(*m));
    if (max < 1 || rte_info.size < 2) {
        RAIL_VERBOSE(btl_verbs_verbosity(), 1, "btl verbs: no other process in the job");
        return MPI_SUCCESS;
    }
    m->ops = btl_verbs_params.fake ? &btl_verbs_ops_fake : &btl_verbs_ops_real;
    if (btl_verbs_params.fake &&
        btl_verbs_fake_setup(rte_info.jobid, btl_verbs_params.fake_faults, rte_info.rank) != 0)
        return MPI_ERR_ARG;
    m->my_rank = rte_info.rank;
    m->nprocs = rte_info.size;
    if (!btl_verbs_open(m))
        return MPI_SUCCESS;
    if (!btl_verbs_port(m) || btl_verbs_resources(m) != MPI_SUCCESS ||
        btl_verbs_rcache_create(m) != MPI_SUCCESS || btl_verbs_publish(m) != MPI_SUCCESS) {
        RAIL_VERBOSE(btl_verbs_verbosity(), 1, "btl verbs: cannot set up %s (%s); not using it",
                     m->dev_name, strerror(errno));
        btl_verbs_finalize(&m->super);
        return MPI_SUCCESS;
    }
    m->super = btl_verbs_template;
    m->super.priority = btl_verbs_params.priority;
    m->super.eager_limit = btl_verbs_params.eager_limit;
    m->super.max_send_size = btl_verbs_params.max_send_size;
    m->super.get_limit = btl_verbs_params.get_limit;
    m->super.wait_fd = m->ch->fd;
    RAIL_VERBOSE(btl_verbs_verbosity(), 2, "btl verbs: %s (%s) port %d, GID index %d, %s",
                 m->dev_name, m->ops->name, m->port, m->gid_index,
                 m->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand");
    mods[0] = &m->super;
    *n = 1;
    return MPI_SUCCESS;
}

static int btl_verbs_finalize(btl_module_t *base)
{
    btl_verbs_module_t *m = &btl_verbs_module;
    const btl_verbs_ops_t *o = m->ops;
    (void)base;
    for (int r = 0; m->qps && r < m->nprocs; r++)
        if (m->qps[r])
            o->destroy_qp(m->qps[r]);
    for (int r = 0; m->eps && r < m->nprocs; r++)
        free(m->eps[r]);
    if (m->rcache)
        rail_rcache_destroy(m->rcache);
    if (m->rmr)
        o->dereg_mr(m->rmr);
    if (m->smr)
        o->dereg_mr(m->smr);
    if (m->srq)
        o->destroy_srq(m->srq);
    if (m->cq)
        o->destroy_cq(m->cq);
    if (m->ch)
        o->destroy_comp_channel(m->ch);
    if (m->pd)
        o->dealloc_pd(m->pd);
    if (m->ctx)
        o->close_device(m->ctx);
    free(m->qps);
    free(m->eps);
    free(m->rbufs);
    free(m->sbufs);
    free(m->sdesc);
    memset(m, 0, sizeof(*m));
    return MPI_SUCCESS;
}

const btl_component_t btl_verbs_component = {
    .name = "verbs",
    .priority = 20,
    .register_params = btl_verbs_register_params,
    .init = btl_verbs_init,
};

/* For railinfo: the devices libibverbs lists, or why btl verbs declines. */
void btl_verbs_describe(char *buf, size_t len)
{
    int n = 0;
    struct ibv_device **l = btl_verbs_ops_real.get_device_list(&n);
    if (!l || n == 0) {
        snprintf(buf, len, "no RDMA device (ibv_get_device_list: %s): btl verbs declines "
                 "(btl_verbs_fake=1 emulates one)", l ? "none listed" : strerror(errno));
    } else {
        snprintf(buf, len, "devices");
        for (int i = 0; i < n; i++)
            snprintf(buf + strlen(buf), len - strlen(buf), " %s",
                     btl_verbs_ops_real.get_device_name(l[i]));
    }
    if (l)
        btl_verbs_ops_real.free_device_list(l);
}
