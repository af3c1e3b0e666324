/* btl ofi: parameters, init (provider, endpoint, business card), finalize. */
#include "btl/ofi/ofi.h"
#include "base/log.h"
#include "base/param.h"
#include "base/rcache.h"
#include "runtime/rte.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

btl_ofi_params_t btl_ofi_params;
btl_ofi_module_t btl_ofi_module;

static int btl_ofi_register_params(void)
{
    btl_ofi_params_t *p = &btl_ofi_params;
    const int U = RAIL_PARAM_LEVEL_USER, T = RAIL_PARAM_LEVEL_TUNER, D = RAIL_PARAM_LEVEL_DEV;
    int rc = MPI_SUCCESS;

    RAIL_CHECK(rail_param_register_string("btl_ofi_provider", "", NULL,
        "libfabric providers btl ofi may use, as FI_PROVIDER: comma-separated, a layered one "
        "as \"tcp;ofi_rxm\" (empty: any; a software provider named here ranks above btl tcp)",
        U, &p->provider));
    RAIL_CHECK(rail_param_register_int("btl_ofi_priority", 20,
        "Priority of btl ofi on a hardware provider or one named in btl_ofi_provider "
        "(principle: above btl tcp's 10, below sm's 50)", T, &p->priority));
    RAIL_CHECK(rail_param_register_int("btl_ofi_priority_soft", 5,
        "Priority of btl ofi on a software provider not named in btl_ofi_provider, used only "
        "when btl tcp is not selected (principle: below btl tcp's 10)", T, &p->priority_soft));
    RAIL_CHECK(rail_param_register_bool("btl_ofi_local_peers", false,
        "btl ofi also reaches processes of its own node (testing on one host; principle: "
        "off, btl sm is faster there)", D, &p->local_peers));
    RAIL_CHECK(rail_param_register_bool("btl_ofi_mr_strict", false,
        "Register memory by the strictest rules (local buffers too, provider keys, bound to "
        "the endpoint) even where the provider needs none (testing; principle: off)", D,
        &p->mr_strict));
    RAIL_CHECK(rail_param_register_size("btl_ofi_eager_limit", 64 * 1024,
        "Largest message (payload bytes) the pml sends eagerly through btl ofi (principle: "
        "btl tcp's, whose sockets tcp;ofi_rxm uses)", T, &p->eager_limit));
    RAIL_CHECK(rail_param_register_size("btl_ofi_max_send_size", 256 * 1024,
        "Largest header + payload of one btl ofi send, the pipeline's fragment (principle: "
        "btl tcp's; capped by the provider's largest message)", T, &p->max_send_size));
    RAIL_CHECK(rail_param_register_int("btl_ofi_send_bufs", 32,
        "Registered send buffers of max_send_size (and 8 times as many of 4 KiB) before a send "
        "says RAIL_AGAIN (principle: 8 MiB in flight, a fast link's bandwidth-delay product)",
        T, &p->send_bufs));
    RAIL_CHECK(rail_param_register_bool("btl_ofi_multi_recv", true,
        "Receive into FI_MULTI_RECV buffers where the provider offers them (principle: one "
        "buffer holds many frames; 0 tests the posted buffers other providers get)", D,
        &p->multi_recv));
    RAIL_CHECK(rail_param_register_int("btl_ofi_recv_bufs", 32,
        "Receive buffers of max_send_size posted where the provider has no FI_MULTI_RECV "
        "(principle: as many as send buffers)", T, &p->recv_bufs));
    RAIL_CHECK(rail_param_register_size("btl_ofi_multi_recv_size", 4 * 1024 * 1024,
        "Bytes of each of the two FI_MULTI_RECV buffers (principle: 16 largest sends each)",
        T, &p->multi_recv_size));
    RAIL_CHECK(rail_param_register_int("btl_ofi_finalize_timeout_ms", 5000,
        "How long finalize waits for sends to complete (principle: btl tcp's)", D,
        &p->finalize_timeout_ms));
    RAIL_CHECK(rail_rcache_register_pvars("btl_ofi"));
fail:
    return rc;
}

static void btl_ofi_check_params(const struct fi_info *fi)
{
    btl_ofi_params_t *p = &btl_ofi_params;
    size_t max = fi->ep_attr->max_msg_size - BTL_OFI_WHDR_LEN - 8;
    if (p->max_send_size < 4096 || p->max_send_size > max) {
        size_t v = RAIL_MIN(RAIL_MAX(p->max_send_size, (size_t)4096), max);
        rail_warn("btl_ofi_max_send_size %zu out of range [4k, %zu], using %zu",
                  p->max_send_size, max, v);
        p->max_send_size = v;
    }
    if (p->eager_limit + BTL_OFI_HDR_MAX > p->max_send_size)
        p->eager_limit = p->max_send_size - BTL_OFI_HDR_MAX;
    p->send_bufs = RAIL_MAX(p->send_bufs, 2);
    p->recv_bufs = RAIL_MAX(p->recv_bufs, 2);
    size_t frame = btl_ofi_frame_size(BTL_OFI_HDR_MAX, p->max_send_size);
    if (p->multi_recv_size < 2 * frame)
        p->multi_recv_size = 2 * frame;
}

