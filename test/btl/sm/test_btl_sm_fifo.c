/*
 * FIFO stress: every other rank floods rank 0, which does not progress at
 * first: each sender must get exactly frag_count FIFO sends through and then
 * RAIL_AGAIN, and nothing may be delivered before rank 0 progresses.  Then
 * rank 0 drains while the senders go on (recovering after RAIL_AGAIN) with
 * mixed sizes, and rank 0 sends to all of them too, so messages and returned
 * frags share every FIFO.  Order and contents are checked per pair.  A
 * second configuration hammers the queue with small messages, no fast
 * boxes and 4 frags per process.
 */
#include "test/btl/sm/sm_test.h"
#include "btl/sm/sm.h"
#include "runtime/rte.h"

#include <sched.h>
#include <string.h>

#define MORE 3000

/* Until RAIL_AGAIN, with messages too large for a fast box. */
static long flood(btl_module_t *m, btl_endpoint_t *ep)
{
    uint8_t hdr[8] = {0}, *buf = calloc(1, m->max_send_size);
    btl_payload_t p = {.data = buf, .len = RAIL_MIN((size_t)256, m->max_send_size - 8)};
    long n = 0;
    int rc;

    CHECK(buf, "out of memory");
    if (btl_sm_module.fbox_entry_max)
        p.len = RAIL_MIN(btl_sm_module.fbox_entry_max, m->max_send_size - 8);
    while ((rc = m->send(m, ep, SM_TEST_TAG + 1, hdr, sizeof(hdr), &p)) == MPI_SUCCESS)
        n++;
    CHECK(rc == RAIL_AGAIN, "send: %d", rc);
    for (int i = 0; i < 10; i++)
        CHECK(m->send(m, ep, SM_TEST_TAG + 1, hdr, sizeof(hdr), &p) == RAIL_AGAIN,
              "send succeeded without progress");
    free(buf);
    return n;
}

static volatile long flood_received;

static void flood_recv(btl_module_t *m, btl_endpoint_t *ep, const void *hdr, size_t hdr_len,
                       const void *payload, size_t len)
{
    flood_received++;
}

static size_t mixed_size(btl_module_t *m, long i)
{
    static const size_t s[] = {8, 100, 0, 2000, 1 << 20};
    return RAIL_MIN(s[i % 5], m->max_send_size);
}

static int fifo_main(int rank, int size, void *arg)
{
    btl_endpoint_t **eps;
    btl_module_t *m = sm_test_init(&eps);
    long flooded = 0, again = 0;

    sm_test_msg_init(m);
    btl_register_recv(SM_TEST_TAG + 1, flood_recv);
    if (rank != 0) {
        flooded = flood(m, eps[0]);
        CHECK(flooded == btl_sm_params.frag_count, "%ld sends before RAIL_AGAIN, %d frags", flooded,
              btl_sm_params.frag_count);
    }
    CHECK(rte_fence(false) == MPI_SUCCESS, "fence");
    CHECK(flood_received == 0, "delivered without progress");
    if (rank == 0) {
        sm_test_progress_until(m, &flood_received, (long)btl_sm_params.frag_count * (size - 1));
        for (long i = 0; i < MORE; i++)
            for (int d = 1; d < size; d++)
                sm_test_msg_send(m, eps[d], d, mixed_size(m, i + d));
        sm_test_progress_until(m, &sm_test_received, (long)MORE * (size - 1));
    } else {
        for (long i = 0; i < MORE; i++)
            again += sm_test_msg_send(m, eps[0], 0, mixed_size(m, i));
        CHECK(again > 0, "never saw RAIL_AGAIN");
        sm_test_progress_until(m, &sm_test_received, MORE);
    }
    sm_test_fini(m, eps);
    return 0;
}

int main(void)
{
    static const struct { const char *name, *env; } configs[] = {
        {"fifo flood and recovery", ""},
        {"fifo flood, no fast boxes, 4 frags", "RAIL_BTL_SM_FBOX_SIZE=0 RAIL_BTL_SM_FRAG_COUNT=4"},
    };
    static const int nprocs[] = {2, 3, 8};

    for (size_t c = 0; c < RAIL_ARRAY_SIZE(configs); c++)
        for (size_t i = 0; i < RAIL_ARRAY_SIZE(nprocs); i++) {
            sm_test_opts_t o = {.env = configs[c].env, .kill_rank = -1, .timeout_s = 120};
            sm_test_run(configs[c].name, nprocs[i], fifo_main, NULL, &o);
        }
    return check_report("test_btl_sm_fifo");
}
