/*
 * rte on the PMIx client API.
 *
 * Works under any PMIx server (Rail's mpirun/raild, Open MPI's mpirun, Slurm's
 * srun --mpi=pmix).  Job facts are read once in rte_init(); per-rank facts of
 * other ranks (node, host) are looked up lazily and cached.  Without a server
 * the process is a singleton and the modex is a private key/value list.
 */
#include "base/rail.h"
#include "base/log.h"
#include "base/param.h"
#include "runtime/rte.h"

#include <errno.h>
#include <pmix.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

rte_info_t rte_info;

/* Modex keys live under "rail." so they never collide with "pmix." keys. */
#define RTE_KEY_PREFIX "rail."

typedef struct rte_kv {
    struct rte_kv *next;
    char *key;
    void *data;
    size_t len;
} rte_kv_t;

static struct {
    bool initialized;
    bool pmix;               /* connected to a PMIx server */
    pmix_proc_t me;
    pthread_mutex_t lock;    /* guards the lazy caches below */
    int *node_of;            /* node id per rank, -2 = not looked up yet */
    char **host_of;          /* host name per rank, NULL = not looked up yet */
    char **node_names;       /* node list of the namespace, for node ids by name */
    int num_node_names;
    rte_kv_t *local_kv;      /* singleton modex */
} rte = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ------------------------------------------------------------ PMIx values */

static int rte_status(pmix_status_t st)
{
    switch (st) {
    case PMIX_SUCCESS:
        return MPI_SUCCESS;
    case PMIX_ERR_NOMEM:
        return MPI_ERR_NO_MEM;
    case PMIX_ERR_BAD_PARAM:
        return MPI_ERR_ARG;
    default:
        return MPI_ERR_OTHER;
    }
}

static bool rte_value_to_u64(const pmix_value_t *v, uint64_t *out)
{
    switch (v->type) {
    case PMIX_UINT8: *out = v->data.uint8; return true;
    case PMIX_UINT16: *out = v->data.uint16; return true;
    case PMIX_UINT32: *out = v->data.uint32; return true;
    case PMIX_UINT64: *out = v->data.uint64; return true;
    case PMIX_SIZE: *out = v->data.size; return true;
    case PMIX_PROC_RANK: *out = v->data.rank; return true;
    case PMIX_INT8: *out = (uint64_t)v->data.int8; return v->data.int8 >= 0;
    case PMIX_INT16: *out = (uint64_t)v->data.int16; return v->data.int16 >= 0;
    case PMIX_INT32: *out = (uint64_t)v->data.int32; return v->data.int32 >= 0;
    case PMIX_INT64: *out = (uint64_t)v->data.int64; return v->data.int64 >= 0;
    case PMIX_INT: *out = (uint64_t)v->data.integer; return v->data.integer >= 0;
    case PMIX_UINT: *out = v->data.uint; return true;
    default: return false;
    }
}

/* A launcher-provided value: look only in what the server already gave us,
 * never wait for a rank to commit it (PMIX_OPTIONAL). */
static pmix_value_t *rte_get_optional(pmix_rank_t rank, const char *key)
{
    pmix_proc_t p;
    pmix_info_t info;
    pmix_value_t *v = NULL;
    bool yes = true;

    PMIX_LOAD_PROCID(&p, rte.me.nspace, rank);
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    if (PMIx_Get(&p, key, &info, 1, &v) != PMIX_SUCCESS)
        v = NULL;
    PMIX_INFO_DESTRUCT(&info);
    return v;
}

static bool rte_get_uint(pmix_rank_t rank, const char *key, uint64_t *out)
{
    pmix_value_t *v = rte_get_optional(rank, key);
    bool ok = v && rte_value_to_u64(v, out);
    if (v)
        PMIX_VALUE_RELEASE(v);
    return ok;
}

/* malloc()ed copy of a string value, or NULL. */
static char *rte_get_string(pmix_rank_t rank, const char *key)
{
    pmix_value_t *v = rte_get_optional(rank, key);
    char *s = NULL;
    if (v && v->type == PMIX_STRING && v->data.string)
        s = strdup(v->data.string);
    if (v)
        PMIX_VALUE_RELEASE(v);
    return s;
}

