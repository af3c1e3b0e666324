/*
 * The node server's PMIx half: server init, the job's namespace, the ranks'
 * registration, and the upcalls (connect, finalize, abort, fence, direct
 * modex).  libpmix calls the upcalls on its own thread: they copy what they
 * need and post it to the event loop, which answers libpmix later through the
 * saved callback; nothing blocks there.
 */
#include "runtime/launch_node_int.h"

#include <fcntl.h>
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An upcall, copied for the loop thread. */
typedef struct node_event {
    int kind;
    node_rank_t *r;
    int rank, code, asking;
    bool lost;
    char *text;
    char *data;
    size_t ndata;
    uint64_t id;
    pmix_status_t status;
    pmix_op_cbfunc_t opcb;
    pmix_modex_cbfunc_t mcb;
    void *cbdata;
} node_event_t;

enum { EV_CONNECTED, EV_FINALIZED, EV_ABORT, EV_FENCE, EV_DMODEX, EV_DMODEX_SERVED };

/* ------------------------------------------------------------ upcalls */

static void node_handle_event(void *arg);

static void node_post(node_event_t *ev)
{
    loop_post(node_handle_event, ev);
}

static bool node_proc_exiting(pid_t pid)
{
    char path[64], buf[1024], state = 'Z';
    unsigned long flags = 0;
    ssize_t n;
    int fd;

    if (pid <= 0)
        return true;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return true;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return true;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2)
        return true;
    /* 0x4 is PF_EXITING: set before an exiting process closes its files. */
    return state == 'Z' || state == 'X' || state == 'x' || (flags & 0x4);
}

static pmix_status_t node_up_connected(const pmix_proc_t *proc, void *obj, pmix_op_cbfunc_t cb,
                                       void *cbdata)
{
    node_event_t *ev = launch_xcalloc(1, sizeof(*ev));
    ev->kind = EV_CONNECTED;
    ev->r = obj;
    node_post(ev);
    return PMIX_OPERATION_SUCCEEDED;
}

/* libpmix also calls this when a client's connection drops without
 * PMIx_Finalize; a client that really finalizes is alive and waiting. */
static pmix_status_t node_up_finalized(const pmix_proc_t *proc, void *obj, pmix_op_cbfunc_t cb,
                                       void *cbdata)
{
    node_event_t *ev = launch_xcalloc(1, sizeof(*ev));
    node_rank_t *r = obj;
    ev->kind = EV_FINALIZED;
    ev->r = r;
    ev->lost = !r || node_proc_exiting(__atomic_load_n(&r->pid, __ATOMIC_ACQUIRE));
    ev->opcb = cb;
    ev->cbdata = cbdata;
    node_post(ev);
    return PMIX_SUCCESS;
}

static pmix_status_t node_up_abort(const pmix_proc_t *proc, void *obj, int status,
                                   const char msg[], pmix_proc_t procs[], size_t nprocs,
                                   pmix_op_cbfunc_t cb, void *cbdata)
{
    node_event_t *ev = launch_xcalloc(1, sizeof(*ev));
    ev->kind = EV_ABORT;
    ev->rank = (int)proc->rank;
    ev->code = status;
    ev->text = launch_xstrdup(msg ? msg : "");
    ev->opcb = cb;
    ev->cbdata = cbdata;
    node_post(ev);
    return PMIX_SUCCESS;
}

static int node_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Canonical name of a fence's participants: "*" or "0,3,5". */
static char *node_fence_sig(const pmix_proc_t procs[], size_t nprocs)
{
    lbuf_t b;
    int *ranks;

    for (size_t i = 0; i < nprocs; i++) {
        if (!PMIX_CHECK_NSPACE(procs[i].nspace, nsrv.job->nspace))
            return NULL;
        if (procs[i].rank == PMIX_RANK_WILDCARD)
            return launch_xstrdup("*");
    }
    if (nprocs == 0)
        return launch_xstrdup("*");
    ranks = launch_xcalloc(nprocs, sizeof(int));
    for (size_t i = 0; i < nprocs; i++)
        ranks[i] = (int)procs[i].rank;
    qsort(ranks, nprocs, sizeof(int), node_cmp_int);
    lbuf_init(&b);
    for (size_t i = 0; i < nprocs; i++) {
        char num[16];
        int n = snprintf(num, sizeof(num), "%s%d", i ? "," : "", ranks[i]);
        lbuf_put(&b, num, (size_t)n);
    }
    lbuf_put(&b, "", 1);
    free(ranks);
    return b.data;
}

