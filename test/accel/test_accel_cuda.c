/*
 * The cuda component without a GPU.  Each case re-runs this program with its
 * own environment (LD_LIBRARY_PATH is read by the loader at start-up only):
 *   absent    no libcuda.so.1: not available, one verbose line, no crash;
 *   broken    the toolkit's stub as libcuda.so.1 (every call answers
 *             CUDA_ERROR_STUB_LIBRARY, 34): not available, one verbose line;
 *   notbuilt  (build without CUDA) RAIL_ACCEL=host,cuda warns "not built";
 *   hostonly  mock driver, RAIL_ACCEL=host: libcuda is never even loaded;
 *   lazy      mock driver, cuda active, host buffers only: no cuInit, no
 *             context, no allocation; host answers are not cached while the
 *             driver is uninitialised;
 *   device    mock driver initialised by the "application": classification
 *             and both caches (counted driver calls), copies, every kernel
 *             of the table loaded from the embedded fatbin and launched,
 *             data checked for a few, MPI_ERR_OP outside the table, IPC,
 *             streams, pinned memory, buffer-id revalidation;
 *   nocache   as device, with RAIL_ACCEL_CUDA_HOST_CACHE=0.
 */
#include "config.h"
#include "test/accel/accel_test.h"
#include "mpi-ext.h"

#include <dlfcn.h>
#include <unistd.h>
#include <sys/stat.h>

#ifdef RAIL_HAVE_CUDA
#include "accel/cuda/accel_cuda.h"
#include "accel/cuda/cuda_reduce_table.h"
#include <cuda.h>
#endif

static const char *self;
static char tmpdir[256];

/* Lines of `file` containing `what`. */
static int count_lines(const char *file, const char *what)
{
    char line[1024];
    int n = 0;
    FILE *f = fopen(file, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        n += strstr(line, what) != NULL;
    fclose(f);
    return n;
}

static void show(const char *file)
{
    char line[1024];
    FILE *f = fopen(file, "r");
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        printf("  | %s", line);
    if (f != NULL)
        fclose(f);
}

#ifdef RAIL_HAVE_CUDA
/* The toolkit's stub libcuda.so (install layouts differ). */
static const char *find_stub(void)
{
    static char path[512];
    const char *where[] = { "lib64/stubs", "lib/stubs", "targets/x86_64-linux/lib/stubs",
                            "targets/sbsa-linux/lib/stubs", "lib/x86_64-linux-gnu/stubs",
                            "lib/aarch64-linux-gnu/stubs" };
    for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s/libcuda.so", TEST_CUDA_PREFIX, where[i]);
        if (access(path, R_OK) == 0)
            return path;
    }
    return NULL;
}
#endif

/* Checks common to every case where cuda must be unavailable. */
static int expect_unavailable(void)
{
    CHECK_OK(accel_init());
    int i = accel_component_index("cuda");
    if (i >= 0 && accel_component_active(i))
        return TEST_SKIP;       /* a real driver answered: not this machine's case */
    CHECK(MPIX_Query_cuda_support() == 0);
    CHECK(!accel_any_device_active);
    char a[16] = "abc", b[16];
    CHECK_OK(accel_copy(b, a, sizeof(a), NULL));
    CHECK(strcmp(b, "abc") == 0);
    CHECK(accel_memory_type(a) == ACCEL_MEM_HOST);
    CHECK_OK(accel_finalize());
    return 0;
}

#ifdef RAIL_HAVE_CUDA
/* ------------------------------------------------------------ mock driver cases */

static long (*mock_calls)(const char *);
static void (*mock_last)(char *, unsigned *, unsigned *, void **, void **, size_t *);
static int (*mock_inputs)(void);

static void mock_hooks(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    CHECK(h != NULL);
    mock_calls = (long (*)(const char *))dlsym(h, "mock_cuda_calls");
    mock_last = (void (*)(char *, unsigned *, unsigned *, void **, void **, size_t *))dlsym(
        h, "mock_cuda_last_launch");
    mock_inputs = (int (*)(void))dlsym(h, "mock_cuda_last_inputs");
    if (mock_calls == NULL) {
        printf("libcuda.so.1 here is not the test's mock\n");
        exit(TEST_SKIP);
    }
}

/* The application's own use of the driver, as the CUDA runtime would do it. */
static void *app_sym(const char *name)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    CHECK(h != NULL);
    void *f = dlsym(h, name);
    CHECK(f != NULL);
    return f;
}

