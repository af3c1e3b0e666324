/*
 * A stand-in for libcuda.so.1, built only for tests, so that the cuda accel
 * component's host-side logic (selection, laziness, classification and its
 * caches, copies, kernel loading and launching, IPC, streams) runs on a
 * machine without a GPU.  "Device" memory is ordinary host memory from
 * mmap; the driver is "initialised" only when cuInit is called (as an
 * application would); every entry point counts its calls.
 *
 * Kernels: cuModuleLoadData checks the fatbin header; cuModuleGetFunction
 * finds the kernel's name inside the image (so every kernel of the table
 * must really be in the embedded fatbin); cuLaunchKernel records the launch
 * and computes every kernel of the table on the host with the library's
 * own host kernels (base/op, compiled into the mock), so data paths can be
 * checked end to end, MPI programs on mock "device" memory included.
 *
 * Test hooks (dlsym): mock_cuda_calls(name), mock_cuda_last_launch(...).
 */
#include "config.h"

#include <cuda.h>
#include "base/op.h"
#include "accel/cuda/cuda_reduce_table.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#define MOCK_EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------ call counts */

static const char *const mock_names[] = {
    "cuInit", "cuDriverGetVersion", "cuPointerGetAttributes", "cuMemAlloc", "cuMemFree",
    "cuMemcpyAsync", "cuLaunchKernel", "cuModuleLoadData", "cuModuleGetFunction",
    "cuCtxPushCurrent", "cuMemAllocAsync", "cuIpcOpenMemHandle", "cuStreamCreate", "cuMemHostAlloc",
    "cuStreamSynchronize", "cuMemcpy", "cuIpcCloseMemHandle", "rail_copy_many", "other",
};
enum { C_INIT, C_VERSION, C_ATTRS, C_ALLOC, C_FREE, C_MEMCPY, C_LAUNCH, C_LOAD, C_GETFN, C_PUSH,
       C_ALLOC_ASYNC, C_IPC_OPEN, C_STREAM, C_HOSTALLOC, C_SYNC, C_APP_MEMCPY, C_IPC_CLOSE,
       C_COPY_KERNEL, C_OTHER, C_N };
static long mock_count[C_N];

MOCK_EXPORT long mock_cuda_calls(const char *name)
{
    for (int i = 0; i < C_N; i++)
        if (strcmp(mock_names[i], name) == 0)
            return mock_count[i];
    return -1;
}

/* ------------------------------------------------------------ state */

typedef struct mock_alloc {
    uintptr_t base;
    size_t size;
    unsigned long long id;
    int host;       /* pinned host memory */
    int used;
    int ipc_open;   /* opened by cuIpcOpenMemHandle and not closed yet */
    uint64_t off;   /* device memory: where in the arena's memfd it lives */
    pid_t from;     /* a mapping of another process's allocation: its pid */
    unsigned long long from_id;     /* and its id there */
} mock_alloc_t;

#define MOCK_MAX 256
static mock_alloc_t allocs[MOCK_MAX];
static unsigned long long next_id = 1000;
static int initialized;
static struct { int dummy; } the_ctx, the_stream_obj, the_module;
static __thread CUcontext ctx_stack[16];
static __thread int ctx_depth;

static mock_alloc_t *find(uintptr_t p)
{
    for (int i = 0; i < MOCK_MAX; i++)
        if (allocs[i].used && p - allocs[i].base < allocs[i].size)
            return &allocs[i];
    return NULL;
}

/* Device allocations come first-fit from one reserved range, as the
 * driver's do from its own: a freed allocation's addresses are handed out
 * again, whole or in part, so the library's caches meet the reuse a real
 * driver shows.  The memory is a shared memfd (each allocation at a fresh
 * offset, so another process's mapping of a freed allocation never shows a
 * later one's data: it reads zeros), which cuIpcOpenMemHandle maps in
 * another process through /proc/PID/fd.  Freed memory goes back to
 * PROT_NONE (a stale access faults).  Pinned host memory is plain mmap. */
