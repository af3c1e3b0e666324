/*
 * Test double of runtime/rte.h for the btl tcp tests (never linked into the
 * library).  A job is a directory: rank r's modex value for key k is the
 * file "m.<k>.<r>" (written to a temporary name, then renamed), and fence
 * number g is complete when every rank has created "f.<g>.<r>".  Processes
 * of a job only need to share the directory, so they may run in different
 * network namespaces.
 */
#include "base/rail.h"
#include "runtime/rte.h"
#include "test/btl/tcp/tcp_test.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FAKE_FENCE_TIMEOUT_S 60

rte_info_t rte_info;
static char fake_dir[256];
static char fake_jobid[64];
static int fake_size;
static int fake_nodes[TCP_TEST_MAX_PROCS];
static int fake_local[TCP_TEST_MAX_PROCS];
static int fake_gen;

int tcp_fake_rte_setup(const char *dir, const char *jobid, int size, const int *nodes)
{
    if (size < 1 || size > TCP_TEST_MAX_PROCS)
        return MPI_ERR_ARG;
    snprintf(fake_dir, sizeof(fake_dir), "%s", dir);
    snprintf(fake_jobid, sizeof(fake_jobid), "%s", jobid);
    fake_size = size;
    for (int i = 0; i < size; i++)
        fake_nodes[i] = nodes ? nodes[i] : 0;
    fake_gen = 0;
    return MPI_SUCCESS;
}

void tcp_fake_rte_rank(int rank)
{
    int nodes = 0, k = 0;
    memset(&rte_info, 0, sizeof(rte_info));
    rte_info.rank = rank;
    rte_info.size = fake_size;
    rte_info.node_id = (uint32_t)fake_nodes[rank];
    for (int i = 0; i < fake_size; i++) {
        nodes = RAIL_MAX(nodes, fake_nodes[i] + 1);
        if (fake_nodes[i] == fake_nodes[rank]) {
            if (i == rank)
                rte_info.local_rank = k;
            fake_local[k++] = i;
        }
    }
    rte_info.local_size = k;
    rte_info.node_rank = rte_info.local_rank;
    rte_info.local_peers = fake_local;
    rte_info.num_nodes = nodes;
    rte_info.num_cpus = 2;
    snprintf(rte_info.nspace, sizeof(rte_info.nspace), "rail.%s", fake_jobid);
    snprintf(rte_info.hostname, sizeof(rte_info.hostname), "node%d", fake_nodes[rank]);
    snprintf(rte_info.jobid, sizeof(rte_info.jobid), "%s", fake_jobid);
    fake_gen = 0;
}

int rte_init(void) { return MPI_SUCCESS; }
int rte_finalize(void) { return MPI_SUCCESS; }
int rte_modex_commit(void) { return MPI_SUCCESS; }

int tcp_fake_rte_put_as(int rank, const char *key, const void *data, size_t len)
{
    char path[512], tmp[600];
    snprintf(path, sizeof(path), "%s/m.%s.%d", fake_dir, key, rank);
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return MPI_ERR_OTHER;
    bool ok = fwrite(data, 1, len, f) == len;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return MPI_ERR_OTHER;
    }
    return MPI_SUCCESS;
}

int rte_modex_put(const char *key, const void *data, size_t len)
{
    return tcp_fake_rte_put_as(rte_info.rank, key, data, len);
}

int rte_modex_get(int rank, const char *key, void **data, size_t *len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/m.%s.%d", fake_dir, key, rank);
    FILE *f = fopen(path, "r");
    if (!f)
        return MPI_ERR_OTHER;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *b = realloc(buf, cap *= 2);
        if (!b)
            free(buf);
        buf = b;
    }
    fclose(f);
    if (!buf)
        return MPI_ERR_NO_MEM;
    *data = buf;
    *len = n;
    return MPI_SUCCESS;
}

/* Barrier of all ranks; gives up (exit 3) after FAKE_FENCE_TIMEOUT_S, so
 * that a test whose peer died ends instead of hanging. */
int rte_fence(bool collect)
{
    char path[512];
    int gen = fake_gen++;
    snprintf(path, sizeof(path), "%s/f.%d.%d", fake_dir, gen, rte_info.rank);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    if (fd < 0)
        return MPI_ERR_OTHER;
    close(fd);
    time_t start = time(NULL);
    for (int r = 0; r < fake_size; r++) {
        struct stat st;
        snprintf(path, sizeof(path), "%s/f.%d.%d", fake_dir, gen, r);
        while (stat(path, &st) != 0) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
            if (time(NULL) - start > FAKE_FENCE_TIMEOUT_S) {
                fprintf(stderr, "rank %d: fence %d timed out waiting for rank %d\n",
                        rte_info.rank, gen, r);
                exit(3);
            }
        }
    }
    return MPI_SUCCESS;
}

int rte_node_of(int rank) { return rank >= 0 && rank < fake_size ? fake_nodes[rank] : -1; }

const char *rte_hostname_of(int rank)
{
    static char names[TCP_TEST_MAX_PROCS][16];
    if (rank < 0 || rank >= fake_size)
        return "?";
    snprintf(names[rank], sizeof(names[rank]), "node%d", fake_nodes[rank]);
    return names[rank];
}

void rte_abort(int code, const char *msg)
{
    if (msg)
        fprintf(stderr, "rank %d: abort: %s\n", rte_info.rank, msg);
    _exit(code ? code : 1);
}