static int case_hostonly(void)
{
    test_select("host");
    CHECK_OK(accel_init());
    char a[64] = "x", b[64];
    CHECK(accel_memory_type(a) == ACCEL_MEM_HOST);
    CHECK_OK(accel_copy(b, a, sizeof(a), NULL));
    void *p = accel_alloc_host_pinned(100);
    accel_free_host_pinned(p);
    CHECK(MPIX_Query_cuda_support() == 0);
    CHECK_OK(accel_finalize());
    CHECK(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) == NULL);
    printf("host-only run: libcuda never loaded\n");
    return 0;
}

static int case_lazy(void)
{
    test_select(NULL);
    CHECK_OK(accel_init());
    mock_hooks();
    CHECK(MPIX_Query_cuda_support() == 1);
    CHECK(accel_any_device_active);
    int32_t a[256], b[256];
    for (int i = 0; i < 256; i++)
        a[i] = i, b[i] = 1;
    for (int round = 0; round < 3; round++) {
        CHECK(accel_memory_type(a) == ACCEL_MEM_HOST);
        CHECK(!accel_is_device(b + 7));
    }
    /* Uninitialised driver: asked every time, never cached. */
    CHECK(mock_calls("cuPointerGetAttributes") == 6);
    CHECK_OK(accel_copy(b, a, sizeof(a), NULL));
    CHECK_OK(accel_reduce(RAIL_OP_SUM, RAIL_TK_INT32, a, b, 256, NULL));
    CHECK(b[255] == 510);
    void *p = accel_alloc_host_pinned(4096);
    CHECK(p != NULL);
    memset(p, 0, 4096);
    accel_free_host_pinned(p);
    accel_stream_t *s;
    accel_event_t *e;
    CHECK_OK(accel_stream_create(&s));
    CHECK_OK(accel_copy(b, a, sizeof(a), s));
    CHECK_OK(accel_event_record(&e, s));
    CHECK_OK(accel_event_query(e));
    CHECK_OK(accel_event_destroy(e));
    CHECK_OK(accel_stream_destroy(s));
    CHECK_OK(accel_finalize());
    CHECK(mock_calls("cuInit") == 0);
    CHECK(mock_calls("cuCtxPushCurrent") == 0);
    CHECK(mock_calls("cuMemAlloc") == 0 && mock_calls("cuMemHostAlloc") == 0);
    CHECK(mock_calls("cuMemcpyAsync") == 0 && mock_calls("cuStreamCreate") == 0);
    printf("lazy: host-only work made no cuInit, context, stream or allocation\n");
    return 0;
}

/* accel_reduce_many: the n-input kernel of every (op, kind), up to 8
 * inputs per launch, in place; a host input takes the step-by-step way. */