/* ------------------------------------------------------------ job facts */

static int rte_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* "0,1,4-6" -> sorted array; returns the count or -1. */
static int rte_parse_ranks(const char *s, int **out)
{
    int n = 0, cap = 16;
    int *v = malloc(sizeof(int) * (size_t)cap);
    const char *p = s;

    while (v && *p) {
        char *end;
        long a = strtol(p, &end, 10), b;
        if (end == p || a < 0)
            goto bad;
        b = a;
        if (*end == '-') {
            p = end + 1;
            b = strtol(p, &end, 10);
            if (end == p || b < a)
                goto bad;
        }
        for (long r = a; r <= b; r++) {
            if (n == cap) {
                int *nv = realloc(v, sizeof(int) * (size_t)(cap *= 2));
                if (!nv)
                    goto bad;
                v = nv;
            }
            v[n++] = (int)r;
        }
        p = end;
        if (*p == ',')
            p++;
        else if (*p)
            goto bad;
    }
    if (!v)
        return -1;
    qsort(v, (size_t)n, sizeof(int), rte_cmp_int);
    *out = v;
    return n;
bad:
    free(v);
    return -1;
}

static int rte_cpuset_count(pid_t pid)
{
    size_t size = CPU_ALLOC_SIZE(8192);
    cpu_set_t *set = CPU_ALLOC(8192);
    int n = 0;
    if (set && sched_getaffinity(pid, size, set) == 0)
        n = CPU_COUNT_S(size, set);
    CPU_FREE(set);
    return n;
}

/* Testing: a directory standing for / when reading the cgroup CPU quota. */
static const char *rte_cgroup_root = "";
static const char *rte_if_include = "";

int rte_register_params(void)
{
    int rc = rail_param_register_string(
        "rte_cgroup_root", "", NULL,
        "Testing: read the cgroup CPU quota from <this>/proc/self/cgroup and "
        "<this>/sys/fs/cgroup instead of / (empty: /)",
        RAIL_PARAM_LEVEL_DEV, &rte_cgroup_root);
    if (rc == MPI_SUCCESS)
        rc = rail_param_set_flags("rte_cgroup_root", RAIL_PARAM_F_TEST);
    if (rc == MPI_SUCCESS)
        rc = rail_param_register_string(
            "rte_if_include", "", NULL,
            "The frontend: interfaces (names, IPv4 subnets) that mpirun offers raild to reach "
            "it, and that the btls leave out of the backend unless btl_if_include names them; "
            "empty: every interface (principle: launch and MPI data share nothing by default "
            "only when told which network is which)",
            RAIL_PARAM_LEVEL_USER, &rte_if_include);
    return rc;
}

/* CPUs of this process, and whether the node is oversubscribed.  A launcher
 * that binds each rank to a core leaves the node's CPUs in its own (the
 * parent's) cpuset, so the node's count is the larger of the two.  The
 * ranks of a node share a cgroup (a container, a job's cgroup), so a CPU
 * quota there caps the node's count (rte_cgroup.c). */
static void rte_set_cpus(void)
{
    int mine = rte_cpuset_count(0), parent = rte_cpuset_count(getppid());
    int node = RAIL_MAX(mine, parent);
    if (mine <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        mine = n > 0 ? (int)n : 1;
        node = RAIL_MAX(node, mine);
    }
    int quota = rte_cgroup_cpu_limit(rte_cgroup_root);
    if (quota > 0 && quota < node)
        node = quota;
    rte_info.num_cpus = mine;
    rte_info.node_cpus = node;
    rte_info.oversubscribed = rte_info.local_size > node;
}

