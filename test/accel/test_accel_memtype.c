/*
 * Memory type of host and fake-device pointers: host memory of every origin
 * is HOST, with or without a device component; fake allocations are DEVICE
 * at every offset, with their base, size and a fresh id; a freed allocation
 * is host again; repeated lookups agree; selection follows RAIL_ACCEL.
 */
#include "config.h"
#include "accel/accel_internal.h"
#include "test/accel/accel_test.h"
#include "mpi-ext.h"

#include <sys/mman.h>

static int global_var;

static void check_host_pointers(void)
{
    int local = 0;
    void *heap = malloc(100), *big = malloc(8 << 20);
    void *map = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    const void *ptrs[] = { &local, heap, big, (char *)big + (4 << 20), map, &global_var, NULL,
                           (void *)check_host_pointers, "literal" };
    for (size_t i = 0; i < sizeof(ptrs) / sizeof(ptrs[0]); i++) {
        accel_mem_info_t info;
        CHECK(accel_memory_type(ptrs[i]) == ACCEL_MEM_HOST);
        CHECK(!accel_is_device(ptrs[i]));
        CHECK_OK(accel_memory_info(ptrs[i], &info));
        CHECK(info.type == ACCEL_MEM_HOST && info.id == 0);
    }
    munmap(map, 1 << 16);
    free(big);
    free(heap);
}

static void test_host_only(void)
{
    test_select("host");
    CHECK_OK(accel_init());
    CHECK(!accel_any_device_active);
    CHECK(accel_component_active(accel_component_index("host")));
    CHECK(!accel_component_active(accel_component_index("fake")));
    check_host_pointers();
    void *p;
    CHECK_RC(MPIX_Fake_device_malloc(16, &p), MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK(MPIX_Query_cuda_support() == 0);
    CHECK_OK(accel_finalize());
}

static void test_fake(void)
{
    test_select("host,fake");
    CHECK_OK(accel_init());
    CHECK(accel_any_device_active);
    CHECK(accel_component_active(accel_component_index("fake")));
    check_host_pointers();

    enum { N = 64 };
    void *p[N];
    size_t sizes[N];
    for (int i = 0; i < N; i++) {
        sizes[i] = 1 + (size_t)i * 3001;
        CHECK_OK(MPIX_Fake_device_malloc(sizes[i], &p[i]));
        CHECK(p[i] != NULL);
    }
    uint64_t ids[N];
    for (int round = 0; round < 2; round++) {        /* second round: cached answers */
        for (int i = 0; i < N; i++) {
            accel_mem_info_t info;
            char *c = p[i];
            CHECK(accel_memory_type(c) == ACCEL_MEM_DEVICE);
            CHECK(accel_is_device(c + sizes[i] - 1));
            CHECK(accel_memory_type(c + sizes[i] / 2) == ACCEL_MEM_DEVICE);
            CHECK_OK(accel_memory_info(c + sizes[i] / 3, &info));
            CHECK(info.type == ACCEL_MEM_DEVICE && info.base == c && info.size == sizes[i]);
            CHECK(info.component == accel_component_index("fake") && info.device == 0);
            CHECK(info.id != 0);
            if (round == 0)
                ids[i] = info.id;
            CHECK(info.id == ids[i]);
            /* Past the end (page rounding) is not the allocation. */
            if (sizes[i] % 4096 != 0)
                CHECK(accel_memory_type(c + sizes[i]) == ACCEL_MEM_HOST);
        }
    }
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            CHECK(ids[i] != ids[j]);
    check_host_pointers();

    /* Free: host again; a new allocation at the same place has a new id. */
    void *old = p[5];
    CHECK_OK(MPIX_Fake_device_free(p[5]));
    CHECK(accel_memory_type(old) == ACCEL_MEM_HOST);
    CHECK_OK(MPIX_Fake_device_malloc(sizes[5], &p[5]));
    accel_mem_info_t info;
    CHECK_OK(accel_memory_info(p[5], &info));
    CHECK(info.id != ids[5]);
    CHECK_RC(MPIX_Fake_device_free((char *)p[6] + 1), MPI_ERR_ARG);
    CHECK_RC(MPIX_Fake_device_free(&info), MPI_ERR_ARG);
    CHECK_OK(MPIX_Fake_device_free(NULL));
    void *z;
    CHECK_OK(MPIX_Fake_device_malloc(0, &z));
    CHECK(z == NULL);
    /* accel's own device allocations come from the same component. */
    void *d = accel_alloc_device(1000, p[0]);
    CHECK(d != NULL && accel_is_device(d));
    accel_free_device(d);
    /* kept for the next temporary (accel_scratch_cache), still device memory */
    CHECK(accel_is_device(d));
    void *d2 = accel_alloc_device(10, NULL);
    CHECK(d2 == d && accel_is_device(d2));
    accel_free_device(d2);
    void *pinned = accel_alloc_host_pinned(4096);
    CHECK(pinned != NULL && !accel_is_device(pinned));
    memset(pinned, 1, 4096);
    accel_free_host_pinned(pinned);
    for (int i = 0; i < N; i++)
        CHECK_OK(MPIX_Fake_device_free(p[i]));
    CHECK_OK(accel_finalize());
    CHECK(!accel_any_device_active);
}

static void test_selection(void)
{
    test_select("^cuda");       /* exclusions apply to the default host,cuda */
    CHECK_OK(accel_init());
    CHECK(!accel_component_active(accel_component_index("fake")));
    CHECK(accel_component_active(accel_component_index("host")));
    CHECK_OK(accel_finalize());
    test_select("fake");        /* host is always there */
    CHECK_OK(accel_init());
    CHECK(accel_component_active(accel_component_index("host")));
    CHECK(accel_component_active(accel_component_index("fake")));
    CHECK_OK(accel_init());     /* reference counted */
    CHECK_OK(accel_finalize());
    CHECK(accel_any_device_active);
    CHECK_OK(accel_finalize());
    CHECK(!accel_any_device_active);
    CHECK(strcmp(accel_component_name(0), "host") == 0);
    CHECK(accel_component_index("nonesuch") == -1);
}

int main(void)
{
    unsetenv("RAIL_ACCEL_VERBOSE");
    test_host_only();
    test_fake();
    test_selection();
    printf("memtype: ok\n");
    return 0;
}