static void check_reduce_many(char *d1, char *d2)
{
    char *d3 = accel_alloc_device(4096, d1);
    CHECK(d3 != NULL);
    const void *ins[10] = { d1, d2, d1 };
    int n = 0;
    for (int op = 1; op < RAIL_OP_COUNT; op++)
        for (int tk = 1; tk < RAIL_TK_COUNT; tk++) {
            const char *name = accel_cuda_kernel_n_name((rail_op_t)op, (rail_typekind_t)tk);
            if (name == NULL || op == RAIL_OP_NO_OP)
                continue;
            CHECK_OK(accel_reduce_many((rail_op_t)op, (rail_typekind_t)tk, ins, 3, d3, 100, NULL));
            char got[64];
            unsigned grid, block;
            void *in, *out;
            size_t count;
            mock_last(got, &grid, &block, &in, &out, &count);
            CHECK(strcmp(got, name) == 0 && mock_inputs() == 3);
            CHECK(in == d1 && out == d3 && count == 100);
            n++;
        }
    CHECK(n > 100);
    /* int32 sums: d1[i] = i, d2[i] = 2 i; ten inputs, two launches */
    int32_t h[1000], r[1000];
    for (int i = 0; i < 1000; i++)
        h[i] = i;
    CHECK_OK(accel_copy(d1, h, sizeof(h), NULL));
    for (int i = 0; i < 1000; i++)
        h[i] = 2 * i;
    CHECK_OK(accel_copy(d2, h, sizeof(h), NULL));
    for (int i = 0; i < 10; i++)
        ins[i] = i % 2 ? d2 : d1;
    long launches = mock_calls("cuLaunchKernel");
    CHECK_OK(accel_reduce_many(RAIL_OP_SUM, RAIL_TK_INT32, ins, 10, d3, 1000, NULL));
    CHECK(mock_calls("cuLaunchKernel") == launches + 2);
    CHECK_OK(accel_copy(r, d3, sizeof(r), NULL));
    for (int i = 0; i < 1000; i++)
        CHECK(r[i] == 15 * i);
    /* in place: out is the first input */
    ins[0] = d3;
    ins[1] = d1;
    CHECK_OK(accel_reduce_many(RAIL_OP_SUM, RAIL_TK_INT32, ins, 2, d3, 1000, NULL));
    CHECK_OK(accel_copy(r, d3, sizeof(r), NULL));
    for (int i = 0; i < 1000; i++)
        CHECK(r[i] == 16 * i);
    /* a host input: a copy and one kernel per further input */
    for (int i = 0; i < 1000; i++)
        h[i] = 1;
    ins[0] = h;
    ins[1] = d1;
    ins[2] = d2;
    launches = mock_calls("cuLaunchKernel");
    CHECK_OK(accel_reduce_many(RAIL_OP_SUM, RAIL_TK_INT32, ins, 3, d3, 1000, NULL));
    CHECK(mock_calls("cuLaunchKernel") == launches + 2);
    CHECK_OK(accel_copy(r, d3, sizeof(r), NULL));
    for (int i = 0; i < 1000; i++)
        CHECK(r[i] == 1 + 3 * i);
    /* accel_reduce_many_to, in place in ten buffers (x_j[i] = j + i): the
     * first launch folds eight into x_0, the second the last two and
     * writes eight results, the third copies x_0 to the last two */
    char *x[10];
    void *outs[10];
    for (int j = 0; j < 10; j++) {
        x[j] = accel_alloc_device(sizeof(h), d1);
        CHECK(x[j] != NULL);
        for (int i = 0; i < 1000; i++)
            h[i] = j + i;
        CHECK_OK(accel_copy(x[j], h, sizeof(h), NULL));
        ins[j] = x[j];
        outs[j] = x[j];
    }
    launches = mock_calls("cuLaunchKernel");
    CHECK_OK(accel_reduce_many_to(RAIL_OP_SUM, RAIL_TK_INT32, ins, 10, outs, 10, 1000, NULL));
    CHECK(mock_calls("cuLaunchKernel") == launches + 3);
    for (int j = 0; j < 10; j++) {
        CHECK_OK(accel_copy(r, x[j], sizeof(r), NULL));
        for (int i = 0; i < 1000; i++)
            CHECK(r[i] == 45 + 10 * i);
    }
    /* three inputs into three outputs, one of them not an input: one launch */
    outs[2] = d3;
    launches = mock_calls("cuLaunchKernel");
    CHECK_OK(accel_reduce_many_to(RAIL_OP_MAX, RAIL_TK_INT32, ins, 3, outs, 3, 1000, NULL));
    CHECK(mock_calls("cuLaunchKernel") == launches + 1);
    for (int j = 0; j < 3; j++) {
        CHECK_OK(accel_copy(r, outs[j], sizeof(r), NULL));
        for (int i = 0; i < 1000; i++)
            CHECK(r[i] == 45 + 10 * i);
    }
    /* a host output: the step-by-step way, the same results */
    outs[1] = r;
    memset(r, 0, sizeof(r));
    CHECK_OK(accel_reduce_many_to(RAIL_OP_SUM, RAIL_TK_INT32, ins, 2, outs, 2, 1000, NULL));
    for (int i = 0; i < 1000; i++)
        CHECK(r[i] == 90 + 20 * i);
    CHECK_OK(accel_copy(h, x[0], sizeof(h), NULL));
    for (int i = 0; i < 1000; i++)
        CHECK(h[i] == 90 + 20 * i);
    for (int j = 0; j < 10; j++)
        accel_free_device(x[j]);
    accel_free_device(d3);
    printf("device: %d n-input kernels found in the embedded fatbin and launched\n", n);
}

/* The first three copies of d/sp/len by accel_copy_many: one driver copy
 * each, no launch; copy 1's result holds want. */