static uint64_t rte_hash64(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

/* The rule documented in rte.h. */
static void rte_set_jobid(const char *nspace)
{
    const char *s = nspace;
    size_t n;

    if (strncmp(s, "rail.", 5) == 0 && s[5])
        s += 5;
    n = strlen(s);
    if (n > 40) {
        snprintf(rte_info.jobid, sizeof(rte_info.jobid), "h%016llx",
                 (unsigned long long)rte_hash64(nspace));
        return;
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_';
        rte_info.jobid[i] = ok ? c : '_';
    }
    rte_info.jobid[n] = '\0';
}

static void rte_load_node_names(void)
{
    char *list = NULL;
    if (PMIx_Resolve_nodes(rte.me.nspace, &list) != PMIX_SUCCESS || !list)
        return;
    int n = 1;
    for (char *p = list; *p; p++)
        n += *p == ',';
    rte.node_names = calloc((size_t)n, sizeof(char *));
    if (rte.node_names) {
        char *save = NULL;
        for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
            rte.node_names[rte.num_node_names++] = strdup(t);
    }
    free(list);
}

static int rte_node_index_by_name(const char *host)
{
    for (int i = 0; i < rte.num_node_names; i++)
        if (rte.node_names[i] && strcmp(rte.node_names[i], host) == 0)
            return i;
    return -1;
}

static int rte_init_local_peers(void)
{
    char *peers = rte_get_string(PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS);
    int n = -1;
    uint64_t v;

    if (peers)
        n = rte_parse_ranks(peers, &rte_info.local_peers);
    free(peers);
    if (n <= 0) {
        /* Without the list we only know ourselves. */
        rte_info.local_peers = malloc(sizeof(int));
        if (!rte_info.local_peers)
            return MPI_ERR_NO_MEM;
        rte_info.local_peers[0] = rte_info.rank;
        n = 1;
        if (rte_get_uint(PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, &v) && v > 1)
            rail_warn("the launcher gave no list of local peers (PMIX_LOCAL_PEERS)");
    }
    rte_info.local_size = n;
    if (rte_get_uint(rte.me.rank, PMIX_LOCAL_RANK, &v)) {
        rte_info.local_rank = (int)v;
    } else {
        rte_info.local_rank = 0;
        for (int i = 0; i < n; i++)
            if (rte_info.local_peers[i] == rte_info.rank)
                rte_info.local_rank = i;
    }
    rte_info.node_rank = rte_get_uint(rte.me.rank, PMIX_NODE_RANK, &v) ? (int)v
                                                                        : rte_info.local_rank;
    return MPI_SUCCESS;
}

static void rte_init_nodes(void)
{
    uint64_t v;

    rte_load_node_names();
    if (rte_get_uint(PMIX_RANK_WILDCARD, PMIX_NUM_NODES, &v) && v > 0)
        rte_info.num_nodes = (int)v;
    else
        rte_info.num_nodes = rte.num_node_names > 0 ? rte.num_node_names : 1;
    if (rte_get_uint(rte.me.rank, PMIX_NODEID, &v)) {
        rte_info.node_id = (uint32_t)v;
    } else {
        int i = rte_node_index_by_name(rte_info.hostname);
        rte_info.node_id = i >= 0 ? (uint32_t)i : 0;
    }
}

static int rte_init_caches(void)
{
    rte.node_of = malloc(sizeof(int) * (size_t)rte_info.size);
    rte.host_of = calloc((size_t)rte_info.size, sizeof(char *));
    if (!rte.node_of || !rte.host_of)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < rte_info.size; i++)
        rte.node_of[i] = -2;
    return MPI_SUCCESS;
}

static int rte_init_from_pmix(void)
{
    int rc;
    uint64_t v;
    char *s;

    rte_info.rank = (int)rte.me.rank;
    snprintf(rte_info.nspace, sizeof(rte_info.nspace), "%s", rte.me.nspace);
    rte_set_jobid(rte.me.nspace);
    if (!rte_get_uint(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &v) || v == 0) {
        rail_error("the PMIx server did not give the job size (PMIX_JOB_SIZE)");
        return MPI_ERR_OTHER;
    }
    rte_info.size = (int)v;
    rte_info.universe_size = rte_get_uint(PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, &v) ? (int)v
                                                                                   : rte_info.size;
    if (rte_get_uint(rte.me.rank, PMIX_APPNUM, &v))
        rte_info.appnum = (int)v;
    s = rte_get_string(rte.me.rank, PMIX_HOSTNAME);
    if (s)
        snprintf(rte_info.hostname, sizeof(rte_info.hostname), "%s", s);
    else
        gethostname(rte_info.hostname, sizeof(rte_info.hostname) - 1);
    free(s);
    RAIL_CHECK(rte_init_local_peers());
    rte_init_nodes();
    RAIL_CHECK(rte_init_caches());
    return MPI_SUCCESS;
fail:
    return rc;
}

