/*
 * pml base: parameters, start-up and shut-down, peers, free lists, and the
 * communicator references of pending requests.
 */
#include "pml/pml_internal.h"
#include "base/param.h"
#include "accel/accel.h"
#include "runtime/rte.h"

#include <stdlib.h>
#include <string.h>

const btl_payload_t pml_no_payload = { "", 0, NULL, NULL };
int pml_my_world;
int pml_eager_credits = 128;
static size_t pml_eager_credit_bytes = 1 << 20;
int pml_verbose;
bool pml_rndv_get = true;
size_t pml_rndv_get_min;        /* the parameter; 0: auto */
size_t pml_rndv_get_min_host;   /* in effect, for host send buffers */
size_t pml_rndv_adapt_min;
bool pml_rndv_adapt_alternate;
const char *pml_rndv_both_ways;
bool pml_rndv_device_ipc = true;
size_t pml_device_eager_max;
size_t pml_frag_inline;
pml_peer_t *pml_peers;
int pml_n_peers;

static int pml_up;

/* Free lists (used inside the critical section only). */
static pml_request_t *req_free;
static pml_frag_t *frag_pool;

/* ------------------------------------------------------------ params */

int pml_register_params(void)
{
    rail_param_register_int("pml_eager_credits", 128,
                            "Eager messages a sender may have in flight to one receiver before it "
                            "must wait for credits (it then uses the rendezvous protocol); bounds "
                            "the memory a flood of unexpected messages takes",
                            RAIL_PARAM_LEVEL_TUNER, &pml_eager_credits);
    rail_param_register_size("pml_eager_credit_bytes", (size_t)1 << 20,
                             "Eager bytes a sender may have in flight to one receiver: its credits "
                             "are min(pml_eager_credits, this / the btl's eager limit), at least 2",
                             RAIL_PARAM_LEVEL_TUNER, &pml_eager_credit_bytes);
    rail_param_register_bool("pml_rndv_get", true,
                             "Use the single-copy get protocol for large messages where the btl "
                             "supports it (false: always pipeline through btl sends)",
                             RAIL_PARAM_LEVEL_TUNER, &pml_rndv_get);
    rail_param_register_size("pml_rndv_get_min", 0,
                             "Smallest message from a host buffer sent by single-copy get "
                             "(CMA on sm); smaller ones are pipelined through btl sends, the "
                             "sender copying in while the receiver copies out.  Device buffers "
                             "always use get where the btl offers it.  0: auto: never when "
                             "every rank has a CPU, from 8 MiB with up to 2 ranks per CPU, "
                             "always beyond; below it, from pml_rndv_adapt_min bytes, the "
                             "receiver chooses by time (docs/performance.md)",
                             RAIL_PARAM_LEVEL_TUNER, &pml_rndv_get_min);
    /* Principle: time every rendezvous message, i.e. from btl sm's default
     * eager limit (16 KiB; BTL_SM_EAGER_DEFAULT).  At 64
     * KiB, 32 KiB messages both ways were pipelined, each process paying
     * two copies per byte: np 2 bibw 32 KiB 13-15 GB/s, 24-29 by the get
     * (MPICH 23); one way and ping-pong unchanged. */
    rail_param_register_size("pml_rndv_adapt_min", 16384,
                             "Host messages of at least this many bytes (below the get "
                             "threshold in effect) to a peer whose btl offers get: the receiver "
                             "chooses, message by message, between the pipeline and the get by "
                             "the time each took before from match to the last byte, per peer "
                             "and size class (a ping-pong favours the pipeline, many messages in "
                             "flight or a VM whose cross-core transfers slowed down favour the "
                             "get; 0: never)",
                             RAIL_PARAM_LEVEL_TUNER, &pml_rndv_adapt_min);
    rail_param_register_string("pml_rndv_both_ways", "auto", "auto|get|time",
                               "Messages chosen by time (pml_rndv_adapt_min) from a process we are "
                               "sending such messages to at the same time: get (single copy, "
                               "untimed: the pipeline's copies on the sender's CPU then slow its "
                               "own receives), time (chosen by time as the others), or auto (get "
                               "where the kernel's copy takes less than 10 times memcpy's, a probe "
                               "at the first such message)",
                               RAIL_PARAM_LEVEL_TUNER, &pml_rndv_both_ways);
    rail_param_register_bool("pml_rndv_adapt_alternate", false,
                             "Testing: every message chosen by time (pml_rndv_adapt_min) takes "
                             "the get and the pipeline in turn",
                             RAIL_PARAM_LEVEL_DEV, &pml_rndv_adapt_alternate);
    rail_param_register_bool("pml_rndv_device_ipc", true,
                             "Large messages from device memory to device memory of another "
                             "process of the node: the receiver copies straight from the "
                             "sender's buffer, opened by the device's IPC (CUDA IPC), instead "
                             "of a pipeline through host memory",
                             RAIL_PARAM_LEVEL_TUNER, &pml_rndv_device_ipc);
    rail_param_register_size("pml_device_eager_max", 0,
                             "Device messages (contiguous) to another process of the node that "
                             "fit the eager limit go eager, staged through host memory (a copy "
                             "out at the sender, one in at the receiver), only up to this many "
                             "bytes; above it they take the rendezvous, where the receiver "
                             "copies straight from the sender's buffer opened by IPC (one "
                             "copy: on an H200 under MPS a ping-pong of 8 bytes took 11.5-12.3 "
                             "us one way against 14.9-15.1 staged), and the send completes when "
                             "the receiver has copied.  Not from MPI_Send, which buffers small "
                             "device messages as host ones (programs that send before they "
                             "receive rely on it).  0: every device message by IPC where it can "
                             "be opened (pml_rndv_device_ipc)",
                             RAIL_PARAM_LEVEL_TUNER, &pml_device_eager_max);
    rail_param_register_int("pml_verbose", 0,
                            "Verbosity of the pml (0: quiet; 1: start-up and fallbacks; 2: "
                            "every communicator it sets up)",
                            RAIL_PARAM_LEVEL_USER, &pml_verbose);
    rail_param_set_flags("pml_verbose", RAIL_PARAM_F_DYNAMIC);
    int rc = pml_rndv_register_pvars();
    rail_progress_register_params();
    btl_base_register_params();
    return rc;
}

