/*
 * btl verbs, emulated HCA: the device, its segment and completion channel,
 * other processes' HCAs, fault injection (see verbs_fake.h).
 */
#include "btl/verbs/verbs_fake.h"
#include "base/rail.h"
#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

fake_ctx_t *btl_verbs_fake_ctx;
fake_faults_t btl_verbs_fake_faults;
char btl_verbs_fake_jobid[128];
static struct ibv_device fake_dev;

/* ------------------------------------------------------------ setup */

static int fake_parse_fault(const char *item, size_t len, int rank)
{
    char buf[64];
    unsigned long long n = 0;
    int at = -1, used = 0;
    if (len >= sizeof(buf))
        return MPI_ERR_ARG;
    memcpy(buf, item, len);
    buf[len] = 0;
    char *eq = strchr(buf, '=');
    if (!eq || sscanf(eq + 1, "%llu%n", &n, &used) != 1 || n == 0)
        return MPI_ERR_ARG;
    if (eq[1 + used] == '@' && sscanf(eq + 2 + used, "%d", &at) != 1)
        return MPI_ERR_ARG;
    *eq = 0;
    uint64_t *slot = strcmp(buf, "post_fail") == 0 ? &btl_verbs_fake_faults.post_fail
                   : strcmp(buf, "qp_error") == 0  ? &btl_verbs_fake_faults.qp_error
                   : strcmp(buf, "bad_rkey") == 0  ? &btl_verbs_fake_faults.bad_rkey : NULL;
    if (!slot)
        return MPI_ERR_ARG;
    if (at < 0 || at == rank)
        *slot = n;
    return MPI_SUCCESS;
}

int btl_verbs_fake_setup(const char *jobid, const char *faults, int rank)
{
    snprintf(btl_verbs_fake_jobid, sizeof(btl_verbs_fake_jobid), "%s", jobid && *jobid ? jobid : "nojob");
    memset(&btl_verbs_fake_faults, 0, sizeof(btl_verbs_fake_faults));
    for (const char *s = faults; s && *s;) {
        const char *end = strchr(s, ',');
        size_t l = end ? (size_t)(end - s) : strlen(s);
        if (l && fake_parse_fault(s, l, rank) != MPI_SUCCESS) {
            rail_warn("btl_verbs_fake_faults: cannot parse \"%.*s\" (expected post_fail=N, "
                      "qp_error=N or bad_rkey=N, optionally @rank)", (int)l, s);
            return MPI_ERR_ARG;
        }
        s = end ? end + 1 : NULL;
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ locking */

void btl_verbs_fake_lock(fake_seg_t *s)
{
    if (pthread_mutex_lock(&s->lock) == EOWNERDEAD)
        pthread_mutex_consistent(&s->lock);
}

void btl_verbs_fake_unlock(fake_seg_t *s) { pthread_mutex_unlock(&s->lock); }

void btl_verbs_fake_cq_push(fake_seg_t *seg, int cq, const fake_cqe_t *e, int ch_fd)
{
    fake_cq_t *q = &seg->cq[cq];
    bool wake = false;
    btl_verbs_fake_lock(seg);
    if (q->tail - q->head >= q->cap)
        q->overflow = 1;
    else
        q->ent[q->tail++ % q->cap] = *e;
    if (q->armed) {
        q->armed = 0;
        wake = true;
    }
    btl_verbs_fake_unlock(seg);
    if (wake && ch_fd >= 0) {
        uint8_t b = (uint8_t)cq;
        ssize_t rc = write(ch_fd, &b, 1);   /* EAGAIN: full, readable anyway */
        (void)rc;
    }
}

/* ------------------------------------------------------------ files */

static void fake_path(char *buf, size_t size, const char *what)
{
    snprintf(buf, size, "/dev/shm/rail-%s-verbs-%s", btl_verbs_fake_jobid, what);
}

static void fake_remove_files(fake_ctx_t *c)
{
    if (c->seg_path[0])
        unlink(c->seg_path);
    if (c->ch_path[0])
        unlink(c->ch_path);
    if (c->claim_path[0])
        unlink(c->claim_path);
}

static void fake_atexit(void)
{
    if (btl_verbs_fake_ctx)
        fake_remove_files(btl_verbs_fake_ctx);
}

/* Claim the lowest free HCA number of the job: a link to our pid. */
static int fake_claim(fake_ctx_t *c)
{
    char pid[32], what[32];
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    for (int i = 0; i < FAKE_MAX_HCA; i++) {
        snprintf(what, sizeof(what), "hca%d", i);
        fake_path(c->claim_path, sizeof(c->claim_path), what);
        if (symlink(pid, c->claim_path) == 0)
            return i;
        if (errno != EEXIST)
            break;
    }
    c->claim_path[0] = 0;
    return -1;
}

static void fake_gid_add(fake_seg_t *s, const uint8_t raw[16], int ifindex)
{
    for (int t = IBV_GID_TYPE_ROCE_V1; t <= IBV_GID_TYPE_ROCE_V2 && s->n_gids < FAKE_MAX_GID; t++) {
        struct ibv_gid_entry *e = &s->gids[s->n_gids];
        memcpy(e->gid.raw, raw, 16);
        e->gid_index = s->n_gids++;
        e->port_num = 1;
        e->gid_type = (uint32_t)t;
        e->ndev_ifindex = (uint32_t)ifindex;
    }
}

/* RoCE GIDs: a link-local one naming the HCA, then the IPv4-mapped address
 * of every IPv4 interface that is up but loopback; each as RoCE v1 and v2. */
static void fake_gids(fake_seg_t *s)
{
    uint8_t raw[16] = {0xfe, 0x80};
    raw[8] = 0x02;
    raw[12] = (uint8_t)(s->idx >> 8);
    raw[13] = (uint8_t)s->idx;
    raw[14] = (uint8_t)(s->pid >> 8);
    raw[15] = (uint8_t)s->pid;
    fake_gid_add(s, raw, 0);
    struct ifaddrs *ifa = NULL;
    if (getifaddrs(&ifa) != 0)
        return;
    for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
            (i->ifa_flags & IFF_LOOPBACK))
            continue;
        memset(raw, 0, sizeof(raw));
        raw[10] = raw[11] = 0xff;
        memcpy(raw + 12, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
        fake_gid_add(s, raw, (int)if_nametoindex(i->ifa_name));
    }
    freeifaddrs(ifa);
}

static int fake_seg_create(fake_ctx_t *c, int idx)
{
    char what[32];
    snprintf(what, sizeof(what), "%d", (int)getpid());
    fake_path(c->seg_path, sizeof(c->seg_path), what);
    c->seg_size = (sizeof(fake_seg_t) + 4095) & ~(size_t)4095;
    int fd = open(c->seg_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)c->seg_size) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    c->seg = mmap(NULL, c->seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (c->seg == MAP_FAILED) {
        c->seg = NULL;
        return -1;
    }
    fake_seg_t *s = c->seg;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&s->lock, &a);
    pthread_mutexattr_destroy(&a);
    s->idx = (uint32_t)idx;
    s->pid = (int32_t)getpid();
    fake_gids(s);
    __atomic_store_n(&s->magic, FAKE_MAGIC, __ATOMIC_RELEASE);
    return 0;
}