static pmix_status_t node_up_fence(const pmix_proc_t procs[], size_t nprocs,
                                   const pmix_info_t info[], size_t ninfo, char *data,
                                   size_t ndata, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    char *sig = node_fence_sig(procs, nprocs);
    node_event_t *ev;

    if (!sig)
        return PMIX_ERR_NOT_SUPPORTED; /* fences across namespaces: not ours */
    ev = launch_xcalloc(1, sizeof(*ev));
    ev->kind = EV_FENCE;
    ev->text = sig;
    ev->data = launch_xmalloc(ndata);
    if (ndata)
        memcpy(ev->data, data, ndata);
    ev->ndata = ndata;
    ev->mcb = cbfunc;
    ev->cbdata = cbdata;
    node_post(ev);
    return PMIX_SUCCESS;
}

static pmix_status_t node_up_dmodex(const pmix_proc_t *proc, const pmix_info_t info[],
                                    size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    node_event_t *ev;

    if (!PMIX_CHECK_NSPACE(proc->nspace, nsrv.job->nspace) || proc->rank >= (pmix_rank_t)nsrv.job->size)
        return PMIX_ERR_NOT_FOUND;
    ev = launch_xcalloc(1, sizeof(*ev));
    ev->kind = EV_DMODEX;
    ev->rank = (int)proc->rank;
    ev->mcb = cbfunc;
    ev->cbdata = cbdata;
    node_post(ev);
    return PMIX_SUCCESS;
}

static void node_release(void *cbdata)
{
    free(cbdata);
}

/* Answer a modex callback with a private copy that libpmix releases. */
static void node_modex_reply(pmix_modex_cbfunc_t cb, void *cbdata, pmix_status_t st,
                             const void *data, size_t n)
{
    char *copy = launch_xmalloc(n);
    if (n)
        memcpy(copy, data, n);
    cb(st, copy, n, cbdata, node_release, copy);
}

static void node_handle_event(void *arg)
{
    node_event_t *ev = arg;

    /* After PMIx_server_finalize no callback may be called. */
    switch (ev->kind) {
    case EV_CONNECTED:
        if (ev->r)
            node_send_rank_state(ev->r->rank, RANK_CONNECTED, 0);
        break;
    case EV_FINALIZED:
        if (ev->r && !ev->lost && !ev->r->exited)
            node_send_rank_state(ev->r->rank, RANK_FINALIZED, 0);
        if (ev->opcb && nsrv.pmix_up)
            ev->opcb(PMIX_SUCCESS, ev->cbdata);
        break;
    case EV_ABORT:
        lmsg_start(&nsrv.msg, LMSG_ABORT);
        lbuf_put_i32(&nsrv.msg, ev->rank);
        lbuf_put_i32(&nsrv.msg, ev->code);
        lbuf_put_str(&nsrv.msg, ev->text);
        node_send();
        if (ev->opcb && nsrv.pmix_up)
            ev->opcb(PMIX_SUCCESS, ev->cbdata);
        break;
    case EV_FENCE: {
        node_seq_t *s = nsrv.seqs;
        while (s && strcmp(s->sig, ev->text) != 0)
            s = s->next;
        if (!s) {
            s = launch_xcalloc(1, sizeof(*s));
            s->sig = launch_xstrdup(ev->text);
            s->next = nsrv.seqs;
            nsrv.seqs = s;
        }
        node_pending_t *p = launch_xcalloc(1, sizeof(*p));
        p->sig = ev->text;
        ev->text = NULL;
        p->seq = s->n++;
        p->cbfunc = ev->mcb;
        p->cbdata = ev->cbdata;
        p->next = nsrv.fences;
        nsrv.fences = p;
        lmsg_start(&nsrv.msg, LMSG_FENCE_UP);
        lbuf_put_str(&nsrv.msg, p->sig);
        lbuf_put_u32(&nsrv.msg, p->seq);
        lbuf_put_bytes(&nsrv.msg, ev->data, ev->ndata);
        node_send();
        break;
    }
    case EV_DMODEX: {
        node_pending_t *p = launch_xcalloc(1, sizeof(*p));
        p->id = ++nsrv.next_id;
        p->cbfunc = ev->mcb;
        p->cbdata = ev->cbdata;
        p->next = nsrv.dmodex;
        nsrv.dmodex = p;
        lmsg_start(&nsrv.msg, LMSG_DMODEX_REQ);
        lbuf_put_u64(&nsrv.msg, p->id);
        lbuf_put_i32(&nsrv.msg, ev->rank);
        node_send();
        break;
    }
    case EV_DMODEX_SERVED:
        lmsg_start(&nsrv.msg, LMSG_DMODEX_DATA);
        lbuf_put_i32(&nsrv.msg, ev->asking);
        lbuf_put_u64(&nsrv.msg, ev->id);
        lbuf_put_i32(&nsrv.msg, ev->status);
        lbuf_put_bytes(&nsrv.msg, ev->data, ev->ndata);
        node_send();
        break;
    }
    free(ev->text);
    free(ev->data);
    free(ev);
}