/* ------------------------------------------------------------ free lists */

pml_request_t *pml_req_alloc(void)
{
    pml_request_t *r = req_free;
    if (RAIL_LIKELY(r != NULL)) {
        req_free = r->next_free;
        return r;
    }
    return malloc(sizeof(pml_request_t));
}

void pml_req_free(pml_request_t *r)
{
    r->req.obj.kind = OBJ_FREED;
    r->next_free = req_free;
    req_free = r;
}

pml_frag_t *pml_frag_alloc(size_t data_len)
{
    pml_frag_t *f;
    if (data_len <= pml_frag_inline && frag_pool) {
        f = frag_pool;
        frag_pool = *(pml_frag_t **)f->inline_data;
    } else if (data_len <= pml_frag_inline) {
        f = malloc(sizeof(*f) + pml_frag_inline);
        if (!f)
            return NULL;
        f->cap = pml_frag_inline;
    } else {
        f = malloc(sizeof(*f) + data_len);
        if (!f)
            return NULL;
        f->cap = data_len;
    }
    f->data = f->inline_data;
    f->data_len = data_len;
    return f;
}

void pml_frag_free(pml_frag_t *f)
{
    if (f->cap == pml_frag_inline) {
        *(pml_frag_t **)f->inline_data = frag_pool;
        frag_pool = f;
    } else {
        free(f);
    }
}