static void copy_many_by_driver(void *const *d, const void *const *sp, const size_t *len,
                                const char *want)
{
    char r[64];
    long launches = mock_calls("cuLaunchKernel"), copies = mock_calls("cuMemcpyAsync");
    CHECK_OK(accel_copy_many(d, sp, len, 3, NULL));
    CHECK(mock_calls("cuLaunchKernel") == launches);
    CHECK(mock_calls("cuMemcpyAsync") == copies + 3);
    CHECK(len[1] <= sizeof(r));
    CHECK_OK(accel_copy(r, d[1], len[1], NULL));
    CHECK(memcmp(r, want, len[1]) == 0);
}

/* accel_copy_many: up to ACCEL_CUDA_COPY_MAX copies per launch of
 * rail_copy_many, at any alignment and length (a zero length skipped);
 * a host buffer among them, or more bytes than accel_cuda_copy_kernel_max,
 * take one driver copy each. */
static void check_copy_many(char *like)
{
    enum { N = ACCEL_CUDA_COPY_MAX + 4, SZ = 200000 };
    char *src = accel_alloc_device(SZ, like), *dst = accel_alloc_device(SZ, like);
    CHECK(src != NULL && dst != NULL);
    static char h[SZ], r[SZ];
    test_pattern(h, SZ, 3);
    CHECK_OK(accel_copy(src, h, SZ, NULL));
    CHECK_OK(accel_copy(dst, memset(r, 0, SZ), SZ, NULL));
    void *d[N];
    const void *sp[N];
    size_t len[N], at = 0;
    for (int i = 0; i < N; i++) {
        /* copy i: len 0, 1, 17, ... from src + at + i % 5 to dst + at + i % 3 */
        len[i] = i == 4 ? 0 : (size_t)((i * i * 5 + 1) % 2000);
        sp[i] = src + at + i % 5;
        d[i] = dst + at + i % 3;
        at += len[i] + 8;
    }
    CHECK(at < SZ);
    long launches = mock_calls("cuLaunchKernel"), copies = mock_calls("cuMemcpyAsync");
    CHECK_OK(accel_copy_many(d, sp, len, N, NULL));
    CHECK(mock_calls("cuLaunchKernel") == launches + 2);   /* ACCEL_CUDA_COPY_MAX + 3 copies */
    CHECK(mock_calls("cuMemcpyAsync") == copies);
    char got[64];
    unsigned grid, block;
    void *in, *out;
    size_t count;
    mock_last(got, &grid, &block, &in, &out, &count);
    CHECK(strcmp(got, "rail_copy_many") == 0 && mock_inputs() == 3);
    CHECK_OK(accel_copy(r, dst, SZ, NULL));
    for (int i = 0; i < N; i++)
        CHECK(memcmp(r + ((char *)d[i] - dst), h + ((const char *)sp[i] - src), len[i]) == 0);
    /* a host source among them: one copy each */
    static char hs[100];
    memset(hs, 'x', sizeof(hs));
    sp[1] = hs;   /* len[1] bytes as before (6) */
    copy_many_by_driver(d, sp, len, hs);
    /* more bytes than accel_cuda_copy_kernel_max: one copy each */
    size_t max = accel_cuda_copy_kernel_max;
    accel_cuda_copy_kernel_max = 20;   /* the three copies: 1 + 6 + 21 bytes */
    sp[1] = src + 5000;
    copy_many_by_driver(d, sp, len, h + 5000);
    accel_cuda_copy_kernel_max = max;
    accel_free_device(src);
    accel_free_device(dst);
    printf("device: accel_copy_many in kernel launches of up to %d copies\n",
           ACCEL_CUDA_COPY_MAX);
}

static void check_all_kernels(char *d1, char *d2)
{
    int n = 0;
    for (int op = 1; op < RAIL_OP_COUNT; op++)
        for (int tk = 1; tk < RAIL_TK_COUNT; tk++) {
            const char *name = accel_cuda_kernel_name((rail_op_t)op, (rail_typekind_t)tk);
            int rc = accel_reduce((rail_op_t)op, (rail_typekind_t)tk, d1, d2, 1000, NULL);
            if (op == RAIL_OP_NO_OP) {
                CHECK(rc == MPI_SUCCESS);
                continue;
            }
            if (name == NULL) {
                CHECK(rc == MPI_ERR_OP);
                continue;
            }
            if (rc != MPI_SUCCESS) {
                fprintf(stderr, "kernel %s: accel_reduce returned %d\n", name, rc);
                exit(1);
            }
            char got[64];
            unsigned grid, block;
            void *in, *inout;
            size_t count;
            mock_last(got, &grid, &block, &in, &inout, &count);
            CHECK(strcmp(got, name) == 0);
            CHECK(in == d1 && inout == d2 && count == 1000 && (size_t)grid * block >= 1000);
            n++;
        }
    CHECK(n > 100);
    CHECK(mock_calls("cuModuleLoadData") == 1);       /* once per context */
    printf("device: %d kernels found in the embedded fatbin and launched\n", n);
}