static int fake_channel_create(fake_ctx_t *c)
{
    char what[32];
    snprintf(what, sizeof(what), "%d.ch", (int)getpid());
    fake_path(c->ch_path, sizeof(c->ch_path), what);
    if (mkfifo(c->ch_path, 0600) != 0)
        return -1;
    c->ch_rd = open(c->ch_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    c->ch_wr = open(c->ch_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    return c->ch_rd >= 0 && c->ch_wr >= 0 ? 0 : -1;
}

/* ------------------------------------------------------------ peers */

static fake_seg_t *fake_peer_map(int idx, pid_t *pid)
{
    char path[256], what[32], target[32];
    snprintf(what, sizeof(what), "hca%d", idx);
    fake_path(path, sizeof(path), what);
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    if (n <= 0)
        return NULL;
    target[n] = 0;
    *pid = (pid_t)atoi(target);
    fake_path(path, sizeof(path), target);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t size = (sizeof(fake_seg_t) + 4095) & ~(size_t)4095;
    struct stat st;
    void *p = MAP_FAILED;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size == size)
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return NULL;
    fake_seg_t *s = p;
    if (__atomic_load_n(&s->magic, __ATOMIC_ACQUIRE) != FAKE_MAGIC || s->pid != *pid) {
        munmap(p, size);
        return NULL;
    }
    return s;
}

/* The HCA numbered idx (ours included), or NULL when it is gone. */
fake_peer_t *btl_verbs_fake_peer_get(fake_ctx_t *c, int idx)
{
    for (int i = 0; i < c->n_peers; i++)
        if (c->peers[i].idx == idx)
            return c->peers[i].seg->closed || kill(c->peers[i].pid, 0) != 0 ? NULL : &c->peers[i];
    pid_t pid = 0;
    fake_seg_t *s = idx == (int)c->seg->idx ? c->seg : fake_peer_map(idx, &pid);
    if (!s)
        return NULL;
    fake_peer_t *np = realloc(c->peers, (size_t)(c->n_peers + 1) * sizeof(*np));
    if (!np)
        return NULL;
    c->peers = np;
    fake_peer_t *p = &c->peers[c->n_peers++];
    p->idx = idx;
    p->pid = s == c->seg ? getpid() : pid;
    p->seg = s;
    char what[32], path[256];
    snprintf(what, sizeof(what), "%d.ch", (int)p->pid);
    fake_path(path, sizeof(path), what);
    p->ch_fd = s == c->seg ? c->ch_wr : open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    return p;
}

/* ------------------------------------------------------------ device */

struct ibv_device **btl_verbs_fake_get_device_list(int *n)
{
    struct ibv_device **l = calloc(2, sizeof(*l));
    if (!l)
        return NULL;
    snprintf(fake_dev.name, sizeof(fake_dev.name), "rail_fake0");
    snprintf(fake_dev.dev_name, sizeof(fake_dev.dev_name), "uverbs_fake0");
    fake_dev.node_type = IBV_NODE_CA;
    fake_dev.transport_type = IBV_TRANSPORT_IB;
    l[0] = &fake_dev;
    if (n)
        *n = 1;
    return l;
}

void btl_verbs_fake_free_device_list(struct ibv_device **l) { free(l); }
const char *btl_verbs_fake_get_device_name(struct ibv_device *d) { return d->name; }

int btl_verbs_fake_close_device(struct ibv_context *ibv)
{
    fake_ctx_t *c = (fake_ctx_t *)ibv;
    if (c->seg)
        c->seg->closed = 1;
    fake_remove_files(c);
    for (int i = 0; i < c->n_peers; i++) {
        if (c->peers[i].seg != c->seg) {
            munmap(c->peers[i].seg, c->seg_size);
            if (c->peers[i].ch_fd >= 0)
                close(c->peers[i].ch_fd);
        }
    }
    free(c->peers);
    if (c->seg)
        munmap(c->seg, c->seg_size);
    if (c->ch_rd >= 0)
        close(c->ch_rd);
    if (c->ch_wr >= 0)
        close(c->ch_wr);
    if (btl_verbs_fake_ctx == c)
        btl_verbs_fake_ctx = NULL;
    free(c);
    return 0;
}

struct ibv_context *btl_verbs_fake_open_device(struct ibv_device *d)
{
    static bool atexit_done;
    if (btl_verbs_fake_ctx) {
        errno = EBUSY;             /* one HCA per process */
        return NULL;
    }
    fake_ctx_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->ch_rd = c->ch_wr = -1;
    c->ibv.device = d;
    c->ibv.num_comp_vectors = 1;
    c->ibv.cmd_fd = c->ibv.async_fd = -1;
    btl_verbs_fake_ctx = c;
    if (!atexit_done)
        atexit(fake_atexit);
    atexit_done = true;
    int idx = fake_claim(c);
    if (idx < 0 || fake_seg_create(c, idx) != 0 || fake_channel_create(c) != 0) {
        int err = errno;
        btl_verbs_fake_close_device(&c->ibv);
        errno = err ? err : ENOMEM;
        return NULL;
    }
    return &c->ibv;
}

int btl_verbs_fake_query_device(struct ibv_context *ibv, struct ibv_device_attr *a)
{
    (void)ibv;
    memset(a, 0, sizeof(*a));
    snprintf(a->fw_ver, sizeof(a->fw_ver), "rail-fake-1");
    a->max_mr_size = (uint64_t)1 << 40;
    a->page_size_cap = 4096;
    a->max_qp = FAKE_MAX_QP;
    a->max_qp_wr = 16384;
    a->max_sge = FAKE_MAX_SGE;
    a->max_cq = FAKE_MAX_CQ;
    a->max_cqe = FAKE_CQ_CAP;
    a->max_mr = FAKE_MAX_MR;
    a->max_pd = 16;
    a->max_qp_rd_atom = a->max_qp_init_rd_atom = 16;
    a->max_srq = FAKE_MAX_SRQ;
    a->max_srq_wr = FAKE_SRQ_CAP;
    a->max_srq_sge = 1;
    a->phys_port_cnt = 1;
    a->vendor_id = 0x5241;         /* "RA" */
    return 0;
}

int btl_verbs_fake_query_port(struct ibv_context *ibv, uint8_t port, struct ibv_port_attr *a)
{
    fake_ctx_t *c = (fake_ctx_t *)ibv;
    if (port != 1)
        return EINVAL;
    memset(a, 0, sizeof(*a));
    a->state = IBV_PORT_ACTIVE;
    a->max_mtu = a->active_mtu = IBV_MTU_4096;
    a->gid_tbl_len = (int)c->seg->n_gids;
    a->max_msg_sz = 1u << 31;
    a->pkey_tbl_len = 1;
    a->active_width = 2;           /* 4x */
    a->active_speed = 32;          /* EDR */
    a->phys_state = 5;             /* LinkUp */
    a->link_layer = IBV_LINK_LAYER_ETHERNET;
    return 0;
}

int btl_verbs_fake_query_gid_ex(struct ibv_context *ibv, uint32_t port, uint32_t index,
                             struct ibv_gid_entry *e)
{
    fake_ctx_t *c = (fake_ctx_t *)ibv;
    if (port != 1 || index >= c->seg->n_gids)
        return ENODATA;
    *e = c->seg->gids[index];
    return 0;
}