pml_frag_t *pml_frag_from_inmsg(const pml_inmsg_t *m)
{
    pml_frag_t *f = pml_frag_alloc(m->data_len);
    if (!f) {
        rail_error("pml: out of memory keeping an unexpected message");
        return NULL;
    }
    f->hdr = *m->hdr;
    f->sreq = m->sreq;
    f->msg_len = m->msg_len;
    f->peer = m->peer;
    if (m->data_len)
        memcpy(f->data, m->data, m->data_len);
    return f;
}

/* ------------------------------------------------------------ communicator references
 *
 * A nonblocking or persistent request keeps its communicator alive
 * (MPI_Comm_free with operations pending); releases are deferred to the
 * next progress call, so a communicator is never taken down under the
 * pml's feet. */

static obj_comm_t **deferred;     /* releases waiting for the next progress call */
static int n_deferred, cap_deferred;

void pml_req_comm_ref(pml_request_t *r)
{
    if (r->req.comm) {
        obj_comm_retain(r->req.comm);
        r->rflags |= PML_RF_COMMREF;
    }
}

void pml_req_comm_unref(pml_request_t *r)
{
    if (!(r->rflags & PML_RF_COMMREF))
        return;
    r->rflags &= (uint8_t)~PML_RF_COMMREF;
    if (n_deferred == cap_deferred) {
        int cap = RAIL_MAX(16, 2 * cap_deferred);
        obj_comm_t **d = realloc(deferred, (size_t)cap * sizeof(*d));
        if (!d) {
            rail_warn("pml: out of memory; a communicator will not be freed");
            return;
        }
        deferred = d;
        cap_deferred = cap;
    }
    deferred[n_deferred++] = r->req.comm;
}

/* Lazy progress callback: release what requests let go of. */
static int release_deferred(void *arg)
{
    int n = 0;
    while (n_deferred > 0) {
        obj_comm_t *c = deferred[--n_deferred];
        obj_comm_release(c);
        n++;
    }
    return n;
}

/* ------------------------------------------------------------ init */

static void peers_init(void)
{
    for (int w = 0; w < pml_n_peers; w++) {
        pml_peer_t *p = &pml_peers[w];
        btl_module_t *b = btl_for_peer[w].btl;
        p->world = w;
        p->btl = b;
        p->ep = btl_for_peer[w].ep;
        p->btl_flags = b->flags;
        size_t max_payload = b->max_send_size > 64 ? b->max_send_size - sizeof(pml_rts_hdr_t) : 64;
        p->eager_limit = RAIL_MIN(b->eager_limit, b->max_send_size - sizeof(pml_sync_hdr_t));
        p->frag_size = b->max_send_size - sizeof(pml_frag_hdr_t);
        if (b->max_send_size <= sizeof(pml_frag_hdr_t) + 64)
            p->frag_size = 64;
        int iovs = 0;
        if (pml_rndv_get && (b->flags & BTL_FLAG_GET) && b->get &&
            max_payload > sizeof(pml_get_desc_t) + sizeof(pml_iov64_t))
            iovs = (int)RAIL_MIN((size_t)PML_RTS_MAX_IOV,
                                 (max_payload - sizeof(pml_get_desc_t)) / sizeof(pml_iov64_t));
        p->rts_max_iov = iovs;
        /* Credits are the sender's own business: the receiver only returns
         * what it consumed, so each side may compute them differently. */
        size_t by_bytes = p->eager_limit ? pml_eager_credit_bytes / p->eager_limit : 0;
        p->credits = (int)RAIL_MAX((size_t)2, RAIL_MIN((size_t)pml_eager_credits, by_bytes));
        p->credit_batch = RAIL_MAX(1, p->credits / 2);
        p->consumed = 0;
        p->active = false;
        p->adapt = NULL;
        p->sends_choosing = 0;
        p->adapt_done_ns = 0;
        p->adapt_flip = 0;
        rail_list_init(&p->pending);
        if (p->eager_limit > pml_frag_inline)
            pml_frag_inline = p->eager_limit;
    }
}

