/* Harness of the btl tcp unit tests (see tcp_test.h). */
#include "test/btl/tcp/tcp_test.h"
#include "btl/tcp/tcp.h"
#include "base/param.h"
#include "runtime/rte.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Stand-ins for what btl/btl_base.c defines in the library. */
btl_recv_cb_t btl_recv_table[BTL_TAG_MAX];
int btl_verbose;

int tcp_test_rank = -1;
char tcp_test_dir[256];
static int tcp_test_nprocs;

double tcp_test_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ directories, logs */

bool tcp_test_mkdir(char *path, size_t len, const char *tag)
{
    snprintf(path, len, "/tmp/rail-tcp-%s-XXXXXX", tag);
    return mkdtemp(path) != NULL;
}

void tcp_test_rmdir(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char p[600];
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
        if (unlink(p) != 0 && errno == EISDIR)
            tcp_test_rmdir(p);
    }
    if (d)
        closedir(d);
    rmdir(path);
}

char *tcp_test_log(int rank)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/stderr.%d", tcp_test_dir, rank);
    FILE *f = fopen(path, "r");
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf)
        exit(2);
    while (f) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        buf = realloc(buf, (cap *= 2) + 1);
        if (!buf)
            exit(2);
    }
    if (f)
        fclose(f);
    buf[n] = '\0';
    return buf;
}

int tcp_test_count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static void print_logs(const char *name, int nprocs)
{
    for (int r = 0; r < nprocs; r++) {
        char *log = tcp_test_log(r);
        if (log[0])
            fprintf(stderr, "--- %s: stderr of rank %d ---\n%s", name, r, log);
        free(log);
    }
}

/* ------------------------------------------------------------ running */

static void setenv_list(const char *env)
{
    char buf[1024], *save = NULL;
    snprintf(buf, sizeof(buf), "%s", env ? env : "");
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (eq) {
            *eq = '\0';
            setenv(tok, eq + 1, 1);
        }
    }
}

static void child(int rank, int n, tcp_test_fn fn, void *arg, const tcp_test_opts_t *o)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/stderr.%d", tcp_test_dir, rank);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    if (fd >= 0) {
        dup2(fd, 2);
        close(fd);
    }
    setvbuf(stderr, NULL, _IOLBF, 0);
    tcp_test_rank = rank;
    setenv_list(o->env);
    tcp_fake_rte_rank(rank);
    int rc = fn(rank, n, arg);
    fflush(NULL);
    _exit(rc);
}