#define OFI_TRY(call, what)                                                                        \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != 0) {                                                                            \
            snprintf(m->why, sizeof(m->why), "%s: %s", what, btl_ofi_strerror(rc_));              \
            return MPI_ERR_OTHER;                                                                  \
        }                                                                                          \
    } while (0)

/* A completion queue that can wake a sleeper (FI_WAIT_FD), else one to poll. */
static int open_cq(btl_ofi_module_t *m)
{
    struct fi_cq_attr attr = {.format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_FD,
                              .size = 0};
    int fd = -1;
    if (fi_cq_open(m->domain, &attr, &m->cq, NULL) == 0 &&
        fi_control(&m->cq->fid, FI_GETWAIT, &fd) == 0 && fd >= 0) {
        m->super.wait_fd = fd;
        m->super.sleep_prepare = btl_ofi_sleep_prepare;
        return MPI_SUCCESS;
    }
    if (m->cq)
        fi_close(&m->cq->fid);
    m->cq = NULL;
    attr.wait_obj = FI_WAIT_NONE;
    OFI_TRY(fi_cq_open(m->domain, &attr, &m->cq, NULL), "fi_cq_open");
    RAIL_VERBOSE(btl_verbose, 1, "btl ofi: %s offers no FI_WAIT_FD: waits poll it",
                 m->info->fabric_attr->prov_name);
    return MPI_SUCCESS;
}