static void check_reductions(int32_t *d1, int32_t *d2)
{
    int32_t a[1000], b[1000], r[1000];
    for (int i = 0; i < 1000; i++)
        a[i] = i, b[i] = 3 * i;
    /* device in, device inout */
    CHECK_OK(accel_copy(d1, a, sizeof(a), NULL));
    CHECK_OK(accel_copy(d2, b, sizeof(b), NULL));
    CHECK_OK(accel_reduce(RAIL_OP_SUM, RAIL_TK_INT32, d1, d2, 1000, NULL));
    CHECK_OK(accel_copy(r, d2, sizeof(r), NULL));
    CHECK(r[0] == 0 && r[999] == 4 * 999);
    /* host in, device inout: staged in device memory, reduced on the device */
    long staged = mock_calls("cuMemAllocAsync");
    CHECK_OK(accel_reduce(RAIL_OP_SUM, RAIL_TK_INT32, a, d2, 1000, NULL));
    CHECK(mock_calls("cuMemAllocAsync") == staged + 1);
    CHECK_OK(accel_copy(r, d2, sizeof(r), NULL));
    CHECK(r[999] == 5 * 999);
    /* device in, host inout: reduced on the host, where the result lives */
    long launches = mock_calls("cuLaunchKernel");
    memcpy(r, b, sizeof(b));
    CHECK_OK(accel_reduce(RAIL_OP_SUM, RAIL_TK_INT32, d1, r, 1000, NULL));
    CHECK(mock_calls("cuLaunchKernel") == launches);
    CHECK(r[999] == 4 * 999);
    /* on a stream */
    accel_stream_t *s;
    accel_event_t *e;
    CHECK_OK(accel_stream_create(&s));
    CHECK_OK(accel_copy(d2, b, sizeof(b), s));
    CHECK_OK(accel_reduce(RAIL_OP_REPLACE, RAIL_TK_INT32, d1, d2, 1000, s));
    CHECK_OK(accel_copy(r, d2, sizeof(r), s));
    CHECK_OK(accel_event_record(&e, s));
    CHECK_OK(accel_stream_sync(s));
    CHECK_OK(accel_event_query(e));
    CHECK_OK(accel_event_destroy(e));
    CHECK_OK(accel_stream_destroy(s));
    CHECK(memcmp(r, a, sizeof(a)) == 0);
    CHECK_RC(accel_reduce(RAIL_OP_SUM, RAIL_TK_INT128, d1, d2, 4, NULL), MPI_ERR_OP);
    CHECK_RC(accel_reduce(RAIL_OP_MAXLOC, RAIL_TK_INT32, d1, d2, 4, NULL), MPI_ERR_OP);
}