/* ------------------------------------------------------------ no server */

static long rte_env_long(const char *name)
{
    const char *s = getenv(name);
    return s && *s ? strtol(s, NULL, 10) : -1;
}

/* srun without --mpi=pmix starts N copies with SLURM_* step variables and no
 * PMIx server: refuse rather than run N singletons. */
static bool rte_started_by_srun_without_pmix(void)
{
    long step = rte_env_long("SLURM_STEP_ID");
    long ntasks = rte_env_long("SLURM_STEP_NUM_TASKS");

    if (step < 0)
        step = rte_env_long("SLURM_STEPID");
    if (ntasks < 0)
        ntasks = rte_env_long("SLURM_NTASKS");
    if (ntasks < 0)
        ntasks = rte_env_long("SLURM_NPROCS");
    /* Batch/extern/interactive steps have ids near 2^32: a plain run there is a singleton. */
    return step >= 0 && step < 4294967290L && getenv("SLURM_PROCID") && ntasks > 1;
}

static int rte_init_singleton(void)
{
    unsigned int rnd = 0;

    if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
        rnd = (unsigned int)getpid() * 2654435761u;
    rte_info.rank = 0;
    rte_info.size = 1;
    rte_info.local_rank = rte_info.node_rank = 0;
    rte_info.local_size = 1;
    rte_info.node_id = 0;
    rte_info.num_nodes = 1;
    rte_info.appnum = 0;
    rte_info.universe_size = 1;
    rte_info.singleton = true;
    rte_info.local_peers = malloc(sizeof(int));
    if (!rte_info.local_peers)
        return MPI_ERR_NO_MEM;
    rte_info.local_peers[0] = 0;
    gethostname(rte_info.hostname, sizeof(rte_info.hostname) - 1);
    snprintf(rte_info.jobid, sizeof(rte_info.jobid), "s%x%04x", (unsigned)getpid(), rnd & 0xffff);
    snprintf(rte_info.nspace, sizeof(rte_info.nspace), "singleton.%s", rte_info.jobid);
    return rte_init_caches();
}

static int rte_init_without_server(pmix_status_t st)
{
    if (rte_started_by_srun_without_pmix()) {
        rail_error("started by srun without PMIx: use srun --mpi=pmix "
                   "(or MpiDefault=pmix in slurm.conf); refusing to run %ld separate singletons",
                   rte_env_long("SLURM_STEP_NUM_TASKS") > 0 ? rte_env_long("SLURM_STEP_NUM_TASKS")
                                                            : rte_env_long("SLURM_NTASKS"));
        return MPI_ERR_OTHER;
    }
    if (rte_env_long("PMI_SIZE") > 1) {
        rail_error("started by a PMI-1/PMI-2 launcher (PMI_SIZE=%ld, e.g. MPICH's mpiexec); "
                   "Rail MPI needs a PMIx launcher: use Rail's mpirun or srun --mpi=pmix",
                   rte_env_long("PMI_SIZE"));
        return MPI_ERR_OTHER;
    }
    if (getenv("PMIX_NAMESPACE") || getenv("PMIX_SERVER_URI41") || getenv("PMIX_SERVER_URI4")) {
        rail_error("cannot reach the PMIx server that launched this process: %s",
                   PMIx_Error_string(st));
        return MPI_ERR_OTHER;
    }
    return rte_init_singleton();
}

/* ------------------------------------------------------------ interface */