/* ------------------------------------------------------------ PMIx server */

static void node_add_u32(void *list, const char *key, uint32_t v)
{
    PMIx_Info_list_add(list, key, &v, PMIX_UINT32);
}

static void node_add_rank(void *list, const char *key, int v)
{
    pmix_rank_t r = (pmix_rank_t)v;
    PMIx_Info_list_add(list, key, &r, PMIX_PROC_RANK);
}

static void node_add_u16(void *list, const char *key, int v)
{
    uint16_t u = (uint16_t)v;
    PMIx_Info_list_add(list, key, &u, PMIX_UINT16);
}

/* Move the finished inner list into list as a data array under key. */
static void node_add_array(void *list, const char *key, void *inner)
{
    pmix_data_array_t darray;
    PMIx_Info_list_convert(inner, &darray);
    PMIx_Info_list_add(list, key, &darray, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_DESTRUCT(&darray);
    PMIx_Info_list_release(inner);
}

static char *node_ranks_string(const launch_node_info_t *n, char sep)
{
    lbuf_t b;
    lbuf_init(&b);
    for (int i = 0; i < n->nranks; i++) {
        char num[16];
        int len = snprintf(num, sizeof(num), "%s%d", i ? (sep == ',' ? "," : ";") : "",
                           n->ranks[i]);
        lbuf_put(&b, num, (size_t)len);
    }
    lbuf_put(&b, "", 1);
    return b.data;
}

static int node_add_maps(void *list)
{
    const launch_job_t *job = nsrv.job;
    lbuf_t names, procs;
    char *regex = NULL, *ppn = NULL;
    int rc = 0;

    lbuf_init(&names);
    lbuf_init(&procs);
    for (int i = 0; i < job->nnodes; i++) {
        char *ranks = node_ranks_string(&job->nodes[i], ',');
        if (i) {
            lbuf_put(&names, ",", 1);
            lbuf_put(&procs, ";", 1);
        }
        lbuf_put(&names, job->nodes[i].name, strlen(job->nodes[i].name));
        lbuf_put(&procs, ranks, strlen(ranks));
        free(ranks);
    }
    lbuf_put(&names, "", 1);
    lbuf_put(&procs, "", 1);
    if (PMIx_generate_regex(names.data, &regex) != PMIX_SUCCESS ||
        PMIx_generate_ppn(procs.data, &ppn) != PMIX_SUCCESS) {
        rc = -1;
    } else {
        PMIx_Info_list_add(list, PMIX_NODE_MAP, regex, PMIX_REGEX);
        PMIx_Info_list_add(list, PMIX_PROC_MAP, ppn, PMIX_REGEX);
    }
    free(regex);
    free(ppn);
    lbuf_free(&names);
    lbuf_free(&procs);
    return rc;
}

static void node_add_node_info(void *list, int n)
{
    const launch_node_info_t *ni = &nsrv.job->nodes[n];
    char *peers = node_ranks_string(ni, ',');
    void *inner = PMIx_Info_list_start();

    node_add_u32(inner, PMIX_NODEID, (uint32_t)n);
    PMIx_Info_list_add(inner, PMIX_HOSTNAME, ni->name, PMIX_STRING);
    node_add_u32(inner, PMIX_LOCAL_SIZE, (uint32_t)ni->nranks);
    node_add_u32(inner, PMIX_NODE_SIZE, (uint32_t)ni->nranks);
    PMIx_Info_list_add(inner, PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    node_add_rank(inner, PMIX_LOCALLDR, ni->ranks[0]);
    node_add_array(list, PMIX_NODE_INFO_ARRAY, inner);
    free(peers);
}

static void node_add_proc_info(void *list, int r)
{
    const launch_job_t *job = nsrv.job;
    int app = job->rank_app[r], node = job->rank_node[r];
    void *inner = PMIx_Info_list_start();

    node_add_rank(inner, PMIX_RANK, r);
    node_add_u32(inner, PMIX_APPNUM, (uint32_t)app);
    node_add_rank(inner, PMIX_APP_RANK, r - job->apps[app].first_rank);
    node_add_rank(inner, PMIX_GLOBAL_RANK, r);
    node_add_u16(inner, PMIX_LOCAL_RANK, job->rank_local[r]);
    node_add_u16(inner, PMIX_NODE_RANK, job->rank_local[r]);
    node_add_u32(inner, PMIX_NODEID, (uint32_t)node);
    PMIx_Info_list_add(inner, PMIX_HOSTNAME, job->nodes[node].name, PMIX_STRING);
    node_add_array(list, PMIX_PROC_INFO_ARRAY, inner);
}

int node_pmix_register_nspace(void)
{
    const launch_job_t *job = nsrv.job;
    void *list = PMIx_Info_list_start();
    char *peers = node_ranks_string(nsrv.info, ',');
    pmix_data_array_t darray;
    pmix_status_t st;
    bool no = false;

    node_add_u32(list, PMIX_UNIV_SIZE, (uint32_t)job->universe);
    node_add_u32(list, PMIX_JOB_SIZE, (uint32_t)job->size);
    node_add_u32(list, PMIX_MAX_PROCS, (uint32_t)job->universe);
    node_add_u32(list, PMIX_JOB_NUM_APPS, (uint32_t)job->napps);
    node_add_u32(list, PMIX_NUM_NODES, (uint32_t)job->nnodes);
    PMIx_Info_list_add(list, PMIX_JOBID, job->jobid, PMIX_STRING);
    PMIx_Info_list_add(list, PMIX_SPAWNED, &no, PMIX_BOOL);
    if (node_add_maps(list) != 0) {
        PMIx_Info_list_release(list);
        free(peers);
        return -1;
    }
    /* This node's view, also at the top level for older clients. */
    node_add_u32(list, PMIX_LOCAL_SIZE, (uint32_t)nsrv.nlocal);
    node_add_u32(list, PMIX_NODE_SIZE, (uint32_t)nsrv.nlocal);
    PMIx_Info_list_add(list, PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    node_add_rank(list, PMIX_LOCALLDR, nsrv.info->ranks[0]);
    free(peers);
    for (int a = 0; a < job->napps; a++) {
        void *inner = PMIx_Info_list_start();
        node_add_u32(inner, PMIX_APPNUM, (uint32_t)a);
        node_add_u32(inner, PMIX_APP_SIZE, (uint32_t)job->apps[a].nprocs);
        node_add_rank(inner, PMIX_APPLDR, job->apps[a].first_rank);
        PMIx_Info_list_add(inner, PMIX_WDIR, job->wdir, PMIX_STRING);
        node_add_array(list, PMIX_APP_INFO_ARRAY, inner);
    }
    for (int n = 0; n < job->nnodes; n++)
        node_add_node_info(list, n);
    for (int r = 0; r < job->size; r++)
        node_add_proc_info(list, r);
    PMIx_Info_list_convert(list, &darray);
    PMIx_Info_list_release(list);
    st = PMIx_server_register_nspace(job->nspace, nsrv.nlocal, darray.array, darray.size, NULL, NULL);
    PMIX_DATA_ARRAY_DESTRUCT(&darray);
    return st == PMIX_SUCCESS || st == PMIX_OPERATION_SUCCEEDED ? 0 : -1;
}

static pmix_server_module_t node_module = {
    .client_connected = node_up_connected,
    .client_finalized = node_up_finalized,
    .abort = node_up_abort,
    .fence_nb = node_up_fence,
    .direct_modex = node_up_dmodex,
};

int node_pmix_init(void)
{
    pmix_topology_t topo = { .source = "hwloc:" HWLOC_VERSION, .topology = nsrv.topo };
    void *list = PMIx_Info_list_start();
    pmix_data_array_t darray;
    pmix_status_t st;
    bool no = false;

    /* Defaults that make start-up faster; the user's own settings win. */
    setenv("PMIX_MCA_gds", "hash", 0);
    PMIx_Info_list_add(list, PMIX_SERVER_TMPDIR, nsrv.tmpdir, PMIX_STRING);
    PMIx_Info_list_add(list, PMIX_SYSTEM_TMPDIR, nsrv.tmpdir, PMIX_STRING);
    PMIx_Info_list_add(list, PMIX_SERVER_TOOL_SUPPORT, &no, PMIX_BOOL);
    PMIx_Info_list_add(list, PMIX_SERVER_SYSTEM_SUPPORT, &no, PMIX_BOOL);
    PMIx_Info_list_add(list, PMIX_HOSTNAME, nsrv.info->name, PMIX_STRING);
    if (nsrv.topo)
        PMIx_Info_list_add(list, PMIX_TOPOLOGY2, &topo, PMIX_TOPO);
    PMIx_Info_list_convert(list, &darray);
    PMIx_Info_list_release(list);
    st = PMIx_server_init(&node_module, darray.array, darray.size);
    PMIX_DATA_ARRAY_DESTRUCT(&darray);
    if (st != PMIX_SUCCESS) {
        node_send_error(1, "%s: PMIx_server_init failed: %s", nsrv.info->name, PMIx_Error_string(st));
        return -1;
    }
    nsrv.pmix_up = true;
    return 0;
}

/* Register a rank with libpmix and add its PMIx variables to r->env. */
int node_pmix_register_rank(node_rank_t *r)
{
    pmix_proc_t proc;
    pmix_status_t st;

    PMIX_LOAD_PROCID(&proc, nsrv.job->nspace, (pmix_rank_t)r->rank);
    st = PMIx_server_register_client(&proc, geteuid(), getegid(), r, NULL, NULL);
    if (st == PMIX_SUCCESS || st == PMIX_OPERATION_SUCCEEDED)
        st = PMIx_server_setup_fork(&proc, &r->env);
    if (st != PMIX_SUCCESS) {
        node_send_error(1, "%s: cannot register rank %d with PMIx: %s", nsrv.info->name, r->rank,
                        PMIx_Error_string(st));
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ answers from the root */

static node_pending_t *node_take(node_pending_t **list, const char *sig, uint32_t seq, uint64_t id)
{
    for (node_pending_t **pp = list; *pp; pp = &(*pp)->next) {
        node_pending_t *p = *pp;
        if (sig ? (p->sig && strcmp(p->sig, sig) == 0 && p->seq == seq) : p->id == id) {
            *pp = p->next;
            return p;
        }
    }
    return NULL;
}

static void node_dmodex_served(pmix_status_t st, char *data, size_t sz, void *cbdata)
{
    node_event_t *ev = cbdata; /* on libpmix's thread */
    ev->status = st;
    ev->data = launch_xmalloc(sz);
    if (sz)
        memcpy(ev->data, data, sz);
    ev->ndata = sz;
    node_post(ev);
}

static void node_handle_dmodex_serve(lbuf_t *p)
{
    node_event_t *ev = launch_xcalloc(1, sizeof(*ev));
    pmix_proc_t proc;
    pmix_status_t st;

    ev->kind = EV_DMODEX_SERVED;
    ev->asking = lbuf_get_i32(p);
    ev->id = lbuf_get_u64(p);
    PMIX_LOAD_PROCID(&proc, nsrv.job->nspace, (pmix_rank_t)lbuf_get_i32(p));
    st = nsrv.pmix_up ? PMIx_server_dmodex_request(&proc, node_dmodex_served, ev) : PMIX_ERR_INIT;
    if (st != PMIX_SUCCESS) {
        ev->status = st;
        node_handle_event(ev);
    }
}

static void node_handle_modex_answer(uint32_t type, lbuf_t *p)
{
    char *sig = type == LMSG_FENCE_DOWN ? lbuf_get_str(p) : NULL;
    uint32_t seq = type == LMSG_FENCE_DOWN ? lbuf_get_u32(p) : 0;
    uint64_t id = type == LMSG_DMODEX_RESP ? lbuf_get_u64(p) : 0;
    pmix_status_t st = lbuf_get_i32(p);
    size_t n;
    const void *data = lbuf_get_bytes(p, &n);
    node_pending_t *pend = node_take(sig ? &nsrv.fences : &nsrv.dmodex, sig, seq, id);

    if (pend && nsrv.pmix_up && !p->bad)
        node_modex_reply(pend->cbfunc, pend->cbdata, st, data, n);
    if (pend) {
        free(pend->sig);
        free(pend);
    }
    free(sig);
}

void node_pmix_handle(uint32_t type, lbuf_t *p)
{
    if (type == LMSG_DMODEX_SERVE)
        node_handle_dmodex_serve(p);
    else
        node_handle_modex_answer(type, p);
}