static void check_ipc_and_memory(char *d1, size_t size)
{
    accel_ipc_handle_t h;
    size_t off;
    void *base;
    CHECK_OK(accel_ipc_handle_get(d1 + 100, &h, &off));
    CHECK(off == 100 && memcmp(h.bytes, "CUDA", 4) == 0);
    CHECK_OK(accel_ipc_handle_open(&h, &base));
    CHECK(base == d1 && mock_calls("cuIpcOpenMemHandle") == 1);
    CHECK_OK(accel_ipc_handle_close(base));
    /* The cache: the same handle again is a hit.  The same allocation
     * under a handle whose bytes differ (the driver may export one so) is
     * mapped already (CUDA_ERROR_ALREADY_MAPPED): the cached mappings are
     * closed and it is opened again. */
    uint64_t reopened = accel_count_ipc_reopened;
    int held;
    CHECK_OK(accel_ipc_handle_open_cached(&h, &base));
    CHECK_OK(accel_ipc_handle_open_cached(&h, &base));
    CHECK(base == d1 && mock_calls("cuIpcOpenMemHandle") == 2);
    CHECK(accel_ipc_cache_state(&held) == 1 && held == 1);
    accel_ipc_handle_t h2 = h;
    h2.bytes[80] ^= 1;  /* inside CUDA's handle (bytes 24-87), past what the mock reads */
    /* ... but not while the mapping is held (by an operation copying from
     * it): that open says so and closes nothing */
    long closes = mock_calls("cuIpcCloseMemHandle");
    CHECK_RC(accel_ipc_handle_open_cached(&h2, &base), ACCEL_IPC_MAPPED);
    CHECK(mock_calls("cuIpcCloseMemHandle") == closes && accel_count_ipc_reopened == reopened);
    accel_ipc_handle_release(d1);
    CHECK(accel_ipc_cache_state(&held) == 1 && held == 1);
    accel_ipc_handle_release(d1);
    CHECK(accel_ipc_cache_state(&held) == 1 && held == 0);
    CHECK_OK(accel_ipc_handle_open_cached(&h2, &base));
    CHECK(base == d1 && mock_calls("cuIpcOpenMemHandle") == 5);
    CHECK(accel_count_ipc_reopened == reopened + 1);
    accel_ipc_handle_release(d1);
    /* accel's own device and pinned memory */
    long allocs = mock_calls("cuMemAlloc"), frees = mock_calls("cuMemFree");
    void *d = accel_alloc_device(1 << 16, d1);
    CHECK(d != NULL && accel_memory_type(d) == ACCEL_MEM_DEVICE);
    CHECK(mock_calls("cuMemAlloc") == allocs + 1);
    /* freed temporaries are kept (accel_scratch_cache) and serve a smaller
     * request of the same context without the driver */
    accel_free_device(d);
    CHECK(mock_calls("cuMemFree") == frees && accel_memory_type(d) == ACCEL_MEM_DEVICE);
    void *d2 = accel_alloc_device(1000, d1);
    CHECK(d2 == d && mock_calls("cuMemAlloc") == allocs + 1);
    accel_free_device(d2);
    long hostallocs = mock_calls("cuMemHostAlloc");
    void *p = accel_alloc_host_pinned(8192);
    CHECK(p != NULL && mock_calls("cuMemHostAlloc") == hostallocs + 1);
    CHECK(accel_memory_type(p) == ACCEL_MEM_HOST);
    memset(p, 1, 8192);
    accel_free_host_pinned(p);
}

/* (after check_ipc_and_memory, which leaves d1's entry idle in the cache) */
static void check_ipc_cache(char *d1)
{
    /* A full cache closes its least recently used idle entry, never a held
     * one; with every entry held it grows, and shrinks back as they are
     * released. */
    size_t off;
    void *base;
    int held;
    int keep = accel_ipc_cache_max;
    accel_ipc_cache_max = 2;
    char *x[3];
    accel_ipc_handle_t hx[3];
    for (int i = 0; i < 3; i++) {
        x[i] = accel_alloc_device(4096, d1);
        CHECK(x[i] != NULL);
        CHECK_OK(accel_ipc_handle_get(x[i], &hx[i], &off));
    }
    CHECK_OK(accel_ipc_handle_open_cached(&hx[0], &base));   /* held */
    CHECK(base == x[0]);
    CHECK_OK(accel_ipc_handle_open_cached(&hx[1], &base));   /* evicts d1's idle entry */
    CHECK(accel_ipc_cache_state(&held) == 2 && held == 2);
    long closes = mock_calls("cuIpcCloseMemHandle");
    CHECK_OK(accel_ipc_handle_open_cached(&hx[2], &base));   /* all held: grows */
    CHECK(accel_ipc_cache_state(&held) == 3 && held == 3);
    CHECK(mock_calls("cuIpcCloseMemHandle") == closes);
    accel_ipc_handle_release(x[1]);                          /* over the limit: closed */
    CHECK(accel_ipc_cache_state(&held) == 2 && held == 2);
    CHECK(mock_calls("cuIpcCloseMemHandle") == closes + 1);
    accel_ipc_handle_release(x[0]);
    accel_ipc_handle_release(x[2]);
    CHECK(accel_ipc_cache_state(&held) == 2 && held == 0);
    CHECK_OK(accel_ipc_handle_open_cached(&hx[1], &base));   /* evicts x[0], the older */
    CHECK(base == x[1] && mock_calls("cuIpcCloseMemHandle") == closes + 2);
    accel_ipc_handle_release(x[1]);
    accel_ipc_cache_max = keep;
    for (int i = 0; i < 3; i++)
        accel_free_device(x[i]);
}

