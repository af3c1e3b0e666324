/*
 * Device buffers (run with RAIL_ACCEL=host,fake): the fake device's memory
 * faults on any host access, so every path that touches a user buffer must
 * go through accel.  Eager, rendezvous (get and pipelined), self messages,
 * device<->host in both directions, derived datatypes on device memory,
 * buffered sends and Sendrecv_replace from device memory.  Exits 77 when
 * the fake device is not active.
 */
#include "p2p_test.h"
#include <mpi-ext.h>
#include "test/devmem.h"
#include "test/pvar.h"
#include <stdbool.h>

static void *dev_alloc(size_t n)
{
    void *p = NULL;
    MPI_OK(devmem_malloc(n ? n : 1, &p));
    return p;
}

static void dev_fill(void *dev, size_t n, int who, int seq)
{
    char *h = malloc(n + 1);
    t_fill(h, n, who, seq);
    MPI_OK(devmem_memcpy(dev, h, n));
    free(h);
}

static void dev_expect(const void *dev, size_t n, int who, int seq, const char *what)
{
    char *h = malloc(n + 1);
    MPI_OK(devmem_memcpy(h, dev, n));
    t_expect(h, n, who, seq, what);
    free(h);
}

static unsigned long long ipc_received(void)
{
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    unsigned long long n = pvar_count("pml_rndv_recv_ipc");
    MPI_OK(MPI_T_finalize());
    return n;
}

/* Device messages below the eager limit between device buffers: from
 * MPI_Isend by IPC (one copy by the receiver; pml_device_eager_max 0) when
 * `ipc` (before any small device message met a host receive buffer), else
 * eager (after one did: the sender saw a CTS and sends small ones eager
 * again); from MPI_Send always eager (buffered, as the peers do: sent
 * before the matching receive is posted, everywhere at once).  With
 * P2P_DEVICE_IPC=no (IPC off) never by IPC. */
