/*
 * accel cuda component: libcuda loaded at run time.
 *
 * Selection dlopens libcuda.so.1, resolves the entry points and asks
 * cuDriverGetVersion, which needs no initialisation: a missing library or
 * the toolkit's stub (CUDA_ERROR_STUB_LIBRARY) makes the component
 * unavailable with one verbose line.  cuInit is called only when this
 * component must create something itself (a context, an allocation) — by
 * then the application has initialised the driver anyway.
 *
 * Classifying a pointer the memtab does not know:
 *  - cuPointerGetAttributes.  CUDA_ERROR_NOT_INITIALIZED means nobody has
 *    initialised the driver, so no device memory exists yet: host, and
 *    nothing is cached (the driver may be initialised later).
 *  - device or managed memory: the whole allocation (RANGE_START_ADDR,
 *    RANGE_SIZE) goes into the memtab with its buffer id and context, so
 *    every later pointer into it is a lock-free table hit.  A stale entry
 *    (the application freed the memory and allocated anew at that address)
 *    still says "device", which is true of the driver's address range;
 *    accel_memory_info re-checks the buffer id before IPC uses base/size.
 *  - host memory: its page goes into a small direct-mapped cache (parameter
 *    accel_cuda_host_cache, default on), so repeated host buffers cost one
 *    hash probe, not a driver call.  Only pages seen while the driver was
 *    initialised are cached: device allocations come from address ranges the
 *    driver has already reserved, which a live host page cannot be in.  The
 *    residual risk is a host page that is unmapped and whose addresses the
 *    driver later takes for a new device reservation; the cache is flushed
 *    whenever accel itself allocates, frees, or maps device memory, and the
 *    parameter accel_cuda_host_cache turns it off.
 */
#include "accel/cuda/accel_cuda.h"
#include "base/param.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

accel_cuda_driver_t accel_cuda_drv;

#define CUDA_MAX_CTX 16
#define CUDA_MAX_DEVICES 64
#define HOST_CACHE_BITS 12