int rte_init(void)
{
    int rc;
    pmix_status_t st;

    if (rte.initialized)
        return MPI_SUCCESS;
    memset(&rte_info, 0, sizeof(rte_info));
    rte_register_params();
    st = PMIx_Init(&rte.me, NULL, 0);
    if (st == PMIX_SUCCESS) {
        rte.pmix = true;
        rc = rte_init_from_pmix();
    } else {
        rc = rte_init_without_server(st);
    }
    if (rc != MPI_SUCCESS)
        goto fail;
    rte_set_cpus();
    rail_log_set_identity(rte_info.rank, rte_info.hostname);
    rte.initialized = true;
    rc = rte_kernel_put();
    if (rc != MPI_SUCCESS)
        goto fail;
    return MPI_SUCCESS;
fail:
    rte_finalize();
    return rc;
}

static void rte_free_all(void)
{
    for (int i = 0; rte.host_of && i < rte_info.size; i++)
        free(rte.host_of[i]);
    for (int i = 0; i < rte.num_node_names; i++)
        free(rte.node_names[i]);
    while (rte.local_kv) {
        rte_kv_t *kv = rte.local_kv;
        rte.local_kv = kv->next;
        free(kv->key);
        free(kv->data);
        free(kv);
    }
    free(rte.host_of);
    free(rte.node_of);
    free(rte.node_names);
    free(rte_info.local_peers);
    rte.host_of = NULL;
    rte.node_of = NULL;
    rte.node_names = NULL;
    rte.num_node_names = 0;
    rte_info.local_peers = NULL;
}

int rte_finalize(void)
{
    pmix_status_t st = PMIX_SUCCESS;

    if (rte.pmix)
        st = PMIx_Finalize(NULL, 0);
    rte.pmix = false;
    rte_free_all();
    rte.initialized = false;
    return rte_status(st);
}

static int rte_make_key(char *buf, size_t size, const char *key)
{
    if (!key || !*key || strlen(key) + sizeof(RTE_KEY_PREFIX) > RAIL_MIN(size, PMIX_MAX_KEYLEN))
        return MPI_ERR_ARG;
    snprintf(buf, size, RTE_KEY_PREFIX "%s", key);
    return MPI_SUCCESS;
}

static int rte_local_put(const char *key, const void *data, size_t len)
{
    rte_kv_t *kv = calloc(1, sizeof(*kv));
    if (!kv)
        return MPI_ERR_NO_MEM;
    kv->key = strdup(key);
    kv->data = malloc(len ? len : 1);
    if (!kv->key || !kv->data) {
        free(kv->key);
        free(kv->data);
        free(kv);
        return MPI_ERR_NO_MEM;
    }
    memcpy(kv->data, data, len);
    kv->len = len;
    kv->next = rte.local_kv; /* newest first: a later put wins */
    rte.local_kv = kv;
    return MPI_SUCCESS;
}

int rte_modex_put(const char *key, const void *data, size_t len)
{
    char k[PMIX_MAX_KEYLEN + 1];
    pmix_value_t val;
    int rc;

    if (!data && len)
        return MPI_ERR_ARG;
    RAIL_CHECK(rte_make_key(k, sizeof(k), key));
    if (!rte.pmix)
        return rte_local_put(k, data, len);
    val.type = PMIX_BYTE_OBJECT;
    val.data.bo.bytes = (char *)(uintptr_t)data;
    val.data.bo.size = len;
    return rte_status(PMIx_Put(PMIX_GLOBAL, k, &val));
fail:
    return rc;
}

int rte_modex_commit(void)
{
    return rte.pmix ? rte_status(PMIx_Commit()) : MPI_SUCCESS;
}

int rte_fence(bool collect)
{
    pmix_info_t info;
    pmix_status_t st;

    if (!rte.pmix)
        return MPI_SUCCESS;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    st = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (st != PMIX_SUCCESS)
        rail_error("PMIx_Fence failed: %s", PMIx_Error_string(st));
    return rte_status(st);
}

static int rte_copy_out(const void *src, size_t len, void **data, size_t *lenp)
{
    void *p = malloc(len ? len : 1);
    if (!p)
        return MPI_ERR_NO_MEM;
    if (len)
        memcpy(p, src, len);
    *data = p;
    *lenp = len;
    return MPI_SUCCESS;
}

