/* Harness of the btl sm unit tests (see sm_test.h). */
#include "test/btl/sm/sm_test.h"
#include "base/copy.h"
#include "btl/sm/sm.h"
#include "base/param.h"
#include "runtime/rte.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Stand-ins for what btl/btl_base.c defines in the library. */
btl_recv_cb_t btl_recv_table[BTL_TAG_MAX];
int btl_verbose;

int sm_test_rank = -1;
char sm_test_jobid[64];

static double sm_test_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int sm_test_shm_scan(const char *jobid, bool remove)
{
    char prefix[128];
    int n = 0;
    DIR *d = opendir("/dev/shm");
    struct dirent *e;

    snprintf(prefix, sizeof(prefix), RTE_SHM_PREFIX "%s-", jobid);
    while (d && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        n++;
        if (remove) {
            char path[512];
            snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
            unlink(path);
        }
    }
    if (d)
        closedir(d);
    return n;
}

int sm_test_shm_cleanup(const char *jobid) { return sm_test_shm_scan(jobid, true); }
int sm_test_shm_count(const char *jobid) { return sm_test_shm_scan(jobid, false); }

static void sm_test_setenv(const char *env)
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

static void sm_test_pin(int cpus)
{
    cpu_set_t have, want;
    int k = 0;
    if (cpus <= 0 || sched_getaffinity(0, sizeof(have), &have) != 0)
        return;
    CPU_ZERO(&want);
    for (int c = 0; c < CPU_SETSIZE && k < cpus; c++)
        if (CPU_ISSET(c, &have)) {
            CPU_SET(c, &want);
            k++;
        }
    sched_setaffinity(0, sizeof(want), &want);
}

static void sm_test_child(int rank, sm_test_fn fn, void *arg, const sm_test_opts_t *o, int n)
{
    sm_test_rank = rank;
    sm_test_pin(o->cpus);
    sm_test_setenv(o->env);
    fake_rte_child(rank);
    int rc = fn(rank, n, arg);
    fflush(NULL);
    exit(rc);
}