static int open_endpoint(btl_ofi_module_t *m)
{
    struct fi_info *fi = m->info;
    struct fi_av_attr av = {.type = FI_AV_TABLE};
    OFI_TRY(fi_fabric(fi->fabric_attr, &m->fabric, NULL), "fi_fabric");
    OFI_TRY(fi_domain(m->fabric, fi, &m->domain, NULL), "fi_domain");
    OFI_TRY(fi_av_open(m->domain, &av, &m->av, NULL), "fi_av_open");
    if (open_cq(m) != MPI_SUCCESS)
        return MPI_ERR_OTHER;
    OFI_TRY(fi_endpoint(m->domain, fi, &m->ep, NULL), "fi_endpoint");
    OFI_TRY(fi_ep_bind(m->ep, &m->av->fid, 0), "fi_ep_bind(av)");
    OFI_TRY(fi_ep_bind(m->ep, &m->cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)");
    OFI_TRY(fi_enable(m->ep), "fi_enable");
    m->name_len = sizeof(m->name);
    OFI_TRY(fi_getname(&m->ep->fid, m->name, &m->name_len), "fi_getname");
    return MPI_SUCCESS;
}

static int publish(btl_ofi_module_t *m)
{
    btl_ofi_card_t card;
    memset(&card, 0, sizeof(card));
    card.magic = BTL_OFI_CARD_MAGIC;
    card.name_len = (uint32_t)m->name_len;
    snprintf(card.prov, sizeof(card.prov), "%s", m->info->fabric_attr->prov_name);
    memcpy(card.name, m->name, m->name_len);
    return rte_modex_put(BTL_OFI_MODEX_KEY, &card, offsetof(btl_ofi_card_t, name) + m->name_len);
}

static void module_close(btl_ofi_module_t *m)
{
    /* the endpoint first: until it is closed the provider may still write
     * arriving data into the receive buffers */
    if (m->ep)
        fi_close(&m->ep->fid);
    btl_ofi_am_fini(m);
    btl_ofi_rma_fini(m);
    btl_ofi_mr_fini(m);
    if (m->av)
        fi_close(&m->av->fid);
    if (m->cq)
        fi_close(&m->cq->fid);
    if (m->domain)
        fi_close(&m->domain->fid);
    if (m->fabric)
        fi_close(&m->fabric->fid);
    if (m->info)
        fi_freeinfo(m->info);
    free(m->eps);
    memset(m, 0, sizeof(*m));
    m->super.wait_fd = -1;
}

static int btl_ofi_finalize(btl_module_t *base);

static const btl_module_t btl_ofi_template = {
    .name = "ofi",
    .flags = BTL_FLAG_SEND | BTL_FLAG_GET | BTL_FLAG_PUT | BTL_FLAG_IOV,
    .add_procs = btl_ofi_add_procs,
    .del_procs = btl_ofi_del_procs,
    .send = btl_ofi_send,
    .register_mem = btl_ofi_register_mem,
    .deregister_mem = btl_ofi_deregister_mem,
    .get = btl_ofi_get,
    .put = btl_ofi_put,
    .progress = btl_ofi_progress,
    .wait_fd = -1,
    .pending = btl_ofi_pending,
    .finalize = btl_ofi_finalize,
};

/* The mode bits to honour, the limits of one operation. */
static void module_setup(btl_ofi_module_t *m, int priority)
{
    const struct fi_info *fi = m->info;
    m->super = btl_ofi_template;
    m->super.priority = priority;
    m->super.eager_limit = btl_ofi_params.eager_limit;
    m->super.max_send_size = btl_ofi_params.max_send_size;
    m->super.get_limit = fi->ep_attr->max_msg_size;
    m->mr_mode = fi->domain_attr->mr_mode;
    if (btl_ofi_params.mr_strict)
        m->mr_mode |= FI_MR_LOCAL | FI_MR_PROV_KEY | FI_MR_ENDPOINT | FI_MR_ALLOCATED;
    m->multi_recv = (fi->caps & FI_MULTI_RECV) && btl_ofi_params.multi_recv;
    m->iov_limit = RAIL_MIN(RAIL_MAX(fi->tx_attr->iov_limit, (size_t)1), (size_t)BTL_OFI_IOV_MAX);
    m->rma_iov_limit = RAIL_MIN(RAIL_MAX(fi->tx_attr->rma_iov_limit, (size_t)1),
                                (size_t)BTL_OFI_IOV_MAX);
    m->max_msg = fi->ep_attr->max_msg_size;
    m->my_rank = rte_info.rank;
    m->nprocs = rte_info.size;
    m->next_key = 1;
}

/* Why this process needs no btl ofi, or NULL. */
static const char *no_peers(void)
{
    if (rte_info.size < 2)
        return "no other process in the job";
    if (rte_info.num_nodes <= 1 && !btl_ofi_params.local_peers)
        return "the job runs on one node (btl_ofi_local_peers=1 reaches node-local peers)";
    return NULL;
}

static int btl_ofi_init(btl_module_t **mods, int *n)
{
    btl_ofi_module_t *m = &btl_ofi_module;
    int max = *n, priority = 0;
    *n = 0;
    btl_ofi_register_params();
    module_close(m);
    if (btl_ofi_prov_check_names(btl_ofi_params.provider) != MPI_SUCCESS)
        return MPI_ERR_ARG;
    const char *idle = max < 1 ? "no module slot left" : no_peers();
    if (idle) {
        RAIL_VERBOSE(btl_verbose, 1, "btl ofi: not used: %s", idle);
        return MPI_SUCCESS;
    }
    /* the tcp provider binds the machine's first interface unless told:
     * a job on one node stays on loopback */
    if (rte_info.num_nodes <= 1)
        setenv("FI_TCP_IFACE", "lo", 0);
    m->info = btl_ofi_prov_choose(m, &priority);
    if (m->info) {
        btl_ofi_check_params(m->info);
        module_setup(m, priority);
    }
    if (!m->info || open_endpoint(m) != MPI_SUCCESS || btl_ofi_mr_init(m) != MPI_SUCCESS ||
        btl_ofi_am_init(m) != MPI_SUCCESS || publish(m) != MPI_SUCCESS) {
        RAIL_VERBOSE(btl_verbose, 1, "btl ofi: not used: %s", m->why[0] ? m->why : "init failed");
        module_close(m);
        return MPI_SUCCESS;
    }
    RAIL_VERBOSE(btl_verbose, 1, "btl ofi: using provider %s, domain %s, fabric %s (priority "
                 "%d, mr_mode 0x%llx%s, %s, wait %s)", m->info->fabric_attr->prov_name,
                 m->info->domain_attr->name, m->info->fabric_attr->name, priority,
                 (unsigned long long)m->mr_mode, btl_ofi_params.mr_strict ? " strict" : "",
                 m->multi_recv ? "FI_MULTI_RECV" : "posted buffers",
                 m->super.wait_fd >= 0 ? "fd" : "polling");
    mods[0] = &m->super;
    *n = 1;
    return MPI_SUCCESS;
}

static int btl_ofi_finalize(btl_module_t *base)
{
    module_close(&btl_ofi_module);
    return MPI_SUCCESS;
}

/* railinfo: the provider init would choose here, or why none. */
static void btl_ofi_describe(char *buf, size_t len)
{
    btl_ofi_module_t probe;
    int priority = 0;
    btl_ofi_register_params();
    if (btl_ofi_prov_check_names(btl_ofi_params.provider) != MPI_SUCCESS) {
        snprintf(buf, len, "declines: btl_ofi_provider=\"%s\" names an unknown provider",
                 btl_ofi_params.provider);
        return;
    }
    memset(&probe, 0, sizeof(probe));
    struct fi_info *fi = btl_ofi_prov_choose(&probe, &priority);
    if (!fi) {
        snprintf(buf, len, "declines: %s", probe.why);
        return;
    }
    snprintf(buf, len, "provider %s, domain %s, fabric %s (priority %d; peers on other nodes)",
             fi->fabric_attr->prov_name, fi->domain_attr->name, fi->fabric_attr->name, priority);
    fi_freeinfo(fi);
}

const btl_component_t btl_ofi_component = {
    .name = "ofi",
    .priority = 20,
    .register_params = btl_ofi_register_params,
    .init = btl_ofi_init,
    .describe = btl_ofi_describe,
};