static void small_by_ipc(bool ipc)
{
    const char *want = getenv("P2P_DEVICE_IPC");
    if (want == NULL || t_size < 2)
        return;
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    size_t sizes[] = { 8, 1000 };
    void *ds = dev_alloc(1000), *dr = dev_alloc(1000);
    for (int blocking = 0; blocking < 2; blocking++) {
        unsigned long long before = ipc_received();
        for (int k = 0; k < 2; k++) {
            int tag = 500 + 2 * blocking + k;
            dev_fill(ds, sizes[k], t_rank, tag);
            MPI_Request q[2];
            if (blocking) {
                /* everyone sends before receiving: only buffering completes it */
                MPI_OK(MPI_Send(ds, (int)sizes[k], MPI_BYTE, to, tag, MPI_COMM_WORLD));
                MPI_OK(MPI_Recv(dr, (int)sizes[k], MPI_BYTE, from, tag, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
            } else {
                MPI_OK(MPI_Irecv(dr, (int)sizes[k], MPI_BYTE, from, tag, MPI_COMM_WORLD, &q[0]));
                MPI_OK(MPI_Isend(ds, (int)sizes[k], MPI_BYTE, to, tag, MPI_COMM_WORLD, &q[1]));
                MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
            }
            dev_expect(dr, sizes[k], from, tag, "small device receive");
        }
        unsigned long long got = ipc_received() - before;
        if (strcmp(want, "yes") == 0 && ipc && !blocking)
            CHECK(got == 2, "%llu of 2 small device messages from MPI_Isend received by IPC, "
                  "want 2", got);
        else
            CHECK(got == 0, "%llu small device messages received by IPC, want none (%s)", got,
                  blocking ? "MPI_Send buffers them" : ipc ? "IPC off"
                                                      : "the sender met a host receive buffer");
    }
    devmem_free(ds);
    devmem_free(dr);
}

static void contiguous(void)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    size_t sizes[] = { 0, 8, 3000, 100000, (2 << 20) + 5 };
    size_t max = sizes[4];
    void *ds = dev_alloc(max), *dr = dev_alloc(max);
    char *hs = malloc(max), *hr = malloc(max);
    for (int k = 0; k < 5; k++) {
        size_t n = sizes[k];
        for (int combo = 0; combo < 4; combo++) {
            int sdev = combo & 1, rdev = combo >> 1, seq = k * 4 + combo;
            void *s = sdev ? ds : hs, *r = rdev ? dr : hr;
            if (sdev)
                dev_fill(ds, n, t_rank, seq);
            else
                t_fill(hs, n, t_rank, seq);
            MPI_Request q[2];
            MPI_OK(MPI_Irecv(r, (int)n, MPI_BYTE, from, seq, MPI_COMM_WORLD, &q[0]));
            MPI_OK(MPI_Isend(s, (int)n, MPI_BYTE, to, seq, MPI_COMM_WORLD, &q[1]));
            MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
            if (rdev)
                dev_expect(dr, n, from, seq, "device receive");
            else
                t_expect(hr, n, from, seq, "host receive");
        }
        /* to self, blocking, unexpected first */
        dev_fill(ds, n, t_rank, 99);
        MPI_Request q;
        MPI_OK(MPI_Isend(ds, (int)n, MPI_BYTE, t_rank, 99, MPI_COMM_WORLD, &q));
        MPI_OK(MPI_Recv(dr, (int)n, MPI_BYTE, t_rank, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        dev_expect(dr, n, t_rank, 99, "device self message");
        /* synchronous and Sendrecv_replace */
        dev_fill(ds, n, t_rank, 98);
        MPI_OK(MPI_Sendrecv_replace(ds, (int)n, MPI_BYTE, to, 98, from, 98, MPI_COMM_WORLD,
                                    MPI_STATUS_IGNORE));
        dev_expect(ds, n, from, 98, "device Sendrecv_replace");
    }
    /* buffered send from device memory */
    int bsize = (int)sizes[3] + MPI_BSEND_OVERHEAD;
    void *bb = malloc((size_t)bsize);
    MPI_OK(MPI_Buffer_attach(bb, bsize));
    dev_fill(ds, sizes[3], t_rank, 97);
    MPI_OK(MPI_Bsend(ds, (int)sizes[3], MPI_BYTE, to, 97, MPI_COMM_WORLD));
    MPI_OK(MPI_Recv(dr, (int)sizes[3], MPI_BYTE, from, 97, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    dev_expect(dr, sizes[3], from, 97, "device Bsend");
    void *p;
    int ps;
    MPI_OK(MPI_Buffer_detach(&p, &ps));
    free(bb);
    devmem_free(ds);
    devmem_free(dr);
    free(hs);
    free(hr);
}

static void derived(void)
{
    int to = (t_rank + 1) % t_size, from = (t_rank + t_size - 1) % t_size;
    MPI_Datatype vec;
    int rc = MPI_Type_vector(1, 1, 2, MPI_INT, &vec);
    if (rc != MPI_SUCCESS) {
        if (t_rank == 0)
            check_skip_part("derived-datatype part: MPI_Type_vector not implemented");
        return;
    }
    MPI_Type_free(&vec);
    int counts[] = { 10, 2000, 200000 };
    for (int k = 0; k < 3; k++) {
        int n = counts[k];
        MPI_OK(MPI_Type_vector(n, 2, 5, MPI_INT, &vec));
        MPI_OK(MPI_Type_commit(&vec));
        size_t span = (size_t)n * 5 * sizeof(int);
        int *h = malloc(span), *g = malloc(span);
        for (size_t i = 0; i < span / sizeof(int); i++)
            h[i] = (int)i * 5 + t_rank;
        void *ds = dev_alloc(span), *dr = dev_alloc(span);
        MPI_OK(devmem_memcpy(ds, h, span));
        for (size_t i = 0; i < span / sizeof(int); i++)
            h[i] = -1;
        MPI_OK(devmem_memcpy(dr, h, span));
        /* device vector -> device vector */
        MPI_Request q[2];
        MPI_OK(MPI_Irecv(dr, 1, vec, from, 200 + k, MPI_COMM_WORLD, &q[0]));
        MPI_OK(MPI_Isend(ds, 1, vec, to, 200 + k, MPI_COMM_WORLD, &q[1]));
        MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        MPI_OK(devmem_memcpy(g, dr, span));
        for (size_t i = 0; i < span / sizeof(int); i++) {
            int want = i % 5 < 2 ? (int)i * 5 + from : -1;
            CHECK(g[i] == want, "device vector n=%d [%zu]=%d want %d", n, i, g[i], want);
        }
        /* device vector -> host contiguous */
        int *c = malloc((size_t)n * 2 * sizeof(int));
        MPI_OK(MPI_Irecv(c, n * 2, MPI_INT, from, 210 + k, MPI_COMM_WORLD, &q[0]));
        MPI_OK(MPI_Isend(ds, 1, vec, to, 210 + k, MPI_COMM_WORLD, &q[1]));
        MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 2 * n; i++) {
            int idx = (i / 2) * 5 + i % 2;
            CHECK(c[i] == idx * 5 + from, "device vector -> host [%d]", i);
        }
        MPI_Type_free(&vec);
        devmem_free(ds);
        devmem_free(dr);
        free(h);
        free(g);
        free(c);
    }
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    void *probe = NULL;
    int ok = devmem_malloc(64, &probe) == MPI_SUCCESS;
    int all_ok = ok;
    /* every rank must agree (RAIL_ACCEL is job-wide, but be safe) */
    if (!all_ok)
        check_mpi_skip("%s", devmem_why());
    devmem_free(probe);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    small_by_ipc(true);
    contiguous();
    small_by_ipc(false);
    t_barrier();
    derived();
    /* P2P_DEVICE_IPC=yes: the large device-to-device messages between
     * processes went by IPC (every rank receives some at np > 1); no: none
     * did (turned off, or the device's IPC cannot open a peer's memory) */
    const char *ipc = getenv("P2P_DEVICE_IPC");
    if (ipc != NULL && t_size > 1) {
        /* large device messages copied straight from the sender's buffer */
        unsigned long long n = ipc_received();
        if (strcmp(ipc, "yes") == 0)
            CHECK(n > 0, "no device message received by IPC");
        else
            CHECK(n == 0, "%llu device messages received by IPC", n);
    }
    return check_mpi_finalize("p2p_device");
}