static struct {
    int index;
    void *dl;
    int driver_version;
    bool host_cache_on;
    int initialized_seen;               /* the driver answered a pointer query */
    pthread_mutex_t lock;
    accel_cuda_ctx_t *ctx[CUDA_MAX_CTX];
    int nctx;
    CUcontext primary[CUDA_MAX_DEVICES];
    uintptr_t host_cache[1u << HOST_CACHE_BITS];   /* page + 1, or 0 */
    char why[320];
} cuda = { .index = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

/* ------------------------------------------------------------ errors */

const char *accel_cuda_strerror(CUresult rc, char *buf, size_t len)
{
    const char *name = NULL;
    switch (rc) {       /* the ones we explain even when the library cannot */
    case CUDA_ERROR_NOT_INITIALIZED: name = "CUDA_ERROR_NOT_INITIALIZED"; break;
    case CUDA_ERROR_STUB_LIBRARY: name = "CUDA_ERROR_STUB_LIBRARY"; break;
    case CUDA_ERROR_NO_DEVICE: name = "CUDA_ERROR_NO_DEVICE"; break;
    default:
        if (CU(cuGetErrorName) == NULL || CU(cuGetErrorName)(rc, &name) != CUDA_SUCCESS)
            name = "CUDA error";
    }
    snprintf(buf, len, "%s (%d)", name, (int)rc);
    return buf;
}

int accel_cuda_error(const char *call, CUresult rc)
{
    char buf[96];
    rail_warn("accel: cuda: %s failed: %s", call, accel_cuda_strerror(rc, buf, sizeof(buf)));
    switch (rc) {
    case CUDA_ERROR_OUT_OF_MEMORY: return MPI_ERR_NO_MEM;
    case CUDA_ERROR_INVALID_VALUE: return MPI_ERR_ARG;
    case CUDA_ERROR_NOT_SUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    default: return MPI_ERR_OTHER;
    }
}

/* ------------------------------------------------------------ selection */

static void cuda_register_params(void)
{
    rail_param_register_bool("accel_cuda_host_cache", true,
                             "Cache the driver's \"host memory\" answers per page (off: one "
                             "driver call per lookup of a host buffer)", RAIL_PARAM_LEVEL_TUNER,
                             &cuda.host_cache_on);
    rail_param_register_size("accel_cuda_copy_kernel_max", accel_cuda_copy_kernel_max,
                             "Several device-to-device copies of up to this many bytes in all "
                             "(coll sm's device allgather, alltoall and allreduce) go in one "
                             "kernel launch instead of one cuMemcpyAsync each (0: never)",
                             RAIL_PARAM_LEVEL_TUNER, &accel_cuda_copy_kernel_max);
}

static int cuda_query(int self_index, const char **why)
{
    *why = cuda.why;
    cuda.dl = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (cuda.dl == NULL) {
        snprintf(cuda.why, sizeof(cuda.why), "no NVIDIA driver: %s", dlerror());
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
#define ACCEL_CUDA_XSTR(s) #s
#define ACCEL_CUDA_STR(s) ACCEL_CUDA_XSTR(s)
#define ACCEL_CUDA_RESOLVE(name)                                                                   \
    if ((*(void **)&accel_cuda_drv.name = dlsym(cuda.dl, ACCEL_CUDA_STR(name))) == NULL) {         \
        snprintf(cuda.why, sizeof(cuda.why), "libcuda.so.1 has no %s (driver too old)",           \
                 ACCEL_CUDA_STR(name));                                                            \
        goto fail;                                                                                 \
    }
    ACCEL_CUDA_SYMBOLS(ACCEL_CUDA_RESOLVE)
    char buf[96];
    CUresult rc = CU(cuDriverGetVersion)(&cuda.driver_version);
    if (rc != CUDA_SUCCESS) {
        snprintf(cuda.why, sizeof(cuda.why), "cuDriverGetVersion: %s%s",
                 accel_cuda_strerror(rc, buf, sizeof(buf)),
                 rc == CUDA_ERROR_STUB_LIBRARY ? ": libcuda.so.1 is the toolkit's stub, not a "
                 "driver" : "");
        goto fail;
    }
    cuda.index = self_index;
    accel_cuda_host_cache_flush();
    ACCEL_VERBOSE(1, "cuda: driver for CUDA %d.%d", cuda.driver_version / 1000,
                  cuda.driver_version % 1000 / 10);
    if (cuda.driver_version < CUDA_VERSION)
        ACCEL_VERBOSE(1, "cuda: the device reduction kernels were built with CUDA %d.%d and may "
                      "not load with this older driver", CUDA_VERSION / 1000,
                      CUDA_VERSION % 1000 / 10);
    return MPI_SUCCESS;
fail:
    dlclose(cuda.dl);
    cuda.dl = NULL;
    memset(&accel_cuda_drv, 0, sizeof(accel_cuda_drv));
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

static void cuda_finalize(void)
{
    accel_memtab_remove_component(cuda.index);
    pthread_mutex_lock(&cuda.lock);
    for (int i = 0; i < cuda.nctx; i++) {
        accel_cuda_ctx_t *cx = cuda.ctx[i];
        if (CU(cuCtxPushCurrent)(cx->ctx) == CUDA_SUCCESS) {
            accel_cuda_reduce_ctx_fini(cx);
            if (cx->stream != NULL)
                CU(cuStreamDestroy)(cx->stream);
            CUcontext dummy;
            CU(cuCtxPopCurrent)(&dummy);
        }
        free(cx);
    }
    cuda.nctx = 0;
    for (int d = 0; d < CUDA_MAX_DEVICES; d++)
        if (cuda.primary[d] != NULL) {
            CUdevice dev;
            if (CU(cuDeviceGet)(&dev, d) == CUDA_SUCCESS)
                CU(cuDevicePrimaryCtxRelease)(dev);
            cuda.primary[d] = NULL;
        }
    pthread_mutex_unlock(&cuda.lock);
    /* libcuda stays loaded: the application may still be using it. */
    cuda.index = -1;
}

/* ------------------------------------------------------------ contexts */

static CUresult cuda_init_rc;

static void cuda_init_once(void)
{
    cuda_init_rc = CU(cuInit)(0);
}

static int cuda_driver_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, cuda_init_once);
    return cuda_init_rc == CUDA_SUCCESS ? MPI_SUCCESS : accel_cuda_error("cuInit", cuda_init_rc);
}

/* The primary context of a device, retained once (lock held). */
static int cuda_primary(int ordinal, CUcontext *ctx)
{
    int rc;
    CUdevice dev;
    if (ordinal < 0 || ordinal >= CUDA_MAX_DEVICES)
        return MPI_ERR_ARG;
    if (cuda.primary[ordinal] == NULL) {
        RAIL_CHECK(cuda_driver_init());
        ACCEL_CUDA_CALL(cuDeviceGet, (&dev, ordinal));
        ACCEL_CUDA_CALL(cuDevicePrimaryCtxRetain, (&cuda.primary[ordinal], dev));
    }
    *ctx = cuda.primary[ordinal];
    return MPI_SUCCESS;
fail:
    return rc;
}

/* Per-context state (lock held). */
static int cuda_ctx_state(CUcontext ctx, accel_cuda_ctx_t **out)
{
    for (int i = 0; i < cuda.nctx; i++)
        if (cuda.ctx[i]->ctx == ctx) {
            *out = cuda.ctx[i];
            return MPI_SUCCESS;
        }
    if (cuda.nctx == CUDA_MAX_CTX) {
        rail_warn("accel: cuda: more than %d contexts in use", CUDA_MAX_CTX);
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
    accel_cuda_ctx_t *cx = calloc(1, sizeof(*cx));
    if (cx == NULL)
        return MPI_ERR_NO_MEM;
    cx->ctx = ctx;
    cuda.ctx[cuda.nctx++] = cx;
    *out = cx;
    return MPI_SUCCESS;
}

int accel_cuda_enter(const accel_range_t *r, accel_cuda_ctx_t **cx)
{
    int rc = MPI_SUCCESS;
    CUcontext ctx = r != NULL ? r->cookie : NULL;
    pthread_mutex_lock(&cuda.lock);
    if (ctx == NULL && (CU(cuCtxGetCurrent)(&ctx) != CUDA_SUCCESS || ctx == NULL))
        rc = cuda_primary(r != NULL && r->device >= 0 ? r->device : 0, &ctx);
    if (rc == MPI_SUCCESS)
        rc = cuda_ctx_state(ctx, cx);
    pthread_mutex_unlock(&cuda.lock);
    if (rc != MPI_SUCCESS)
        return rc;
    CUresult crc = CU(cuCtxPushCurrent)(ctx);
    return crc == CUDA_SUCCESS ? MPI_SUCCESS : accel_cuda_error("cuCtxPushCurrent", crc);
}

void accel_cuda_leave(void)
{
    CUcontext dummy;
    CU(cuCtxPopCurrent)(&dummy);
}

int accel_cuda_queue(accel_cuda_stream_t *s, accel_cuda_ctx_t *cx, CUstream *out)
{
    int rc;
    if (s != NULL && s->stream == NULL) {
        ACCEL_CUDA_CALL(cuStreamCreate, (&s->stream, CU_STREAM_NON_BLOCKING));
        s->ctx = cx->ctx;
    }
    if (s != NULL && s->ctx == cx->ctx) {
        *out = s->stream;
        return MPI_SUCCESS;
    }
    /* Synchronous work, or work of another context than the stream's: order
     * it after the stream's work, run it on cx's own stream; the caller
     * waits for it (*out is cx->stream). */
    if (s != NULL)
        ACCEL_CUDA_CALL(cuStreamSynchronize, (s->stream));
    if (cx->stream == NULL)
        ACCEL_CUDA_CALL(cuStreamCreate, (&cx->stream, CU_STREAM_NON_BLOCKING));
    *out = cx->stream;
    return MPI_SUCCESS;
fail:
    return rc;
}

/* ------------------------------------------------------------ classification */

static inline uintptr_t *host_slot(uintptr_t page)
{
    return &cuda.host_cache[(page * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - HOST_CACHE_BITS)];
}

void accel_cuda_host_cache_flush(void)
{
    for (size_t i = 0; i < RAIL_ARRAY_SIZE(cuda.host_cache); i++)
        __atomic_store_n(&cuda.host_cache[i], 0, __ATOMIC_RELAXED);
}

typedef struct cuda_attrs {
    unsigned int memtype, managed;
    int ordinal;
    CUdeviceptr start;
    size_t size;
    unsigned long long buffer_id;
    CUcontext ctx;
} cuda_attrs_t;

static CUresult cuda_pointer_attrs(const void *ptr, cuda_attrs_t *a)
{
    CUpointer_attribute which[] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_BUFFER_ID,
        CU_POINTER_ATTRIBUTE_CONTEXT,
    };
    void *data[] = { &a->memtype, &a->managed, &a->ordinal, &a->start, &a->size, &a->buffer_id,
                     &a->ctx };
    memset(a, 0, sizeof(*a));
    return CU(cuPointerGetAttributes)(RAIL_ARRAY_SIZE(which), which, data, (CUdeviceptr)ptr);
}

static bool attrs_device(const cuda_attrs_t *a)
{
    return a->managed != 0 || a->memtype == CU_MEMORYTYPE_DEVICE;
}

static void attrs_range(const cuda_attrs_t *a, accel_range_t *r)
{
    *r = (accel_range_t){ .base = (uintptr_t)a->start, .size = a->size, .id = a->buffer_id,
                          .cookie = a->ctx, .device = a->ordinal,
                          .type = a->managed ? ACCEL_MEM_MANAGED : ACCEL_MEM_DEVICE,
                          .component = (uint8_t)cuda.index };
}

static bool cuda_classify(const void *ptr, accel_range_t *out)
{
    uintptr_t page = (uintptr_t)ptr >> 12;
    uintptr_t *slot = host_slot(page);
    if (cuda.host_cache_on && __atomic_load_n(slot, __ATOMIC_RELAXED) == page + 1)
        return false;
    cuda_attrs_t a;
    CUresult rc = cuda_pointer_attrs(ptr, &a);
    if (rc != CUDA_SUCCESS) {
        if (rc != CUDA_ERROR_NOT_INITIALIZED) {
            char buf[96];
            rail_warn_once("cuda-attrs", "accel: cuda: cuPointerGetAttributes: %s; treating the "
                           "memory as host memory", accel_cuda_strerror(rc, buf, sizeof(buf)));
        }
        return false;
    }
    __atomic_store_n(&cuda.initialized_seen, 1, __ATOMIC_RELAXED);
    if (!attrs_device(&a)) {
        if (cuda.host_cache_on)
            __atomic_store_n(slot, page + 1, __ATOMIC_RELAXED);
        return false;
    }
    attrs_range(&a, out);
    if (a.size == 0) {          /* no range reported: answer for ptr alone, cache nothing */
        out->base = (uintptr_t)ptr;
        out->size = 1;
        return true;
    }
    accel_memtab_insert(out);   /* a failure only costs a later query */
    return true;
}

/* Before base/size/id are used (IPC): is the cached entry still that allocation? */
static int cuda_revalidate(const void *ptr, accel_range_t *r)
{
    cuda_attrs_t a;
    if (r->type == ACCEL_MEM_HOST)
        return MPI_SUCCESS;
    CUresult rc = cuda_pointer_attrs(ptr, &a);
    if (rc != CUDA_SUCCESS)
        return accel_cuda_error("cuPointerGetAttributes", rc);
    if (!attrs_device(&a)) {
        accel_memtab_remove(r->base, NULL);
        rail_warn("accel: cuda: %p is no longer device memory (freed?)", ptr);
        return MPI_ERR_ARG;
    }
    if (a.buffer_id != r->id || (uintptr_t)a.start != r->base || a.size != r->size) {
        attrs_range(&a, r);
        accel_memtab_insert(r);
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ copies */

static int cuda_copy_in(accel_cuda_ctx_t *cx, void *dst, const void *src, size_t len, void *stream)
{
    int rc;
    CUstream q;
    RAIL_CHECK(accel_cuda_queue(stream, cx, &q));
    ACCEL_CUDA_CALL(cuMemcpyAsync, ((CUdeviceptr)dst, (CUdeviceptr)src, len, q));
    if (stream == NULL || q != ((accel_cuda_stream_t *)stream)->stream)
        ACCEL_CUDA_CALL(cuStreamSynchronize, (q));
    return MPI_SUCCESS;
fail:
    return rc;
}

int accel_cuda_copy(void *dst, const accel_range_t *dr, const void *src, const accel_range_t *sr,
                    size_t len, void *stream)
{
    accel_cuda_ctx_t *cx;
    int rc = accel_cuda_enter(dr != NULL ? dr : sr, &cx);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = cuda_copy_in(cx, dst, src, len, stream);
    accel_cuda_leave();
    return rc;
}

/* ------------------------------------------------------------ memory */

static void *cuda_alloc(size_t len, const accel_range_t *like)
{
    accel_cuda_ctx_t *cx;
    CUdeviceptr d = 0;
    accel_range_t r;
    if (len == 0 || cuda_driver_init() != MPI_SUCCESS || accel_cuda_enter(like, &cx) != MPI_SUCCESS)
        return NULL;
    CUresult rc = CU(cuMemAlloc)(&d, len);
    accel_cuda_leave();
    if (rc != CUDA_SUCCESS) {
        accel_cuda_error("cuMemAlloc", rc);
        return NULL;
    }
    accel_cuda_host_cache_flush();
    cuda_classify((void *)d, &r);
    return (void *)d;
}

static int cuda_free(void *ptr, const accel_range_t *r)
{
    int rc = MPI_SUCCESS;
    accel_memtab_remove(r->base, NULL);
    CUresult crc = r->type == ACCEL_MEM_HOST ? CU(cuMemFreeHost)(ptr) : CU(cuMemFree)((CUdeviceptr)ptr);
    if (crc != CUDA_SUCCESS)
        rc = accel_cuda_error(r->type == ACCEL_MEM_HOST ? "cuMemFreeHost" : "cuMemFree", crc);
    accel_cuda_host_cache_flush();
    return rc;
}

/* Pinned staging memory, once the driver is in use (else the base mallocs). */
static void *cuda_alloc_host_pinned(size_t len)
{
    accel_cuda_ctx_t *cx;
    void *p = NULL;
    if (!__atomic_load_n(&cuda.initialized_seen, __ATOMIC_RELAXED) || len == 0 ||
        accel_cuda_enter(NULL, &cx) != MPI_SUCCESS)
        return NULL;
    CUresult rc = CU(cuMemHostAlloc)(&p, len, CU_MEMHOSTALLOC_PORTABLE);
    accel_cuda_leave();
    if (rc != CUDA_SUCCESS) {
        ACCEL_VERBOSE(1, "cuda: cuMemHostAlloc of %zu bytes failed (%d); using malloc", len,
                      (int)rc);
        return NULL;
    }
    accel_range_t r = { .base = (uintptr_t)p, .size = len, .device = -1, .type = ACCEL_MEM_HOST,
                        .component = (uint8_t)cuda.index };
    if (accel_memtab_insert(&r) != MPI_SUCCESS) {
        CU(cuMemFreeHost)(p);
        return NULL;
    }
    return p;
}

/* ------------------------------------------------------------ ipc */

#define CUDA_IPC_VERSION 1

typedef struct cuda_ipc_handle {
    char tag[4];                /* "CUDA", written by the base */
    uint32_t version;
    int32_t device;
    uint32_t pad;
    uint64_t size;
    CUipcMemHandle mem;
} cuda_ipc_handle_t;

_Static_assert(sizeof(cuda_ipc_handle_t) <= ACCEL_IPC_HANDLE_SIZE, "cuda IPC handle too big");

static int cuda_ipc_get(const void *ptr, const accel_range_t *r, accel_ipc_handle_t *h, size_t *off)
{
    int rc;
    accel_cuda_ctx_t *cx;
    cuda_ipc_handle_t ch;
    memcpy(&ch, h->bytes, sizeof(ch));
    ch.version = CUDA_IPC_VERSION;
    ch.device = r->device;
    ch.size = r->size;
    RAIL_CHECK(accel_cuda_enter(r, &cx));
    CUresult crc = CU(cuIpcGetMemHandle)(&ch.mem, (CUdeviceptr)r->base);
    accel_cuda_leave();
    if (crc != CUDA_SUCCESS)
        return accel_cuda_error("cuIpcGetMemHandle", crc);
    memcpy(h->bytes, &ch, sizeof(ch));
    *off = (uintptr_t)ptr - r->base;
    return MPI_SUCCESS;
fail:
    return rc;
}

static int cuda_ipc_open(const accel_ipc_handle_t *h, void **base)
{
    int rc;
    accel_cuda_ctx_t *cx;
    cuda_ipc_handle_t ch;
    CUdeviceptr d;
    accel_range_t r;
    memcpy(&ch, h->bytes, sizeof(ch));
    *base = NULL;
    if (ch.version != CUDA_IPC_VERSION)
        return MPI_ERR_ARG;
    /* Opened in the current context, or the primary context of the device
     * with the owner's ordinal (with CUDA_VISIBLE_DEVICES set differently per
     * rank, make a context current first). */
    accel_range_t where = { .device = ch.device };
    RAIL_CHECK(accel_cuda_enter(&where, &cx));
    CUresult crc = CU(cuIpcOpenMemHandle)(&d, ch.mem, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    accel_cuda_leave();
    if (crc == CUDA_ERROR_ALREADY_MAPPED)   /* one mapping per allocation and context */
        return ACCEL_IPC_MAPPED;
    if (crc != CUDA_SUCCESS)
        return accel_cuda_error("cuIpcOpenMemHandle", crc);
    accel_cuda_host_cache_flush();
    if (!cuda_classify((void *)d, &r)) {   /* registers the mapping in the memtab */
        r = (accel_range_t){ .base = (uintptr_t)d, .size = ch.size, .cookie = cx->ctx,
                             .device = ch.device, .type = ACCEL_MEM_DEVICE,
                             .component = (uint8_t)cuda.index };
        accel_memtab_insert(&r);
    }
    *base = (void *)d;
    return MPI_SUCCESS;
fail:
    return rc;
}

static int cuda_ipc_close(void *base, const accel_range_t *r)
{
    int rc;
    accel_cuda_ctx_t *cx;
    RAIL_CHECK(accel_cuda_enter(r, &cx));
    CUresult crc = CU(cuIpcCloseMemHandle)((CUdeviceptr)base);
    accel_cuda_leave();
    accel_memtab_remove(r->base, NULL);
    accel_cuda_host_cache_flush();
    return crc == CUDA_SUCCESS ? MPI_SUCCESS : accel_cuda_error("cuIpcCloseMemHandle", crc);
fail:
    return rc;
}

/* ------------------------------------------------------------ streams */

static char cuda_event_done;    /* an event on a stream with no work yet */

static int cuda_stream_create(void **s)
{
    *s = calloc(1, sizeof(accel_cuda_stream_t));
    return *s != NULL ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static int cuda_stream_destroy(void *s)
{
    accel_cuda_stream_t *st = s;
    int rc = MPI_SUCCESS;
    if (st->stream != NULL && CU(cuCtxPushCurrent)(st->ctx) == CUDA_SUCCESS) {
        CUresult crc = CU(cuStreamDestroy)(st->stream);
        accel_cuda_leave();
        if (crc != CUDA_SUCCESS)
            rc = accel_cuda_error("cuStreamDestroy", crc);
    }
    free(st);
    return rc;
}

static int cuda_stream_sync(void *s)
{
    accel_cuda_stream_t *st = s;
    if (st->stream == NULL)
        return MPI_SUCCESS;
    CUresult crc = CU(cuStreamSynchronize)(st->stream);
    return crc == CUDA_SUCCESS ? MPI_SUCCESS : accel_cuda_error("cuStreamSynchronize", crc);
}

static int cuda_event_record(void **ev, void *s)
{
    int rc;
    accel_cuda_stream_t *st = s;
    CUevent e = NULL;
    *ev = &cuda_event_done;
    if (st->stream == NULL)
        return MPI_SUCCESS;
    ACCEL_CUDA_CALL(cuCtxPushCurrent, (st->ctx));
    CUresult crc = CU(cuEventCreate)(&e, CU_EVENT_DISABLE_TIMING);
    if (crc == CUDA_SUCCESS && (crc = CU(cuEventRecord)(e, st->stream)) != CUDA_SUCCESS)
        CU(cuEventDestroy)(e);
    accel_cuda_leave();
    if (crc != CUDA_SUCCESS)
        return accel_cuda_error("cuEventRecord", crc);
    *ev = e;
    return MPI_SUCCESS;
fail:
    return rc;
}

static int cuda_event_query(void *ev)
{
    if (ev == &cuda_event_done)
        return MPI_SUCCESS;
    CUresult crc = CU(cuEventQuery)((CUevent)ev);
    if (crc == CUDA_SUCCESS)
        return MPI_SUCCESS;
    if (crc == CUDA_ERROR_NOT_READY)
        return ACCEL_EVENT_PENDING;
    return accel_cuda_error("cuEventQuery", crc);
}

static int cuda_event_destroy(void *ev)
{
    if (ev != &cuda_event_done)
        CU(cuEventDestroy)((CUevent)ev);
    return MPI_SUCCESS;
}

const accel_component_t accel_cuda_component = {
    .name = "cuda",
    .tag = { 'C', 'U', 'D', 'A' },
    .priority = 20,
    .is_device = true,
    .cookie_is_context = true,
    .register_params = cuda_register_params,
    .query = cuda_query,
    .finalize = cuda_finalize,
    .classify = cuda_classify,
    .revalidate = cuda_revalidate,
    .copy = accel_cuda_copy,
    .reduce = accel_cuda_reduce,
    .reduce_many = accel_cuda_reduce_many,
    .copy_many = accel_cuda_copy_many,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .alloc_host_pinned = cuda_alloc_host_pinned,
    .ipc_get = cuda_ipc_get,
    .ipc_open = cuda_ipc_open,
    .ipc_close = cuda_ipc_close,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_sync = cuda_stream_sync,
    .event_record = cuda_event_record,
    .event_query = cuda_event_query,
    .event_destroy = cuda_event_destroy,
};