static int case_device(bool cache)
{
    test_select(NULL);
    CHECK_OK(accel_init());
    mock_hooks();
    CUresult (*app_init)(unsigned) = (CUresult(*)(unsigned))app_sym("cuInit");
    CUresult (*app_alloc)(CUdeviceptr *, size_t) =
        (CUresult(*)(CUdeviceptr *, size_t))app_sym("cuMemAlloc_v2");
    CUresult (*app_free)(CUdeviceptr) = (CUresult(*)(CUdeviceptr))app_sym("cuMemFree_v2");
    CHECK(app_init(0) == CUDA_SUCCESS);
    CUdeviceptr d1, d2;
    const size_t size = 64 * 1024;
    CHECK(app_alloc(&d1, size) == CUDA_SUCCESS && app_alloc(&d2, size) == CUDA_SUCCESS);
    char *p1 = (char *)d1;

    long q0 = mock_calls("cuPointerGetAttributes");
    accel_mem_info_t info;
    CHECK(accel_memory_type(p1 + 10) == ACCEL_MEM_DEVICE);
    CHECK(mock_calls("cuPointerGetAttributes") == q0 + 1);
    CHECK(accel_memory_type(p1 + size - 1) == ACCEL_MEM_DEVICE);  /* whole range cached */
    CHECK(accel_is_device(p1));
    CHECK(mock_calls("cuPointerGetAttributes") == q0 + 1);
    CHECK_OK(accel_memory_info(p1 + 5, &info));                   /* revalidated: +1 */
    CHECK(info.base == p1 && info.size == size && info.type == ACCEL_MEM_DEVICE);
    CHECK(info.component == accel_component_index("cuda") && info.id != 0);

    char host[4096 * 2];
    long q1 = mock_calls("cuPointerGetAttributes");
    for (int i = 0; i < 5; i++)
        CHECK(accel_memory_type(host + 4096) == ACCEL_MEM_HOST);
    CHECK(mock_calls("cuPointerGetAttributes") == q1 + (cache ? 1 : 5));

    /* Copies in every direction. */
    char a[5000], b[5000];
    test_pattern(a, sizeof(a), 1);
    CHECK_OK(accel_copy(p1 + 7, a, sizeof(a), NULL));
    CHECK_OK(accel_copy((char *)d2 + 1, p1 + 7, sizeof(a), NULL));
    CHECK_OK(accel_copy(b, (char *)d2 + 1, sizeof(b), NULL));
    CHECK(memcmp(a, b, sizeof(a)) == 0);

    check_reductions((int32_t *)d1, (int32_t *)d2);
    check_all_kernels(p1, (char *)d2);
    check_ipc_and_memory(p1, size);
    check_ipc_cache(p1);
    check_reduce_many(p1, (char *)d2);
    check_copy_many(p1);

    /* The application frees and allocates anew at that address: the cached
     * entry is stale; accel_memory_info notices by the buffer id. */
    uint64_t old_id = info.id;
    CHECK(app_free(d1) == CUDA_SUCCESS);
    CUdeviceptr d3, d4;
    CHECK(app_alloc(&d4, size / 4) == CUDA_SUCCESS);
    CHECK(app_alloc(&d3, size / 2) == CUDA_SUCCESS);
    if (d3 > d1 && d3 < d1 + size) {
        /* a new allocation inside the old one's cached range: IPC exports
         * the allocation there now, at the offset inside it */
        accel_ipc_handle_t h;
        size_t off;
        void *base;
        CHECK_OK(accel_ipc_handle_get((char *)d3 + 100, &h, &off));
        CHECK(off == 100);
        CHECK_OK(accel_ipc_handle_open(&h, &base));
        CHECK(base == (void *)d3);
        CHECK_OK(accel_ipc_handle_close(base));
        printf("device: IPC exported the allocation inside a stale cached range\n");
    } else if (d3 == d1) {
        CHECK_OK(accel_memory_info((void *)d3, &info));
        CHECK(info.id != old_id && info.size == size / 2);
        printf("device: a reused address was revalidated by its buffer id\n");
    } else {
        CHECK(accel_memory_type(p1) == ACCEL_MEM_DEVICE);   /* stale, by design */
        CHECK_RC(accel_memory_info(p1, &info), MPI_ERR_ARG);  /* but not for base/size */
        printf("device: a freed allocation was noticed by its buffer id\n");
    }
    CHECK(MPIX_Query_cuda_support() == 1);
    CHECK_OK(accel_finalize());
    printf("device%s: ok\n", cache ? "" : " (no host cache)");
    return 0;
}
#endif /* RAIL_HAVE_CUDA */

