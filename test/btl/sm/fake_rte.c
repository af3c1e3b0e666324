/*
 * Test double of runtime/rte.h for the btl sm unit tests (never linked into
 * the library): N processes forked from one parent on one "node", with the
 * modex and the fence in an anonymous shared mapping made before fork().
 */
#include "base/rail.h"
#include "runtime/rte.h"
#include "test/btl/sm/sm_test.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define FAKE_RTE_MAX_ENTRIES 1024
#define FAKE_RTE_VALUE_MAX 512

typedef struct fake_rte_entry {
    int rank;
    int ready;
    char key[48];
    size_t len;
    unsigned char data[FAKE_RTE_VALUE_MAX];
} fake_rte_entry_t;

typedef struct fake_rte_shared {
    int size;
    bool oversubscribed;
    char jobid[64];
    unsigned n_entries;
    unsigned fence_arrived;
    unsigned fence_gen;
    fake_rte_entry_t entries[FAKE_RTE_MAX_ENTRIES];
} fake_rte_shared_t;

rte_info_t rte_info;
static fake_rte_shared_t *fake;
static int fake_peers[SM_TEST_MAX_PROCS];

int fake_rte_setup(int size, const char *jobid, bool oversubscribed)
{
    if (size < 1 || size > SM_TEST_MAX_PROCS)
        return MPI_ERR_ARG;
    if (fake)
        munmap(fake, sizeof(*fake));
    fake = mmap(NULL, sizeof(*fake), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (fake == MAP_FAILED) {
        fake = NULL;
        return MPI_ERR_NO_MEM;
    }
    fake->size = size;
    fake->oversubscribed = oversubscribed;
    snprintf(fake->jobid, sizeof(fake->jobid), "%s", jobid);
    return MPI_SUCCESS;
}

void fake_rte_child(int rank)
{
    memset(&rte_info, 0, sizeof(rte_info));
    rte_info.rank = rank;
    rte_info.size = fake->size;
    rte_info.local_rank = rte_info.node_rank = rank;
    rte_info.local_size = fake->size;
    rte_info.num_nodes = 1;
    for (int i = 0; i < fake->size; i++)
        fake_peers[i] = i;
    rte_info.local_peers = fake_peers;
    rte_info.num_cpus = 2;
    rte_info.oversubscribed = fake->oversubscribed;
    snprintf(rte_info.nspace, sizeof(rte_info.nspace), "rail.%s", fake->jobid);
    snprintf(rte_info.hostname, sizeof(rte_info.hostname), "localhost");
    snprintf(rte_info.jobid, sizeof(rte_info.jobid), "%s", fake->jobid);
}

int rte_init(void) { return MPI_SUCCESS; }
int rte_finalize(void) { return MPI_SUCCESS; }
int rte_modex_commit(void) { return MPI_SUCCESS; }

int rte_modex_put(const char *key, const void *data, size_t len)
{
    if (len > FAKE_RTE_VALUE_MAX || strlen(key) >= sizeof(fake->entries[0].key))
        return MPI_ERR_ARG;
    unsigned i = __atomic_fetch_add(&fake->n_entries, 1, __ATOMIC_ACQ_REL);
    if (i >= FAKE_RTE_MAX_ENTRIES)
        return MPI_ERR_NO_MEM;
    fake_rte_entry_t *e = &fake->entries[i];
    e->rank = rte_info.rank;
    snprintf(e->key, sizeof(e->key), "%s", key);
    e->len = len;
    memcpy(e->data, data, len);
    __atomic_store_n(&e->ready, 1, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

int rte_modex_get(int rank, const char *key, void **data, size_t *len)
{
    unsigned n = RAIL_MIN(__atomic_load_n(&fake->n_entries, __ATOMIC_ACQUIRE),
                          (unsigned)FAKE_RTE_MAX_ENTRIES);
    for (unsigned i = n; i-- > 0;) {
        fake_rte_entry_t *e = &fake->entries[i];
        if (!__atomic_load_n(&e->ready, __ATOMIC_ACQUIRE) || e->rank != rank ||
            strcmp(e->key, key) != 0)
            continue;
        *data = malloc(e->len ? e->len : 1);
        if (!*data)
            return MPI_ERR_NO_MEM;
        memcpy(*data, e->data, e->len);
        *len = e->len;
        return MPI_SUCCESS;
    }
    return MPI_ERR_OTHER;
}

/* Barrier of all ranks; gives up (exit 3) after SM_TEST_FENCE_TIMEOUT s, so
 * that a test whose peer died ends instead of hanging. */
int rte_fence(bool collect)
{
    unsigned gen = __atomic_load_n(&fake->fence_gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&fake->fence_arrived, 1, __ATOMIC_ACQ_REL) == (unsigned)fake->size) {
        __atomic_store_n(&fake->fence_arrived, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&fake->fence_gen, gen + 1, __ATOMIC_RELEASE);
        return MPI_SUCCESS;
    }
    time_t start = time(NULL);
    while (__atomic_load_n(&fake->fence_gen, __ATOMIC_ACQUIRE) == gen) {
        sched_yield();
        if (time(NULL) - start > SM_TEST_FENCE_TIMEOUT) {
            fprintf(stderr, "rank %d: fence timed out\n", rte_info.rank);
            exit(3);
        }
    }
    return MPI_SUCCESS;
}

int rte_node_of(int rank) { return 0; }
const char *rte_hostname_of(int rank) { return "localhost"; }

int rte_shm_name(char *buf, size_t size, const char *suffix)
{
    if (!buf || !suffix || strchr(suffix, '/'))
        return MPI_ERR_ARG;
    int n = snprintf(buf, size, "/" RTE_SHM_PREFIX "%s-%s", rte_info.jobid, suffix);
    return n > 0 && (size_t)n < size ? MPI_SUCCESS : MPI_ERR_ARG;
}

void rte_abort(int code, const char *msg)
{
    if (msg)
        fprintf(stderr, "rank %d: abort: %s\n", rte_info.rank, msg);
    _exit(code ? code : 1);
}