/* Wait for all children; on a failure or time-out kill the others. */
static bool sm_test_reap(pid_t *pids, int n, const sm_test_opts_t *o, const char *name)
{
    double start = sm_test_now();
    int left = n;
    bool ok = true, killed = false;

    while (left > 0) {
        int status;
        pid_t p = waitpid(-1, &status, WNOHANG);
        if (p > 0) {
            for (int i = 0; i < n; i++)
                if (pids[i] == p) {
                    pids[i] = 0;
                    left--;
                    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                        if (!o->expect_failure)
                            fprintf(stderr, "%s: rank %d %s %d\n", name, i,
                                    WIFEXITED(status) ? "exited with" : "killed by signal",
                                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
                        ok = false;
                    }
                }
            continue;
        }
        double t = sm_test_now() - start;
        if (o->kill_rank >= 0 && !killed && t * 1000 >= o->kill_after_ms && pids[o->kill_rank]) {
            kill(pids[o->kill_rank], SIGKILL);
            killed = true;
        }
        if (!ok || t > o->timeout_s) {
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

int sm_test_run(const char *name, int nprocs, sm_test_fn fn, void *arg, const sm_test_opts_t *opts)
{
    static int seq;
    sm_test_opts_t o = opts ? *opts : (sm_test_opts_t){.kill_rank = -1};
    pid_t pids[SM_TEST_MAX_PROCS] = {0};
    double start = sm_test_now();

    if (o.timeout_s <= 0)
        o.timeout_s = 60;
    snprintf(sm_test_jobid, sizeof(sm_test_jobid), "t%d_%d", (int)getpid(), seq++);
    if (fake_rte_setup(nprocs, sm_test_jobid, o.oversubscribed) != MPI_SUCCESS)
        return 1;
    fflush(NULL);
    for (int i = 0; i < nprocs; i++) {
        pids[i] = fork();
        if (pids[i] == 0)
            sm_test_child(i, fn, arg, &o, nprocs);
    }
    bool ok = sm_test_reap(pids, nprocs, &o, name);
    if (o.expect_failure)
        ok = !ok;
    int left = o.expect_failure ? 0 : sm_test_shm_cleanup(sm_test_jobid);
    if (left) {
        fprintf(stderr, "%s: %d /dev/shm/rail-%s-* files left behind\n", name, left, sm_test_jobid);
        ok = false;
    }
    char what[256];
    snprintf(what, sizeof(what), "%s (%d procs, %.2f s)", name, nprocs, sm_test_now() - start);
    check_case(what, ok);
    return ok ? 0 : 1;
}

typedef struct sm_test_hdr {
    uint32_t src, dst, seq, len;
    uint32_t hdr_len, pad;
} sm_test_hdr_t;

static uint32_t *expect_seq, *send_seq;
static uint8_t *send_buf;
volatile long sm_test_received;

static uint8_t pattern(uint32_t src, uint32_t seq, size_t i)
{
    return (uint8_t)(src * 31 + seq * 7 + i * 13 + (i >> 8));
}

static void fill(uint8_t *buf, uint32_t src, uint32_t seq, size_t len)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = pattern(src, seq, i);
}

static void sm_test_msg_recv(btl_module_t *m, btl_endpoint_t *ep, const void *hdr,
                             size_t hdr_len, const void *payload, size_t len)
{
    sm_test_hdr_t h;
    CHECK(hdr_len >= sizeof(h) && hdr_len <= BTL_SM_HDR_MAX, "hdr_len %zu", hdr_len);
    memcpy(&h, hdr, sizeof(h));
    CHECK(h.dst == (uint32_t)rte_info.rank && h.hdr_len == hdr_len, "header");
    CHECK(h.seq == expect_seq[h.src], "from %u: seq %u, expected %u", h.src, h.seq,
          expect_seq[h.src]);
    CHECK(h.len == len, "seq %u: payload %zu bytes, expected %u", h.seq, len, h.len);
    const uint8_t *p = payload, *hb = hdr;
    for (size_t i = sizeof(h); i < hdr_len; i++)
        CHECK(hb[i] == (uint8_t)i, "header byte %zu", i);
    for (size_t i = 0; i < len; i++)
        CHECK(p[i] == pattern(h.src, h.seq, i), "seq %u (%zu bytes): byte %zu", h.seq, len, i);
    expect_seq[h.src]++;
    sm_test_received++;
}

typedef struct pack_ctx {
    uint32_t src, seq;
    size_t done;
} pack_ctx_t;

static int sm_test_pack(void *ctx, void *dst, size_t len)
{
    pack_ctx_t *c = ctx;
    uint8_t *d = dst;
    for (size_t i = 0; i < len; i++)
        d[i] = pattern(c->src, c->seq, c->done + i);
    c->done += len;
    return MPI_SUCCESS;
}

long sm_test_msg_send(btl_module_t *m, btl_endpoint_t *ep, int dst, size_t len)
{
    uint8_t hb[BTL_SM_HDR_MAX];
    uint32_t seq = send_seq[dst]++;
    size_t hdr_len = RAIL_MIN(sizeof(sm_test_hdr_t) + (seq % 6) * 8, (size_t)BTL_SM_HDR_MAX);
    sm_test_hdr_t h = {(uint32_t)rte_info.rank, (uint32_t)dst, seq, 0, (uint32_t)hdr_len, 0};
    pack_ctx_t pc = {h.src, seq, 0};
    btl_payload_t p = {.data = send_buf, .len = len};
    long again = 0;
    int rc;

    if (len + hdr_len > m->max_send_size)
        len = m->max_send_size - hdr_len;
    h.len = (uint32_t)len;
    for (size_t i = 0; i < hdr_len; i++)
        hb[i] = (uint8_t)i;
    memcpy(hb, &h, sizeof(h));
    p.len = len;
    if (seq % 3 == 2)
        p = (btl_payload_t){.data = NULL, .len = len, .pack = sm_test_pack, .ctx = &pc};
    else
        fill(send_buf, h.src, seq, len);
    while ((rc = m->send(m, ep, SM_TEST_TAG, hb, hdr_len, &p)) == RAIL_AGAIN) {
        again++;
        pc.done = 0;
        if (m->progress(m) == 0)
            sched_yield();
    }
    CHECK(rc == MPI_SUCCESS, "send to %d: %d", dst, rc);
    return again;
}

void sm_test_msg_init(btl_module_t *m)
{
    free(send_buf);
    free(send_seq);
    free(expect_seq);
    send_buf = malloc(m->max_send_size);
    send_seq = calloc((size_t)rte_info.size, sizeof(*send_seq));
    expect_seq = calloc((size_t)rte_info.size, sizeof(*expect_seq));
    CHECK(send_buf && send_seq && expect_seq, "out of memory");
    sm_test_received = 0;
    btl_register_recv(SM_TEST_TAG, sm_test_msg_recv);
}

btl_module_t *sm_test_init(btl_endpoint_t ***eps_out)
{
    btl_module_t *mods[1];
    int n = 1, size = rte_info.size;
    btl_proc_t *procs = calloc((size_t)size, sizeof(*procs));
    btl_endpoint_t **eps = calloc((size_t)size, sizeof(*eps));

    CHECK(procs && eps, "out of memory");
    rail_copy_select("auto");   /* as MPI_Init does: fragments copied by rail_copy */
    CHECK(btl_sm_component.register_params() == MPI_SUCCESS, "register_params");
    CHECK(btl_sm_component.init(mods, &n) == MPI_SUCCESS && n == 1, "init gave %d modules", n);
    CHECK(rte_fence(true) == MPI_SUCCESS, "fence");
    for (int i = 0; i < size; i++)
        procs[i] = (btl_proc_t){.rank = i, .node_id = 0, .local = true};
    CHECK(mods[0]->add_procs(mods[0], size, procs, eps) == MPI_SUCCESS, "add_procs");
    for (int i = 0; i < size; i++)
        CHECK((eps[i] == NULL) == (i == rte_info.rank), "endpoint of rank %d", i);
    free(procs);
    *eps_out = eps;
    return mods[0];
}

void sm_test_fini(btl_module_t *m, btl_endpoint_t **eps)
{
    CHECK(rte_fence(false) == MPI_SUCCESS, "fence");
    CHECK(m->finalize(m) == MPI_SUCCESS, "finalize");
    free(eps);
}

void sm_test_send(btl_module_t *m, btl_endpoint_t *ep, uint8_t tag, const void *hdr,
                  size_t hdr_len, const void *data, size_t len)
{
    btl_payload_t p = {.data = data, .len = len};
    int rc;
    while ((rc = m->send(m, ep, tag, hdr, hdr_len, &p)) == RAIL_AGAIN)
        if (m->progress(m) == 0)
            sched_yield();
    CHECK(rc == MPI_SUCCESS, "send returned %d", rc);
}

void sm_test_progress_until(btl_module_t *m, volatile long *counter, long target)
{
    while (*counter < target)
        if (m->progress(m) == 0)
            sched_yield();
}