/* ------------------------------------------------------------ driver */

static int run_case(const char *mode, const char *libdir, const char *extra, const char *out)
{
    char ld[512], verbose[] = "RAIL_ACCEL_VERBOSE=1";
    snprintf(ld, sizeof(ld), "LD_LIBRARY_PATH=%s", libdir);
    const char *env[] = { ld, verbose, extra, NULL };
    int rc = test_run_self(self, mode, env, out);
    printf("case %s: exit %d\n", mode, rc);
    if (rc != 0 && rc != TEST_SKIP)
        show(out);
    return rc;
}

static int child(const char *mode)
{
    if (strcmp(mode, "absent") == 0 || strcmp(mode, "broken") == 0)
        return expect_unavailable();
    if (strcmp(mode, "notbuilt") == 0) {
        test_select("host,cuda");
        CHECK_OK(accel_init());
        CHECK(accel_component_index("cuda") == -1 && MPIX_Query_cuda_support() == 0);
        return 0;
    }
#ifdef RAIL_HAVE_CUDA
    if (strcmp(mode, "hostonly") == 0)
        return case_hostonly();
    if (strcmp(mode, "lazy") == 0)
        return case_lazy();
    if (strcmp(mode, "device") == 0)
        return case_device(true);
    if (strcmp(mode, "nocache") == 0)
        return case_device(false);
#endif
    return 2;
}

int main(int argc, char **argv)
{
    self = argv[0];
    if (argc > 1)
        return child(argv[1]);
    unsetenv("RAIL_ACCEL");
    snprintf(tmpdir, sizeof(tmpdir), "%s/rail-accel-cuda-XXXXXX",
             getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
    CHECK(mkdtemp(tmpdir) != NULL);
    char empty[300], out[300], stubdir[300];
    snprintf(empty, sizeof(empty), "%s/empty", tmpdir);
    snprintf(out, sizeof(out), "%s/out.txt", tmpdir);
    snprintf(stubdir, sizeof(stubdir), "%s/stub", tmpdir);
    CHECK(mkdir(empty, 0755) == 0 && mkdir(stubdir, 0755) == 0);
    int rc;

#ifndef RAIL_HAVE_CUDA
    rc = run_case("notbuilt", empty, NULL, out);
    EXPECT(rc == 0 && count_lines(out, "not built") == 1, "case notbuilt (exit %d)", rc);
    check_skip_part("cases absent, broken and the mock driver's: built without CUDA");
#else
    char link[320];
    rc = run_case("absent", empty, NULL, out);
    if (rc == TEST_SKIP)
        check_skip_part("case absent: a CUDA driver is installed system-wide");
    else
        EXPECT(rc == 0 && count_lines(out, "component cuda not available") == 1,
               "case absent (exit %d)", rc);

    const char *stub = find_stub();
    snprintf(link, sizeof(link), "%s/libcuda.so.1", stubdir);
    if (stub == NULL || symlink(stub, link) != 0) {
        check_skip_part("case broken: no stub libcuda.so under %s", TEST_CUDA_PREFIX);
    } else {
        rc = run_case("broken", stubdir, NULL, out);
        EXPECT(rc == 0 && count_lines(out, "component cuda not available") == 1 &&
                   count_lines(out, "(34)") == 1,
               "case broken (exit %d)", rc);
        if (rc == 0)
            show(out);
        unlink(link);
    }

    EXPECT(run_case("hostonly", TEST_MOCK_CUDA_DIR, NULL, out) == 0, "case hostonly");
    EXPECT(run_case("lazy", TEST_MOCK_CUDA_DIR, NULL, out) == 0, "case lazy");
    EXPECT(run_case("device", TEST_MOCK_CUDA_DIR, NULL, out) == 0, "case device");
    EXPECT(run_case("nocache", TEST_MOCK_CUDA_DIR, "RAIL_ACCEL_CUDA_HOST_CACHE=0", out) == 0,
           "case nocache");
#endif
    unlink(out);
    rmdir(empty);
    rmdir(stubdir);
    rmdir(tmpdir);
    return check_report("test_accel_cuda");
}
