/*
 * Active messages in all pairs: sizes 0, 1, odd, around a fast-box entry,
 * eager_limit, eager_limit + 1 and max_send_size; headers of 0..64 bytes;
 * contiguous and packed payloads; per-pair order and contents checked on
 * the receiver.  Run with 2, 3 and 8 processes and with fast boxes on, off,
 * and tiny (constant switching between ring and FIFO, frequent RAIL_AGAIN).
 * The default ring's size against the number of processes.
 */
#include "test/btl/sm/sm_test.h"
#include "btl/sm/sm.h"
#include "runtime/rte.h"

#include <sched.h>
#include <string.h>
#include <sys/statvfs.h>

#define ROUNDS 20

#define BARE_TAG 4
#define BARE_COUNT 50

static size_t sizes[16];
static int n_sizes;
static uint32_t bare_expect[64];
static volatile long bare_received;

/* No header at all: the payload is the sequence number, or nothing. */
static void bare_recv(btl_module_t *m, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                      const void *payload, size_t len)
{
    int src = ep->rank;
    uint32_t seq = bare_expect[src]++;
    CHECK(hdr_len == 0, "hdr_len %zu", hdr_len);
    if (seq % 2) {
        CHECK(len == 0, "len %zu", len);
    } else {
        uint32_t v;
        CHECK(len == sizeof(v), "len %zu", len);
        memcpy(&v, payload, sizeof(v));
        CHECK(v == seq, "from %d: %u, expected %u", src, v, seq);
    }
    bare_received++;
}

static void bare_exchange(btl_module_t *m, btl_endpoint_t **eps, int rank, int size)
{
    btl_register_recv(BARE_TAG, bare_recv);
    for (uint32_t seq = 0; seq < BARE_COUNT; seq++)
        for (int k = 1; k < size; k++) {
            btl_payload_t p = {.data = &seq, .len = seq % 2 ? 0 : sizeof(seq)};
            int rc;
            while ((rc = m->send(m, eps[(rank + k) % size], BARE_TAG, NULL, 0,
                                 seq % 4 == 1 ? NULL : &p)) == RAIL_AGAIN)
                if (m->progress(m) == 0)
                    sched_yield();
            CHECK(rc == MPI_SUCCESS, "send: %d", rc);
        }
    sm_test_progress_until(m, &bare_received, (long)BARE_COUNT * (size - 1));
}

static int am_main(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    btl_module_t *m = sm_test_init(&eps);

    sm_test_msg_init(m);
    bare_exchange(m, eps, rank, size);
    size_t entry = btl_sm_module.fbox_entry_max;
    size_t list[] = {0, 1, 7, 8, 63, 64, 65, 1000, entry > 40 ? entry - 40 : 1, entry,
                     m->eager_limit, m->eager_limit + 1, m->max_send_size};
    n_sizes = (int)RAIL_ARRAY_SIZE(list);
    memcpy(sizes, list, sizeof(list));

    for (int r = 0; r < ROUNDS; r++)
        for (int s = 0; s < n_sizes; s++)
            for (int k = 1; k < size; k++) {
                int dst = (rank + k) % size;
                sm_test_msg_send(m, eps[dst], dst, sizes[(s + r) % n_sizes]);
            }
    sm_test_progress_until(m, &sm_test_received, (long)ROUNDS * n_sizes * (size - 1));
    CHECK(rte_fence(false) == MPI_SUCCESS, "fence");
    /* Every frag comes back once the receivers are done. */
    for (int i = 0; i < 1000000 && btl_sm_module.n_free < btl_sm_params.frag_count; i++)
        if (m->progress(m) == 0)
            sched_yield();
    CHECK(btl_sm_module.n_free == btl_sm_params.frag_count, "%d of %d frags back",
          btl_sm_module.n_free, btl_sm_params.frag_count);
    sm_test_fini(m, eps);
    return 0;
}

/* The default ring: 256 KiB per sender while a process's rings fit in 4 MiB,
 * past 17 processes the largest power of two that fits; the same in every
 * segment (where /dev/shm has room to spare; less than that, any power of
 * two up to it).  A message from every peer still goes through the ring. */
static int ring_main(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    btl_module_t *m = sm_test_init(&eps);
    size_t want = (size_t)256 << 10;
    while ((size_t)(size - 1) * want > ((size_t)4 << 20))
        want /= 2;
    struct statvfs sv;
    bool roomy = statvfs("/dev/shm", &sv) == 0 &&
                 (size_t)sv.f_bavail * sv.f_frsize / 8 / (size_t)size >= ((size_t)8 << 20);
    for (int r = 0; r < size; r++) {
        size_t got = r == rank ? btl_sm_module.hdr->fbox_size : eps[r]->hdr->fbox_size;
        CHECK(roomy ? got == want : got <= want && (got & (got - 1)) == 0,
              "%d processes: rank %d's ring %zu, expected %zu", size, r, got, want);
    }
    sm_test_msg_init(m);
    for (int k = 1; k < size; k++)
        sm_test_msg_send(m, eps[(rank + k) % size], (rank + k) % size, 1000);
    sm_test_progress_until(m, &sm_test_received, size - 1);
    sm_test_fini(m, eps);
    return 0;
}

int main(void)
{
    static const struct { const char *name, *env; } configs[] = {
        {"am default", ""},
        {"am fifo only", "RAIL_BTL_SM_FBOX_SIZE=0"},
        {"am tiny fbox, 2 frags", "RAIL_BTL_SM_FBOX_SIZE=1024 RAIL_BTL_SM_FRAG_COUNT=2"},
        {"am big eager, no prefault",
         "RAIL_BTL_SM_EAGER_LIMIT=16k RAIL_BTL_SM_FBOX_SIZE=64k RAIL_BTL_SM_MAX_SEND_SIZE=64k "
         "RAIL_BTL_SM_PREFAULT=0"},
    };
    static const int nprocs[] = {2, 3, 8};

    for (size_t c = 0; c < RAIL_ARRAY_SIZE(configs); c++)
        for (size_t i = 0; i < RAIL_ARRAY_SIZE(nprocs); i++) {
            sm_test_opts_t o = {.env = configs[c].env, .kill_rank = -1, .timeout_s = 120};
            char name[128];
            snprintf(name, sizeof(name), "%s", configs[c].name);
            sm_test_run(name, nprocs[i], am_main, NULL, &o);
        }
    static const int ring_nprocs[] = {2, 17, 18, 40};
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(ring_nprocs); i++) {
        sm_test_opts_t o = {.kill_rank = -1, .timeout_s = 120};
        struct statvfs sv;
        size_t need = (size_t)ring_nprocs[i] * ((size_t)8 << 20);   /* FIFO buffers, rings */
        if (statvfs("/dev/shm", &sv) == 0 && (size_t)sv.f_bavail * sv.f_frsize < need) {
            printf("skip am default ring size (%d procs): /dev/shm has less than %zu MiB free\n",
                   ring_nprocs[i], need >> 20);
            continue;
        }
        sm_test_run("am default ring size", ring_nprocs[i], ring_main, NULL, &o);
    }
    return check_report("test_btl_sm_am");
}