int pml_init(int thread_level)
{
    int rc = MPI_SUCCESS;
    if (pml_up++ > 0)
        return MPI_SUCCESS;
    pml_register_params();
    if (pml_eager_credits < 2)
        pml_eager_credits = 2;
    /* auto: the pipeline needs the sender scheduled while the receiver
     * copies; with more than two ranks per CPU it rarely is. */
    bool crowded = rte_info.node_cpus > 0 && rte_info.local_size > 2 * rte_info.node_cpus;
    pml_rndv_get_min_host = pml_rndv_get_min ? pml_rndv_get_min
                            : crowded                 ? 0
                            : rte_info.oversubscribed ? (size_t)8 << 20
                                                      : SIZE_MAX;
    RAIL_CHECK(rail_progress_init(rte_info.oversubscribed, thread_level == MPI_THREAD_MULTIPLE));
    RAIL_CHECK(btl_base_init());
    RAIL_CHECK(rte_modex_commit());
    RAIL_CHECK(rte_fence(true));
    RAIL_CHECK(rte_kernel_update());
    rail_progress_set_load(rte_info.oversubscribed, rte_info.kernel_size > rte_info.local_size);
    RAIL_CHECK(btl_base_add_procs(rte_info.size));
    pml_n_peers = rte_info.size;
    pml_my_world = rte_info.rank;
    pml_peers = calloc((size_t)pml_n_peers, sizeof(pml_peer_t));
    RAIL_CHECK_ALLOC(pml_peers);
    pml_frag_inline = 256;
    peers_init();
    if (pml_frag_inline > 65536)
        pml_frag_inline = 65536;
    btl_register_recv(PML_TAG_MATCH, pml_cb_match);
    btl_register_recv(PML_TAG_ACK, pml_cb_ack);
    btl_register_recv(PML_TAG_CTS, pml_cb_cts);
    btl_register_recv(PML_TAG_CTS_STREAM, pml_cb_cts_stream);
    btl_register_recv(PML_TAG_FRAG, pml_cb_frag);
    btl_register_recv(PML_TAG_FIN, pml_cb_fin);
    btl_register_recv(PML_TAG_CREDIT, pml_cb_credit);
    RAIL_CHECK(rail_progress_register_lazy(pml_progress, NULL, 0, &pml_n_active_peers));
    RAIL_CHECK(rail_progress_register_lazy(release_deferred, NULL, 0, &n_deferred));
    RAIL_CHECK(pml_obj_register());
    RAIL_VERBOSE(pml_verbose, 1, "pml: up, %d peers, eager credits %d, thread level %d",
                 pml_n_peers, pml_eager_credits, thread_level);
    return MPI_SUCCESS;
fail:
    pml_up--;
    return rc;
}

int pml_finalize(void)
{
    if (pml_up == 0 || --pml_up > 0)
        return MPI_SUCCESS;
    /* Push out what is still queued (control messages the peers wait for). */
    pml_queue_fini();
    rail_progress_unregister(pml_progress, NULL);
    release_deferred(NULL);
    rail_progress_unregister(release_deferred, NULL);
    free(deferred);
    deferred = NULL;
    cap_deferred = 0;
    btl_base_finalize();
    pml_ctx_fini_all();
    for (int w = 0; pml_peers && w < pml_n_peers; w++)
        free(pml_peers[w].adapt);
    free(pml_peers);
    pml_peers = NULL;
    pml_n_peers = 0;
    while (req_free) {
        pml_request_t *r = req_free;
        req_free = r->next_free;
        free(r);
    }
    while (frag_pool) {
        pml_frag_t *f = frag_pool;
        frag_pool = *(pml_frag_t **)f->inline_data;
        free(f);
    }
    rail_progress_finalize();
    return MPI_SUCCESS;
}