#define ARENA_SIZE ((uintptr_t)1 << 32)
#define ARENA_ALIGN ((uintptr_t)1 << 12)
#define FILE_SIZE ((uint64_t)1 << 40)
static uintptr_t arena;
static int arena_fd = -1;
static uint64_t file_next;

static uintptr_t arena_fit(size_t size, uint64_t *off)
{
    if (arena == 0) {
        arena_fd = memfd_create("mock-cuda", MFD_CLOEXEC);
        if (arena_fd < 0 || ftruncate(arena_fd, (off_t)FILE_SIZE) != 0)
            return 0;
        void *a = mmap(NULL, ARENA_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (a == MAP_FAILED)
            return 0;
        arena = (uintptr_t)a;
    }
    size = (size + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
    if (file_next + size > FILE_SIZE)
        return 0;
    for (uintptr_t at = arena; at + size <= arena + ARENA_SIZE;) {
        uintptr_t next = 0;
        for (int i = 0; i < MOCK_MAX; i++)
            if (allocs[i].used && !allocs[i].host && allocs[i].base < at + size &&
                at < allocs[i].base + allocs[i].size) {
                uintptr_t end = (allocs[i].base + allocs[i].size + ARENA_ALIGN - 1) &
                                ~(ARENA_ALIGN - 1);
                if (end > next)
                    next = end;
            }
        if (next == 0) {
            if (mmap((void *)at, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, arena_fd,
                     (off_t)file_next) == MAP_FAILED)
                return 0;
            *off = file_next;
            file_next += size;
            return at;
        }
        at = next;
    }
    return 0;
}

static void *new_alloc(size_t size, int host)
{
    for (int i = 0; i < MOCK_MAX; i++)
        if (!allocs[i].used) {
            void *p;
            uint64_t off = 0;
            if (host) {
                p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (p == MAP_FAILED)
                    return NULL;
            } else if ((p = (void *)arena_fit(size, &off)) == NULL) {
                return NULL;
            }
            allocs[i] = (mock_alloc_t){ .base = (uintptr_t)p, .size = size, .id = next_id++,
                                        .host = host, .used = 1, .off = off };
            return p;
        }
    return NULL;
}

static CUresult drop_alloc(uintptr_t p)
{
    mock_alloc_t *a = find(p);
    if (a == NULL || a->base != p || a->from != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (a->host) {
        munmap((void *)a->base, a->size);
    } else {
        mmap((void *)a->base, a->size, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
        fallocate(arena_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)a->off,
                  (off_t)a->size);
    }
    a->used = 0;
    return CUDA_SUCCESS;
}

/* One call at a time (a multithreaded program's threads share the tables):
 * NEED_INIT holds the lock until the calling function returns. */
static pthread_mutex_t mock_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static void mock_unlock(int *unused)
{
    (void)unused;
    pthread_mutex_unlock(&mock_lock);
}
#define NEED_INIT()                                                                                \
    __attribute__((cleanup(mock_unlock))) int mock_held_ = pthread_mutex_lock(&mock_lock);      \
    (void)mock_held_;                                                                              \
    do {                                                                                           \
        if (!initialized)                                                                          \
            return CUDA_ERROR_NOT_INITIALIZED;                                                     \
    } while (0)

/* ------------------------------------------------------------ driver API */

MOCK_EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    *pStr = error == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_MOCK";
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    return cuGetErrorName(error, pStr);
}

MOCK_EXPORT CUresult cuDriverGetVersion(int *v)
{
    mock_count[C_VERSION]++;
    *v = CUDA_VERSION;
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuInit(unsigned int flags)
{
    mock_count[C_INIT]++;
    initialized = 1;
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs,
                                            void **data, CUdeviceptr ptr)
{
    mock_count[C_ATTRS]++;
    NEED_INIT();
    mock_alloc_t *a = find((uintptr_t)ptr);
    for (unsigned i = 0; i < n; i++) {
        switch (attrs[i]) {
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
            *(unsigned *)data[i] = a == NULL ? 0 : a->host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
            break;
        case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned char *)data[i] = 0; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data[i] = a != NULL ? 0 : -2; break;
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
            *(CUdeviceptr *)data[i] = a != NULL ? a->base : 0;
            break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data[i] = a != NULL ? a->size : 0; break;
        case CU_POINTER_ATTRIBUTE_BUFFER_ID:
            *(unsigned long long *)data[i] = a != NULL ? a->id : 0;
            break;
        case CU_POINTER_ATTRIBUTE_CONTEXT:
            *(CUcontext *)data[i] = a != NULL ? (CUcontext)&the_ctx : NULL;
            break;
        default: return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    mock_count[C_OTHER]++;
    NEED_INIT();
    *pctx = ctx_depth > 0 ? ctx_stack[ctx_depth - 1] : NULL;
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuCtxPushCurrent(CUcontext ctx)
{
    mock_count[C_PUSH]++;
    NEED_INIT();
    if (ctx != (CUcontext)&the_ctx || ctx_depth == 16)
        return CUDA_ERROR_INVALID_CONTEXT;
    ctx_stack[ctx_depth++] = ctx;
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuCtxPopCurrent(CUcontext *pctx)
{
    NEED_INIT();
    if (ctx_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    *pctx = ctx_stack[--ctx_depth];
    return CUDA_SUCCESS;
}

/* What an application (test/devmem.h) calls to bind a context. */
MOCK_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    mock_count[C_OTHER]++;
    NEED_INIT();
    if (ctx != (CUcontext)&the_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx_depth == 0)
        ctx_depth = 1;
    ctx_stack[ctx_depth - 1] = ctx;
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuDeviceGetCount(int *n)
{
    NEED_INIT();
    *n = 1;
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
    NEED_INIT();
    if (ordinal != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = 0;
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    NEED_INIT();
    *pctx = (CUcontext)&the_ctx;
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    NEED_INIT();
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuMemAlloc(CUdeviceptr *p, size_t size)
{
    mock_count[C_ALLOC]++;
    NEED_INIT();
    void *m = new_alloc(size, 0);
    *p = (CUdeviceptr)m;
    return m != NULL ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

MOCK_EXPORT CUresult cuMemFree(CUdeviceptr p)
{
    mock_count[C_FREE]++;
    NEED_INIT();
    return drop_alloc((uintptr_t)p);
}

MOCK_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *p, size_t size, CUstream s)
{
    mock_count[C_ALLOC_ASYNC]++;
    return cuMemAlloc(p, size);
}

MOCK_EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
    return cuMemFree(p);
}

MOCK_EXPORT CUresult cuMemHostAlloc(void **p, size_t size, unsigned int flags)
{
    mock_count[C_HOSTALLOC]++;
    NEED_INIT();
    *p = new_alloc(size, 1);
    return *p != NULL ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

MOCK_EXPORT CUresult cuMemFreeHost(void *p)
{
    NEED_INIT();
    return drop_alloc((uintptr_t)p);
}

MOCK_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    mock_count[C_MEMCPY]++;
    NEED_INIT();
    if (ctx_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    memmove((void *)dst, (const void *)src, n);
    return CUDA_SUCCESS;
}

/* The application's synchronous copy (unified addressing) and its wait. */
MOCK_EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    mock_count[C_APP_MEMCPY]++;
    NEED_INIT();
    memmove((void *)dst, (const void *)src, n);
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuCtxSynchronize(void)
{
    mock_count[C_OTHER]++;
    NEED_INIT();
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
    mock_count[C_STREAM]++;
    NEED_INIT();
    if (ctx_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    *s = (CUstream)&the_stream_obj;
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuStreamDestroy(CUstream s)
{
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    mock_count[C_SYNC]++;
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
    NEED_INIT();
    *e = (CUevent)malloc(8);
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuEventQuery(CUevent e)
{
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuEventDestroy(CUevent e)
{
    free(e);
    return CUDA_SUCCESS;
}

/* The handle: the owner's pid, its memfd's descriptor, and the
 * allocation's base, offset in the memfd, size and id. */
typedef struct mock_ipc {
    uint64_t base, off, size, id;
    int32_t pid, fd;
} mock_ipc_t;
_Static_assert(sizeof(mock_ipc_t) <= sizeof(((CUipcMemHandle *)0)->reserved), "handle");

MOCK_EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr p)
{
    NEED_INIT();
    mock_alloc_t *a = find((uintptr_t)p);
    if (a == NULL || a->base != (uintptr_t)p || a->host || a->from != 0)
        return CUDA_ERROR_INVALID_VALUE;
    mock_ipc_t m = { a->base, a->off, a->size, a->id, (int32_t)getpid(), arena_fd };
    memset(h, 0, sizeof(*h));
    memcpy(h->reserved, &m, sizeof(m));
    /* MOCK_CUDA_IPC_VARY=1: every call's handle bytes differ, as the
     * driver's may for one allocation (an opener then meets
     * CUDA_ERROR_ALREADY_MAPPED) */
    static uint64_t calls;
    const char *vary = getenv("MOCK_CUDA_IPC_VARY");
    if (vary != NULL && vary[0] == '1') {
        calls++;
        memcpy(h->reserved + 48, &calls, sizeof(calls));
    }
    return CUDA_SUCCESS;
}

/* Another process's handle: its memory mapped here at an address of this
 * process (as the driver does), which counts as device memory.  The
 * owner's own handle: the allocation itself.  As the driver does, an
 * allocation opened and not closed yet cannot be opened again
 * (CUDA_ERROR_ALREADY_MAPPED). */
MOCK_EXPORT CUresult cuIpcOpenMemHandle(CUdeviceptr *p, CUipcMemHandle h, unsigned int flags)
{
    mock_count[C_IPC_OPEN]++;
    NEED_INIT();
    mock_ipc_t m;
    memcpy(&m, h.reserved, sizeof(m));
    if (m.pid == getpid()) {
        mock_alloc_t *a = find(m.base);
        if (a == NULL || a->id != m.id)
            return CUDA_ERROR_INVALID_VALUE;
        if (a->ipc_open)
            return CUDA_ERROR_ALREADY_MAPPED;
        a->ipc_open = 1;
        *p = (CUdeviceptr)m.base;
        return CUDA_SUCCESS;
    }
    for (int i = 0; i < MOCK_MAX; i++)
        if (allocs[i].used && allocs[i].from == m.pid && allocs[i].from_id == m.id)
            return CUDA_ERROR_ALREADY_MAPPED;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)m.pid, (int)m.fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return CUDA_ERROR_INVALID_HANDLE;
    void *q = mmap(NULL, m.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)m.off);
    close(fd);
    if (q == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < MOCK_MAX; i++)
        if (!allocs[i].used) {
            allocs[i] = (mock_alloc_t){ .base = (uintptr_t)q, .size = m.size, .id = next_id++,
                                        .used = 1, .from = m.pid, .from_id = m.id };
            *p = (CUdeviceptr)q;
            return CUDA_SUCCESS;
        }
    munmap(q, m.size);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

MOCK_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr p)
{
    mock_count[C_IPC_CLOSE]++;
    NEED_INIT();
    mock_alloc_t *a = find((uintptr_t)p);
    if (a == NULL)
        return CUDA_SUCCESS;    /* its own allocation, freed since: nothing mapped */
    if (a->base != (uintptr_t)p)
        return CUDA_ERROR_INVALID_VALUE;
    if (a->from != 0) {
        munmap((void *)a->base, a->size);
        a->used = 0;
        return CUDA_SUCCESS;
    }
    if (!a->ipc_open)
        return CUDA_ERROR_INVALID_VALUE;
    a->ipc_open = 0;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------ modules, kernels */

static const unsigned char *image;
static size_t image_size;

MOCK_EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *img)
{
    mock_count[C_LOAD]++;
    NEED_INIT();
    const unsigned char *b = img;
    uint32_t magic;
    uint16_t hsize;
    uint64_t fsize;
    memcpy(&magic, b, 4);
    memcpy(&hsize, b + 6, 2);
    memcpy(&fsize, b + 8, 8);
    if (magic != 0xBA55ED50u || ((uintptr_t)img & 7) != 0)
        return CUDA_ERROR_INVALID_IMAGE;
    image = b;
    image_size = hsize + fsize;
    *m = (CUmodule)&the_module;
    return CUDA_SUCCESS;
}

MOCK_EXPORT CUresult cuModuleUnload(CUmodule m)
{
    return CUDA_SUCCESS;
}

/* A function handle is its name (kept until exit, like a module's functions). */
static char fn_names[512][64];
static int nfn;

MOCK_EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    mock_count[C_GETFN]++;
    NEED_INIT();
    size_t len = strlen(name);
    for (const unsigned char *p = image; p != NULL && p + len + 1 < image + image_size; p++) {
        p = memmem(p, (size_t)(image + image_size - p), name, len + 1);   /* with its NUL */
        if (p == NULL)
            break;
        if ((p[-1] == '.' || p[-1] == '\0') && len < 64 && nfn < 512) {
            snprintf(fn_names[nfn], sizeof(fn_names[nfn]), "%s", name);
            *f = (CUfunction)fn_names[nfn++];
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_NOT_FOUND;
}

static struct {
    char name[64];
    unsigned grid, block;
    CUdeviceptr in, inout;      /* an n-input kernel: its first input and out */
    size_t count;
    int nin;                    /* an n-input kernel's inputs (else 1) */
} last;

MOCK_EXPORT int mock_cuda_last_inputs(void)
{
    return last.nin;
}

MOCK_EXPORT void mock_cuda_last_launch(char *name, unsigned *grid, unsigned *block,
                                       void **in, void **inout, size_t *count)
{
    strcpy(name, last.name);
    *grid = last.grid;
    *block = last.block;
    *in = (void *)last.in;
    *inout = (void *)last.inout;
    *count = last.count;
}

/* Every kernel of the table, computed by the library's host kernels
 * (base/op, compiled into this mock), which the device kernels must match
 * (test_accel_cuda_table), so MPI programs on "device" memory get right
 * results through the cuda component's whole path. */
#define MOCK_KERNEL(OP, op, TK, tk)                                                                \
    if (strcmp(last.name, "rail_reduce_" #op "_" #tk) == 0)                                       \
        return rail_op_reduce(RAIL_OP_##OP, RAIL_TK_##TK, (const void *)last.in,                  \
                              (void *)last.inout, last.count) == 0                                 \
                   ? CUDA_SUCCESS                                                                  \
                   : CUDA_ERROR_INVALID_VALUE;

/* The n-input kernels: out[0] = in[k-1] op (... op in[0]), out[0] may be
 * in[0]; then the other outputs get out[0] (they may be inputs). */
static const CUdeviceptr *mock_ins, *mock_outs;
static int mock_nout;
static CUresult mock_reduce_n(rail_op_t op, rail_typekind_t tk)
{
    /* the first input copied in by the host REPLACE kernel (out = in) */
    if (mock_ins[0] != last.inout &&
        rail_op_reduce(RAIL_OP_REPLACE, tk, (const void *)mock_ins[0], (void *)last.inout,
                       last.count) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (int j = 1; j < last.nin; j++)
        if (rail_op_reduce(op, tk, (const void *)mock_ins[j], (void *)last.inout, last.count) != 0)
            return CUDA_ERROR_INVALID_VALUE;
    for (int j = 1; j < mock_nout; j++)
        if (mock_outs[j] != last.inout &&
            rail_op_reduce(RAIL_OP_REPLACE, tk, (const void *)last.inout, (void *)mock_outs[j],
                           last.count) != 0)
            return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}
#define MOCK_KERNEL_N(OP, op, TK, tk)                                                              \
    if (strcmp(last.name, "rail_reduce_n_" #op "_" #tk) == 0)                                     \
        return mock_reduce_n(RAIL_OP_##OP, RAIL_TK_##TK);

MOCK_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                    unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                    CUstream s, void **params, void **extra)
{
    mock_count[C_LAUNCH]++;
    NEED_INIT();
    if (ctx_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    snprintf(last.name, sizeof(last.name), "%s", (const char *)f);
    last.grid = gx * gy * gz;
    last.block = bx * by * bz;
    if (strcmp(last.name, "rail_copy_many") == 0) {
        mock_count[C_COPY_KERNEL]++;   /* its launches (also counted as cuLaunchKernel) */
        /* (copies by value: dst[], src[], len[]; their number = gridDim.y):
         * every byte of each copy within device memory */
        const CUdeviceptr *c = (const CUdeviceptr *)params[0];
        int k = *(int *)params[1];
        last.nin = k;
        last.count = 0;
        if (k < 1 || k > ACCEL_CUDA_COPY_MAX || gy != (unsigned)k || gx * bx == 0)
            return CUDA_ERROR_INVALID_VALUE;
        for (int j = 0; j < k; j++) {
            CUdeviceptr d = c[j], src = c[ACCEL_CUDA_COPY_MAX + j];
            size_t len = (size_t)c[2 * ACCEL_CUDA_COPY_MAX + j];
            if (len == 0 || find(d) == NULL || find(d + len - 1) == NULL || find(src) == NULL ||
                find(src + len - 1) == NULL)
                return CUDA_ERROR_ILLEGAL_ADDRESS;
            memmove((void *)d, (const void *)src, len);
            last.count += len;
        }
        return CUDA_SUCCESS;
    }
    bool many = strncmp(last.name, "rail_reduce_n_", 14) == 0;
    last.nin = 1;
    if (many) {
        /* (inputs by value, their number, outputs by value, their
         * number, count) */
        mock_ins = (const CUdeviceptr *)params[0];
        last.nin = *(int *)params[1];
        mock_outs = (const CUdeviceptr *)params[2];
        mock_nout = *(int *)params[3];
        last.in = mock_ins[0];
        last.inout = mock_outs[0];
        last.count = *(size_t *)params[4];
        if (last.nin < 1 || last.nin > ACCEL_CUDA_REDUCE_MAX_IN || mock_nout < 1 ||
            mock_nout > ACCEL_CUDA_REDUCE_MAX_OUT)
            return CUDA_ERROR_INVALID_VALUE;
        for (int j = 1; j < last.nin; j++)
            if (find(mock_ins[j]) == NULL)
                return CUDA_ERROR_ILLEGAL_ADDRESS;
        for (int j = 1; j < mock_nout; j++)
            if (find(mock_outs[j]) == NULL)
                return CUDA_ERROR_ILLEGAL_ADDRESS;
    } else {
        last.in = *(CUdeviceptr *)params[0];
        last.inout = *(CUdeviceptr *)params[1];
        last.count = *(size_t *)params[2];
    }
    if ((uint64_t)last.grid * last.block < last.count && last.grid < 65536)
        return CUDA_ERROR_INVALID_VALUE;    /* must cover the count, or loop */
    if (find(last.in) == NULL || find(last.inout) == NULL)
        return CUDA_ERROR_ILLEGAL_ADDRESS;  /* a kernel only reaches device memory */
    if (many) {
        ACCEL_CUDA_REDUCE_LIST(MOCK_KERNEL_N)
        return CUDA_ERROR_NOT_FOUND;
    }
    ACCEL_CUDA_REDUCE_LIST(MOCK_KERNEL)
    return CUDA_ERROR_NOT_FOUND;
}