int rte_modex_get(int rank, const char *key, void **data, size_t *len)
{
    char k[PMIX_MAX_KEYLEN + 1];
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    pmix_status_t st;
    int rc;

    if (rank < 0 || rank >= rte_info.size || !data || !len)
        return MPI_ERR_ARG;
    RAIL_CHECK(rte_make_key(k, sizeof(k), key));
    if (!rte.pmix) {
        for (rte_kv_t *kv = rte.local_kv; kv; kv = kv->next)
            if (strcmp(kv->key, k) == 0)
                return rte_copy_out(kv->data, kv->len, data, len);
        return MPI_ERR_OTHER;
    }
    PMIX_LOAD_PROCID(&p, rte.me.nspace, (pmix_rank_t)rank);
    st = PMIx_Get(&p, k, NULL, 0, &v);
    if (st != PMIX_SUCCESS)
        return rte_status(st);
    if (v->type == PMIX_BYTE_OBJECT)
        rc = rte_copy_out(v->data.bo.bytes, v->data.bo.size, data, len);
    else
        rc = MPI_ERR_INTERN;
    PMIX_VALUE_RELEASE(v);
fail:
    return rc;
}

int rte_node_of(int rank)
{
    uint64_t v;
    int node;

    if (rank == rte_info.rank)
        return (int)rte_info.node_id;
    if (rank < 0 || rank >= rte_info.size || !rte.node_of)
        return -1;
    pthread_mutex_lock(&rte.lock);
    node = rte.node_of[rank];
    if (node == -2) {
        node = -1;
        if (rte.pmix && rte_get_uint((pmix_rank_t)rank, PMIX_NODEID, &v)) {
            node = (int)v;
        } else if (rte.pmix) {
            char *host = rte_get_string((pmix_rank_t)rank, PMIX_HOSTNAME);
            if (host)
                node = rte_node_index_by_name(host);
            free(host);
        }
        for (int i = 0; node < 0 && i < rte_info.local_size; i++)
            if (rte_info.local_peers[i] == rank)
                node = (int)rte_info.node_id;
        rte.node_of[rank] = node;
    }
    pthread_mutex_unlock(&rte.lock);
    return node;
}

const char *rte_hostname_of(int rank)
{
    const char *name = "?";

    if (rank == rte_info.rank)
        return rte_info.hostname;
    if (rank < 0 || rank >= rte_info.size || !rte.host_of)
        return name;
    pthread_mutex_lock(&rte.lock);
    if (!rte.host_of[rank] && rte.pmix)
        rte.host_of[rank] = rte_get_string((pmix_rank_t)rank, PMIX_HOSTNAME);
    if (rte.host_of[rank])
        name = rte.host_of[rank];
    pthread_mutex_unlock(&rte.lock);
    return name;
}

int rte_shm_name(char *buf, size_t size, const char *suffix)
{
    int n;
    if (!buf || !suffix || strchr(suffix, '/'))
        return MPI_ERR_ARG;
    n = snprintf(buf, size, "/" RTE_SHM_PREFIX "%s-%s", rte_info.jobid, suffix);
    return n > 0 && (size_t)n < size ? MPI_SUCCESS : MPI_ERR_ARG;
}

static volatile sig_atomic_t rte_abort_status = 1;

static void rte_abort_alarm(int sig)
{
    (void)sig;
    _exit(rte_abort_status);
}

void rte_abort(int code, const char *msg)
{
    /* The launcher reports the failure with this status; 0 would read as success. */
    int status = (code & 0xff) ? (code & 0xff) : 1;

    if (msg && *msg)
        rail_error("%s", msg);
    fflush(stdout);
    fflush(stderr);
    if (rte.pmix) {
        /* The server ends the job, usually killing us here; should it never
         * answer, leave anyway after 2 seconds.  (Waiting to be killed after
         * the answer was tried: Open MPI 4.1's mpirun does not kill the
         * aborting rank and then hangs or crashes more often.) */
        rte_abort_status = status;
        signal(SIGALRM, rte_abort_alarm);
        alarm(2);
        PMIx_Abort(code, msg ? msg : "", NULL, 0);
    }
    _exit(status);
}