/* Wait for all children; on a failure or time-out kill the others. */
static bool reap(pid_t *pids, int n, const tcp_test_opts_t *o, const char *name)
{
    double start = tcp_test_now();
    int left = n;
    bool ok = true;
    while (left > 0) {
        int status;
        pid_t p = waitpid(-1, &status, WNOHANG);
        if (p > 0) {
            for (int i = 0; i < n; i++) {
                if (pids[i] != p)
                    continue;
                pids[i] = 0;
                left--;
                if ((!WIFEXITED(status) || WEXITSTATUS(status) != 0) &&
                    !(i < 32 && (o->may_fail & (1u << i)))) {
                    fprintf(stderr, "%s: rank %d %s %d\n", name, i,
                            WIFEXITED(status) ? "exited with" : "killed by signal",
                            WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
                    ok = false;
                }
            }
            continue;
        }
        if (!ok || tcp_test_now() - start > o->timeout_s) {
            if (ok)
                fprintf(stderr, "%s: timed out after %d s\n", name, o->timeout_s);
            ok = false;
            for (int i = 0; i < n; i++)
                if (pids[i])
                    kill(pids[i], SIGKILL);
        }
        usleep(2000);
    }
    return ok;
}

static pid_t parent_pid;

/* The parent removes the last job directory however main() ends. */
static void remove_dir_at_exit(void)
{
    if (getpid() == parent_pid && tcp_test_dir[0])
        tcp_test_rmdir(tcp_test_dir);
}

int tcp_test_run(const char *name, int nprocs, tcp_test_fn fn, void *arg, const tcp_test_opts_t *opts)
{
    tcp_test_opts_t o = opts ? *opts : (tcp_test_opts_t){0};
    pid_t pids[TCP_TEST_MAX_PROCS] = {0};
    double start = tcp_test_now();

    if (!parent_pid) {
        parent_pid = getpid();
        atexit(remove_dir_at_exit);
    }

    if (o.timeout_s <= 0)
        o.timeout_s = 60;
    if (tcp_test_dir[0])
        tcp_test_rmdir(tcp_test_dir);
    if (!tcp_test_mkdir(tcp_test_dir, sizeof(tcp_test_dir), "job") ||
        tcp_fake_rte_setup(tcp_test_dir, strrchr(tcp_test_dir, '-') + 1, nprocs, o.nodes) !=
            MPI_SUCCESS) {
        check_case(name, false);
        return 1;
    }
    tcp_test_nprocs = nprocs;
    fflush(NULL);
    for (int i = 0; i < nprocs; i++) {
        pids[i] = fork();
        if (pids[i] == 0)
            child(i, nprocs, fn, arg, &o);
    }
    bool ok = reap(pids, nprocs, &o, name);
    if (!ok || getenv("TCP_TEST_VERBOSE"))
        print_logs(name, nprocs);
    char what[256];
    snprintf(what, sizeof(what), "%s (%d procs, %.2f s)", name, nprocs, tcp_test_now() - start);
    check_case(what, ok);
    return ok ? 0 : 1;
}

int tcp_test_summary(const char *name)
{
    if (tcp_test_dir[0])
        tcp_test_rmdir(tcp_test_dir);
    return check_report(name);
}

/* ------------------------------------------------------------ btl helpers */

btl_module_t *tcp_test_init(btl_endpoint_t ***eps_out)
{
    return tcp_test_init_component(&btl_tcp_component, eps_out);
}

btl_module_t *tcp_test_init_component(const btl_component_t *c, btl_endpoint_t ***eps_out)
{
    btl_module_t *mods[1];
    int n = 1, size = rte_info.size;
    btl_proc_t *procs = calloc((size_t)size, sizeof(*procs));
    btl_endpoint_t **eps = calloc((size_t)size, sizeof(*eps));

    CHECK(procs && eps, "out of memory");
    CHECK(c->register_params() == MPI_SUCCESS, "register_params");
    CHECK(c->init(mods, &n) == MPI_SUCCESS && n == 1, "init gave %d modules", n);
    CHECK(mods[0]->wait_fd >= 0, "no wait_fd");
    CHECK(rte_fence(true) == MPI_SUCCESS, "fence");
    for (int i = 0; i < size; i++)
        procs[i] = (btl_proc_t){.rank = i, .node_id = (uint32_t)rte_node_of(i),
                                .local = rte_node_of(i) == (int)rte_info.node_id};
    CHECK(mods[0]->add_procs(mods[0], size, procs, eps) == MPI_SUCCESS, "add_procs");
    for (int i = 0; i < size; i++)
        CHECK((eps[i] == NULL) == (i == rte_info.rank), "endpoint of rank %d", i);
    free(procs);
    *eps_out = eps;
    return mods[0];
}

void tcp_test_fence(btl_module_t *m)
{
    double start = tcp_test_now();
    while (btl_tcp_pending(m) > 0) {
        tcp_test_progress(m, 1);
        CHECK(tcp_test_now() - start < 30, "%zu bytes still queued after 30 s", btl_tcp_pending(m));
    }
    CHECK(rte_fence(false) == MPI_SUCCESS, "fence");
}

void tcp_test_fini(btl_module_t *m, btl_endpoint_t **eps)
{
    int size = rte_info.size;
    btl_proc_t *procs = calloc((size_t)size, sizeof(*procs));
    CHECK(procs, "out of memory");
    for (int i = 0; i < size; i++)
        procs[i] = (btl_proc_t){.rank = i, .node_id = (uint32_t)rte_node_of(i)};
    tcp_test_fence(m);
    CHECK(m->del_procs(m, size, procs, eps) == MPI_SUCCESS, "del_procs");
    CHECK(m->finalize(m) == MPI_SUCCESS, "finalize");
    free(procs);
    free(eps);
}

int tcp_test_progress(btl_module_t *m, int timeout_ms)
{
    int n = m->progress(m);
    if (n == 0 && timeout_ms > 0) {
        struct pollfd p = {.fd = m->wait_fd, .events = POLLIN};
        poll(&p, 1, timeout_ms);
    }
    return n;
}

/* What the module holds, for the message of a failed test. */
static void dump_state(void)
{
    btl_tcp_module_t *tm = &btl_tcp_module;
    for (btl_tcp_conn_t *c = tm->conns; c; c = c->next)
        fprintf(stderr, "rank %d: conn fd %d state %d rank %d out %d abandoned %d queued %zu "
                "rbuf %zu..%zu big %d %zu/%zu events 0x%x full %d want_write %d\n", tcp_test_rank,
                c->fd, c->state, c->ep ? c->ep->rank : -1, c->outgoing, c->abandoned, c->queued,
                c->rhead, c->rtail, c->in_big, c->big_have, c->big_want, c->events, c->full,
                c->want_write);
    for (int r = 0; r < tm->nprocs && tm->eps; r++)
        if (tm->eps[r])
            fprintf(stderr, "rank %d: ep %d state %d conn %p out %p\n", tcp_test_rank, r,
                    tm->eps[r]->state, (void *)tm->eps[r]->conn, (void *)tm->eps[r]->out);
}

void tcp_test_progress_until(btl_module_t *m, volatile long *counter, long target, int limit_s)
{
    double start = tcp_test_now();
    while (*counter < target) {
        tcp_test_progress(m, 5);
        if (tcp_test_now() - start >= limit_s)
            dump_state();
        CHECK(tcp_test_now() - start < limit_s, "waited %d s: %ld of %ld", limit_s, *counter,
              target);
    }
}

long tcp_test_send(btl_module_t *m, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                   size_t hdr_len, const btl_payload_t *p)
{
    long again = 0;
    int rc;
    double start = tcp_test_now();
    while ((rc = m->send(m, ep, tag, hdr, hdr_len, p)) == RAIL_AGAIN) {
        again++;
        tcp_test_progress(m, 1);
        if (tcp_test_now() - start >= 30)
            dump_state();
        CHECK(tcp_test_now() - start < 30, "send said RAIL_AGAIN for 30 s");
    }
    CHECK(rc == MPI_SUCCESS, "send returned %d", rc);
    return again;
}

/* ------------------------------------------------------------ checked messages */

typedef struct msg_hdr {
    uint32_t src, dst, seq, hdr_len;
    uint64_t msg, off, total;
    uint32_t len, pad;
} msg_hdr_t;

typedef struct peer_state {
    uint32_t seq;                  /* next frame */
    uint64_t msg, off;             /* next logical message, offset in it */
} peer_state_t;

static peer_state_t *sent, *expect;
static uint8_t *send_buf;
volatile long tcp_test_received, tcp_test_bytes;

static uint8_t pattern(uint32_t src, uint64_t msg, uint64_t i)
{
    return (uint8_t)(src * 31 + msg * 7 + i * 13 + (i >> 8));
}

static void msg_recv(btl_module_t *m, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                     const void *payload, size_t len)
{
    msg_hdr_t h;
    CHECK(((uintptr_t)hdr & 7) == 0, "header not 8-byte aligned");
    CHECK(hdr_len >= sizeof(h) && hdr_len <= 64, "hdr_len %zu", hdr_len);
    memcpy(&h, hdr, sizeof(h));
    CHECK(h.dst == (uint32_t)rte_info.rank && h.hdr_len == hdr_len &&
              h.src < (uint32_t)rte_info.size,
          "header dst %u hdr_len %u/%zu", h.dst, h.hdr_len, hdr_len);
    CHECK(ep == ((btl_tcp_module_t *)m)->eps[h.src], "frame of rank %u on another endpoint", h.src);
    peer_state_t *e = &expect[h.src];
    CHECK(h.seq == e->seq, "from %u: frame %u, expected %u", h.src, h.seq, e->seq);
    CHECK(h.msg == e->msg && h.off == e->off, "from %u: message %lu offset %lu, expected %lu %lu",
          h.src, (unsigned long)h.msg, (unsigned long)h.off, (unsigned long)e->msg,
          (unsigned long)e->off);
    CHECK(h.len == len, "frame %u: payload %zu bytes, expected %u", h.seq, len, h.len);
    const uint8_t *hb = hdr, *p = payload;
    for (size_t i = sizeof(h); i < hdr_len; i++)
        CHECK(hb[i] == (uint8_t)i, "header byte %zu", i);
    for (size_t i = 0; i < len; i++)
        CHECK(p[i] == pattern(h.src, h.msg, h.off + i), "frame %u (%zu bytes): byte %zu", h.seq,
              len, i);
    e->seq++;
    e->off += len;
    if (e->off == h.total) {
        e->msg++;
        e->off = 0;
    }
    tcp_test_received++;
    tcp_test_bytes += (long)len;
}

typedef struct pack_ctx {
    uint32_t src;
    uint64_t msg, off;
    int calls;
} pack_ctx_t;

static int msg_pack(void *ctx, void *dst, size_t len)
{
    pack_ctx_t *c = ctx;
    uint8_t *d = dst;
    for (size_t i = 0; i < len; i++)
        d[i] = pattern(c->src, c->msg, c->off + i);
    c->calls++;
    return MPI_SUCCESS;
}

void tcp_test_msg_init(btl_module_t *m)
{
    free(send_buf);
    free(sent);
    free(expect);
    send_buf = malloc(m->max_send_size);
    sent = calloc((size_t)rte_info.size, sizeof(*sent));
    expect = calloc((size_t)rte_info.size, sizeof(*expect));
    CHECK(send_buf && sent && expect, "out of memory");
    tcp_test_received = tcp_test_bytes = 0;
    btl_register_recv(TCP_TEST_TAG, msg_recv);
}

long tcp_test_msg_frames(btl_module_t *m, size_t len)
{
    size_t chunk = m->max_send_size - 64;
    return len == 0 ? 1 : (long)((len + chunk - 1) / chunk);
}

/* One frame of a logical message. */
static long send_frame(btl_module_t *m, btl_endpoint_t *ep, int dst, uint64_t msg, uint64_t off,
                       size_t len, size_t total)
{
    uint8_t hb[64];
    peer_state_t *s = &sent[dst];
    uint32_t seq = s->seq++;
    size_t hdr_len = sizeof(msg_hdr_t) + (seq % 5) * 4;   /* 48..64 */
    msg_hdr_t h = {(uint32_t)rte_info.rank, (uint32_t)dst, seq, (uint32_t)hdr_len, msg, off,
                   total, (uint32_t)len, 0};
    pack_ctx_t pc = {h.src, msg, off, 0};
    btl_payload_t p = {.data = send_buf, .len = len};

    for (size_t i = 0; i < hdr_len; i++)
        hb[i] = (uint8_t)i;
    memcpy(hb, &h, sizeof(h));
    if (seq % 3 == 2) {
        p = (btl_payload_t){.data = NULL, .len = len, .pack = msg_pack, .ctx = &pc};
    } else {
        for (size_t i = 0; i < len; i++)
            send_buf[i] = pattern(h.src, msg, off + i);
    }
    long again = tcp_test_send(m, ep, TCP_TEST_TAG, hb, hdr_len, &p);
    CHECK(p.data || len == 0 || pc.calls == 1, "pack called %d times", pc.calls);
    /* The caller may reuse its buffer at once: scribble over it. */
    memset(send_buf, 0xa5, len);
    return again;
}

long tcp_test_msg_send(btl_module_t *m, btl_endpoint_t *ep, int dst, size_t len)
{
    size_t chunk = m->max_send_size - 64;
    uint64_t msg = sent[dst].msg++;
    long again = 0;
    size_t off = 0;
    do {
        size_t k = RAIL_MIN(chunk, len - off);
        again += send_frame(m, ep, dst, msg, off, k, len);
        off += k;
    } while (off < len);
    return again;
}
