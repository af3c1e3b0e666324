/*
 * Device buffers (the fake device: RAIL_ACCEL=host,fake; its memory faults
 * on any host access): MPI_Reduce_local with predefined operations on
 * contiguous and noncontiguous types, device and mixed host/device
 * operands; MPI_Pack / MPI_Unpack / MPI_Pack_external between device and
 * host memory.  Skips (77) without the fake device.
 */
#include "test/dtype/dtype_test.h"
#include <mpi-ext.h>
#include "test/devmem.h"

#define N 1000

static void *dev_alloc(size_t n)
{
    void *p = NULL;
    MPI_OK(devmem_malloc(n, &p));
    return p;
}

static void to_dev(void *d, const void *h, size_t n)
{
    MPI_OK(devmem_memcpy(d, h, n));
}

static void to_host(void *h, const void *d, size_t n)
{
    MPI_OK(devmem_memcpy(h, d, n));
}

static void test_reduce(void)
{
    static double a[N], b[N], r[N];
    for (int i = 0; i < N; i++)
        a[i] = i, b[i] = 2 * i + 1;
    double *da = dev_alloc(sizeof(a)), *db = dev_alloc(sizeof(b));
    to_dev(da, a, sizeof(a));
    to_dev(db, b, sizeof(b));
    MPI_OK(MPI_Reduce_local(da, db, N, MPI_DOUBLE, MPI_SUM));
    to_host(r, db, sizeof(r));
    for (int i = 0; i < N; i++)
        CHECK(r[i] == 3 * i + 1, "device SUM [%d] = %g", i, r[i]);
    /* host in, device inout */
    MPI_OK(MPI_Reduce_local(a, db, N, MPI_DOUBLE, MPI_MAX));
    to_host(r, db, sizeof(r));
    for (int i = 0; i < N; i++)
        CHECK(r[i] == 3 * i + 1, "mixed MAX [%d] = %g", i, r[i]);

    /* Noncontiguous: every other int, staged on the device. */
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &v));
    MPI_OK(MPI_Type_commit(&v));
    static int ia[N], ib[N], ir[N];
    for (int i = 0; i < N; i++)
        ia[i] = i, ib[i] = 1000 * i;
    int *dia = dev_alloc(sizeof(ia)), *dib = dev_alloc(sizeof(ib));
    to_dev(dia, ia, sizeof(ia));
    to_dev(dib, ib, sizeof(ib));
    MPI_OK(MPI_Reduce_local(dia, dib, 1, v, MPI_SUM));
    to_host(ir, dib, sizeof(ir));
    for (int i = 0; i < N; i++)
        CHECK(ir[i] == (i % 2 ? 1000 * i : 1001 * i), "device vector SUM [%d] = %d", i, ir[i]);
    MPI_OK(MPI_Type_free(&v));

    /* MINLOC on pairs. */
    struct {
        double v;
        int i;
    } pa[4] = {{1, 0}, {5, 1}, {3, 2}, {3, 3}}, pb[4] = {{2, 9}, {4, 9}, {3, 1}, {3, 9}}, pr[4];
    void *dpa = dev_alloc(sizeof(pa)), *dpb = dev_alloc(sizeof(pb));
    to_dev(dpa, pa, sizeof(pa));
    to_dev(dpb, pb, sizeof(pb));
    MPI_OK(MPI_Reduce_local(dpa, dpb, 4, MPI_DOUBLE_INT, MPI_MINLOC));
    to_host(pr, dpb, sizeof(pr));
    CHECK(pr[0].v == 1 && pr[0].i == 0 && pr[1].v == 4 && pr[1].i == 9 && pr[2].i == 1 &&
              pr[3].i == 3,
          "device MINLOC");

    /* Disallowed pairs are refused before any data is touched. */
    MPI_FAILS(MPI_Reduce_local(da, db, N, MPI_DOUBLE, MPI_BAND), MPI_ERR_OP);
    devmem_free(da), devmem_free(db);
    devmem_free(dia), devmem_free(dib);
    devmem_free(dpa), devmem_free(dpb);
}

static void test_pack(void)
{
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(8, 2, 3, MPI_SHORT, &v));
    MPI_OK(MPI_Type_commit(&v));
    short h[24], back[24], packed[16];
    for (int i = 0; i < 24; i++)
        h[i] = (short)(i + 1), back[i] = 0;
    short *d = dev_alloc(sizeof(h));
    to_dev(d, h, sizeof(h));
    /* device -> host packed */
    int pos = 0;
    MPI_OK(MPI_Pack(d, 1, v, packed, sizeof(packed), &pos, MPI_COMM_SELF));
    CHECK(pos == 32, "packed %d bytes from the device", pos);
    for (int k = 0; k < 16; k++)
        CHECK(packed[k] == h[k / 2 * 3 + k % 2], "device pack [%d] = %d", k, packed[k]);
    /* host packed -> device, into a cleared buffer */
    to_dev(d, back, sizeof(back));
    pos = 0;
    MPI_OK(MPI_Unpack(packed, sizeof(packed), &pos, d, 1, v, MPI_COMM_SELF));
    to_host(back, d, sizeof(back));
    for (int i = 0; i < 24; i++)
        CHECK(back[i] == (i % 3 == 2 ? 0 : h[i]), "device unpack [%d] = %d", i, back[i]);
    /* packed buffer on the device too */
    short *dp = dev_alloc(sizeof(packed));
    to_dev(d, h, sizeof(h));
    pos = 0;
    MPI_OK(MPI_Pack(d, 1, v, dp, sizeof(packed), &pos, MPI_COMM_SELF));
    short check[16];
    to_host(check, dp, sizeof(check));
    CHECK(memcmp(check, packed, sizeof(check)) == 0, "device to device pack");
    /* external32 from the device */
    unsigned char ext[64];
    MPI_Aint epos = 0;
    MPI_OK(MPI_Pack_external("external32", d, 1, v, ext, sizeof(ext), &epos));
    CHECK(epos == 32 && ext[0] == 0 && ext[1] == 1 && ext[2] == 0 && ext[3] == 2 && ext[4] == 0 &&
              ext[5] == 4,
          "external32 from the device");
    MPI_OK(MPI_Type_free(&v));
    devmem_free(d);
    devmem_free(dp);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    void *p = NULL;
    if (devmem_malloc(64, &p) != MPI_SUCCESS)
        check_mpi_skip("%s", devmem_why());
    devmem_free(p);
    test_reduce();
    test_pack();
    return check_mpi_finalize("dtype_device");
}
